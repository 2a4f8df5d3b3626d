/* xla_array._graphcore: the graph's hot path in C (a CPython extension, built at install).
 *
 * The same objects and functions as the pure-Python definitions in ``_graph.py``, which stay
 * the reference and the fallback (no C compiler at install, or XLA_ARRAY_NATIVE=0):
 *   Node                     the node type: same attributes, ``pending``, ``set_buffer``
 *   record(op, inputs, attrs=(), device=None)
 *   user_frame()             (filename, line) of the innermost frame outside the package
 *   buffer_leaf(buf, shape, dtype, device, committed=False), scalar_leaf(value, dtype, device)
 *   plan_graph(roots, writeback=True)  order, leaves, outputs and structural key of a graph
 * and, for ``_array``, the base class of Array (``ArrayBase``: its node, view and the node's
 * count of handles) and ``wrap(node)``, which every recorded op returns through.
 * ``configure(...)`` hands over the Python objects they share with ``_graph`` (the BUFFER and
 * SCALAR op sentinels, the file-name memo of ``user_frame``, the package folder, and
 * ``_mixed_devices``, which record() calls for operands on different placements).
 * ``has_subnormal(a)`` serves the first-use tier (``hosteval.py``, ``ops/host.py``): whether
 * a C-contiguous float32/float64 buffer holds a subnormal number, in one pass,
 * ``transpose_into(src, dst, m, n)`` copies its Fortran-ordered matrices into C order (and
 * back) in cache-sized tiles, and ``numpy_allocator(handler)`` gives it NumPy arrays at XLA's
 * 64-byte alignment.
 * Nothing here recurses: a Node's deallocation goes through CPython's trashcan, so freeing a
 * chain of 100,000 nodes does not grow the C stack.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>
#include <structmember.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    PyObject_HEAD
    PyObject *op, *inputs, *attrs, *shape, *dtype, *device, *buffer, *value, *results, *where,
        *committed;
    Py_ssize_t depth, users;
    /* plan_graph's scratch: how many inputs tuples of the graph being planned hold this node
     * (set when the node joins the plan's order, counted as its users join it) */
    Py_ssize_t plan_uses;
    /* the write-back epoch at which `depth` was exact (see refresh_depth) */
    Py_ssize_t epoch;
    PyObject *weakreflist;
    /* where, not computed yet: the user frame's code and its last instruction (bytes); the
     * line number is looked up when `where` is first read (errors, metrics, lowering) */
    PyObject *code;
    int lasti;
    Py_ssize_t seq;  /* creation order (wrap's auto-flush tells loop iterations apart by it) */
} NodeObject;

static Py_ssize_t node_seq;
/* advanced by every write-back (advance_epoch): a pending node's depth, computed from its
 * inputs' when recorded, is exact only while none of the nodes below it was computed since */
static Py_ssize_t wb_epoch = 1;

static PyTypeObject NodeType;

/* set by configure() */
static PyObject *BUFFER, *SCALAR, *internal, *pkg_dir, *mixed_devices;
static PyObject *s_infer, *s_weight, *s_name, *s_nout, *s_keep, *s_check, *s_B, *s_S, *s_unknown,
    *empty_tuple;

#define IS_NODE(o) Py_IS_TYPE((o), &NodeType)

static NodeObject *
node_alloc(PyObject *op, PyObject *inputs, PyObject *attrs, PyObject *shape, PyObject *dtype,
           PyObject *device, Py_ssize_t depth, PyObject *where, PyObject *committed)
{
    NodeObject *n = PyObject_GC_New(NodeObject, &NodeType);
    if (n == NULL)
        return NULL;
    n->op = Py_NewRef(op);
    n->inputs = Py_NewRef(inputs);
    n->attrs = Py_NewRef(attrs);
    n->shape = Py_NewRef(shape);
    n->dtype = Py_NewRef(dtype);
    n->device = Py_NewRef(device);
    n->buffer = Py_NewRef(Py_None);
    n->value = Py_NewRef(Py_None);
    n->results = Py_NewRef(Py_None);
    n->where = Py_XNewRef(where);
    n->committed = Py_NewRef(committed);
    n->depth = depth;
    n->users = 0;
    n->plan_uses = 0;
    n->epoch = 0;
    n->weakreflist = NULL;
    n->code = NULL;
    n->lasti = 0;
    n->seq = ++node_seq;
    PyObject_GC_Track(n);
    return n;
}

static int
node_traverse(NodeObject *n, visitproc visit, void *arg)
{
    Py_VISIT(n->op);
    Py_VISIT(n->inputs);
    Py_VISIT(n->attrs);
    Py_VISIT(n->shape);
    Py_VISIT(n->dtype);
    Py_VISIT(n->device);
    Py_VISIT(n->buffer);
    Py_VISIT(n->value);
    Py_VISIT(n->results);
    Py_VISIT(n->where);
    Py_VISIT(n->committed);
    Py_VISIT(n->code);
    return 0;
}

static int
node_clear(NodeObject *n)
{
    Py_CLEAR(n->op);
    Py_CLEAR(n->inputs);
    Py_CLEAR(n->attrs);
    Py_CLEAR(n->shape);
    Py_CLEAR(n->dtype);
    Py_CLEAR(n->device);
    Py_CLEAR(n->buffer);
    Py_CLEAR(n->value);
    Py_CLEAR(n->results);
    Py_CLEAR(n->where);
    Py_CLEAR(n->committed);
    Py_CLEAR(n->code);
    return 0;
}

static void
node_dealloc(NodeObject *n)
{
    PyObject_GC_UnTrack(n);
    Py_TRASHCAN_BEGIN(n, node_dealloc)
    if (n->weakreflist != NULL)
        PyObject_ClearWeakRefs((PyObject *)n);
    node_clear(n);
    PyObject_GC_Del(n);
    Py_TRASHCAN_END
}

/* Node(op, inputs, attrs, shape, dtype, device, depth, where, committed=False) */
static PyObject *
node_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kw[] = {"op", "inputs", "attrs", "shape", "dtype", "device", "depth", "where",
                         "committed", NULL};
    PyObject *op, *inputs, *attrs, *shape, *dtype, *device, *where, *committed = Py_False;
    Py_ssize_t depth;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOOnO|O:Node", kw, &op, &inputs, &attrs,
                                     &shape, &dtype, &device, &depth, &where, &committed))
        return NULL;
    return (PyObject *)node_alloc(op, inputs, attrs, shape, dtype, device, depth, where,
                                  committed);
}

static PyObject *
node_pending(NodeObject *n, void *closure)
{
    return Py_NewRef(n->buffer == Py_None && n->op != SCALAR ? Py_True : Py_False);
}

/* Truncate: this node is now a buffer leaf. */
static PyObject *
node_set_buffer(NodeObject *n, PyObject *buf)
{
    Py_SETREF(n->buffer, Py_NewRef(buf));
    Py_SETREF(n->inputs, Py_NewRef(empty_tuple));
    Py_SETREF(n->op, Py_NewRef(BUFFER));
    Py_SETREF(n->value, Py_NewRef(Py_None));
    n->depth = 0;
    Py_RETURN_NONE;
}

static PyObject *
node_repr(NodeObject *n)
{
    PyObject *opname = NULL, *dtname = NULL, *shape = NULL, *r = NULL;
    if (n->op == NULL || n->dtype == NULL || n->shape == NULL)
        return PyUnicode_FromString("<node>");
    opname = PyObject_GetAttr(n->op, s_name);
    dtname = opname ? PyObject_GetAttr(n->dtype, s_name) : NULL;
    shape = dtname ? PySequence_List(n->shape) : NULL;
    if (shape)
        r = PyUnicode_FromFormat("<node %S %S%R>", opname, dtname, shape);
    Py_XDECREF(opname);
    Py_XDECREF(dtname);
    Py_XDECREF(shape);
    return r;
}

static PyMemberDef node_members[] = {
    {"op", T_OBJECT_EX, offsetof(NodeObject, op), 0, NULL},
    {"inputs", T_OBJECT_EX, offsetof(NodeObject, inputs), 0, NULL},
    {"attrs", T_OBJECT_EX, offsetof(NodeObject, attrs), 0, NULL},
    {"shape", T_OBJECT_EX, offsetof(NodeObject, shape), 0, NULL},
    {"dtype", T_OBJECT_EX, offsetof(NodeObject, dtype), 0, NULL},
    {"device", T_OBJECT_EX, offsetof(NodeObject, device), 0, NULL},
    {"buffer", T_OBJECT_EX, offsetof(NodeObject, buffer), 0, NULL},
    {"value", T_OBJECT_EX, offsetof(NodeObject, value), 0,
     "a scalar leaf's value (its runtime parameter); None otherwise"},
    {"results", T_OBJECT_EX, offsetof(NodeObject, results), 0,
     "a multi-result op's results: weak references to its get nodes"},
    {"committed", T_OBJECT_EX, offsetof(NodeObject, committed), 0,
     "placed on its device on purpose, or computed from such an array"},
    {"depth", T_PYSSIZET, offsetof(NodeObject, depth), 0,
     "the pending graph's depth up to this node (auto-flush budget)"},
    {"users", T_PYSSIZET, offsetof(NodeObject, users), 0, "number of Array handles on the node"},
    {"epoch", T_PYSSIZET, offsetof(NodeObject, epoch), 0,
     "the write-back epoch at which depth was exact (refresh_depth)"},
    {NULL}
};

static PyObject *
node_get_where(NodeObject *n, void *closure)
{
    if (n->where == NULL && n->code != NULL) {
        /* held: an allocation below may run a finalizer that lets another thread read
         * (and clear) the same node's where meanwhile */
        PyCodeObject *code = (PyCodeObject *)Py_NewRef(n->code);
        PyObject *ln = PyLong_FromLong(PyCode_Addr2Line(code, n->lasti));
        PyObject *w = ln ? PyTuple_Pack(2, code->co_filename, ln) : NULL;
        Py_XDECREF(ln);
        Py_DECREF(code);
        if (w == NULL)
            return NULL;
        Py_XSETREF(n->where, w);
        Py_CLEAR(n->code);
    }
    if (n->where == NULL) {
        PyErr_SetString(PyExc_AttributeError, "where");
        return NULL;
    }
    return Py_NewRef(n->where);
}

static int
node_set_where(NodeObject *n, PyObject *v, void *closure)
{
    Py_XSETREF(n->where, Py_XNewRef(v));
    Py_CLEAR(n->code);
    return 0;
}

static PyGetSetDef node_getset[] = {
    {"where", (getter)node_get_where, (setter)node_set_where,
     "(filename, line) of the user frame that recorded the node", NULL},
    {"pending", (getter)node_pending, NULL, "not computed yet (and not a scalar parameter)", NULL},
    {NULL}
};

static PyMethodDef node_methods[] = {
    {"set_buffer", (PyCFunction)node_set_buffer, METH_O, "Truncate: the node becomes a buffer leaf."},
    {NULL}
};

static PyTypeObject NodeType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "xla_array._graphcore.Node",
    .tp_basicsize = sizeof(NodeObject),
    .tp_dealloc = (destructor)node_dealloc,
    .tp_repr = (reprfunc)node_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A recorded operation (see xla_array._graph).",
    .tp_traverse = (traverseproc)node_traverse,
    .tp_clear = (inquiry)node_clear,
    .tp_weaklistoffset = offsetof(NodeObject, weakreflist),
    .tp_methods = node_methods,
    .tp_members = node_members,
    .tp_getset = node_getset,
    .tp_new = node_new,
};

/* The innermost frame whose file is not in the package, from frame (borrowed) outward: its
 * code (a new reference) and last instruction, or *code = NULL when every frame is inside.
 * Files are classified once (the memo dict shared with _graph.user_frame). */
static int
find_user_frame(PyFrameObject *frame, PyObject **code_out, int *lasti_out)
{
    PyFrameObject *f = (PyFrameObject *)Py_XNewRef(frame);
    *code_out = NULL;
    while (f != NULL) {
        PyCodeObject *code = PyFrame_GetCode(f);
        PyObject *fn = code->co_filename;
        PyObject *inside = PyDict_GetItemWithError(internal, fn);
        if (inside == NULL) {
            Py_ssize_t m = PyErr_Occurred() ? -1 : PyUnicode_Check(fn)
                ? PyUnicode_Tailmatch(fn, pkg_dir, 0, PY_SSIZE_T_MAX, -1) : 0;
            inside = m ? Py_True : Py_False;
            if (m < 0 || PyDict_SetItem(internal, fn, inside) < 0) {
                Py_DECREF(code);
                Py_DECREF(f);
                return -1;
            }
        }
        if (inside != Py_True) {
            *lasti_out = PyFrame_GetLasti(f);
            if (*lasti_out < 0)  /* no instruction run yet: not for a frame calling us */
                *lasti_out = 0;
            *code_out = (PyObject *)code;
            Py_DECREF(f);
            return 0;
        }
        Py_DECREF(code);
        PyFrameObject *back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    return 0;
}

static PyObject *
user_frame(PyObject *mod, PyObject *unused)
{
    PyObject *code;
    int lasti;
    if (find_user_frame(PyEval_GetFrame(), &code, &lasti) < 0)
        return NULL;
    if (code == NULL)
        return Py_NewRef(s_unknown);
    PyObject *r = Py_BuildValue("(Oi)", ((PyCodeObject *)code)->co_filename,
                                PyCode_Addr2Line((PyCodeObject *)code, lasti));
    Py_DECREF(code);
    return r;
}

/* record(op, inputs, attrs=(), device=None): validate (op.infer) and create a node. */
static PyObject *
record(PyObject *mod, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *op, *inputs, *attrs = empty_tuple, *device = Py_None;
    PyObject *infer = NULL, *res = NULL, *shape = NULL, *code = NULL, *result = NULL;
    int lasti = 0;
    PyObject *committed = Py_False;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs > 4) {
        PyErr_SetString(PyExc_TypeError, "record(op, inputs, attrs=(), device=None)");
        return NULL;
    }
    PyObject *slots[4] = {NULL, NULL, empty_tuple, Py_None};
    for (Py_ssize_t i = 0; i < nargs; i++)
        slots[i] = args[i];
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *k = PyTuple_GET_ITEM(kwnames, i);
        int j = -1;
        if (PyUnicode_CompareWithASCIIString(k, "op") == 0) j = 0;
        else if (PyUnicode_CompareWithASCIIString(k, "inputs") == 0) j = 1;
        else if (PyUnicode_CompareWithASCIIString(k, "attrs") == 0) j = 2;
        else if (PyUnicode_CompareWithASCIIString(k, "device") == 0) j = 3;
        if (j < nargs) {
            PyErr_Format(PyExc_TypeError, "record() got an unexpected or repeated argument %R",
                         k);
            return NULL;
        }
        slots[j] = args[nargs + i];
    }
    if (slots[0] == NULL || slots[1] == NULL) {
        PyErr_SetString(PyExc_TypeError, "record() needs op and inputs");
        return NULL;
    }
    op = slots[0];
    attrs = slots[2];
    device = slots[3];
    inputs = PySequence_Tuple(slots[1]);
    if (inputs == NULL)
        return NULL;
    Py_INCREF(device);  /* held until done (it may be replaced below) */

    Py_ssize_t n = PyTuple_GET_SIZE(inputs), depth = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!IS_NODE(PyTuple_GET_ITEM(inputs, i))) {
            PyErr_Format(PyExc_TypeError, "record(): input %zd is a %s, not a Node", i,
                         Py_TYPE(PyTuple_GET_ITEM(inputs, i))->tp_name);
            goto done;
        }
    }
    infer = PyObject_GetAttr(op, s_infer);
    if (infer == NULL)
        goto done;
    {
        PyObject *iargs[2] = {inputs, attrs};
        res = PyObject_Vectorcall(infer, iargs, 2, NULL);
    }
    if (res == NULL)
        goto done;
    if (!PyTuple_CheckExact(res) || PyTuple_GET_SIZE(res) != 2) {
        PyObject *t = PySequence_Tuple(res);
        Py_SETREF(res, t);
        if (res == NULL)
            goto done;
        if (PyTuple_GET_SIZE(res) != 2) {
            PyErr_SetString(PyExc_ValueError, "an op's infer must return (shape, dtype)");
            goto done;
        }
    }
    shape = PySequence_Tuple(PyTuple_GET_ITEM(res, 0));
    if (shape == NULL)
        goto done;
    PyObject *dtype = PyTuple_GET_ITEM(res, 1);

    if (device == Py_None) {
        if (n == 0) {
            PyErr_SetString(PyExc_ValueError, "record(): no inputs and no device");
            goto done;
        }
        Py_SETREF(device, Py_NewRef(((NodeObject *)PyTuple_GET_ITEM(inputs, 0))->device));
        for (Py_ssize_t i = 0; i < n; i++) {
            NodeObject *x = (NodeObject *)PyTuple_GET_ITEM(inputs, i);
            if (x->device != device && x->op != SCALAR) {
                int ne = PyObject_RichCompareBool(x->device, device, Py_NE);
                if (ne < 0)
                    goto done;
                if (ne) {
                    PyObject *margs[2] = {op, inputs};
                    PyObject *m = PyObject_Vectorcall(mixed_devices, margs, 2, NULL);
                    if (m == NULL)
                        goto done;
                    if (!PyTuple_CheckExact(m) || PyTuple_GET_SIZE(m) != 4) {
                        Py_DECREF(m);
                        PyErr_SetString(PyExc_SystemError, "_mixed_devices: not a 4-tuple");
                        goto done;
                    }
                    Py_SETREF(inputs, Py_NewRef(PyTuple_GET_ITEM(m, 0)));
                    Py_SETREF(device, Py_NewRef(PyTuple_GET_ITEM(m, 1)));
                    depth = PyLong_AsSsize_t(PyTuple_GET_ITEM(m, 2));
                    committed = PyObject_IsTrue(PyTuple_GET_ITEM(m, 3)) ? Py_True : Py_False;
                    Py_DECREF(m);
                    if (depth == -1 && PyErr_Occurred())
                        goto done;
                    break;
                }
            }
            if (x->depth > depth)
                depth = x->depth;
            if (x->committed != Py_False) {
                int t = PyObject_IsTrue(x->committed);
                if (t < 0)
                    goto done;
                if (t)
                    committed = Py_True;
            }
        }
    } else {
        for (Py_ssize_t i = 0; i < n; i++) {
            NodeObject *x = (NodeObject *)PyTuple_GET_ITEM(inputs, i);
            if (x->depth > depth)
                depth = x->depth;
            if (x->committed != Py_False) {
                int t = PyObject_IsTrue(x->committed);
                if (t < 0)
                    goto done;
                if (t)
                    committed = Py_True;
            }
        }
    }
    {
        PyObject *w = PyObject_GetAttr(op, s_weight);
        if (w == NULL)
            goto done;
        Py_ssize_t weight = PyLong_AsSsize_t(w);
        Py_DECREF(w);
        if (weight == -1 && PyErr_Occurred())
            goto done;
        depth += weight;
    }
    if (find_user_frame(PyEval_GetFrame(), &code, &lasti) < 0)
        goto done;
    NodeObject *node = node_alloc(op, inputs, attrs, shape, dtype, device, depth,
                                  code == NULL ? s_unknown : NULL, committed);
    if (node != NULL && code != NULL) {
        node->code = code;  /* the reference moves to the node */
        node->lasti = lasti;
        code = NULL;
    }
    if (node != NULL) {  /* its depth is exact if every pending input's is */
        Py_ssize_t k = PyTuple_GET_SIZE(node->inputs), i = 0;
        for (; i < k; i++) {
            NodeObject *x = (NodeObject *)PyTuple_GET_ITEM(node->inputs, i);
            if (x->buffer == Py_None && x->op != SCALAR && x->epoch != wb_epoch)
                break;
        }
        node->epoch = i == k ? wb_epoch : 0;
    }
    result = (PyObject *)node;
done:
    Py_DECREF(device);
    Py_DECREF(inputs);
    Py_XDECREF(infer);
    Py_XDECREF(res);
    Py_XDECREF(shape);
    Py_XDECREF(code);
    return result;
}

static PyObject *
buffer_leaf(PyObject *mod, PyObject *args, PyObject *kwds)
{
    static char *kw[] = {"buf", "shape", "dtype", "device", "committed", NULL};
    PyObject *buf, *shape, *dtype, *device, *committed = Py_False;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOO|O:buffer_leaf", kw, &buf, &shape, &dtype,
                                     &device, &committed))
        return NULL;
    NodeObject *n = node_alloc(BUFFER, empty_tuple, empty_tuple, shape, dtype, device, 0,
                               Py_None, committed);
    if (n != NULL)
        Py_SETREF(n->buffer, Py_NewRef(buf));
    return (PyObject *)n;
}

/* A runtime scalar parameter: its value is an argument of the executable, never a constant. */
static PyObject *
scalar_leaf(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "scalar_leaf(value, dtype, device)");
        return NULL;
    }
    NodeObject *n = node_alloc(SCALAR, empty_tuple, empty_tuple, empty_tuple, args[1], args[2], 0,
                               Py_None, Py_False);
    if (n != NULL)
        Py_SETREF(n->value, Py_NewRef(args[0]));
    return (PyObject *)n;
}

/* Append ("B", shape, dtype.name) or ("S", dtype.name) for leaf x, numbering it. */
static int
add_leaf(PyObject *index, PyObject *parts, PyObject *list, NodeObject *x, int is_buffer)
{
    PyObject *pos = PyLong_FromSsize_t(PyList_GET_SIZE(parts));
    if (pos == NULL)
        return -1;
    int rc = PyDict_SetItem(index, (PyObject *)x, pos);
    Py_DECREF(pos);
    if (rc < 0)
        return -1;
    PyObject *dn = PyObject_GetAttr(x->dtype, s_name);
    if (dn == NULL)
        return -1;
    PyObject *t = is_buffer ? PyTuple_Pack(3, s_B, x->shape, dn) : PyTuple_Pack(2, s_S, dn);
    Py_DECREF(dn);
    if (t == NULL)
        return -1;
    rc = PyList_Append(parts, t);
    Py_DECREF(t);
    if (rc < 0)
        return -1;
    return PyList_Append(list, (PyObject *)x);
}

/* Append (op.name, attrs, shape, dtype.name, input positions) for node n, numbering it. */
static int
add_op(PyObject *index, PyObject *parts, NodeObject *n, PyObject *positions)
{
    PyObject *pos = PyLong_FromSsize_t(PyList_GET_SIZE(parts));
    if (pos == NULL)
        return -1;
    int rc = PyDict_SetItem(index, (PyObject *)n, pos);
    Py_DECREF(pos);
    if (rc < 0)
        return -1;
    PyObject *on = PyObject_GetAttr(n->op, s_name);
    PyObject *dn = on ? PyObject_GetAttr(n->dtype, s_name) : NULL;
    PyObject *t = dn ? PyTuple_Pack(5, on, n->attrs, n->shape, dn, positions) : NULL;
    Py_XDECREF(on);
    Py_XDECREF(dn);
    if (t == NULL)
        return -1;
    rc = PyList_Append(parts, t);
    Py_DECREF(t);
    return rc;
}

/* One visit of pending node n (top of the stack, inputs ins): number its unnumbered leaf
 * inputs, push its unnumbered pending inputs; if none, pop it and append its key part. */
static int
plan_node(PyObject *index, PyObject *parts, PyObject *order, PyObject *bufs, PyObject *scalars,
          PyObject *stack, NodeObject *n, PyObject *ins, Py_ssize_t top)
{
    Py_ssize_t k = PyTuple_GET_SIZE(ins);
    int waiting = 0;
    for (Py_ssize_t i = 0; i < k; i++) {
        NodeObject *x = (NodeObject *)PyTuple_GET_ITEM(ins, i);
        if (!IS_NODE(x)) {
            PyErr_SetString(PyExc_TypeError, "plan_graph: an input is not a Node");
            return -1;
        }
        int has = PyDict_Contains(index, (PyObject *)x);
        if (has < 0)
            return -1;
        if (has)
            continue;
        if (x->buffer != Py_None) {
            if (add_leaf(index, parts, bufs, x, 1) < 0)
                return -1;
        } else if (x->op == SCALAR) {
            if (add_leaf(index, parts, scalars, x, 0) < 0)
                return -1;
        } else {
            if (PyList_Append(stack, (PyObject *)x) < 0)
                return -1;
            waiting = 1;
        }
    }
    if (waiting)
        return 0;
    PyObject *t = PyTuple_New(k);
    if (t == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < k; i++) {
        NodeObject *x = (NodeObject *)PyTuple_GET_ITEM(ins, i);
        PyObject *p = PyDict_GetItemWithError(index, (PyObject *)x);
        if (p == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_SystemError, "plan_graph: unnumbered input");
            Py_DECREF(t);
            return -1;
        }
        PyTuple_SET_ITEM(t, i, Py_NewRef(p));
        if (x->buffer == Py_None && x->op != SCALAR)  /* a pending input: in order already */
            x->plan_uses++;
    }
    n->plan_uses = 0;
    int rc = add_op(index, parts, n, t);
    Py_DECREF(t);
    if (rc == 0)
        rc = PyList_Append(order, (PyObject *)n);
    if (rc == 0)  /* n is in order now, so it stays alive */
        rc = PyList_SetSlice(stack, top, top + 1, NULL);
    return rc;
}

/* Append n to the outputs unless it is one of the roots (rs: their set, NULL for one root,
 * which the caller has skipped already). */
static int
add_output(PyObject *outs, PyObject *rs, NodeObject *n)
{
    if (rs != NULL) {
        int in = PySet_Contains(rs, (PyObject *)n);
        if (in != 0)
            return in < 0 ? -1 : 0;
    }
    return PyList_Append(outs, (PyObject *)n);
}

/* plan_graph(roots, writeback=True): the same result as _graph's pure-Python plan_graph
 * (see there). */
static PyObject *
plan_graph(PyObject *mod, PyObject *args, PyObject *kwds)
{
    static char *kw[] = {"roots", "writeback", NULL};
    PyObject *roots_arg;
    int writeback = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|p:plan_graph", kw, &roots_arg, &writeback))
        return NULL;
    PyObject *roots = PySequence_List(roots_arg);
    PyObject *index = PyDict_New(), *parts = PyList_New(0), *order = PyList_New(0);
    PyObject *bufs = PyList_New(0), *scalars = PyList_New(0), *stack = PyList_New(0);
    PyObject *outs = NULL, *rs = NULL, *siblings = NULL, *result = NULL;
    if (!roots || !index || !parts || !order || !bufs || !scalars || !stack)
        goto done;
    Py_ssize_t nroots = PyList_GET_SIZE(roots);
    if (nroots == 0) {
        PyErr_SetString(PyExc_ValueError, "plan_graph: no roots");
        goto done;
    }
    for (Py_ssize_t r = 0; r < nroots; r++) {
        NodeObject *root = (NodeObject *)PyList_GET_ITEM(roots, r);
        if (!IS_NODE(root)) {
            PyErr_SetString(PyExc_TypeError, "plan_graph: a root is not a Node");
            goto done;
        }
        int has = PyDict_Contains(index, (PyObject *)root);
        if (has < 0)
            goto done;
        if (has)
            continue;
        if (root->buffer != Py_None || root->op == SCALAR) {  /* a leaf asked for as a root */
            int sc = root->op == SCALAR;
            if (add_leaf(index, parts, sc ? scalars : bufs, root, !sc) < 0)
                goto done;
            continue;
        }
        if (PyList_Append(stack, (PyObject *)root) < 0)
            goto done;
        while (PyList_GET_SIZE(stack) > 0) {
            Py_ssize_t top = PyList_GET_SIZE(stack) - 1;
            NodeObject *n = (NodeObject *)PyList_GET_ITEM(stack, top);
            has = PyDict_Contains(index, (PyObject *)n);
            if (has < 0)
                goto done;
            if (has) {
                if (PyList_SetSlice(stack, top, top + 1, NULL) < 0)
                    goto done;
                continue;
            }
            PyObject *ins = n->inputs;
            if (!PyTuple_Check(ins)) {
                PyErr_SetString(PyExc_TypeError, "plan_graph: a node's inputs are not a tuple");
                goto done;
            }
            /* held: a finalizer run by an allocation below may let another thread truncate n */
            Py_INCREF(ins);
            int err = plan_node(index, parts, order, bufs, scalars, stack, n, ins, top);
            Py_DECREF(ins);
            if (err < 0)
                goto done;
        }
    }
    /* outputs: the roots, then every pending node that something outside the graph still
     * holds (an Array, or a pending node a later graph will compute: reference counts beyond
     * the plan's own) or whose op is keep, then the live results of multi-result ops that the roots do not reach; without writeback, the
     * roots, then the nodes of run-time checks (op.check not None) */
    outs = PyList_GetSlice(roots, 0, nroots);
    if (outs == NULL)
        goto done;
    if (nroots > 1 && (rs = PySet_New(roots)) == NULL)
        goto done;
    PyObject *r0 = PyList_GET_ITEM(roots, 0);
    Py_ssize_t norder = PyList_GET_SIZE(order);
    for (Py_ssize_t j = 0; j < norder; j++) {
        NodeObject *n = (NodeObject *)PyList_GET_ITEM(order, j);
        if (!writeback) {
            if ((PyObject *)n == r0)
                continue;
            PyObject *c = PyObject_GetAttr(n->op, s_check);
            if (c == NULL)
                goto done;
            int want = c != Py_None;
            Py_DECREF(c);
            if (want && add_output(outs, rs, n) < 0)
                goto done;
            continue;
        }
        PyObject *a = PyObject_GetAttr(n->op, s_nout);
        if (a == NULL)
            goto done;
        Py_ssize_t nout = PyLong_AsSsize_t(a);
        Py_DECREF(a);
        if (nout == -1 && PyErr_Occurred())
            goto done;
        if (nout == 1) {
            if ((PyObject *)n == r0)
                continue;
            /* held: by an Array, or by anything beyond this plan's index, order and the
             * inputs of its nodes (a pending node outside the graph: the next step of a
             * loop, which would compute n again) */
            int want = n->users > 0 || Py_REFCNT(n) - 2 - n->plan_uses > 0;
            if (!want) {
                a = PyObject_GetAttr(n->op, s_keep);
                if (a == NULL)
                    goto done;
                want = PyObject_IsTrue(a);
                Py_DECREF(a);
                if (want < 0)
                    goto done;
            }
            if (want && add_output(outs, rs, n) < 0)
                goto done;
        } else if (n->results != Py_None) {
            PyObject *it = PyObject_GetIter(n->results);
            if (it == NULL)
                goto done;
            PyObject *ref;
            while ((ref = PyIter_Next(it)) != NULL) {
                PyObject *g = PyObject_CallNoArgs(ref);
                Py_DECREF(ref);
                if (g == NULL)
                    break;
                int take = 0;
                if (IS_NODE(g) && ((NodeObject *)g)->buffer == Py_None) {
                    take = PyDict_Contains(index, g);
                    if (take >= 0)
                        take = !take;
                }
                if (take > 0) {
                    PyObject *np = PyDict_GetItemWithError(index, (PyObject *)n);
                    PyObject *t = np ? PyTuple_Pack(1, np) : NULL;
                    if (t == NULL) {
                        if (!PyErr_Occurred())
                            PyErr_SetString(PyExc_SystemError, "plan_graph: unnumbered node");
                        take = -1;
                    } else {
                        take = add_op(index, parts, (NodeObject *)g, t);
                        Py_DECREF(t);
                        if (take == 0 && siblings == NULL && (siblings = PyList_New(0)) == NULL)
                            take = -1;
                        if (take == 0)
                            take = PyList_Append(siblings, g);
                    }
                }
                Py_DECREF(g);
                if (take < 0)
                    break;
            }
            Py_DECREF(it);
            if (PyErr_Occurred())
                goto done;
        }
    }
    if (siblings != NULL) {  /* after the scan, as in the Python reference */
        if (PyList_SetSlice(order, norder, norder, siblings) < 0
            || PyList_SetSlice(outs, PyList_GET_SIZE(outs), PyList_GET_SIZE(outs), siblings) < 0)
            goto done;
    }
    {
        Py_ssize_t no = PyList_GET_SIZE(outs);
        PyObject *t = PyTuple_New(no);
        if (t == NULL)
            goto done;
        for (Py_ssize_t i = 0; i < no; i++) {
            PyObject *p = PyDict_GetItemWithError(index, PyList_GET_ITEM(outs, i));
            if (p == NULL) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_SystemError, "plan_graph: unnumbered output");
                Py_DECREF(t);
                goto done;
            }
            PyTuple_SET_ITEM(t, i, Py_NewRef(p));
        }
        int rc = PyList_Append(parts, t);
        Py_DECREF(t);
        if (rc < 0)
            goto done;
    }
    {
        PyObject *key = PyList_AsTuple(parts);
        if (key != NULL)
            result = PyTuple_Pack(5, order, bufs, scalars, outs, key);
        Py_XDECREF(key);
    }
done:
    Py_XDECREF(roots);
    Py_XDECREF(index);
    Py_XDECREF(parts);
    Py_XDECREF(order);
    Py_XDECREF(bufs);
    Py_XDECREF(scalars);
    Py_XDECREF(stack);
    Py_XDECREF(outs);
    Py_XDECREF(rs);
    Py_XDECREF(siblings);
    return result;
}

/* refresh_depth(node): recompute the depth of a node whose depth may be stale (recorded on
 * pending nodes that were computed since: a loop's state, whose check wrote back the values
 * it reads) from its pending graph, in one iterative pass that stops at nodes whose depth is
 * exact (epoch), and mark them exact. Without it a loop's state, recorded step after step on
 * the previous step's pending update, looked ever deeper and was auto-flushed although its
 * pending graph stayed one step long. */
static int
refresh_depth_of(NodeObject *root)
{
    if (root->buffer != Py_None || root->op == SCALAR || root->epoch == wb_epoch)
        return 0;
    PyObject *stack = PyList_New(0);
    if (stack == NULL || PyList_Append(stack, (PyObject *)root) < 0) {
        Py_XDECREF(stack);
        return -1;
    }
    int rc = 0;
    while (PyList_GET_SIZE(stack) > 0) {
        Py_ssize_t top = PyList_GET_SIZE(stack) - 1;
        NodeObject *n = (NodeObject *)PyList_GET_ITEM(stack, top);
        if (n->epoch == wb_epoch || n->buffer != Py_None || !PyTuple_Check(n->inputs)) {
            if ((rc = PyList_SetSlice(stack, top, top + 1, NULL)) < 0)
                break;
            continue;
        }
        Py_ssize_t k = PyTuple_GET_SIZE(n->inputs), depth = 0;
        int waiting = 0;
        for (Py_ssize_t i = 0; i < k; i++) {
            NodeObject *x = (NodeObject *)PyTuple_GET_ITEM(n->inputs, i);
            if (!IS_NODE(x) || x->buffer != Py_None || x->op == SCALAR)
                continue;
            if (x->epoch != wb_epoch) {
                if ((rc = PyList_Append(stack, (PyObject *)x)) < 0)
                    break;
                waiting = 1;
            } else if (x->depth > depth) {
                depth = x->depth;
            }
        }
        if (rc < 0)
            break;
        if (waiting)
            continue;
        PyObject *w = PyObject_GetAttr(n->op, s_weight);
        Py_ssize_t weight = w == NULL ? -1 : PyLong_AsSsize_t(w);
        Py_XDECREF(w);
        if (weight == -1 && PyErr_Occurred()) {
            rc = -1;
            break;
        }
        n->depth = depth + weight;
        n->epoch = wb_epoch;
        if ((rc = PyList_SetSlice(stack, top, top + 1, NULL)) < 0)
            break;
    }
    Py_DECREF(stack);
    return rc;
}

static PyObject *
refresh_depth(PyObject *mod, PyObject *node)
{
    if (!IS_NODE(node)) {
        PyErr_Format(PyExc_TypeError, "refresh_depth() takes a Node, not a %s",
                     Py_TYPE(node)->tp_name);
        return NULL;
    }
    if (refresh_depth_of((NodeObject *)node) < 0)
        return NULL;
    return PyLong_FromSsize_t(((NodeObject *)node)->depth);
}

/* advance_epoch(): nodes were computed (a write-back): the depths of pending nodes recorded
 * on them may be stale from now on */
static PyObject *
advance_epoch(PyObject *mod, PyObject *unused)
{
    wb_epoch++;
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ the Array handle */

/* ArrayBase: the part of xla_array.Array that every recorded op creates and frees: the node
 * (`_node`), the view record (`_view`) and the node's count of Array handles (`users`), kept
 * up to date when a handle is made and when it is freed. Array subclasses it in Python. */
typedef struct {
    PyObject_HEAD
    PyObject *node, *view;
    PyObject *weakreflist;
} HandleObject;

static PyTypeObject HandleType;
static PyTypeObject *array_type;  /* xla_array.Array, set by configure_array */
static PyObject *flush_fn, *cut_fn, *flag_values, *s_max_pending;
static PyObject *loop_state;  /* [cut yet, weak references]: api/array.py's _loop */
#define LOOP_CAP 4096              /* api/array.py's _LOOP_CAP */
/* the user code object and instruction offset of the last node wrap() saw (see wrap) */
static PyObject *prev_code;
static int prev_lasti;

static int
handle_clear(HandleObject *h)
{
    if (h->node != NULL && IS_NODE(h->node))
        ((NodeObject *)h->node)->users--;
    Py_CLEAR(h->node);
    Py_CLEAR(h->view);
    return 0;
}

static int
handle_traverse(HandleObject *h, visitproc visit, void *arg)
{
    Py_VISIT(h->node);
    Py_VISIT(h->view);
    return 0;
}

static void
handle_dealloc(HandleObject *h)
{
    PyObject_GC_UnTrack(h);
    if (h->weakreflist != NULL)
        PyObject_ClearWeakRefs((PyObject *)h);
    handle_clear(h);
    Py_TYPE(h)->tp_free((PyObject *)h);
}

static PyObject *
handle_make(PyTypeObject *type, PyObject *node)
{
    if (node != NULL && !IS_NODE(node)) {
        PyErr_Format(PyExc_TypeError, "an Array holds a graph Node, not a %s",
                     Py_TYPE(node)->tp_name);
        return NULL;
    }
    HandleObject *h = (HandleObject *)type->tp_alloc(type, 0);
    if (h == NULL)
        return NULL;
    h->view = Py_NewRef(Py_None);
    if (node != NULL) {
        h->node = Py_NewRef(node);
        ((NodeObject *)node)->users++;
    }
    return (PyObject *)h;
}

/* Array(node); Array() (unpickling: __setstate__ sets the node) */
static PyObject *
handle_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *node = NULL;
    if (kwds != NULL && PyDict_GET_SIZE(kwds) != 0) {
        PyErr_SetString(PyExc_TypeError, "Array(node) takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_UnpackTuple(args, "Array", 0, 1, &node))
        return NULL;
    return handle_make(type, node);
}

static PyMemberDef handle_members[] = {
    {"_node", T_OBJECT_EX, offsetof(HandleObject, node), 0, "the graph node"},
    {"_view", T_OBJECT_EX, offsetof(HandleObject, view), 0,
     "(weakref to base, key, weakref to base's node, depth) of a view, else None"},
    {NULL}
};

static PyTypeObject HandleType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "xla_array._graphcore.ArrayBase",
    .tp_basicsize = sizeof(HandleObject),
    .tp_dealloc = (destructor)handle_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The handle part of xla_array.Array: its node and view.",
    .tp_traverse = (traverseproc)handle_traverse,
    .tp_clear = (inquiry)handle_clear,
    .tp_weaklistoffset = offsetof(HandleObject, weakreflist),
    .tp_members = handle_members,
    .tp_new = handle_new,
};

/* wrap(node): an Array of a freshly recorded node. Once the pending graph is past
 * max_pending (a node deeper than that), it is auto-flushed at the start of the next loop
 * iteration. The loop went round when a node is recorded at or before the previous node's
 * instruction offset in the same user code; from there, the first node that reads a pending
 * input deeper than max_pending and recorded before that turn (the state the loop carries)
 * is cut off: cut_fn(node) computes the node's pending inputs, and the node starts the next
 * graph. Every graph then holds whole iterations and the graphs of a long loop share one
 * structure (one compile); cut at an arbitrary op, their boundaries drifted through the
 * iteration (a gradient step: up to 6 structures, and the steps cut in two lost the fused
 * X.T @ f(X @ w)). With no such cut within half of max_pending more, flush_fn(node) computes
 * the node itself (counts it and materializes). However stale the state below, only a node
 * reading a pending input deeper than max_pending is ever cut off: a graph within the limit
 * is never computed early. */
static int over_seen, armed;
static Py_ssize_t turn_seq;

static PyObject *
wrap(PyObject *mod, PyObject *node)
{
    if (!IS_NODE(node)) {
        PyErr_Format(PyExc_TypeError, "wrap() takes a Node, not a %s", Py_TYPE(node)->tp_name);
        return NULL;
    }
    if (array_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "wrap(): configure_array() was not called");
        return NULL;
    }
    PyObject *limit = PyDict_GetItemWithError(flag_values, s_max_pending);
    if (limit == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_KeyError, "max_pending");
        return NULL;
    }
    Py_ssize_t lim = PyNumber_AsSsize_t(limit, NULL);  /* clamped, never overflows */
    if (lim == -1 && PyErr_Occurred())
        return NULL;
    NodeObject *n = (NodeObject *)node;
    if (n->depth > lim && n->epoch != wb_epoch && refresh_depth_of(n) < 0)
        return NULL;
    if (n->depth > lim)
        over_seen = 1;
    if (n->code != NULL) {
        if (over_seen && n->code == prev_code && n->lasti <= prev_lasti) {
            armed = 1;  /* the loop went round: n is the first node of an iteration */
            turn_seq = n->seq;
        }
        Py_XSETREF(prev_code, Py_NewRef(n->code));
        prev_lasti = n->lasti;
    }
    PyObject *fn = NULL;
    if (armed && PyTuple_Check(n->inputs)) {
        Py_ssize_t k = PyTuple_GET_SIZE(n->inputs);
        for (Py_ssize_t i = 0; i < k && fn == NULL; i++) {
            NodeObject *x = (NodeObject *)PyTuple_GET_ITEM(n->inputs, i);
            if (IS_NODE(x) && x->buffer == Py_None && x->depth > lim && x->seq < turn_seq)
                fn = cut_fn;
        }
    }
    if (fn == NULL && n->depth - lim > lim / 2)
        fn = flush_fn;
    if (fn != NULL) {
        over_seen = armed = 0;
        PyObject *r = PyObject_CallOneArg(fn, node);
        if (r == NULL)
            return NULL;
        Py_DECREF(r);
    }
    PyObject *h = handle_make(array_type, node);
    /* once a loop was cut, the Arrays recorded since its last cut, weakly: an explicit
     * materialization computes those still held (api/array.py, _held_loop_state) */
    if (h != NULL && loop_state != NULL && PyList_GET_ITEM(loop_state, 0) == Py_True) {
        PyObject *refs = PyList_GET_ITEM(loop_state, 1);
        PyObject *ref = PyWeakref_NewRef(h, NULL);
        if (ref == NULL || PyList_Append(refs, ref) < 0) {
            Py_XDECREF(ref);
            Py_DECREF(h);
            return NULL;
        }
        Py_DECREF(ref);
        if (PyList_GET_SIZE(refs) > LOOP_CAP) {  /* forget the loop until its next cut */
            if (PyList_SetItem(loop_state, 0, Py_NewRef(Py_False)) < 0 ||
                    PyList_SetSlice(refs, 0, PyList_GET_SIZE(refs), NULL) < 0) {
                Py_DECREF(h);
                return NULL;
            }
        }
    }
    return h;
}

static PyObject *
configure_array(PyObject *mod, PyObject *args)
{
    PyObject *cls, *flush, *cut, *values, *loop;
    if (!PyArg_ParseTuple(args, "O!OOO!O!:configure_array", &PyType_Type, &cls, &flush, &cut,
                          &PyDict_Type, &values, &PyList_Type, &loop))
        return NULL;
    if (PyList_GET_SIZE(loop) != 2 || !PyList_Check(PyList_GET_ITEM(loop, 1))) {
        PyErr_SetString(PyExc_TypeError, "configure_array(): loop state must be [bool, list]");
        return NULL;
    }
    if (!PyType_IsSubtype((PyTypeObject *)cls, &HandleType)) {
        PyErr_SetString(PyExc_TypeError, "configure_array(): not a subclass of ArrayBase");
        return NULL;
    }
    Py_XSETREF(array_type, (PyTypeObject *)Py_NewRef(cls));
    Py_XSETREF(flush_fn, Py_NewRef(flush));
    Py_XSETREF(cut_fn, Py_NewRef(cut));
    Py_XSETREF(flag_values, Py_NewRef(values));
    Py_XSETREF(loop_state, Py_NewRef(loop));
    Py_RETURN_NONE;
}

static PyObject *
configure(PyObject *mod, PyObject *args)
{
    PyObject *b, *s, *memo, *pkg, *mixed;
    if (!PyArg_ParseTuple(args, "OOO!UO:configure", &b, &s, &PyDict_Type, &memo, &pkg, &mixed))
        return NULL;
    Py_XSETREF(BUFFER, Py_NewRef(b));
    Py_XSETREF(SCALAR, Py_NewRef(s));
    Py_XSETREF(internal, Py_NewRef(memo));
    Py_XSETREF(pkg_dir, Py_NewRef(pkg));
    Py_XSETREF(mixed_devices, Py_NewRef(mixed));
    Py_RETURN_NONE;
}

/* has_subnormal(a): whether the float64 or float32 values of C-contiguous buffer ``a`` hold a
 * subnormal number (no exponent bits, some mantissa bits). One pass, in blocks that stop at
 * the first found; ops/host_common.py's has_subnormal is the pure-Python form. The test of a
 * block is written for the vector units: the magnitude of each value whose exponent field is
 * 0 (a compare of equal-width integers and a select, which SSE2, AVX2 and AVX-512 have),
 * OR-ed into an accumulator that stays 0 for zeros and normal numbers; on x86-64 Linux with
 * GCC the block function is also built for AVX2 and AVX-512 and picked at load time
 * (``target_clones``): 30,000 float64 values took 24 us with the scalar form of the test, 8
 * with the vector one; 160,000 (a 10,000 x 16 matrix, in cache) 61 us with AVX2 and the
 * earlier two-compare form, 34 with AVX-512 and this one (float32: 320,000 in 69 and 33). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define XA_CLONES __attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
#elif defined(__GNUC__) && !defined(__clang__)
#define XA_CLONES __attribute__((optimize("O3")))
#else
#define XA_CLONES
#endif

#define SUBNORMAL_BLOCK(NAME, T, EXP, MAG)                                                    \
    XA_CLONES static int                                                                      \
    NAME(const T *restrict b, Py_ssize_t n)                                                   \
    {                                                                                         \
        T acc = 0;                                                                            \
        for (Py_ssize_t i = 0; i < n; i++)                                                    \
            acc |= (b[i] & (EXP)) == 0 ? b[i] & (MAG) : 0;                                    \
        return acc != 0;                                                                      \
    }
SUBNORMAL_BLOCK(subnormal_block64, uint64_t, UINT64_C(0x7ff0000000000000),
                UINT64_C(0x7fffffffffffffff))
SUBNORMAL_BLOCK(subnormal_block32, uint32_t, UINT32_C(0x7f800000), UINT32_C(0x7fffffff))

#define SUBNORMAL_SCAN(T, BLOCK)                                                              \
    {                                                                                         \
        const T *b = (const T *)v.buf;                                                        \
        Py_ssize_t n = v.len / (Py_ssize_t)sizeof(T);                                         \
        for (Py_ssize_t i = 0; i < n && !found; i += 8192)                                    \
            found = BLOCK(b + i, n - i > 8192 ? 8192 : n - i);                                \
    }

static PyObject *
has_subnormal(PyObject *mod, PyObject *arg)
{
    Py_buffer v;
    if (PyObject_GetBuffer(arg, &v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    const char *f = v.format == NULL ? "B" : v.format;
    if (*f == '<' || *f == '=' || *f == '@')
        f++;
    int found = 0;
    if (f[0] == 'd' && f[1] == 0 && v.itemsize == 8) {
        Py_BEGIN_ALLOW_THREADS
        SUBNORMAL_SCAN(uint64_t, subnormal_block64)
        Py_END_ALLOW_THREADS
    }
    else if (f[0] == 'f' && f[1] == 0 && v.itemsize == 4) {
        Py_BEGIN_ALLOW_THREADS
        SUBNORMAL_SCAN(uint32_t, subnormal_block32)
        Py_END_ALLOW_THREADS
    }
    else {
        PyErr_Format(PyExc_TypeError, "has_subnormal(): float32 or float64 values, not '%s'",
                     v.format == NULL ? "B" : v.format);
        PyBuffer_Release(&v);
        return NULL;
    }
    PyBuffer_Release(&v);
    return PyBool_FromLong(found);
}

/* data_address(a): the address of array ``a``'s first element (NumPy's ``a.ctypes.data``,
 * which builds a ctypes helper object per call: ~9,000 instructions against ~150 here). An
 * object without a plain buffer (ml_dtypes' arrays refuse the buffer protocol) takes the
 * ``ctypes`` path. */
static PyObject *
data_address(PyObject *mod, PyObject *a)
{
    Py_buffer v;
    if (PyObject_GetBuffer(a, &v, PyBUF_STRIDES) == 0) {
        PyObject *r = PyLong_FromVoidPtr(v.buf);
        PyBuffer_Release(&v);
        return r;
    }
    PyErr_Clear();
    PyObject *c = PyObject_GetAttrString(a, "ctypes");
    if (c == NULL)
        return NULL;
    PyObject *r = PyObject_GetAttrString(c, "data");
    Py_DECREF(c);
    return r;
}

/* transpose_into(src, dst, m, n): each m x n matrix of C-contiguous buffer ``src`` (a stack of
 * them, whatever its length holds) written transposed, n x m, into C-contiguous ``dst`` of the
 * same length and item size (4, 8 or 16 bytes), in tiles of 32 x 32 elements that keep both
 * sides in cache: the host tier's copy of a Fortran-ordered matrix into C order and back
 * (``ops/host_common.py``, ``c_ordered``, ``f_ordered``). NumPy's strided copy of a
 * Fortran-ordered 10,000 x 16 float64 matrix into C order took 400-420 us. */
#define TRANSPOSE_TILE 32
#define TRANSPOSE_FN(NAME, T)                                                                 \
    XA_CLONES static void                                                                     \
    NAME(const T *restrict a, T *restrict b, Py_ssize_t count, Py_ssize_t m, Py_ssize_t n)    \
    {                                                                                         \
        for (Py_ssize_t k = 0; k < count; k++, a += m * n, b += m * n)                        \
            for (Py_ssize_t i0 = 0; i0 < m; i0 += TRANSPOSE_TILE) {                           \
                Py_ssize_t i1 = i0 + TRANSPOSE_TILE < m ? i0 + TRANSPOSE_TILE : m;            \
                for (Py_ssize_t j0 = 0; j0 < n; j0 += TRANSPOSE_TILE) {                       \
                    Py_ssize_t j1 = j0 + TRANSPOSE_TILE < n ? j0 + TRANSPOSE_TILE : n;        \
                    for (Py_ssize_t i = i0; i < i1; i++)                                      \
                        for (Py_ssize_t j = j0; j < j1; j++)                                  \
                            b[j * m + i] = a[i * n + j];                                      \
                }                                                                             \
            }                                                                                 \
    }

typedef struct {
    uint64_t lo, hi;
} xa_pair64;

TRANSPOSE_FN(transpose32, uint32_t)
TRANSPOSE_FN(transpose64, uint64_t)
TRANSPOSE_FN(transpose128, xa_pair64)

static PyObject *
transpose_into(PyObject *mod, PyObject *args)
{
    PyObject *src, *dst;
    Py_ssize_t m, n;
    if (!PyArg_ParseTuple(args, "OOnn:transpose_into", &src, &dst, &m, &n))
        return NULL;
    Py_buffer s, d;
    if (PyObject_GetBuffer(src, &s, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    if (PyObject_GetBuffer(dst, &d, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&s);
        return NULL;
    }
    Py_ssize_t size = s.itemsize;
    int ok = m > 0 && n > 0 && s.len == d.len && s.itemsize == d.itemsize &&
             (size == 4 || size == 8 || size == 16) && s.len % (m * n * size) == 0;
    if (ok) {
        Py_ssize_t count = s.len / (m * n * size);
        Py_BEGIN_ALLOW_THREADS
        if (size == 4)
            transpose32(s.buf, d.buf, count, m, n);
        else if (size == 8)
            transpose64(s.buf, d.buf, count, m, n);
        else
            transpose128(s.buf, d.buf, count, m, n);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&s);
    PyBuffer_Release(&d);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "transpose_into(): buffers of one length and item "
                                          "size (4, 8 or 16 bytes) holding m x n matrices");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* numpy_allocator(handler): NumPy's memory handler of this thread's context set to ``handler``
 * (a "mem_handler" capsule), or to this module's 64-byte aligned one for None; returns the
 * handler it replaces. The first-use tier (``executor._run_on_host``) computes with it: XLA's
 * CPU client aliases a host array only at 64-byte alignment (NumPy's own allocations are
 * 16-byte aligned), so each host result of 64 KiB or more was copied once more when it became
 * a device buffer, and the NumPy-loop kernel's host rule copied unaligned operands. The
 * handler is NumPy's PyDataMem_Handler, version 1 (numpy/ndarraytypes.h, restated below: the
 * package builds without NumPy's headers), set through NumPy's C-API table
 * (PyDataMem_SetHandler, entry 304 since NumPy 1.22). Each block keeps its malloc'ed pointer
 * and size in the 16 bytes below it; an array freed later, in any context, is freed by the
 * handler it was allocated with (NumPy keeps it on the array), and large freed blocks are kept
 * for reuse (below). None is returned where NumPy has no such table entry. */
typedef struct {
    void *ctx;
    void *(*malloc)(void *ctx, size_t size);
    void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
    void *(*realloc)(void *ctx, void *ptr, size_t new_size);
    void (*free)(void *ctx, void *ptr, size_t size);
} XaAllocator;

typedef struct {
    char name[127];
    uint8_t version;
    XaAllocator allocator;
} XaHandler;

#define XA_ALIGN 64
/* freed blocks of XA_POOL_MIN bytes or more are kept (up to XA_POOL_SLOTS of them, XA_POOL_BYTES
 * in all) for the next allocation they fit, at most twice their size: memory the process has
 * touched already. glibc hands large blocks back to the system when they are freed (those it
 * mmap'ed, and the top of its heap), so each new array of that size took a page fault per
 * 4 KiB: NumPy's own fits of scikit-learn estimators on 10,000 x 16 took ~1,200 of them. */
#define XA_POOL_MIN ((size_t)1 << 16)
#define XA_POOL_SLOTS 16
#define XA_POOL_BYTES ((size_t)32 << 20)

static struct {
    char *raw;
    size_t size;
} pool[XA_POOL_SLOTS];
static int pool_n;
static size_t pool_bytes;
static PyThread_type_lock pool_lock;  /* (NumPy may free an array's data without the GIL) */

/* the block's malloc'ed pointer and size, kept in the 16 bytes below it */
#define BLOCK_RAW(p) (((char **)(p))[-1])
#define BLOCK_SIZE(p) (((size_t *)(p))[-2])

static void *
block_of(char *raw, size_t size)
{
    uintptr_t p = ((uintptr_t)raw + 2 * sizeof(size_t) + XA_ALIGN - 1) & ~(uintptr_t)(XA_ALIGN - 1);
    BLOCK_RAW(p) = raw;
    BLOCK_SIZE(p) = size;
    return (void *)p;
}

static void *
pooled(size_t size)
{
    void *p = NULL;
    PyThread_acquire_lock(pool_lock, WAIT_LOCK);
    int best = -1;
    for (int i = 0; i < pool_n; i++)
        if (pool[i].size >= size && pool[i].size / 2 <= size &&
                (best < 0 || pool[i].size < pool[best].size))
            best = i;
    if (best >= 0) {
        p = block_of(pool[best].raw, pool[best].size);
        pool_bytes -= pool[best].size;
        pool[best] = pool[--pool_n];
    }
    PyThread_release_lock(pool_lock);
    return p;
}

static void *
aligned_alloc_block(size_t size, int zero)
{
    if (size > SIZE_MAX - 2 * XA_ALIGN)
        return NULL;
    if (size >= XA_POOL_MIN) {
        void *p = pooled(size);
        if (p != NULL) {
            if (zero)
                memset(p, 0, size);
            return p;
        }
    }
    /* calloc's fresh pages come zeroed by the system: no pass over them */
    char *raw = zero ? calloc(1, size + 2 * XA_ALIGN) : malloc(size + 2 * XA_ALIGN);
    return raw == NULL ? NULL : block_of(raw, size);
}

static void *
aligned_malloc(void *ctx, size_t size)
{
    (void)ctx;
    return aligned_alloc_block(size, 0);
}

static void *
aligned_calloc(void *ctx, size_t nelem, size_t elsize)
{
    (void)ctx;
    if (elsize != 0 && nelem > SIZE_MAX / elsize)
        return NULL;
    return aligned_alloc_block(nelem * elsize, 1);
}

static void
aligned_free(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    (void)size;
    if (ptr == NULL)
        return;
    char *raw = BLOCK_RAW(ptr);
    size_t have = BLOCK_SIZE(ptr);
    if (have >= XA_POOL_MIN) {
        PyThread_acquire_lock(pool_lock, WAIT_LOCK);
        int kept = pool_n < XA_POOL_SLOTS && pool_bytes + have <= XA_POOL_BYTES;
        if (kept) {
            pool[pool_n].raw = raw;
            pool[pool_n++].size = have;
            pool_bytes += have;
        }
        PyThread_release_lock(pool_lock);
        if (kept)
            return;
    }
    free(raw);
}

static void *
aligned_realloc(void *ctx, void *ptr, size_t new_size)
{
    if (ptr == NULL)
        return aligned_malloc(ctx, new_size);
    void *p = aligned_malloc(ctx, new_size);
    if (p == NULL)
        return NULL;
    size_t old = BLOCK_SIZE(ptr);
    memcpy(p, ptr, old < new_size ? old : new_size);
    aligned_free(ctx, ptr, old);
    return p;
}

static XaHandler aligned_handler = {
    "xla_array_aligned64", 1,
    {NULL, aligned_malloc, aligned_calloc, aligned_realloc, aligned_free}};
static PyObject *aligned_capsule;
static PyObject *(*set_numpy_handler)(PyObject *);
static int numpy_handler_state;  /* 0: not looked up, 1: found, -1: none */

static PyObject *
numpy_allocator(PyObject *mod, PyObject *arg)
{
    if (numpy_handler_state == 0) {
        numpy_handler_state = -1;
        PyObject *m = PyImport_ImportModule("numpy._core._multiarray_umath");
        PyObject *c = m == NULL ? NULL : PyObject_GetAttrString(m, "_ARRAY_API");
        Py_XDECREF(m);
        void **api = c != NULL && PyCapsule_CheckExact(c) ? PyCapsule_GetPointer(c, NULL) : NULL;
        Py_XDECREF(c);
        PyErr_Clear();
        /* entry 211, PyArray_GetNDArrayCFeatureVersion: 0x0f is NumPy 1.22's API */
        if (api != NULL && ((unsigned int (*)(void))api[211])() >= 0x0f) {
            pool_lock = PyThread_allocate_lock();
            if (pool_lock == NULL)
                return PyErr_NoMemory();
            aligned_capsule = PyCapsule_New(&aligned_handler, "mem_handler", NULL);
            if (aligned_capsule == NULL)
                return NULL;
            set_numpy_handler = (PyObject * (*)(PyObject *)) api[304];
            numpy_handler_state = 1;
        }
    }
    if (numpy_handler_state < 0)
        Py_RETURN_NONE;
    return set_numpy_handler(arg == Py_None ? aligned_capsule : arg);
}

static PyMethodDef methods[] = {
    {"record", (PyCFunction)(void (*)(void))record, METH_FASTCALL | METH_KEYWORDS,
     "record(op, inputs, attrs=(), device=None): validate (op.infer) and create a node."},
    {"user_frame", user_frame, METH_NOARGS,
     "(filename, line) of the innermost frame outside the xla_array package."},
    {"buffer_leaf", (PyCFunction)(void (*)(void))buffer_leaf, METH_VARARGS | METH_KEYWORDS,
     "buffer_leaf(buf, shape, dtype, device, committed=False)"},
    {"scalar_leaf", (PyCFunction)(void (*)(void))scalar_leaf, METH_FASTCALL,
     "scalar_leaf(value, dtype, device)"},
    {"refresh_depth", (PyCFunction)refresh_depth, METH_O,
     "refresh_depth(node) -> depth, recomputed where nodes below it were computed since"},
    {"advance_epoch", (PyCFunction)advance_epoch, METH_NOARGS,
     "advance_epoch(): nodes were written back (pending depths may be stale)"},
    {"plan_graph", (PyCFunction)(void (*)(void))plan_graph, METH_VARARGS | METH_KEYWORDS,
     "plan_graph(roots, writeback=True) -> (order, buffer leaves, scalar leaves, outputs, "
     "structural key)"},
    {"wrap", wrap, METH_O, "wrap(node): an Array of a freshly recorded node (auto-flushing)."},
    {"configure_array", configure_array, METH_VARARGS,
     "configure_array(Array, flush, cut, flag_values, loop_state)"},
    {"data_address", data_address, METH_O,
     "data_address(a): the address of array a's first element (a.ctypes.data)"},
    {"has_subnormal", has_subnormal, METH_O,
     "has_subnormal(a): whether C-contiguous float32/float64 buffer a holds a subnormal"},
    {"transpose_into", transpose_into, METH_VARARGS,
     "transpose_into(src, dst, m, n): the m x n matrices of src written transposed into dst"},
    {"numpy_allocator", numpy_allocator, METH_O,
     "numpy_allocator(handler): set NumPy's memory handler (None: 64-byte aligned blocks); "
     "returns the one replaced, or None where NumPy cannot take one"},
    {"configure", configure, METH_VARARGS,
     "configure(BUFFER, SCALAR, file_memo, package_dir, mixed_devices)"},
    {NULL}
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "xla_array._graphcore",
    "The lazy graph's hot path in C (see xla_array._graph).", -1, methods,
};

PyMODINIT_FUNC
PyInit__graphcore(void)
{
    if (PyType_Ready(&NodeType) < 0 || PyType_Ready(&HandleType) < 0)
        return NULL;
    s_max_pending = PyUnicode_InternFromString("max_pending");
    if (s_max_pending == NULL)
        return NULL;
    s_infer = PyUnicode_InternFromString("infer");
    s_weight = PyUnicode_InternFromString("weight");
    s_name = PyUnicode_InternFromString("name");
    s_nout = PyUnicode_InternFromString("nout");
    s_keep = PyUnicode_InternFromString("keep");
    s_check = PyUnicode_InternFromString("check");
    s_B = PyUnicode_InternFromString("B");
    s_S = PyUnicode_InternFromString("S");
    empty_tuple = PyTuple_New(0);
    s_unknown = Py_BuildValue("(si)", "<unknown>", 0);
    if (!s_infer || !s_weight || !s_name || !s_nout || !s_keep || !s_check || !s_B || !s_S || !empty_tuple || !s_unknown)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "Node", (PyObject *)&NodeType) < 0
        || PyModule_AddObjectRef(m, "ArrayBase", (PyObject *)&HandleType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

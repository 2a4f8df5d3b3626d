/* XLA FFI handler running NumPy's own ufunc loops (exp, log, sin, pow, ...).
 *
 * Built with the package (setup.py) against jaxlib's FFI header, loaded and registered as the
 * CPU custom-call target xla_array_ufunc by xla_array/kernels/ufunc.py, which hands over, for
 * each (function, dtype) of its table, the strided inner loop NumPy itself runs for a
 * contiguous array (ufunc._get_strided_loop: the loop, its context and auxiliary data), once
 * per process (xa_ufunc_set). XLA's exp or log rounds otherwise than NumPy's; through this
 * kernel the values are NumPy's, and the host rule of the first-use tier calls the same
 * function (xa_ufunc_host), with the same length and alignment, so the bits agree.
 *
 * Attribute: `loop`, one int64, the index of the loop in the table. Operands: one or two
 * buffers of the loop's dtype, of as many elements as the result (the lowering broadcasts);
 * for a loop set with a complex input (xa_ufunc_set_input: absolute), one buffer of the
 * complex dtype of the result's precision.
 * XLA runs executables with flush-to-zero and denormals-are-zero on, NumPy without: they are
 * turned off around the loop (x86-64).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ffi_common.h"

/* NumPy's PyArrayMethod_StridedLoop */
typedef int (*loop_t)(void *context, char *const *data, const intptr_t *dimensions,
                      const intptr_t *strides, void *auxdata);

#define MAX_LOOPS 128

static struct {
    loop_t fn;
    void *context;
    void *auxdata;
    int nin;
    int itemsize;
    int in_itemsize;
} loops[MAX_LOOPS];

int xa_ufunc_abi(void) { return 2; }

/* Entry i of the table: NumPy's loop, its context and auxiliary data, its number of inputs
 * and the dtype's item size (4: float32, 8: float64). Returns 1, or 0 for a bad entry. */
int xa_ufunc_set(int64_t i, void *fn, void *context, void *auxdata, int nin, int itemsize) {
    if (i < 0 || i >= MAX_LOOPS || fn == NULL || nin < 1 || nin > 2 ||
        (itemsize != 4 && itemsize != 8))
        return 0;
    loops[i].context = context;
    loops[i].auxdata = auxdata;
    loops[i].nin = nin;
    loops[i].itemsize = itemsize;
    loops[i].in_itemsize = itemsize;
    loops[i].fn = (loop_t)fn;
    return 1;
}

/* Entry i (set) reads one complex operand: items of twice the result's size. */
int xa_ufunc_set_input(int64_t i, int in_itemsize) {
    if (i < 0 || i >= MAX_LOOPS || loops[i].fn == NULL || loops[i].nin != 1 ||
        in_itemsize != 2 * loops[i].itemsize)
        return 0;
    loops[i].in_itemsize = in_itemsize;
    return 1;
}

/* out[j] = f(ins[0][j], ...) for j < n with loop i, as the kernel computes it (the host rule
 * calls this too). Returns 1, 0 for an unset loop, -1 if the loop failed. */
int xa_ufunc_host(int64_t i, int64_t n, void *const *ins, void *out) {
    if (i < 0 || i >= MAX_LOOPS || loops[i].fn == NULL) return 0;
    char *data[3];
    intptr_t strides[3], dims[1] = {(intptr_t)n};
    int k = loops[i].nin;
    for (int j = 0; j < k; j++) {
        data[j] = (char *)ins[j];
        strides[j] = loops[i].in_itemsize;
    }
    data[k] = (char *)out;
    strides[k] = loops[i].itemsize;
    if (n == 0) return 1;
    unsigned int csr = xa_ieee_begin();
    int r = loops[i].fn(loops[i].context, data, dims, strides, loops[i].auxdata);
    xa_ieee_end(csr);
    return r < 0 ? -1 : 1;
}

XLA_FFI_Error *xa_ufunc(XLA_FFI_CallFrame *cf) {
    if (xa_metadata_query(cf)) return NULL;
    if (cf->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
    const XLA_FFI_Array *attr = xa_find_array(cf, "loop");
    if (attr == NULL || attr->dtype != XLA_FFI_DataType_S64 || attr->size != 1)
        return xa_fail(cf, "xla_array_ufunc: no loop attribute (one int64)");
    int64_t i = ((const int64_t *)attr->data)[0];
    if (i < 0 || i >= MAX_LOOPS || loops[i].fn == NULL)
        return xa_fail(cf, "xla_array_ufunc: that loop was not set");
    int k = loops[i].nin;
    if (cf->args.size != k || cf->rets.size != 1 || cf->rets.types[0] != XLA_FFI_RetType_BUFFER)
        return xa_fail(cf, "xla_array_ufunc: operand count differs from the loop's");
    XLA_FFI_Buffer *R = (XLA_FFI_Buffer *)cf->rets.rets[0];
    XLA_FFI_DataType t = loops[i].itemsize == 8 ? XLA_FFI_DataType_F64 : XLA_FFI_DataType_F32;
    XLA_FFI_DataType ti = loops[i].in_itemsize == loops[i].itemsize ? t
        : (loops[i].itemsize == 8 ? XLA_FFI_DataType_C128 : XLA_FFI_DataType_C64);
    int64_t n = xa_elements(R);
    void *ins[2];
    for (int j = 0; j < k; j++) {
        XLA_FFI_Buffer *X = (XLA_FFI_Buffer *)cf->args.args[j];
        if (cf->args.types[j] != XLA_FFI_ArgType_BUFFER || X->dtype != ti || xa_elements(X) != n)
            return xa_fail(cf, "xla_array_ufunc: operands must be the loop's dtype and size");
        ins[j] = X->data;
    }
    if (R->dtype != t) return xa_fail(cf, "xla_array_ufunc: result of another dtype");
    if (xa_ufunc_host(i, n, ins, R->data) != 1)
        return xa_fail(cf, "xla_array_ufunc: NumPy's loop failed");
    return NULL;
}

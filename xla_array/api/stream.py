"""``stream``: one compiled step over a stream of chunks, its state kept on the device.

``s = stream(f, chunk_template, init_state)`` compiles ``f(chunk, state) -> (output,
new_state)`` once (through ``jit``, the state's arguments donated); ``s.send(chunk)`` copies a
chunk (NumPy or Array) to the device and dispatches the step; ``s.recv()`` gives the output of
the oldest chunk not yet received; ``s.done()`` the final state (it closes the stream).

- **Overlap**: executions are asynchronous, so ``send`` returns while the step runs on the
  device's threads, and the caller reads and copies the next chunk meanwhile. Before it
  dispatches step k, ``send`` copies chunk k and only then waits for step k-1: at most two
  chunks are on the device (one computing, one arriving), and a fast producer cannot pile up
  device memory.
- **Donation**: the state's buffers are donated to every step, so XLA writes the new state
  into the old one's memory (no copy or allocation per chunk). The initial state is copied
  once, so the caller's arrays stay usable.
- **A shorter last chunk** (fewer rows along axis 0; the other axes and the dtype as the
  template's) runs a second executable traced for its length, compiled once and cached like
  the first; no padding, so ``f`` needs no mask. Only the last chunk may be shorter.
- **Errors**: a chunk of the wrong shape or dtype raises at ``send`` naming the template;
  ``send`` after ``done``/``close`` raises RuntimeError; ``f`` that does not trace, or returns
  a state of another structure, shape or dtype, raises when the stream is made. Run-time
  failures of a step (an out-of-bounds index, a device failure) surface at the ``recv`` of
  that chunk or at ``done``, naming the line of ``f`` that recorded the failing op; after one,
  ``send`` refuses and ``close()`` (or leaving a ``with`` block) releases everything.
"""

from __future__ import annotations

import collections
import inspect
import math
import queue
import threading
import time
import weakref
from typing import Any, Iterable, Iterator

import numpy as np

from ..core import backend as _backend
from ..core import dtypes as _dtypes
from ..core import metrics as _metrics
from ..core.aligned import aligned_empty
from ..core.devices import default_device
from ..core.executor import backend_failure, run_checks, value_buffer
from ..core.graph import Placeholder, buffer_leaf, record
from ..core.ops.structural import OPS, Reshape
from ..core.scalars import scalar_buffer_of
from .array import Array, wrap
from .jit import Jitted, _flatten, _unflatten

__all__ = ["stream", "stream_cached", "Stream"]

# f -> {(state structure, bound self): Jitted}; weak in f, and the Jitted never holds f (the
# traced wrapper reads it from _CURRENT while a trace runs), so executables die with f
_JITTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOCK = threading.RLock()
_CURRENT: list = [None]  # the user's function, while _lookup may trace it


class _Spec:
    """The chunk template: shape, dtype, device."""

    __slots__ = ("shape", "dtype", "device")

    def __init__(self, shape: tuple, dtype: Any, device: Any) -> None:
        self.shape, self.dtype, self.device = shape, dtype, device

    def __str__(self) -> str:
        return f"shape {self.shape} and dtype {self.dtype.name}"


def _template(t: Any, device: Any) -> _Spec:
    if isinstance(t, Array):
        return _Spec(t.shape, t.dtype, device)
    shape, dtype = getattr(t, "shape", None), getattr(t, "dtype", None)
    if shape is None or dtype is None:
        raise TypeError(f"stream: chunk_template must be an array or have .shape and .dtype, "
                        f"got {type(t).__name__}")
    try:
        shape = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"stream: chunk_template.shape must be a tuple of ints, got "
                        f"{shape!r}") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"stream: chunk_template.shape has a negative size: {shape}")
    return _Spec(shape, _dtypes.as_dtype(dtype), device)


def _spec_array(shape: tuple, dtype: Any, device: Any) -> Array:
    """A shape/dtype/device stand-in for ``jit``'s signature and trace (nothing recorded)."""
    return Array(buffer_leaf(Placeholder(0), shape, dtype, device, True))


def _state_leaves(init_state: Any) -> tuple[Any, list]:
    leaves: list = []
    try:
        desc = _flatten(init_state, leaves)
    except TypeError as err:
        raise TypeError(f"stream: init_state: {err}") from None
    for x in leaves:
        if not isinstance(x, Array):
            raise TypeError(f"stream: init_state must be an Array or a tuple/list/dict of "
                            f"Arrays, found a {type(x).__name__}")
    return desc, leaves


def _owner(f: Any) -> tuple[Any, Any]:
    """(weak key, extra key) under which ``f``'s executables are kept."""
    if inspect.ismethod(f):
        try:
            return f.__func__, weakref.ref(f.__self__)
        except TypeError:
            return None, None
    return f, None


def _computed(a: Array) -> Array:
    """``a`` as a value the step computes (an argument or constant returned as it is would
    otherwise be the donated buffer itself, or a captured array the next step overwrites)."""
    return wrap(record(OPS["reshape"], (a._node,), Reshape(a.shape)))


def _make_jitted(desc: Any, specs: list) -> Jitted:
    n = len(specs)

    def step(chunk: Any, *state: Any) -> Any:
        f = _CURRENT[0]
        res = f(chunk, _unflatten(desc, list(state)))
        if not isinstance(res, tuple) or len(res) != 2:
            raise TypeError(f"stream: f must return a pair (output, new_state), got "
                            f"{type(res).__name__}")
        out, new = res
        leaves: list = []
        got = _flatten(new, leaves)
        if got != desc:
            raise TypeError(f"stream: f returned a new state of another structure than "
                            f"init_state ({_describe(got)} instead of {_describe(desc)})")
        fixed = []
        for i, (x, s) in enumerate(zip(leaves, specs, strict=True)):
            if not isinstance(x, Array):
                raise TypeError(f"stream: state leaf {i} returned by f is a "
                                f"{type(x).__name__}, not an Array")
            if x.shape != s.shape or x.dtype != s.dtype:
                raise TypeError(
                    f"stream: f changed state leaf {i} from shape {s.shape} {s.dtype.name} to "
                    f"{x.shape} {x.dtype.name}; the new state must keep the initial state's "
                    f"shapes and dtypes (astype() it back)")
            fixed.append(x if x._node.buffer is None else _computed(x))
        out_leaves: list = []
        out_desc = _flatten(out, out_leaves)
        out_leaves = [_computed(x) if isinstance(x, Array) and
                      type(x._node.buffer) is Placeholder else x for x in out_leaves]
        return _unflatten(out_desc, out_leaves), tuple(fixed)

    step.__name__ = step.__qualname__ = "stream_step"
    return Jitted(step, donate_argnums=tuple(range(1, n + 1)))


def _describe(desc: Any) -> str:
    kind = desc[0]
    if kind == "leaf":
        return "an array"
    return f"a {kind} of {len(desc[1])}"


def _jitted(f: Any, desc: Any, specs: list, create: bool) -> Jitted | None:
    owner, bound = _owner(f)
    key = (desc, bound)
    with _LOCK:
        try:
            table = _JITTED.get(owner) if owner is not None else None
        except TypeError:  # not weakly referenceable: no cache beyond this stream
            owner, table = None, None
        j = table.get(key) if table is not None else None
        if j is None and create:
            j = _make_jitted(desc, specs)
            if owner is not None:
                try:
                    _JITTED.setdefault(owner, {})[key] = j
                except TypeError:
                    pass
        return j


def _lookup(j: Jitted, f: Any, spec: _Spec, shape: tuple, states: list, trace: bool) -> Any:
    args = (_spec_array(shape, spec.dtype, spec.device),
            *[_spec_array(s.shape, s.dtype, s.device) for s in states])
    with _LOCK:
        _CURRENT[0] = f
        try:
            return j._lookup(args, {}, trace)[0]
        finally:
            _CURRENT[0] = None


def stream_cached(f: Any, chunk_template: Any, init_state: Any) -> bool:
    """Whether ``stream(f, chunk_template, init_state)`` finds its step already compiled
    (for chunks of the template's shape; EXLA's ``stream_cached?``)."""
    desc, leaves = _state_leaves(init_state)
    device = leaves[0].device if leaves else default_device()
    spec = _template(chunk_template, device)
    j = _jitted(f, desc, leaves, False)
    return j is not None and _lookup(j, f, spec, spec.shape, leaves, False) is not None


class _Step:
    """A traced step, ready to dispatch: where each argument, result and output comes from."""

    __slots__ = ("exe", "params", "scalars", "out_specs", "outs", "state_pos", "out_desc",
                 "checks")

    def __init__(self, t: Any, n_state: int, device: Any) -> None:
        assert t.compiled is not None  # (the state is always computed: _computed)
        self.exe = t.compiled.exe
        self.params = t.params  # argument positions (0: the chunk), or captured buffers
        self.scalars = [scalar_buffer_of(v, d, device) for v, d in t.scalars]
        self.out_specs = tuple(t.out_specs)
        items: list[tuple[bool, Any, Any]] = []
        k = 0
        for o in t.outs:
            if isinstance(o, tuple):
                items.append((True, k, o))
                k += 1
            else:
                items.append((False, o, None))
        cut = len(items) - n_state
        self.outs = items[:cut]  # (is a result, result position or constant, (shape, dtype))
        self.state_pos = [it[1] for it in items[cut:]]
        self.out_desc = t.out_desc[1][0]
        self.checks = t.checks if t.checks[1] else None


class _Entry:
    """One chunk's step: its results once dispatched (``ready`` set), or the failure."""

    __slots__ = ("seq", "step", "results", "error", "ready")

    def __init__(self, seq: int, step: _Step) -> None:
        self.seq, self.step = seq, step
        self.results: list | None = None
        self.error: BaseException | None = None
        self.ready = threading.Event()


_ASYNC_MIN = 1 << 20  # template bytes from which a CPU stream dispatches on its own thread
_RING = 3  # host buffers a CPU stream copies chunks into (chunk k -> buffer k % 3)


class Stream:
    """A running stream (made by ``stream``): ``send``, ``recv``, ``done``, ``run``, ``close``.
    One producer: ``send``, ``recv`` and ``done`` are called from one thread."""

    def __init__(self, f: Any, chunk_template: Any, init_state: Any) -> None:
        if not callable(f):
            raise TypeError(f"stream: f must be callable, got {type(f).__name__}")
        desc, leaves = _state_leaves(init_state)
        self._device = leaves[0].device if leaves else default_device()
        if getattr(self._device, "_spmd", False) or any(x.device != self._device
                                                        for x in leaves):
            raise ValueError("stream: init_state must be on one device (not a mesh)")
        self._spec = _template(chunk_template, self._device)
        self._f = f
        self._desc = desc
        self._specs = [_Spec(x.shape, x.dtype, x.device) for x in leaves]
        self._committed = any(x._node.committed for x in leaves)
        self._jit = _jitted(f, desc, self._specs, True)
        self._steps: dict[tuple, _Step] = {}
        self._step(self._spec.shape)  # trace and compile now: errors in f raise here
        # a copy of the initial state: its buffers are donated to the first step
        pjrt = self._device._pjrt
        self._state = [_backend.put(np.array(_backend.to_numpy(value_buffer(x._node, "stream"))),
                                    pjrt) for x in leaves]
        self._last: list = []  # the previous step's results (waited for before the next)
        self._queue: collections.deque = collections.deque()  # entries not received yet
        self._recent: collections.deque = collections.deque(maxlen=_RING - 1)  # entries sent
        self._sent = 0
        self._short = False  # a shorter (last) chunk was sent
        self._closed = False
        self._failure: BaseException | None = None
        self._stats = {"chunks": 0, "bytes": 0, "transfer_seconds": 0.0, "wait_seconds": 0.0}
        nbytes = math.prod(self._spec.shape) * self._spec.dtype.itemsize
        big = pjrt.platform == "cpu" and nbytes >= _ASYNC_MIN
        # CPU: chunks are copied into reused aligned host buffers that the device buffers
        # alias (no allocation or page faults per chunk), and steps are dispatched on a
        # thread of the stream's own (an XLA:CPU execution whose inputs are ready runs on the
        # calling thread: dispatched by ``send``, it would stop the next chunk's copy)
        self._ring = [aligned_empty((nbytes,), np.uint8) for _ in range(_RING)] if big else []
        self._jobs: queue.Queue | None = queue.Queue(maxsize=1) if big else None
        self._worker: threading.Thread | None = None

    # ------------------------------------------------------------------ internals
    def _step(self, shape: tuple) -> _Step:
        s = self._steps.get(shape)
        if s is None:
            assert self._jit is not None
            t = _lookup(self._jit, self._f, self._spec, shape, self._specs, True)
            if t.compiled is None:
                raise ValueError("stream: f computes no array (its output and new state are "
                                 "constants or empty)")
            s = self._steps[shape] = _Step(t, len(self._specs), self._device)
        return s

    def _where(self) -> str:
        code = getattr(self._f, "__code__", None)
        name = getattr(self._f, "__qualname__", type(self._f).__name__)
        return f"{name} at {code.co_filename}:{code.co_firstlineno}" if code else name

    def _validate(self, chunk: Any) -> tuple:
        spec = self._spec
        if isinstance(chunk, Array):
            shape, dtype = chunk.shape, chunk.dtype
        elif isinstance(chunk, np.ndarray):
            shape = chunk.shape
            try:
                dtype = _dtypes.from_numpy(chunk.dtype)
            except TypeError:
                raise TypeError(f"stream.send: a chunk of dtype {chunk.dtype} does not match "
                                f"the template ({spec})") from None
        else:
            raise TypeError(f"stream.send: a chunk must be a NumPy array or an xla_array "
                            f"Array, got {type(chunk).__name__}")
        if dtype != spec.dtype:
            raise TypeError(f"stream.send: a chunk of dtype {dtype.name} does not match the "
                            f"template ({spec})")
        if shape != spec.shape:
            shorter = (len(shape) == len(spec.shape) and len(shape) > 0 and
                       shape[1:] == spec.shape[1:] and 0 < shape[0] < spec.shape[0])
            if not shorter:
                raise ValueError(f"stream.send: a chunk of shape {shape} does not match the "
                                 f"template ({spec}); only the last chunk may be shorter "
                                 f"along axis 0")
        if self._short:
            raise ValueError(f"stream.send: a chunk after a shorter one; only the last chunk "
                             f"may be shorter than the template ({spec})")
        return shape

    def _transfer(self, chunk: Any) -> Any:
        """``chunk``'s device buffer (a copy: the caller may reuse its memory at once)."""
        if isinstance(chunk, Array):
            if chunk.device != self._device:
                chunk = chunk.to_device(self._device)
            return value_buffer(chunk._node, "stream")
        self._stats["bytes"] += chunk.nbytes
        _metrics.count("bytes_to_device", chunk.nbytes)
        if not self._ring:
            return _backend.put(chunk, self._device._pjrt)
        # host buffer k % 3 was last read by step k-3, finished before step k-2 was dispatched
        if len(self._recent) == _RING - 1:
            older = self._recent[0]
            older.ready.wait()
        raw = self._ring[self._sent % _RING]
        host = raw[:chunk.nbytes].view(chunk.dtype).reshape(chunk.shape)
        np.copyto(host, chunk, casting="equiv")
        return _backend.put(host, self._device._pjrt, owned=True)

    def _dispatch(self, entry: _Entry, buf: Any) -> None:
        """Run ``entry``'s step on ``buf`` after the previous step ended (on the worker
        thread for big CPU chunks, else in ``send``)."""
        step = entry.step
        try:
            if self._failure is not None:
                raise RuntimeError(f"an earlier chunk's step failed ({self._failure})")
            if self._last:  # at most one step runs while the next chunk arrives
                _backend.block(self._last)
            # (p: 0 for the chunk, i for state i - 1, or a buffer: never compared with ==,
            # which jax redefines on jaxlib's buffers when it is imported in the process)
            args = [(self._state[p - 1] if p else buf) if type(p) is int else p
                    for p in step.params]
            args += step.scalars
            results = step.exe.run(args, step.out_specs)
        except _backend.BackendError as err:
            entry.error = self._fail(backend_failure(
                f"running the stream step {self._where()} on chunk {entry.seq}", err))
        except BaseException as err:  # noqa: BLE001  (reported at recv/done)
            entry.error = self._fail(err)
        else:
            _metrics.count("executions")
            self._state = [results[k] for k in step.state_pos]
            self._last = [r for i, r in enumerate(results) if i not in step.state_pos]
            self._last += self._state
            entry.results = results
        finally:
            entry.ready.set()

    def _fail(self, err: BaseException) -> BaseException:
        if self._failure is None:
            self._failure = err
        return err

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise RuntimeError(f"stream.{what}: the stream is closed (done() or close() was "
                               f"called)")
        if self._failure is not None:
            raise RuntimeError(f"stream.{what}: the stream failed ({self._failure}); "
                               f"close() it") from self._failure

    def _settle(self, entry: _Entry) -> list:
        """Wait for ``entry``'s dispatch; raise its step's failure, if it had one."""
        entry.ready.wait()
        if entry.error is not None:
            raise entry.error
        results = entry.results
        assert results is not None
        checks = entry.step.checks
        if checks is not None:
            try:
                run_checks(checks[0], results, checks[1])
            except BaseException as err:
                self._fail(err)
                raise
        # (a device failure without checks shows when an output or the state is read)
        return results

    # ------------------------------------------------------------------ public
    def send(self, chunk: Any) -> None:
        """Copy ``chunk`` (a NumPy array or an Array of the template's shape and dtype) to
        the device and start the step on it; returns before the step has run."""
        self._check_open("send")
        shape = self._validate(chunk)
        step = self._step(shape)
        t0 = time.perf_counter()
        buf = self._transfer(chunk)
        t1 = time.perf_counter()
        self._stats["transfer_seconds"] += t1 - t0
        if shape != self._spec.shape:
            self._short = True
        entry = _Entry(self._sent, step)
        self._sent += 1
        self._stats["chunks"] += 1
        self._queue.append(entry)
        self._recent.append(entry)
        if self._jobs is None:
            self._dispatch(entry, buf)
        else:
            if self._worker is None:
                self._worker = threading.Thread(target=_work, args=(weakref.ref(self), self._jobs),
                                                name="xla_array-stream", daemon=True)
                self._worker.start()
            self._jobs.put((entry, buf))  # waits while the worker is one step behind
        self._stats["wait_seconds"] += time.perf_counter() - t1

    def recv(self) -> Any:
        """The output of the oldest chunk sent and not yet received (Arrays, maybe still
        being computed); raises the failure of that chunk's step if it had one."""
        self._check_open("recv")
        if not self._queue:
            raise RuntimeError("stream.recv: every chunk sent has been received")
        entry = self._queue.popleft()
        results = self._settle(entry)
        arrays = [Array(buffer_leaf(results[v], spec[0], spec[1], self._device,
                                    self._committed)) if is_res else v
                  for is_res, v, spec in entry.step.outs]
        return _unflatten(entry.step.out_desc, arrays)

    def done(self) -> Any:
        """The final state (structured as ``init_state``); closes the stream. Raises the
        failure of any step whose output was not received."""
        self._check_open("done")
        try:
            while self._queue:
                self._settle(self._queue.popleft())
            self._stop()
            try:
                _backend.block(self._state)
            except _backend.BackendError as err:
                raise self._fail(backend_failure(f"running the stream step {self._where()}",
                                                 err)) from None
            state = [Array(buffer_leaf(b, s.shape, s.dtype, self._device, self._committed))
                     for b, s in zip(self._state, self._specs, strict=True)]
            return _unflatten(self._desc, state)
        finally:
            self.close()

    def _stop(self) -> None:
        if self._worker is not None and self._jobs is not None:
            self._jobs.put(None)
            self._worker.join()
            self._worker = None

    def close(self) -> None:
        """Stop the stream, dropping its state and the outputs not received (safe at any
        time, and more than once)."""
        self._stop()
        self._closed = True
        self._queue.clear()
        self._recent.clear()
        self._last = []
        self._state = []

    def run(self, chunks: Iterable[Any]) -> Iterator[Any]:
        """Send every chunk of ``chunks`` and yield each chunk's output, one chunk behind (the
        next chunk is read and copied while the step runs). The stream stays open:
        ``done()`` gives the final state."""
        pending = 0
        for c in chunks:
            self.send(c)
            pending += 1
            if pending > 1:
                pending -= 1
                yield self.recv()
        while pending:
            pending -= 1
            yield self.recv()

    @property
    def stats(self) -> dict:
        """Chunks and bytes sent; seconds ``send`` spent copying chunks to the device, and
        waiting for the device to take the previous chunk's step."""
        return dict(self._stats)

    @property
    def pending(self) -> int:
        """How many outputs were sent and not received yet."""
        return len(self._queue)

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_worker", None) is not None:
            try:
                self._stop()
            except Exception:  # noqa: BLE001  (a finalizer)
                pass

    def __repr__(self) -> str:
        state = "closed" if self._closed else "failed" if self._failure else "open"
        return (f"<xla_array stream of {self._where()}: chunks of {self._spec}, "
                f"{self._sent} sent, {len(self._queue)} to receive, {state}>")


def _work(ref: Any, jobs: queue.Queue) -> None:
    """The dispatch thread of a stream (weakly referenced: a stream never closed is still
    collected, and its ``__del__`` stops this thread)."""
    while True:
        job = jobs.get()
        if job is None:
            return
        s = ref()
        if s is None:
            return
        s._dispatch(*job)
        del s, job


def stream(f: Any, chunk_template: Any, init_state: Any) -> Stream:
    """Run ``f(chunk, state) -> (output, new_state)`` over a stream of chunks, its state on the
    device (see the module docstring and docs/streaming.md). ``chunk_template``: an Array or
    an object with ``.shape`` and ``.dtype`` (a NumPy array, a memory map); ``init_state``: an
    Array or a tuple/list/dict of Arrays. The step is compiled here, once per function,
    template and state signature."""
    return Stream(f, chunk_template, init_state)

"""Host rules of the LAPACK calls (the ``lapack`` op on CPU), of ``lu_permutation`` and of
``linalg_check`` (the run-time check that raises ``LinAlgError``).

jaxlib's CPU kernels call the LAPACK and BLAS of SciPy's ``cython_lapack``/``cython_blas``
(``backend.register_lapack``). A host rule calls the same routines through SciPy's f2py
wrappers (``scipy_lapack.wrappers``: no ``scipy.linalg`` import), matrix by matrix, with the
workspace sizes the kernels use (LAPACK's own optimal-size query for gesdd, geqrf and orgqr,
the closed forms for syevd), so the results are the compiled graph's bit for bit: the test
suite's check mode (``XLA_ARRAY_HOST_FIRST=check``) compares every such run. Covered:
getrf (LU), potrf (Cholesky), trsm (triangular solves), syevd (eigh), gesdd (SVD), geqrf
and orgqr (QR), for float32 and float64 (``host.DTYPES``). geev (eig) and complex dtypes
compile. A result holding a subnormal number (which the compiled kernels, run with the CPU's
flush-to-zero mode on, would have flushed) is ``NotExact``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import scipy_lapack
from . import linalg as _linalg  # (defines lapack, lu_permutation and linalg_check)
from .host_common import NotExact, f_ordered, has_subnormal

__all__ = ["MAX_STACK", "RULES", "lapack_rule"]


# a stack of more matrices than this compiles: one Python call per matrix (~20 us for a
# small one) would cost more than the compile it saves
MAX_STACK = 512


def _each(batch: tuple) -> Any:
    if batch and int(np.prod(batch)) > MAX_STACK:
        raise NotExact(f"a stack of {int(np.prod(batch))} matrices")
    return np.ndindex(*batch) if batch else [()]


def _fortran(a: np.ndarray) -> np.ndarray:
    return f_ordered(a) if a.flags.c_contiguous else np.array(a, order="F", copy=True)


def _lwork(query: Any, *args: Any, **kw: Any) -> int:
    """The optimal workspace size LAPACK reports, truncated to an int as jaxlib does."""
    work, info = query(*args, **kw)[-2:]
    if info != 0:
        raise NotExact(f"workspace query failed ({info})")
    return int(np.real(np.ravel(work)[0]))


def _direct(values: tuple, outs: tuple) -> tuple | None:
    """One matrix's LAPACK results as they are (no copy into C-ordered arrays: the ``get``
    rule copies the ones a graph uses), or None where a shape is not the node's."""
    out = []
    for v, (shape, d) in zip(values, outs):
        v = np.asarray(v)
        if v.shape != tuple(shape):
            return None
        out.append(v if v.dtype == d.np else v.astype(d.np))  # (info: a Python int)
    return tuple(out)


def _getrf(f: Any, p: str, cfg: dict, vals: list, outs: tuple) -> tuple:
    a = vals[0]
    lu, piv, info = (np.empty(s, d.np) for s, d in outs)
    for i in _each(a.shape[:-2]):
        r, pv, inf = getattr(f, p + "getrf")(_fortran(a[i]), overwrite_a=True)
        lu[i], piv[i], info[i] = r, pv + 1, inf  # (f2py's pivots are 0-based)
    return lu, piv, info


def _potrf(f: Any, p: str, cfg: dict, vals: list, outs: tuple) -> tuple:
    a = vals[0]
    low, info = (np.empty(s, d.np) for s, d in outs)
    for i in _each(a.shape[:-2]):
        # clean=0: the other triangle keeps the input's values, as the kernel leaves it
        c, inf = getattr(f, p + "potrf")(_fortran(a[i]), lower=cfg["uplo"] == "L", clean=0,
                                         overwrite_a=True)
        low[i], info[i] = c, inf
    return low, info


def _trsm(b_: Any, p: str, cfg: dict, vals: list, outs: tuple) -> tuple:
    a, b = vals
    (shape, d), = outs
    y = np.empty(shape, d.np)
    trsm = getattr(b_, p + "trsm")
    trans = {"N": 0, "T": 1, "C": 2}[cfg["trans_x"]]
    for i in _each(b.shape[:-2]):
        y[i] = trsm(1.0, _fortran(a[i]), _fortran(b[i]), side=int(cfg["side"] == "R"),
                    lower=int(cfg["uplo"] == "L"), trans_a=trans, diag=int(cfg["diag"] == "U"),
                    overwrite_b=True)
    return (y,)


def _syevd(f: Any, p: str, cfg: dict, vals: list, outs: tuple) -> tuple:
    a = vals[0]
    v, w, info = (np.empty(s, d.np) for s, d in outs)
    n = a.shape[-1]
    vectors = cfg["mode"] == "V"
    lwork, liwork = (1 + 6 * n + 2 * n * n, 3 + 5 * n) if vectors else (2 * n + 1, 1)
    for i in _each(a.shape[:-2]):
        w[i], v[i], info[i] = getattr(f, p + "syevd")(
            _fortran(a[i]), compute_v=int(vectors), lower=int(cfg["uplo"] == "L"),
            lwork=lwork, liwork=liwork, overwrite_a=True)
    return v, w, info


def _gesdd(f: Any, p: str, cfg: dict, vals: list, outs: tuple) -> tuple:
    a = vals[0]
    *batch, m, n = a.shape
    mode = cfg["mode"]
    uv, full = mode != "N", mode == "A"
    lwork = _lwork(getattr(f, p + "gesdd_lwork"), m, n, compute_uv=int(uv),
                   full_matrices=int(full))
    gesdd = getattr(f, p + "gesdd")
    parts: tuple | None = None  # (made once needed: one matrix's results are LAPACK's own)
    for i in _each(tuple(batch)):
        ai = _fortran(a[i])
        ui, si, vti, inf = gesdd(ai, compute_uv=int(uv), full_matrices=int(full), lwork=lwork,
                                 overwrite_a=True)
        if parts is None:
            if not batch and uv:  # one matrix: LAPACK's own (Fortran-ordered) arrays
                direct = _direct((ai, si, ui, vti, inf), outs)
                if direct is not None:
                    return direct
            parts = tuple(np.zeros(sh, d.np) for sh, d in outs)
        x, s, u, vt, info = parts
        x[i], s[i], info[i] = ai, si, inf
        if uv:
            u[i], vt[i] = ui, vti
    # (an empty batch: zeros)
    return parts if parts is not None else tuple(np.zeros(sh, d.np) for sh, d in outs)


def _geqrf(f: Any, p: str, cfg: dict, vals: list, outs: tuple) -> tuple:
    a = vals[0]
    r, tau = (np.empty(s, d.np) for s, d in outs)
    *batch, m, n = a.shape
    lwork = _lwork(getattr(f, p + "geqrf_lwork"), m, n)
    for i in _each(tuple(batch)):
        r[i], tau[i] = getattr(f, p + "geqrf")(_fortran(a[i]), lwork=lwork,
                                               overwrite_a=True)[:2]
    return r, tau


def _orgqr(f: Any, p: str, cfg: dict, vals: list, outs: tuple) -> tuple:
    a, tau = vals
    (shape, d), = outs
    q = np.empty(shape, d.np)
    *batch, m, n = a.shape
    orgqr = getattr(f, p + "orgqr")
    # (no f2py query wrapper: the routine itself with lwork=-1, as scipy.linalg.qr does)
    lwork = _lwork(lambda: orgqr(_fortran(a[(0,) * len(batch)]), tau[(0,) * len(batch)],
                                 lwork=-1)) if a.size else 1
    for i in _each(tuple(batch)):
        q[i], _, inf = orgqr(_fortran(a[i]), tau[i], lwork=lwork, overwrite_a=True)
        if inf != 0:
            raise NotExact(f"orgqr failed ({inf})")
    return (q,)


# base name -> (rule, whether it calls BLAS rather than LAPACK)
_RULES = {"getrf": (_getrf, False), "potrf": (_potrf, False), "trsm": (_trsm, True),
          "syevd": (_syevd, False), "gesdd": (_gesdd, False), "geqrf": (_geqrf, False),
          "orgqr": (_orgqr, False)}


def _config(config: tuple) -> dict:
    """The kernel's attributes: LAPACK characters (``"86 : ui8"``) as one-letter strings."""
    out = {}
    for k, v in config:
        num, _, typ = v.partition(" : ")
        out[k] = chr(int(num)) if typ.strip() == "ui8" else v
    return out


def lapack_rule(n: Any, vals: list) -> tuple:
    """The results of ``lapack`` node ``n`` (a tuple, one value per result)."""
    target, config, outs, _alias, column_major, checked = n.attrs
    name = target[len("lapack_"):] if target.startswith("lapack_") else ""
    prefix, base = name[:1], name[1:].removesuffix("_ffi")
    entry = _RULES.get(base)
    if entry is None or prefix not in ("s", "d") or not column_major:
        raise NotExact(f"no host rule for {target}")
    rule, blas = entry
    flapack, fblas = scipy_lapack.wrappers()
    results = rule(fblas if blas else flapack, prefix, _config(config),
                   [np.asarray(v) for v in vals], outs)
    if any(has_subnormal(r) for r in results):
        raise NotExact(f"a subnormal result of {target}")
    return tuple(_checked(list(results), checked, np.asarray(vals[0])) if checked else results)


def _checked(results: list, checked: tuple, a: np.ndarray) -> list:
    """The ``checked`` results NaN for each matrix whose call failed (``Lapack.checked``:
    ``info``, the last result, is not 0, or the operand ``a`` holds a NaN or an infinity)."""
    bad = (np.asarray(results[-1]) != 0) | ~np.isfinite(a).all(axis=(-2, -1))
    if not bad.any():
        return results
    for i in checked:
        r = np.array(results[i])
        r[bad] = complex(np.nan, np.nan) if r.dtype.kind == "c" else np.nan
        results[i] = r
    return results


def _lu_permutation(n: Any, vals: list) -> np.ndarray:
    piv = vals[0]
    m = n.attrs.m
    k = piv.shape[-1]
    out = np.empty(piv.shape[:-1] + (m,), np.int32)
    for i in _each(piv.shape[:-1]):
        perm = np.arange(m, dtype=np.int32)
        for r in range(k):
            j = int(piv[i + (r,)]) - 1
            if not 0 <= j < m:
                raise NotExact("a pivot out of range")
            perm[r], perm[j] = perm[j], perm[r]
        out[i] = perm
    return out


def _linalg_check(n: Any, vals: list) -> np.ndarray:
    return _linalg.linalg_code(n.attrs, vals[0], vals[1] if len(vals) > 1 else None)


def _get_checked(n: Any, vals: list) -> np.ndarray:
    # (as ``get``'s rule: in C order, the call's results may be LAPACK's Fortran-ordered arrays)
    return np.asarray(vals[0][n.attrs.result], order="C")


# attached to the ops by ops/host.py
RULES = {"lapack": lapack_rule, "lu_permutation": _lu_permutation,
         "linalg_check": _linalg_check, "get_checked": _get_checked}

/* XLA FFI handlers that run matrix products through BLAS gemm.
 *
 * Built on first use by xla_array/_kernels.py with the system C compiler against the installed
 * jaxlib's FFI header (jaxlib/include/xla/ffi/api/c_api.h), cached per user, and registered as
 * CPU custom-call targets. The BLAS routines (Fortran ABI) are NumPy's OpenBLAS (64-bit
 * integers) or SciPy's (scipy.linalg.cython_blas, 32-bit); xa_blas_init hands over their
 * addresses once.
 *
 * Target xla_array_gemm_<ta><tb> (ta, tb in {n, t}): operands A, B of rank >= 2 with equal
 * leading (batch) dimensions, row-major; result C = op(A) @ op(B) per batch element, where
 * op transposes the last two dimensions when the flag is t. Dtype: f32, f64, c64 or c128,
 * the same for A, B and C.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ffi_common.h"

/* Fortran BLAS with 32-bit (LP64, SciPy's) or 64-bit (ILP64, NumPy's OpenBLAS) integers. */
#define DECLARE(T)                                                                        \
    typedef void (*gemm_##T)(const char *, const char *, const T *, const T *, const T *, \
                             const void *, const void *, const T *, const void *,         \
                             const T *, const void *, void *, const T *);
DECLARE(int32_t)
DECLARE(int64_t)

static void *GEMM[4]; /* s, d, c, z */
static int INT64;

/* fns: sgemm, dgemm, cgemm, zgemm; int64: their integer width. Returns this file's ABI
 * version. */
int xa_blas_init(void **fns, int int64) {
    for (int i = 0; i < 4; i++) GEMM[i] = fns[i];
    INT64 = int64;
    return 2;
}

static void gemm(int kind, char ta, char tb, int64_t m, int64_t n, int64_t k, const void *alpha,
                 const void *a, int64_t lda, const void *b, int64_t ldb, const void *beta,
                 void *c, int64_t ldc) {
    if (INT64) {
        ((gemm_int64_t)GEMM[kind])(&ta, &tb, &m, &n, &k, alpha, a, &lda, b, &ldb, beta, c, &ldc);
    } else {
        int32_t m4 = (int32_t)m, n4 = (int32_t)n, k4 = (int32_t)k, lda4 = (int32_t)lda,
                ldb4 = (int32_t)ldb, ldc4 = (int32_t)ldc;
        ((gemm_int32_t)GEMM[kind])(&ta, &tb, &m4, &n4, &k4, alpha, a, &lda4, b, &ldb4, beta, c,
                                   &ldc4);
    }
}

static const double ONE[2] = {1.0, 0.0}, ZERO[2] = {0.0, 0.0};
static const float ONE_F[2] = {1.0f, 0.0f}, ZERO_F[2] = {0.0f, 0.0f};

static int kind_of(XLA_FFI_DataType t, size_t *item) {
    switch (t) {
        case XLA_FFI_DataType_F32: *item = 4; return 0;
        case XLA_FFI_DataType_F64: *item = 8; return 1;
        case XLA_FFI_DataType_C64: *item = 8; return 2;
        case XLA_FFI_DataType_C128: *item = 16; return 3;
        default: return -1;
    }
}

static XLA_FFI_Error *product(XLA_FFI_CallFrame *cf, int ta, int tb) {
    if (xa_metadata_query(cf)) return NULL;
    if (cf->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
    if (cf->args.size != 2 || cf->rets.size != 1 ||
        cf->args.types[0] != XLA_FFI_ArgType_BUFFER ||
        cf->args.types[1] != XLA_FFI_ArgType_BUFFER ||
        cf->rets.types[0] != XLA_FFI_RetType_BUFFER)
        return xa_fail(cf, "xla_array_gemm: expects two buffer operands and one buffer result");
    XLA_FFI_Buffer *A = (XLA_FFI_Buffer *)cf->args.args[0];
    XLA_FFI_Buffer *B = (XLA_FFI_Buffer *)cf->args.args[1];
    XLA_FFI_Buffer *C = (XLA_FFI_Buffer *)cf->rets.rets[0];
    size_t item;
    int kind = kind_of(A->dtype, &item);
    if (kind < 0 || B->dtype != A->dtype || C->dtype != A->dtype)
        return xa_fail(cf, "xla_array_gemm: unsupported or mixed dtypes");
    if (A->rank < 2 || A->rank != B->rank || C->rank != A->rank)
        return xa_fail(cf, "xla_array_gemm: operands need equal ranks >= 2");
    int64_t batch = 1;
    for (int64_t i = 0; i + 2 < A->rank; i++) {
        if (A->dims[i] != B->dims[i] || A->dims[i] != C->dims[i])
            return xa_fail(cf, "xla_array_gemm: batch dimensions differ");
        batch *= A->dims[i];
    }
    int64_t r = A->rank;
    int64_t ra = A->dims[r - 2], ca = A->dims[r - 1];
    int64_t rb = B->dims[r - 2], cb = B->dims[r - 1];
    int64_t m = ta ? ca : ra, k = ta ? ra : ca, n = tb ? rb : cb;
    if ((tb ? cb : rb) != k || C->dims[r - 2] != m || C->dims[r - 1] != n)
        return xa_fail(cf, "xla_array_gemm: shapes do not align");
    if (batch == 0 || m == 0 || n == 0) return NULL;
    if (!INT64 && (ra > INT32_MAX || ca > INT32_MAX || rb > INT32_MAX || cb > INT32_MAX))
        return xa_fail(cf, "xla_array_gemm: dimension too large for 32-bit BLAS");
    if (k == 0) {
        memset(C->data, 0, (size_t)batch * m * n * item);
        return NULL;
    }
    const void *one = kind == 0 || kind == 2 ? (const void *)ONE_F : (const void *)ONE;
    const void *zero = kind == 0 || kind == 2 ? (const void *)ZERO_F : (const void *)ZERO;
    size_t sa = (size_t)ra * ca * item, sb = (size_t)rb * cb * item, sc = (size_t)m * n * item;
    char *pa = (char *)A->data, *pb = (char *)B->data, *pc = (char *)C->data;
    /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T; a row-major matrix of
     * shape (r, c) is the column-major (c, r) matrix of its transpose, leading dimension c. */
    for (int64_t b = 0; b < batch; b++, pa += sa, pb += sb, pc += sc) {
        gemm(kind, tb ? 'T' : 'N', ta ? 'T' : 'N', n, m, k, one, pb, cb, pa, ca, zero, pc, n);
    }
    return NULL;
}

XLA_FFI_Error *xa_gemm_nn(XLA_FFI_CallFrame *cf) { return product(cf, 0, 0); }
XLA_FFI_Error *xa_gemm_nt(XLA_FFI_CallFrame *cf) { return product(cf, 0, 1); }
XLA_FFI_Error *xa_gemm_tn(XLA_FFI_CallFrame *cf) { return product(cf, 1, 0); }
XLA_FFI_Error *xa_gemm_tt(XLA_FFI_CallFrame *cf) { return product(cf, 1, 1); }

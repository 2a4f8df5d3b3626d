/* XLA FFI handler computing matrix products with NumPy's own BLAS, as NumPy's matmul calls it.
 *
 * Built with the package (setup.py) against jaxlib's FFI header, loaded and registered as the
 * CPU custom-call target xla_array_matmul by xla_array/kernels/blas.py, which hands over the
 * CBLAS functions of the OpenBLAS NumPy was built with (xa_blas_init). XLA's CPU dot adds in
 * an order of its own, NumPy's BLAS in another: through this kernel a product rounds as
 * NumPy's `a @ b` does, and the same function (xa_matmul_host) gives the host rule of the
 * first-use tier its bits.
 *
 * The choice of routine is NumPy's (DOUBLE_matmul and the helpers of
 * numpy/_core/src/umath/matmul.c.src): for each matrix of the batch, with m, n, p the sizes of
 * (m, n) @ (n, p) and the element strides NumPy would see for the operands,
 *   - a zero size: the result is zeros (or empty);
 *   - m == 1 and p == 1: dot (BLAS ?dot added to 0);
 *   - n == 1 with m == 1 or p == 1, or an outer product (n == 1): NumPy's plain loop;
 *   - m == 1: gemv of the right operand (vector @ matrix); p == 1: gemv (matrix @ vector);
 *   - otherwise gemm, or syrk and a mirrored triangle for a matrix times its own transpose.
 * The plan (an int64 attribute) carries: dtype (0 float32, 1 float64), batch, m, n, p, the
 * strides is1_m, is1_n, is2_n, is2_p in elements, and whether both operands are one value.
 *
 * XLA runs executables with the CPU's flush-to-zero and denormals-are-zero modes on; NumPy
 * does not. The handler clears them around the BLAS calls (x86-64), so both compute the same.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>
#define XA_MXCSR 1
#endif

#include "ffi_common.h"

/* CBLAS, 64-bit integers (scipy-openblas64: NumPy's wheels) */
enum { RowMajor = 101, ColMajor = 102, NoTrans = 111, Trans = 112, Upper = 121 };
typedef void (*gemm_t)(int, int, int, int64_t, int64_t, int64_t, double, const void *,
                       int64_t, const void *, int64_t, double, void *, int64_t);
typedef void (*sgemm_t)(int, int, int, int64_t, int64_t, int64_t, float, const void *,
                        int64_t, const void *, int64_t, float, void *, int64_t);
typedef void (*gemv_t)(int, int, int64_t, int64_t, double, const void *, int64_t, const void *,
                       int64_t, double, void *, int64_t);
typedef void (*sgemv_t)(int, int, int64_t, int64_t, float, const void *, int64_t, const void *,
                        int64_t, float, void *, int64_t);
typedef double (*ddot_t)(int64_t, const void *, int64_t, const void *, int64_t);
typedef float (*sdot_t)(int64_t, const void *, int64_t, const void *, int64_t);
typedef void (*syrk_t)(int, int, int, int64_t, int64_t, double, const void *, int64_t, double,
                       void *, int64_t);
typedef void (*ssyrk_t)(int, int, int, int64_t, int64_t, float, const void *, int64_t, float,
                        void *, int64_t);

static sgemm_t sgemm;
static gemm_t dgemm;
static sgemv_t sgemv;
static gemv_t dgemv;
static sdot_t sdot;
static ddot_t ddot;
static ssyrk_t ssyrk;
static syrk_t dsyrk;

int xa_matmul_abi(void) { return 1; }

/* The CBLAS functions, in this order: sgemm, dgemm, sgemv, dgemv, sdot, ddot, ssyrk, dsyrk. */
int xa_blas_init(void **f) {
    for (int i = 0; i < 8; i++)
        if (f[i] == NULL) return 0;
    sgemm = (sgemm_t)f[0]; dgemm = (gemm_t)f[1]; sgemv = (sgemv_t)f[2]; dgemv = (gemv_t)f[3];
    sdot = (sdot_t)f[4]; ddot = (ddot_t)f[5]; ssyrk = (ssyrk_t)f[6]; dsyrk = (syrk_t)f[7];
    return 1;
}

enum { P_DTYPE, P_BATCH, P_M, P_N, P_P, P_IS1M, P_IS1N, P_IS2N, P_IS2P, P_SAME, P_LEN };

/* NumPy's is_blasable2d, in elements */
static int blasable2d(int64_t s1, int64_t s2, int64_t d1, int64_t d2) {
    (void)d1;
    return s2 == 1 && s1 >= d2 && s1 <= INT32_MAX - 1;
}

#define NOBLAS(T)                                                                          \
    static void noblas_##T(const T *a, int64_t s1m, int64_t s1n, const T *b, int64_t s2n,  \
                           int64_t s2p, T *o, int64_t m, int64_t n, int64_t p) {           \
        for (int64_t i = 0; i < m; i++)                                                    \
            for (int64_t j = 0; j < p; j++) {                                              \
                T acc = 0;                                                                 \
                for (int64_t k = 0; k < n; k++) {                                          \
                    T t = a[i * s1m + k * s1n] * b[k * s2n + j * s2p];                     \
                    acc += t;                                                              \
                }                                                                          \
                o[i * p + j] = acc;                                                        \
            }                                                                              \
    }
NOBLAS(float)
NOBLAS(double)

/* the lower triangle of the p x p matrix o from its upper one (NumPy copies element by element;
 * the same values, here in tiles that stay in cache) */
#define TILE 64
#define MIRROR(T)                                                                          \
    static void mirror_##T(T *o, int64_t p) {                                              \
        for (int64_t bi = 0; bi < p; bi += TILE)                                           \
            for (int64_t bj = bi; bj < p; bj += TILE) {                                    \
                int64_t ei = bi + TILE < p ? bi + TILE : p;                                \
                int64_t ej = bj + TILE < p ? bj + TILE : p;                                \
                for (int64_t i = bi; i < ei; i++)                                          \
                    for (int64_t j = (bj > i + 1 ? bj : i + 1); j < ej; j++)               \
                        o[j * p + i] = o[i * p + j];                                       \
            }                                                                              \
    }
MIRROR(float)
MIRROR(double)

/* gemv as NumPy's ?_gemv: y = A x with A (m, n) of strides (am, an) */
static void gemv(int f64, const void *A, int64_t am, int64_t an, const void *x, int64_t xs,
                 void *y, int64_t ys, int64_t m, int64_t n) {
    int order;
    int64_t lda;
    if (blasable2d(am, an, m, n)) {
        order = ColMajor;
        lda = am;
    } else {
        order = RowMajor;
        lda = an;
    }
    if (f64) dgemv(order, Trans, n, m, 1.0, A, lda, x, xs, 0.0, y, ys);
    else sgemv(order, Trans, n, m, 1.0f, A, lda, x, xs, 0.0f, y, ys);
}

/* one (m, n) @ (n, p) product, NumPy's choice of routine; o is (m, p), row-major */
static void product(const int64_t *P, const char *a, const char *b, char *o) {
    int f64 = P[P_DTYPE] == 1;
    size_t sz = f64 ? 8 : 4;
    int64_t m = P[P_M], n = P[P_N], p = P[P_P];
    int64_t s1m = P[P_IS1M], s1n = P[P_IS1N], s2n = P[P_IS2N], s2p = P[P_IS2P];
    if (m == 0 || p == 0) return;
    if (n == 0) {
        memset(o, 0, (size_t)(m * p) * sz);
        return;
    }
    int i1c = blasable2d(s1m, s1n, m, n), i1f = blasable2d(s1n, s1m, n, m);
    int i2c = blasable2d(s2n, s2p, n, p), i2f = blasable2d(s2p, s2n, p, n);
    int i1 = i1c || i1f, i2 = i2c || i2f;
    if (m == 1 || n == 1 || p == 1) {
        int vector_matrix = m == 1 && i2 && blasable2d(s1n, 1, n, 1);
        int matrix_vector = p == 1 && i1 && blasable2d(s2n, 1, n, 1);
        if (m == 1 && p == 1) {
            if (s1n > 0 && s2n > 0) {
                if (f64) {
                    double sum = 0.;
                    sum += ddot(n, a, s1n, b, s2n);
                    *(double *)o = sum;
                } else {
                    double sum = 0.;
                    sum += sdot(n, a, s1n, b, s2n);
                    *(float *)o = (float)sum;
                }
                return;
            }
        } else if (n == 1 && (p == 1 || m == 1)) {
        } else if (vector_matrix) {
            gemv(f64, b, s2p, s2n, a, s1n, o, 1, p, n);
            return;
        } else if (matrix_vector) {
            gemv(f64, a, s1m, s1n, b, s2n, o, 1, m, n);
            return;
        }
        if (f64) noblas_double((const double *)a, s1m, s1n, (const double *)b, s2n, s2p,
                               (double *)o, m, n, p);
        else noblas_float((const float *)a, s1m, s1n, (const float *)b, s2n, s2p, (float *)o,
                          m, n, p);
        return;
    }
    if (!(i1 && i2)) {
        if (f64) noblas_double((const double *)a, s1m, s1n, (const double *)b, s2n, s2p,
                               (double *)o, m, n, p);
        else noblas_float((const float *)a, s1m, s1n, (const float *)b, s2n, s2p, (float *)o,
                          m, n, p);
        return;
    }
    int t1, t2;
    int64_t lda, ldb, ldc = p;
    if (i1c) { t1 = NoTrans; lda = s1m; } else { t1 = Trans; lda = s1n; }
    if (i2c) { t2 = NoTrans; ldb = s2n; } else { t2 = Trans; ldb = s2p; }
    if (P[P_SAME] && m == p && s1m == s2p && s1n == s2n && t1 != t2) {
        if (f64) dsyrk(RowMajor, Upper, t1, p, n, 1.0, a, t1 == NoTrans ? lda : ldb, 0.0, o, ldc);
        else ssyrk(RowMajor, Upper, t1, p, n, 1.0f, a, t1 == NoTrans ? lda : ldb, 0.0f, o, ldc);
        if (f64) mirror_double((double *)o, p);
        else mirror_float((float *)o, p);
        return;
    }
    if (f64) dgemm(RowMajor, t1, t2, m, p, n, 1.0, a, lda, b, ldb, 0.0, o, ldc);
    else sgemm(RowMajor, t1, t2, m, p, n, 1.0f, a, lda, b, ldb, 0.0f, o, ldc);
}

/* The products of a plan over dense row-major operands (the host rule calls this too).
 * Returns 0 when the BLAS functions are not set. */
int xa_matmul_host(const int64_t *P, const void *a, const void *b, void *o) {
    if (dgemm == NULL) return 0;
    size_t sz = P[P_DTYPE] == 1 ? 8 : 4;
    size_t sa = (size_t)(P[P_M] * P[P_N]) * sz, sb = (size_t)(P[P_N] * P[P_P]) * sz;
    size_t so = (size_t)(P[P_M] * P[P_P]) * sz;
#ifdef XA_MXCSR
    unsigned int csr = _mm_getcsr();
    _mm_setcsr(csr & ~0x8040u);  /* flush-to-zero (bit 15) and denormals-are-zero (bit 6) off */
#endif
    for (int64_t i = 0; i < P[P_BATCH]; i++)
        product(P, (const char *)a + i * sa, (const char *)b + i * sb, (char *)o + i * so);
#ifdef XA_MXCSR
    _mm_setcsr(csr);
#endif
    return 1;
}

XLA_FFI_Error *xa_matmul(XLA_FFI_CallFrame *cf) {
    if (xa_metadata_query(cf)) return NULL;
    if (cf->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
    if (cf->args.size != 2 || cf->rets.size != 1 || cf->args.types[0] != XLA_FFI_ArgType_BUFFER ||
        cf->args.types[1] != XLA_FFI_ArgType_BUFFER || cf->rets.types[0] != XLA_FFI_RetType_BUFFER)
        return xa_fail(cf, "xla_array_matmul: expects two buffer operands and one result");
    const XLA_FFI_Array *plan = xa_find_array(cf, "plan");
    if (plan == NULL || plan->dtype != XLA_FFI_DataType_S64 || plan->size != P_LEN)
        return xa_fail(cf, "xla_array_matmul: no plan attribute (10 int64)");
    const int64_t *P = (const int64_t *)plan->data;
    XLA_FFI_Buffer *A = (XLA_FFI_Buffer *)cf->args.args[0];
    XLA_FFI_Buffer *B = (XLA_FFI_Buffer *)cf->args.args[1];
    XLA_FFI_Buffer *R = (XLA_FFI_Buffer *)cf->rets.rets[0];
    XLA_FFI_DataType t = P[P_DTYPE] == 1 ? XLA_FFI_DataType_F64 : XLA_FFI_DataType_F32;
    if (A->dtype != t || B->dtype != t || R->dtype != t)
        return xa_fail(cf, "xla_array_matmul: operands and result must be the plan's dtype");
    int64_t bt = P[P_BATCH];
    if (xa_elements(A) != bt * P[P_M] * P[P_N] || xa_elements(B) != bt * P[P_N] * P[P_P] ||
        xa_elements(R) != bt * P[P_M] * P[P_P])
        return xa_fail(cf, "xla_array_matmul: operand sizes differ from the plan's");
    if (!xa_matmul_host(P, A->data, B->data, R->data))
        return xa_fail(cf, "xla_array_matmul: the BLAS functions were not set");
    return NULL;
}

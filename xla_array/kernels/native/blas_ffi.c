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
 * The plan (an int64 attribute) carries: dtype (0 float32, 1 float64, 2 complex64, 3
 * complex128: complex ones with alpha and beta by address and ?dotu_sub), batch, m, n, p, the
 * strides is1_m, is1_n, is2_n, is2_p in elements, and whether both operands are one value.
 *
 * XLA runs executables with the CPU's flush-to-zero and denormals-are-zero modes on; NumPy
 * does not. The handler clears them around the BLAS calls (x86-64), so both compute the same.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* complex: alpha and beta by address, dot products through ?dotu_sub */
typedef void (*zgemm_t)(int, int, int, int64_t, int64_t, int64_t, const void *, const void *,
                        int64_t, const void *, int64_t, const void *, void *, int64_t);
typedef void (*zgemv_t)(int, int, int64_t, int64_t, const void *, const void *, int64_t,
                        const void *, int64_t, const void *, void *, int64_t);
typedef void (*zdotu_t)(int64_t, const void *, int64_t, const void *, int64_t, void *);
typedef void (*zsyrk_t)(int, int, int, int64_t, int64_t, const void *, const void *, int64_t,
                        const void *, void *, int64_t);

static sgemm_t sgemm;
static gemm_t dgemm;
static sgemv_t sgemv;
static gemv_t dgemv;
static sdot_t sdot;
static ddot_t ddot;
static ssyrk_t ssyrk;
static syrk_t dsyrk;
static zgemm_t cgemm, zgemm;
static zgemv_t cgemv, zgemv;
static zdotu_t cdotu, zdotu;
static zsyrk_t csyrk, zsyrk;
static const float c_one[2] = {1.0f, 0.0f}, c_zero[2] = {0.0f, 0.0f};
static const double z_one[2] = {1.0, 0.0}, z_zero[2] = {0.0, 0.0};

int xa_matmul_abi(void) { return 1; }

/* The CBLAS functions, in this order: sgemm, dgemm, sgemv, dgemv, sdot, ddot, ssyrk, dsyrk,
 * cgemm, zgemm, cgemv, zgemv, cdotu_sub, zdotu_sub, csyrk, zsyrk. */
int xa_blas_init(void **f) {
    for (int i = 0; i < 16; i++)
        if (f[i] == NULL) return 0;
    sgemm = (sgemm_t)f[0]; dgemm = (gemm_t)f[1]; sgemv = (sgemv_t)f[2]; dgemv = (gemv_t)f[3];
    sdot = (sdot_t)f[4]; ddot = (ddot_t)f[5]; ssyrk = (ssyrk_t)f[6]; dsyrk = (syrk_t)f[7];
    cgemm = (zgemm_t)f[8]; zgemm = (zgemm_t)f[9]; cgemv = (zgemv_t)f[10];
    zgemv = (zgemv_t)f[11]; cdotu = (zdotu_t)f[12]; zdotu = (zdotu_t)f[13];
    csyrk = (zsyrk_t)f[14]; zsyrk = (zsyrk_t)f[15];
    return 1;
}

/* plan dtypes: float32, float64, complex64, complex128 */
static const size_t ITEM[4] = {4, 8, 8, 16};

enum { P_DTYPE, P_BATCH, P_M, P_N, P_P, P_IS1M, P_IS1N, P_IS2N, P_IS2P, P_SAME, P_LEN };

/* NumPy's is_blasable2d, in elements */
static int blasable2d(int64_t s1, int64_t s2, int64_t d1, int64_t d2) {
    (void)d1;
    return s2 == 1 && s1 >= d2 && s1 <= INT32_MAX - 1;
}

typedef struct { float re, im; } cfloat;
typedef struct { double re, im; } cdouble;

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

/* NumPy's complex loop: the real and imaginary parts of each product added in turn */
#define NOBLAS_C(T, R)                                                                     \
    static void noblas_##T(const T *a, int64_t s1m, int64_t s1n, const T *b, int64_t s2n,  \
                           int64_t s2p, T *o, int64_t m, int64_t n, int64_t p) {           \
        for (int64_t i = 0; i < m; i++)                                                    \
            for (int64_t j = 0; j < p; j++) {                                              \
                T acc = {0, 0};                                                            \
                for (int64_t k = 0; k < n; k++) {                                          \
                    T x = a[i * s1m + k * s1n], y = b[k * s2n + j * s2p];                  \
                    R re = (x.re * y.re) - (x.im * y.im);                                  \
                    R im = (x.re * y.im) + (x.im * y.re);                                  \
                    acc.re += re;                                                          \
                    acc.im += im;                                                          \
                }                                                                          \
                o[i * p + j] = acc;                                                        \
            }                                                                              \
    }
NOBLAS_C(cfloat, float)
NOBLAS_C(cdouble, double)

static void noblas(int dt, const void *a, int64_t s1m, int64_t s1n, const void *b, int64_t s2n,
                   int64_t s2p, void *o, int64_t m, int64_t n, int64_t p) {
    switch (dt) {
    case 0: noblas_float(a, s1m, s1n, b, s2n, s2p, o, m, n, p); break;
    case 1: noblas_double(a, s1m, s1n, b, s2n, s2p, o, m, n, p); break;
    case 2: noblas_cfloat(a, s1m, s1n, b, s2n, s2p, o, m, n, p); break;
    default: noblas_cdouble(a, s1m, s1n, b, s2n, s2p, o, m, n, p);
    }
}

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
MIRROR(cfloat)
MIRROR(cdouble)

static void mirror(int dt, void *o, int64_t p) {
    switch (dt) {
    case 0: mirror_float(o, p); break;
    case 1: mirror_double(o, p); break;
    case 2: mirror_cfloat(o, p); break;
    default: mirror_cdouble(o, p);
    }
}

/* gemv as NumPy's ?_gemv: y = A x with A (m, n) of strides (am, an) */
static void gemv(int dt, const void *A, int64_t am, int64_t an, const void *x, int64_t xs,
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
    switch (dt) {
    case 0: sgemv(order, Trans, n, m, 1.0f, A, lda, x, xs, 0.0f, y, ys); break;
    case 1: dgemv(order, Trans, n, m, 1.0, A, lda, x, xs, 0.0, y, ys); break;
    case 2: cgemv(order, Trans, n, m, c_one, A, lda, x, xs, c_zero, y, ys); break;
    default: zgemv(order, Trans, n, m, z_one, A, lda, x, xs, z_zero, y, ys);
    }
}

/* NumPy's ?_dot of two vectors: BLAS's dot added to zeros (in double for float32) */
static void dot(int dt, const void *a, int64_t sa, const void *b, int64_t sb, int64_t n,
                void *o) {
    double sum[2] = {0., 0.};
    switch (dt) {
    case 0:
        sum[0] += sdot(n, a, sa, b, sb);
        *(float *)o = (float)sum[0];
        break;
    case 1:
        sum[0] += ddot(n, a, sa, b, sb);
        *(double *)o = sum[0];
        break;
    case 2: {
        float t[2];
        cdotu(n, a, sa, b, sb, t);
        sum[0] += (double)t[0];
        sum[1] += (double)t[1];
        ((float *)o)[0] = (float)sum[0];
        ((float *)o)[1] = (float)sum[1];
        break;
    }
    default: {
        double t[2];
        zdotu(n, a, sa, b, sb, t);
        sum[0] += t[0];
        sum[1] += t[1];
        ((double *)o)[0] = sum[0];
        ((double *)o)[1] = sum[1];
    }
    }
}

/* one (m, n) @ (n, p) product, NumPy's choice of routine; o is (m, p), row-major */
static void product(const int64_t *P, const char *a, const char *b, char *o) {
    int dt = (int)P[P_DTYPE];
    size_t sz = ITEM[dt];
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
                dot(dt, a, s1n, b, s2n, n, o);
                return;
            }
        } else if (n == 1 && (p == 1 || m == 1)) {
        } else if (vector_matrix) {
            gemv(dt, b, s2p, s2n, a, s1n, o, 1, p, n);
            return;
        } else if (matrix_vector) {
            gemv(dt, a, s1m, s1n, b, s2n, o, 1, m, n);
            return;
        }
        noblas(dt, a, s1m, s1n, b, s2n, s2p, o, m, n, p);
        return;
    }
    if (!(i1 && i2)) {
        noblas(dt, a, s1m, s1n, b, s2n, s2p, o, m, n, p);
        return;
    }
    int t1, t2;
    int64_t lda, ldb, ldc = p;
    if (i1c) { t1 = NoTrans; lda = s1m; } else { t1 = Trans; lda = s1n; }
    if (i2c) { t2 = NoTrans; ldb = s2n; } else { t2 = Trans; ldb = s2p; }
    if (P[P_SAME] && m == p && s1m == s2p && s1n == s2n && t1 != t2) {
        int64_t ld = t1 == NoTrans ? lda : ldb;
        switch (dt) {
        case 0: ssyrk(RowMajor, Upper, t1, p, n, 1.0f, a, ld, 0.0f, o, ldc); break;
        case 1: dsyrk(RowMajor, Upper, t1, p, n, 1.0, a, ld, 0.0, o, ldc); break;
        case 2: csyrk(RowMajor, Upper, t1, p, n, c_one, a, ld, c_zero, o, ldc); break;
        default: zsyrk(RowMajor, Upper, t1, p, n, z_one, a, ld, z_zero, o, ldc);
        }
        mirror(dt, o, p);
        return;
    }
    switch (dt) {
    case 0: sgemm(RowMajor, t1, t2, m, p, n, 1.0f, a, lda, b, ldb, 0.0f, o, ldc); break;
    case 1: dgemm(RowMajor, t1, t2, m, p, n, 1.0, a, lda, b, ldb, 0.0, o, ldc); break;
    case 2: cgemm(RowMajor, t1, t2, m, p, n, c_one, a, lda, b, ldb, c_zero, o, ldc); break;
    default: zgemm(RowMajor, t1, t2, m, p, n, z_one, a, lda, b, ldb, z_zero, o, ldc);
    }
}

/* The products of a plan over dense row-major operands (the host rule calls this too).
 * Returns 0 when the BLAS functions are not set. */
int xa_matmul_host(const int64_t *P, const void *a, const void *b, void *o) {
    if (dgemm == NULL) return 0;
    size_t sz = ITEM[P[P_DTYPE]];
    size_t sa = (size_t)(P[P_M] * P[P_N]) * sz, sb = (size_t)(P[P_N] * P[P_P]) * sz;
    size_t so = (size_t)(P[P_M] * P[P_P]) * sz;
    unsigned int csr = xa_ieee_begin();
    for (int64_t i = 0; i < P[P_BATCH]; i++)
        product(P, (const char *)a + i * sa, (const char *)b + i * sb, (char *)o + i * so);
    xa_ieee_end(csr);
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
    static const XLA_FFI_DataType TYPES[4] = {XLA_FFI_DataType_F32, XLA_FFI_DataType_F64,
                                              XLA_FFI_DataType_C64, XLA_FFI_DataType_C128};
    if (P[P_DTYPE] < 0 || P[P_DTYPE] > 3)
        return xa_fail(cf, "xla_array_matmul: the plan's dtype is not one of the kernel's");
    XLA_FFI_DataType t = TYPES[P[P_DTYPE]];
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

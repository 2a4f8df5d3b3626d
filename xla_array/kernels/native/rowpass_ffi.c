/* XLA FFI handler computing g = X^T @ f(X @ w) in one pass over the rows of X.
 *
 * Built with the package (setup.py) against jaxlib's FFI header, for the baseline of the
 * architecture; the AVX2/FMA paths below are chosen at run time by the CPU's features. Loaded
 * and registered as CPU custom-call target xla_array_rowpass by xla_array/kernels/rowpass.py
 * (whose rewrite decides which graphs use it).
 *
 * Gradient steps of linear models (least squares, logistic regression, GLMs), power iteration
 * on X^T X and CG on the normal equations all compute X^T @ f(X @ w), f elementwise. XLA runs
 * the two matrix-vector products as two passes over X, each on one thread. This kernel reads
 * each block of rows once: t = X_blk @ w, v = f(t, ...), g += X_blk^T @ v while the block is
 * still in cache, and splits the rows over XLA's CPU thread pool.
 *
 * Operands: X (n, d) row-major, w (d), then V row vectors (n) and S scalars (rank 0), all of
 * one dtype (f32 or f64). Result: g (d). Attribute "program" (array of i64): f as
 * instructions of four integers (opcode, a, b, 0); register 0 holds t = X @ w, instruction i
 * writes register i + 1, the last register is v. Opcodes below (OP_*): loads of row vector a
 * or scalar a, and elementwise ops on registers a (and b).
 *
 * Rows are cut into chunks that depend on n only, each chunk's partial g is kept, and the
 * partials are summed in chunk order: the result does not depend on the number of threads or
 * on which thread ran which chunk.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ffi_common.h"

enum {
    OP_LOADV = 1, OP_LOADS = 2,
    OP_ADD = 10, OP_SUB = 11, OP_MUL = 12, OP_DIV = 13, OP_MAX = 14, OP_MIN = 15,
    OP_NEG = 20, OP_ABS = 21, OP_SQUARE = 22, OP_SQRT = 23, OP_EXP = 24, OP_EXPM1 = 25,
    OP_LOG = 26, OP_LOG1P = 27, OP_TANH = 28, OP_RECIP = 29
};

#define MAX_PROG 64   /* instructions */
#define MAX_IN 16     /* row vectors, scalars */
#define BLK 32        /* rows per block: the block of X stays in L1 between the two products */
#define MAX_CHUNKS 16

typedef struct {
    const void *X, *w;
    const void *vec[MAX_IN];
    double scal[MAX_IN];
    int64_t prog[MAX_PROG * 4];
    int64_t nprog;
    int64_t n, d, chunk_rows, nchunks;
    int f64;
    int64_t pstride; /* elements between two chunks' partials: whole cache lines */
    void *partial;   /* nchunks x pstride, 64-byte aligned */
    /* Written by every thread once per chunk: each on its own cache line, away from the
     * fields above that every thread reads. */
    char pad0[64];
    volatile int64_t next;
    char pad1[64 - sizeof(int64_t)];
    volatile int64_t done, refs;
    char pad2[64 - 2 * sizeof(int64_t)];
} job;

/* ---------------------------------------------------------------- eight rows at a time
 * With AVX2 and FMA: eight rows share each load of w, and the eight sums are reduced together.
 * The library is built for the architecture's baseline (no -march), with these functions
 * compiled for AVX2/FMA (the target attribute) and called only where the CPU has both
 * (runtime dispatch: xa_simd, set when the library is loaded). Elsewhere the portable loops
 * below do all the work. */
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define XA_AVX2 __attribute__((target("avx2,fma")))
static int xa_simd_ok; /* the CPU has AVX2 and FMA */
static int xa_simd;    /* the eight-row paths are used (xa_rowpass_simd can turn them off) */
__attribute__((constructor)) static void xa_detect(void) {
    __builtin_cpu_init();
    xa_simd = xa_simd_ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#define SIMD_ROWS xa_simd

XA_AVX2 static inline __m256i mask32(int64_t r) { /* lanes < r */
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)r), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
XA_AVX2 static inline __m256i mask64(int64_t r) {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(r), _mm256_setr_epi64x(0, 1, 2, 3));
}

XA_AVX2 static void dot8_f32(const float *x, int64_t d, const float *w, float *t) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    int64_t k = 0;
#define DOT_STEP(LOAD)                                                                         \
    a0 = _mm256_fmadd_ps(LOAD(x + k), wk, a0); a1 = _mm256_fmadd_ps(LOAD(x + d + k), wk, a1);  \
    a2 = _mm256_fmadd_ps(LOAD(x + 2 * d + k), wk, a2);                                         \
    a3 = _mm256_fmadd_ps(LOAD(x + 3 * d + k), wk, a3);                                         \
    a4 = _mm256_fmadd_ps(LOAD(x + 4 * d + k), wk, a4);                                         \
    a5 = _mm256_fmadd_ps(LOAD(x + 5 * d + k), wk, a5);                                         \
    a6 = _mm256_fmadd_ps(LOAD(x + 6 * d + k), wk, a6);                                         \
    a7 = _mm256_fmadd_ps(LOAD(x + 7 * d + k), wk, a7);
    for (; k + 8 <= d; k += 8) {
        __m256 wk = _mm256_loadu_ps(w + k);
        DOT_STEP(_mm256_loadu_ps)
    }
    if (k < d) {
        __m256i m = mask32(d - k);
#define MLOAD(p) _mm256_maskload_ps((p), m)
        __m256 wk = MLOAD(w + k);
        DOT_STEP(MLOAD)
#undef MLOAD
    }
#undef DOT_STEP
    __m256 b0 = _mm256_hadd_ps(a0, a1), b1 = _mm256_hadd_ps(a2, a3);
    __m256 b2 = _mm256_hadd_ps(a4, a5), b3 = _mm256_hadd_ps(a6, a7);
    __m256 c0 = _mm256_hadd_ps(b0, b1), c1 = _mm256_hadd_ps(b2, b3);
    _mm256_storeu_ps(t, _mm256_add_ps(_mm256_permute2f128_ps(c0, c1, 0x20),
                                      _mm256_permute2f128_ps(c0, c1, 0x31)));
}

XA_AVX2 static void axpy8_f32(const float *x, int64_t d, const float *v, float *g) {
    __m256 v0 = _mm256_set1_ps(v[0]), v1 = _mm256_set1_ps(v[1]), v2 = _mm256_set1_ps(v[2]),
           v3 = _mm256_set1_ps(v[3]), v4 = _mm256_set1_ps(v[4]), v5 = _mm256_set1_ps(v[5]),
           v6 = _mm256_set1_ps(v[6]), v7 = _mm256_set1_ps(v[7]);
    int64_t k = 0;
#define AXPY_SUM(LOAD)                                                                         \
    __m256 p = _mm256_mul_ps(v0, LOAD(x + k)), q = _mm256_mul_ps(v2, LOAD(x + 2 * d + k));     \
    p = _mm256_fmadd_ps(v1, LOAD(x + d + k), p); q = _mm256_fmadd_ps(v3, LOAD(x + 3 * d + k), q); \
    p = _mm256_fmadd_ps(v4, LOAD(x + 4 * d + k), p); q = _mm256_fmadd_ps(v6, LOAD(x + 6 * d + k), q); \
    p = _mm256_fmadd_ps(v5, LOAD(x + 5 * d + k), p); q = _mm256_fmadd_ps(v7, LOAD(x + 7 * d + k), q);
    for (; k + 8 <= d; k += 8) {
        AXPY_SUM(_mm256_loadu_ps)
        _mm256_storeu_ps(g + k, _mm256_add_ps(_mm256_loadu_ps(g + k), _mm256_add_ps(p, q)));
    }
    if (k < d) {
        __m256i m = mask32(d - k);
#define MLOAD(ptr) _mm256_maskload_ps((ptr), m)
        AXPY_SUM(MLOAD)
        _mm256_maskstore_ps(g + k, m, _mm256_add_ps(MLOAD(g + k), _mm256_add_ps(p, q)));
#undef MLOAD
    }
#undef AXPY_SUM
}

XA_AVX2 static inline __m256d hsum4_pd(__m256d a0, __m256d a1, __m256d a2, __m256d a3) {
    __m256d b0 = _mm256_hadd_pd(a0, a1), b1 = _mm256_hadd_pd(a2, a3);
    return _mm256_add_pd(_mm256_permute2f128_pd(b0, b1, 0x20), _mm256_permute2f128_pd(b0, b1, 0x31));
}

XA_AVX2 static void dot8_f64(const double *x, int64_t d, const double *w, double *t) {
    __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    int64_t k = 0;
#define DOT_STEP(LOAD)                                                                         \
    a0 = _mm256_fmadd_pd(LOAD(x + k), wk, a0); a1 = _mm256_fmadd_pd(LOAD(x + d + k), wk, a1);  \
    a2 = _mm256_fmadd_pd(LOAD(x + 2 * d + k), wk, a2);                                         \
    a3 = _mm256_fmadd_pd(LOAD(x + 3 * d + k), wk, a3);                                         \
    a4 = _mm256_fmadd_pd(LOAD(x + 4 * d + k), wk, a4);                                         \
    a5 = _mm256_fmadd_pd(LOAD(x + 5 * d + k), wk, a5);                                         \
    a6 = _mm256_fmadd_pd(LOAD(x + 6 * d + k), wk, a6);                                         \
    a7 = _mm256_fmadd_pd(LOAD(x + 7 * d + k), wk, a7);
    for (; k + 4 <= d; k += 4) {
        __m256d wk = _mm256_loadu_pd(w + k);
        DOT_STEP(_mm256_loadu_pd)
    }
    if (k < d) {
        __m256i m = mask64(d - k);
#define MLOAD(p) _mm256_maskload_pd((p), m)
        __m256d wk = MLOAD(w + k);
        DOT_STEP(MLOAD)
#undef MLOAD
    }
#undef DOT_STEP
    _mm256_storeu_pd(t, hsum4_pd(a0, a1, a2, a3));
    _mm256_storeu_pd(t + 4, hsum4_pd(a4, a5, a6, a7));
}

XA_AVX2 static void axpy8_f64(const double *x, int64_t d, const double *v, double *g) {
    __m256d v0 = _mm256_set1_pd(v[0]), v1 = _mm256_set1_pd(v[1]), v2 = _mm256_set1_pd(v[2]),
            v3 = _mm256_set1_pd(v[3]), v4 = _mm256_set1_pd(v[4]), v5 = _mm256_set1_pd(v[5]),
            v6 = _mm256_set1_pd(v[6]), v7 = _mm256_set1_pd(v[7]);
    int64_t k = 0;
#define AXPY_SUM(LOAD)                                                                         \
    __m256d p = _mm256_mul_pd(v0, LOAD(x + k)), q = _mm256_mul_pd(v2, LOAD(x + 2 * d + k));    \
    p = _mm256_fmadd_pd(v1, LOAD(x + d + k), p); q = _mm256_fmadd_pd(v3, LOAD(x + 3 * d + k), q); \
    p = _mm256_fmadd_pd(v4, LOAD(x + 4 * d + k), p); q = _mm256_fmadd_pd(v6, LOAD(x + 6 * d + k), q); \
    p = _mm256_fmadd_pd(v5, LOAD(x + 5 * d + k), p); q = _mm256_fmadd_pd(v7, LOAD(x + 7 * d + k), q);
    for (; k + 4 <= d; k += 4) {
        AXPY_SUM(_mm256_loadu_pd)
        _mm256_storeu_pd(g + k, _mm256_add_pd(_mm256_loadu_pd(g + k), _mm256_add_pd(p, q)));
    }
    if (k < d) {
        __m256i m = mask64(d - k);
#define MLOAD(ptr) _mm256_maskload_pd((ptr), m)
        AXPY_SUM(MLOAD)
        _mm256_maskstore_pd(g + k, m, _mm256_add_pd(MLOAD(g + k), _mm256_add_pd(p, q)));
#undef MLOAD
    }
#undef AXPY_SUM
}
#else
static int xa_simd_ok, xa_simd;
#define SIMD_ROWS 0
#define dot8_f32(x, d, w, t) ((void)0)
#define axpy8_f32(x, d, v, g) ((void)0)
#define dot8_f64(x, d, w, t) ((void)0)
#define axpy8_f64(x, d, v, g) ((void)0)
#endif

/* ---------------------------------------------------------------- the row pass, per dtype */

#define ROWPASS(T, SUF, EXP, EXPM1, LOG, LOG1P, TANH, SQRT, FABS)                            \
    static void run_program_##SUF(const job *J, T (*R)[BLK], int64_t i0, int64_t nb) {      \
        for (int64_t p = 0; p < J->nprog; p++) {                                            \
            const int64_t *in = J->prog + 4 * p;                                            \
            T *o = R[p + 1];                                                                \
            const T *a = R[in[1] < MAX_PROG ? in[1] : 0], *b = R[in[2] < MAX_PROG ? in[2] : 0]; \
            int64_t j;                                                                      \
            switch (in[0]) {                                                                \
                case OP_LOADV: {                                                            \
                    const T *v = (const T *)J->vec[in[1]] + i0;                             \
                    for (j = 0; j < nb; j++) o[j] = v[j];                                   \
                    break;                                                                  \
                }                                                                           \
                case OP_LOADS: {                                                            \
                    T s = (T)J->scal[in[1]];                                                \
                    for (j = 0; j < nb; j++) o[j] = s;                                      \
                    break;                                                                  \
                }                                                                           \
                case OP_ADD: for (j = 0; j < nb; j++) o[j] = a[j] + b[j]; break;            \
                case OP_SUB: for (j = 0; j < nb; j++) o[j] = a[j] - b[j]; break;            \
                case OP_MUL: for (j = 0; j < nb; j++) o[j] = a[j] * b[j]; break;            \
                case OP_DIV: for (j = 0; j < nb; j++) o[j] = a[j] / b[j]; break;            \
                case OP_MAX: /* NaN-propagating, like stablehlo.maximum */                  \
                    for (j = 0; j < nb; j++)                                                \
                        o[j] = a[j] != a[j] ? a[j] : b[j] != b[j] ? b[j] : a[j] > b[j] ? a[j] : b[j]; \
                    break;                                                                  \
                case OP_MIN:                                                                \
                    for (j = 0; j < nb; j++)                                                \
                        o[j] = a[j] != a[j] ? a[j] : b[j] != b[j] ? b[j] : a[j] < b[j] ? a[j] : b[j]; \
                    break;                                                                  \
                case OP_NEG: for (j = 0; j < nb; j++) o[j] = -a[j]; break;                  \
                case OP_ABS: for (j = 0; j < nb; j++) o[j] = FABS(a[j]); break;             \
                case OP_SQUARE: for (j = 0; j < nb; j++) o[j] = a[j] * a[j]; break;         \
                case OP_SQRT: for (j = 0; j < nb; j++) o[j] = SQRT(a[j]); break;            \
                case OP_EXP: for (j = 0; j < nb; j++) o[j] = EXP(a[j]); break;              \
                case OP_EXPM1: for (j = 0; j < nb; j++) o[j] = EXPM1(a[j]); break;          \
                case OP_LOG: for (j = 0; j < nb; j++) o[j] = LOG(a[j]); break;              \
                case OP_LOG1P: for (j = 0; j < nb; j++) o[j] = LOG1P(a[j]); break;          \
                case OP_TANH: for (j = 0; j < nb; j++) o[j] = TANH(a[j]); break;            \
                case OP_RECIP: for (j = 0; j < nb; j++) o[j] = (T)1 / a[j]; break;          \
                default: for (j = 0; j < nb; j++) o[j] = (T)NAN; break;                     \
            }                                                                               \
        }                                                                                   \
    }                                                                                       \
                                                                                            \
    /* t[j] = x_j . w for nb rows (stride d) */                                          \
    static void dot_rows_##SUF(const T *restrict X, int64_t d, const T *restrict w,         \
                               int64_t nb, T *restrict t) {                                 \
        int64_t j = 0;                                                                      \
        for (; SIMD_ROWS && j + 8 <= nb; j += 8) dot8_##SUF(X + j * d, d, w, t + j);        \
        for (; j + 4 <= nb; j += 4) { /* four rows at once: independent sums */             \
            const T *x0 = X + j * d, *x1 = x0 + d, *x2 = x1 + d, *x3 = x2 + d;              \
            T s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                               \
            _Pragma("omp simd reduction(+:s0,s1,s2,s3)")                                    \
            for (int64_t k = 0; k < d; k++) {                                               \
                T wk = w[k];                                                                \
                s0 += x0[k] * wk; s1 += x1[k] * wk; s2 += x2[k] * wk; s3 += x3[k] * wk;     \
            }                                                                               \
            t[j] = s0; t[j + 1] = s1; t[j + 2] = s2; t[j + 3] = s3;                         \
        }                                                                                   \
        for (; j < nb; j++) {                                                               \
            const T *x = X + j * d;                                                         \
            T s = 0;                                                                        \
            _Pragma("omp simd reduction(+:s)")                                              \
            for (int64_t k = 0; k < d; k++) s += x[k] * w[k];                               \
            t[j] = s;                                                                       \
        }                                                                                   \
    }                                                                                       \
                                                                                            \
    /* g += sum_j v[j] x_j for nb rows (stride d) */                                        \
    static void axpy_rows_##SUF(const T *restrict X, int64_t d, const T *restrict v,        \
                                int64_t nb, T *restrict g) {                                \
        int64_t j = 0;                                                                      \
        for (; SIMD_ROWS && j + 8 <= nb; j += 8) axpy8_##SUF(X + j * d, d, v + j, g);       \
        for (; j + 4 <= nb; j += 4) {                                                       \
            const T *x0 = X + j * d, *x1 = x0 + d, *x2 = x1 + d, *x3 = x2 + d;              \
            T v0 = v[j], v1 = v[j + 1], v2 = v[j + 2], v3 = v[j + 3];                       \
            _Pragma("omp simd")                                                             \
            for (int64_t k = 0; k < d; k++)                                                 \
                g[k] += (v0 * x0[k] + v1 * x1[k]) + (v2 * x2[k] + v3 * x3[k]);              \
        }                                                                                   \
        for (; j < nb; j++) {                                                               \
            const T *x = X + j * d;                                                         \
            T vj = v[j];                                                                    \
            _Pragma("omp simd")                                                             \
            for (int64_t k = 0; k < d; k++) g[k] += vj * x[k];                              \
        }                                                                                   \
    }                                                                                       \
                                                                                            \
    static void chunk_##SUF(const job *J, int64_t c) {                                      \
        const int64_t d = J->d;                                                             \
        const T *X = (const T *)J->X, *w = (const T *)J->w;                                 \
        T *g = (T *)J->partial + c * J->pstride;                                            \
        T R[MAX_PROG + 1][BLK];                                                             \
        int64_t r0 = c * J->chunk_rows, r1 = r0 + J->chunk_rows;                            \
        if (r1 > J->n) r1 = J->n;                                                           \
        for (int64_t k = 0; k < d; k++) g[k] = 0;                                           \
        for (int64_t i0 = r0; i0 < r1; i0 += BLK) { /* the block stays in L1 between */     \
            int64_t nb = r1 - i0 < BLK ? r1 - i0 : BLK;                                     \
            dot_rows_##SUF(X + i0 * d, d, w, nb, R[0]);                                     \
            run_program_##SUF(J, R, i0, nb);                                                \
            axpy_rows_##SUF(X + i0 * d, d, R[J->nprog], nb, g);                             \
        }                                                                                   \
    }

ROWPASS(float, f32, expf, expm1f, logf, log1pf, tanhf, sqrtf, fabsf)
ROWPASS(double, f64, exp, expm1, log, log1p, tanh, sqrt, fabs)

/* ---------------------------------------------------------------- work sharing */

static void work(job *J) {
    for (;;) {
        int64_t c = __atomic_fetch_add(&J->next, 1, __ATOMIC_ACQ_REL);
        if (c >= J->nchunks) break;
        if (J->f64) chunk_f64(J, c); else chunk_f32(J, c);
        __atomic_fetch_add(&J->done, 1, __ATOMIC_ACQ_REL);
    }
}

static void release(job *J) {
    if (__atomic_sub_fetch(&J->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        free(J->partial);
        free(J);
    }
}

/* A helper on XLA's thread pool: takes chunks until none is left. It may start after the
 * caller has finished (then it finds no chunk); the job is freed by whoever leaves last. */
static void helper(void *data) {
    job *J = (job *)data;
    work(J);
    release(J);
}

/* ---------------------------------------------------------------- FFI plumbing */

static int64_t pool_threads(XLA_FFI_CallFrame *cf) {
    int64_t nt = 1;
    XLA_FFI_ThreadPool_NumThreads_Args a;
    memset(&a, 0, sizeof a);
    a.struct_size = XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE;
    a.ctx = cf->ctx;
    a.num_threads = &nt;
    XLA_FFI_Error *err = cf->api->XLA_FFI_ThreadPool_NumThreads(&a);
    if (err != NULL) {
        XLA_FFI_Error_Destroy_Args da;
        memset(&da, 0, sizeof da);
        da.struct_size = XLA_FFI_Error_Destroy_Args_STRUCT_SIZE;
        da.error = err;
        cf->api->XLA_FFI_Error_Destroy(&da);
        return 1;
    }
    return nt < 1 ? 1 : nt;
}

static int schedule(XLA_FFI_CallFrame *cf, job *J) {
    XLA_FFI_ThreadPool_Schedule_Args a;
    memset(&a, 0, sizeof a);
    a.struct_size = XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE;
    a.ctx = cf->ctx;
    a.task = helper;
    a.data = J;
    XLA_FFI_Error *err = cf->api->XLA_FFI_ThreadPool_Schedule(&a);
    if (err != NULL) {
        XLA_FFI_Error_Destroy_Args da;
        memset(&da, 0, sizeof da);
        da.struct_size = XLA_FFI_Error_Destroy_Args_STRUCT_SIZE;
        da.error = err;
        cf->api->XLA_FFI_Error_Destroy(&da);
        return 0;
    }
    return 1;
}

/* Returns this file's ABI version (checked by the loader). */
int xa_rowpass_abi(void) { return 1; }

/* Whether the AVX2/FMA paths are used: on = 1 where the CPU has them, 0 for the portable loops
 * only (tests compare the two), -1 to ask. Returns the state after the call. */
int xa_rowpass_simd(int on) {
    if (on >= 0) xa_simd = on && xa_simd_ok;
    return xa_simd;
}

XLA_FFI_Error *xa_rowpass(XLA_FFI_CallFrame *cf) {
    if (xa_metadata_query(cf)) return NULL;
    if (cf->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
    if (cf->args.size < 2 || cf->rets.size != 1 || cf->rets.types[0] != XLA_FFI_RetType_BUFFER)
        return xa_fail(cf, "xla_array_rowpass: expects X, w, ... and one result");
    for (int64_t i = 0; i < cf->args.size; i++)
        if (cf->args.types[i] != XLA_FFI_ArgType_BUFFER)
            return xa_fail(cf, "xla_array_rowpass: operands must be buffers");
    XLA_FFI_Buffer *X = (XLA_FFI_Buffer *)cf->args.args[0];
    XLA_FFI_Buffer *W = (XLA_FFI_Buffer *)cf->args.args[1];
    XLA_FFI_Buffer *G = (XLA_FFI_Buffer *)cf->rets.rets[0];
    int f64 = X->dtype == XLA_FFI_DataType_F64;
    if (!f64 && X->dtype != XLA_FFI_DataType_F32)
        return xa_fail(cf, "xla_array_rowpass: X must be float32 or float64");
    if (X->rank != 2 || W->rank != 1 || G->rank != 1 || W->dims[0] != X->dims[1] ||
        G->dims[0] != X->dims[1] || W->dtype != X->dtype || G->dtype != X->dtype)
        return xa_fail(cf, "xla_array_rowpass: shapes or dtypes do not align");
    const XLA_FFI_Array *prog = xa_find_array(cf, "program");
    if (prog == NULL || prog->dtype != XLA_FFI_DataType_S64 || prog->size % 4 != 0 ||
        prog->size / 4 > MAX_PROG)
        return xa_fail(cf, "xla_array_rowpass: missing or bad program attribute");
    int64_t n = X->dims[0], d = X->dims[1];
    if (d == 0) return NULL;
    if (n == 0) {
        memset(G->data, 0, (size_t)d * (f64 ? 8 : 4));
        return NULL;
    }
    job *J = (job *)calloc(1, sizeof(job));
    if (J == NULL) return xa_fail(cf, "xla_array_rowpass: out of memory");
    J->X = X->data;
    J->w = W->data;
    J->n = n;
    J->d = d;
    J->f64 = f64;
    J->nprog = (int64_t)(prog->size / 4);
    memcpy(J->prog, prog->data, prog->size * sizeof(int64_t));
    int64_t nv = 0, ns = 0;
    for (int64_t i = 2; i < cf->args.size; i++) {
        XLA_FFI_Buffer *B = (XLA_FFI_Buffer *)cf->args.args[i];
        if (B->dtype != X->dtype) { free(J); return xa_fail(cf, "xla_array_rowpass: mixed dtypes"); }
        if (B->rank == 1 && B->dims[0] == n && nv < MAX_IN) {
            J->vec[nv++] = B->data;
        } else if (B->rank == 0 && ns < MAX_IN) {
            J->scal[ns++] = f64 ? *(const double *)B->data : (double)*(const float *)B->data;
        } else {
            free(J);
            return xa_fail(cf, "xla_array_rowpass: operands after w must be (n,) vectors or scalars");
        }
    }
    for (int64_t p = 0; p < J->nprog; p++) { /* every reference must be in range */
        const int64_t *in = J->prog + 4 * p;
        int binary = in[0] >= OP_ADD && in[0] <= OP_MIN, unary = in[0] >= OP_NEG && in[0] <= OP_RECIP;
        if ((in[0] == OP_LOADV && (in[1] < 0 || in[1] >= nv)) ||
            (in[0] == OP_LOADS && (in[1] < 0 || in[1] >= ns)) ||
            ((binary || unary) && (in[1] < 0 || in[1] > p)) || (binary && (in[2] < 0 || in[2] > p)) ||
            !(binary || unary || in[0] == OP_LOADV || in[0] == OP_LOADS)) {
            free(J);
            return xa_fail(cf, "xla_array_rowpass: bad program");
        }
    }
    /* chunks: a function of n only (reproducible sums), a few per thread */
    int64_t rows = (n + MAX_CHUNKS - 1) / MAX_CHUNKS;
    if (rows < 256) rows = 256;
    rows = (rows + BLK - 1) / BLK * BLK;
    J->chunk_rows = rows;
    J->nchunks = (n + rows - 1) / rows;
    size_t item = f64 ? 8 : 4;
    /* Each chunk's partial g on whole cache lines of its own: sharing a line at the boundary
     * between two chunks, run on two threads, makes every block's update of g bounce it
     * between the cores (false sharing: two threads ran slower than one). */
    J->pstride = (int64_t)(((size_t)d * item + 63) / 64 * 64 / item);
    if (posix_memalign(&J->partial, 64, (size_t)J->nchunks * (size_t)J->pstride * item) != 0) {
        free(J);
        return xa_fail(cf, "xla_array_rowpass: out of memory");
    }
    J->refs = 1;
    int64_t helpers = pool_threads(cf) - 1;
    if (helpers > J->nchunks - 1) helpers = J->nchunks - 1;
    for (int64_t h = 0; h < helpers; h++) {
        __atomic_add_fetch(&J->refs, 1, __ATOMIC_ACQ_REL);
        if (!schedule(cf, J)) {
            __atomic_sub_fetch(&J->refs, 1, __ATOMIC_ACQ_REL);
            break;
        }
    }
    work(J);
    while (__atomic_load_n(&J->done, __ATOMIC_ACQUIRE) < J->nchunks) sched_yield();
    if (f64) {
        double *g = (double *)G->data;
        const double *P = (const double *)J->partial;
        memcpy(g, P, (size_t)d * item);
        for (int64_t c = 1; c < J->nchunks; c++)
            for (int64_t k = 0; k < d; k++) g[k] += P[c * J->pstride + k];
    } else {
        float *g = (float *)G->data;
        const float *P = (const float *)J->partial;
        memcpy(g, P, (size_t)d * item);
        for (int64_t c = 1; c < J->nchunks; c++)
            for (int64_t k = 0; k < d; k++) g[k] += P[c * J->pstride + k];
    }
    release(J);
    return NULL;
}

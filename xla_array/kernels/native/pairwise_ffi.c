/* XLA FFI handlers adding values in NumPy's order: rows by pairwise summation
 * (xla_array_pairwise_sum), columns one row after the other (xla_array_column_sum).
 *
 * Built with the package (setup.py) against jaxlib's FFI header, loaded and registered as
 * CPU custom-call targets by xla_array/kernels/pairwise.py. NumPy adds
 * the values of a contiguous row by pairwise summation (pairwise_sum in
 * numpy/_core/src/umath/loops_utils.h.src): under 8 values one after the other; up to 128,
 * eight accumulators and the leftover values after them; above, the two halves cut at
 * n/2 - (n/2) % 8. Complex rows are summed as (re, im) pairs with the same counts in scalars.
 * The sum is then added to the identity 0.0. This is that algorithm, the same additions in the
 * same order (built without -ffast-math: the compiler neither reassociates nor contracts).
 * XLA's ops compute the same order for rows whose recursion is regular
 * (core/ops/reductions.py); rows whose halves have unequal lengths come here.
 *
 * Operand: float32, float64, complex64 or complex128 of any shape, row-major; result: the same
 * dtype, one value per row: the operand's element count divided by the result's is the row
 * length.
 *
 * xla_array_column_sum: operand (r, k), result (k,): result[j] = ((x[0, j] + x[1, j]) + ...)
 * + x[r - 1, j], as NumPy's loop adds the rows of a reduction over a leading axis into its
 * result (its identity 0.0 is added by the caller).
 *
 * xla_array_cumsum, xla_array_cumprod: operand and result (p, r, k), float32 or float64: along
 * the middle axis out[., 0, .] = x[., 0, .] and out[., i, .] = out[., i - 1, .] + x[., i, .]
 * (or *), one after the other, as NumPy's add.accumulate / multiply.accumulate (cumsum,
 * cumprod) of a C-ordered operand.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ffi_common.h"

int xa_pairwise_sum_abi(void) { return 1; }
int xa_column_sum_abi(void) { return 1; }
int xa_cumsum_abi(void) { return 1; }
int xa_cumprod_abi(void) { return 1; }

/* r[j] = a[j] + a[j + 8] + a[j + 16] + ..., in order, over the whole blocks of 8 of a[0..n);
 * returns the index after them (NumPy's eight accumulators, real and complex alike) */
#define LANES8(NAME, T)                                                                       \
    static int64_t NAME(T *r, const T *a, int64_t n) {                                        \
        for (int j = 0; j < 8; j++) r[j] = a[j];                                              \
        int64_t i = 8;                                                                        \
        for (; i < n - (n % 8); i += 8)                                                       \
            for (int j = 0; j < 8; j++) r[j] += a[i + j];                                     \
        return i;                                                                             \
    }

LANES8(lanes_f64, double)
LANES8(lanes_f32, float)

#define PAIRWISE_REAL(NAME, T, LANES)                                                         \
    static T NAME(const T *a, int64_t n) {                                                    \
        if (n < 8) {                                                                          \
            T res = (T)-0.0;                                                                  \
            for (int64_t i = 0; i < n; i++) res += a[i];                                      \
            return res;                                                                       \
        }                                                                                     \
        if (n <= 128) {                                                                       \
            T r[8];                                                                           \
            int64_t i = LANES(r, a, n);                                                       \
            T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));        \
            for (; i < n; i++) res += a[i];                                                   \
            return res;                                                                       \
        }                                                                                     \
        int64_t n2 = n / 2;                                                                   \
        n2 -= n2 % 8;                                                                         \
        return NAME(a, n2) + NAME(a + n2, n - n2);                                            \
    }

/* n counts scalars (twice the complex values); a holds re, im, re, im, ... */
#define PAIRWISE_COMPLEX(NAME, T, LANES)                                                      \
    static void NAME(T *rr, T *ri, const T *a, int64_t n) {                                   \
        if (n < 8) {                                                                          \
            *rr = (T)-0.0;                                                                    \
            *ri = (T)-0.0;                                                                    \
            for (int64_t i = 0; i < n; i += 2) {                                              \
                *rr += a[i];                                                                  \
                *ri += a[i + 1];                                                              \
            }                                                                                 \
            return;                                                                           \
        }                                                                                     \
        if (n <= 128) {                                                                       \
            T r[8];                                                                           \
            int64_t i = LANES(r, a, n);                                                       \
            *rr = (r[0] + r[2]) + (r[4] + r[6]);                                              \
            *ri = (r[1] + r[3]) + (r[5] + r[7]);                                              \
            for (; i < n; i += 2) {                                                           \
                *rr += a[i];                                                                  \
                *ri += a[i + 1];                                                              \
            }                                                                                 \
            return;                                                                           \
        }                                                                                     \
        T rr1, ri1, rr2, ri2;                                                                 \
        int64_t n2 = n / 2;                                                                   \
        n2 -= n2 % 8;                                                                         \
        NAME(&rr1, &ri1, a, n2);                                                              \
        NAME(&rr2, &ri2, a + n2, n - n2);                                                     \
        *rr = rr1 + rr2;                                                                      \
        *ri = ri1 + ri2;                                                                      \
    }

PAIRWISE_REAL(pw_f64, double, lanes_f64)
PAIRWISE_REAL(pw_f32, float, lanes_f32)
PAIRWISE_COMPLEX(pw_c128, double, lanes_f64)
PAIRWISE_COMPLEX(pw_c64, float, lanes_f32)

static int64_t numel(const XLA_FFI_Buffer *b) {
    int64_t n = 1;
    for (int64_t i = 0; i < b->rank; i++) n *= b->dims[i];
    return n;
}

#define ROWS_REAL(T, SUM)                                                                     \
    {                                                                                         \
        const T *x = (const T *)xv;                                                           \
        T *r = (T *)rv;                                                                       \
        for (int64_t i = 0; i < rows; i++) r[i] = (T)0.0 + SUM(x + i * m, m);                 \
        return;                                                                               \
    }

#define ROWS_COMPLEX(T, SUM)                                                                  \
    {                                                                                         \
        const T *x = (const T *)xv;                                                           \
        T *r = (T *)rv;                                                                       \
        for (int64_t i = 0; i < rows; i++) {                                                  \
            T re, im;                                                                         \
            SUM(&re, &im, x + 2 * i * m, 2 * m);                                              \
            r[2 * i] = (T)0.0 + re;                                                           \
            r[2 * i + 1] = (T)0.0 + im;                                                       \
        }                                                                                     \
        return;                                                                               \
    }

/* Column sums: NumPy adds the rows of a reduction over leading axes one after the other
 * (r = x[0]; r += x[1]; ...). The running sums of up to 16 columns are kept in registers
 * (FIXED_COLUMNS: a function per count, whose fixed-size loops the compiler unrolls), so a
 * row costs one add's latency, not a store and a load of each running sum (the same adds in
 * the same order: the same bits). 10,000 rows, float64: 3 columns 42 -> 12 us, 16 columns 78
 * -> 23, 17 columns 75 -> 39; from 33 columns on, a row's adds keep the core busy and the
 * running sums stay in memory. */
#define FIXED_COLUMNS(T, NAME, K)                                                             \
    static void NAME(const T *x, T *r, int64_t rows, int64_t stride, int first) {            \
        T acc[K];                                                                             \
        int64_t i = 0;                                                                        \
        if (first) {                                                                          \
            for (int j = 0; j < K; j++) acc[j] = x[j];                                        \
            i = 1;                                                                            \
        } else {                                                                              \
            for (int j = 0; j < K; j++) acc[j] = r[j];                                        \
        }                                                                                     \
        for (; i < rows; i++) {                                                               \
            const T *row = x + i * stride;                                                    \
            for (int j = 0; j < K; j++) acc[j] += row[j];                                     \
        }                                                                                     \
        for (int j = 0; j < K; j++) r[j] = acc[j];                                            \
    }

#define FIXED_WIDTHS(T, P)                                                                    \
    FIXED_COLUMNS(T, P##1, 1) FIXED_COLUMNS(T, P##2, 2) FIXED_COLUMNS(T, P##3, 3)             \
    FIXED_COLUMNS(T, P##4, 4) FIXED_COLUMNS(T, P##5, 5) FIXED_COLUMNS(T, P##6, 6)             \
    FIXED_COLUMNS(T, P##7, 7) FIXED_COLUMNS(T, P##8, 8) FIXED_COLUMNS(T, P##9, 9)             \
    FIXED_COLUMNS(T, P##10, 10) FIXED_COLUMNS(T, P##11, 11) FIXED_COLUMNS(T, P##12, 12)       \
    FIXED_COLUMNS(T, P##13, 13) FIXED_COLUMNS(T, P##14, 14) FIXED_COLUMNS(T, P##15, 15)       \
    FIXED_COLUMNS(T, P##16, 16)                                                               \
    static void (*const P##_fixed[17])(const T *, T *, int64_t, int64_t, int) = {             \
        NULL, P##1, P##2, P##3, P##4, P##5, P##6, P##7, P##8, P##9, P##10, P##11, P##12,      \
        P##13, P##14, P##15, P##16};

FIXED_WIDTHS(double, cols_f64)
FIXED_WIDTHS(float, cols_f32)

#define COLUMNS(T, NCOMP, FIXED)                                                              \
    {                                                                                         \
        const T *x = (const T *)xv;                                                           \
        T *r = (T *)rv;                                                                       \
        int64_t width = k * NCOMP; /* (a complex sum: its parts' sums, as reals) */           \
        if (width > 32) { /* the adds of a row run side by side: no latency to hide */        \
            memcpy(r, x, (size_t)width * sizeof(T));                                          \
            for (int64_t i = 1; i < rows; i++) {                                              \
                const T *row = x + i * width;                                                 \
                for (int64_t j = 0; j < width; j++) r[j] += row[j];                           \
            }                                                                                 \
            return;                                                                           \
        }                                                                                     \
        /* 17 to 32 columns: two blocks, over chunks of rows of 32 KiB or less (in cache) */  \
        int64_t chunk = width <= 16 ? rows : 32768 / (width * (int64_t)sizeof(T));           \
        for (int64_t i = 0; i < rows; i += chunk) {                                           \
            int64_t n = rows - i < chunk ? rows - i : chunk;                                  \
            const T *xi = x + i * width;                                                      \
            int64_t j = width > 16 ? 16 : 0;                                                  \
            if (j) FIXED[16](xi, r, n, width, i == 0);                                        \
            FIXED[width - j](xi + j, r + j, n, width, i == 0);                                \
        }                                                                                     \
        return;                                                                               \
    }

/* dtype codes: 0 float64, 1 float32, 2 complex128, 3 complex64 */
static void row_sums(int dt, int64_t rows, int64_t m, const void *xv, void *rv) {
    switch (dt) {
    case 0: ROWS_REAL(double, pw_f64)
    case 1: ROWS_REAL(float, pw_f32)
    case 2: ROWS_COMPLEX(double, pw_c128)
    default: ROWS_COMPLEX(float, pw_c64)
    }
}

/* rows >= 1, k >= 1 */
static void column_sums(int dt, int64_t rows, int64_t k, const void *xv, void *rv) {
    switch (dt) {
    case 0: COLUMNS(double, 1, cols_f64_fixed)
    case 1: COLUMNS(float, 1, cols_f32_fixed)
    case 2: COLUMNS(double, 2, cols_f64_fixed)
    default: COLUMNS(float, 2, cols_f32_fixed)
    }
}

/* The host rule of the first-use tier (kernels/pairwise.py, host) computes with these same
 * loops: (rows, m) -> (rows,) row sums (column = 0), or (rows, k) -> (k,) column sums
 * (column = 1, rows >= 1). Returns 1, or 0 for a bad dtype code. */
int xa_sums_host(int column, int dt, int64_t rows, int64_t width, const void *x, void *out) {
    if (dt < 0 || dt > 3) return 0;
    if (column) {
        if (rows >= 1 && width >= 1) column_sums(dt, rows, width, x, out);
    } else if (rows >= 1) {
        row_sums(dt, rows, width, x, out);
    }
    return 1;
}

static const char *const BAD_ARGS[2] = {
    "xla_array_pairwise_sum: expects one buffer operand and one result",
    "xla_array_column_sum: expects one buffer operand and one result"};
static const char *const BAD_DTYPES[2] = {
    "xla_array_pairwise_sum: operand and result must be one of float32, float64, complex64, "
    "complex128",
    "xla_array_column_sum: operand and result must be one of float32, float64, complex64, "
    "complex128"};

/* The two handlers: rows (column = 0) or columns (column = 1). */
static XLA_FFI_Error *sums(XLA_FFI_CallFrame *cf, int column) {
    if (xa_metadata_query(cf)) return NULL;
    if (cf->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
    XLA_FFI_Buffer *X, *R;
    if (!xa_one_buffer_each(cf, &X, &R)) return xa_fail(cf, BAD_ARGS[column]);
    XLA_FFI_DataType dt = X->dtype;
    if (dt != R->dtype || (dt != XLA_FFI_DataType_F64 && dt != XLA_FFI_DataType_F32 &&
                           dt != XLA_FFI_DataType_C128 && dt != XLA_FFI_DataType_C64))
        return xa_fail(cf, BAD_DTYPES[column]);
    int code = dt == XLA_FFI_DataType_F64 ? 0 : dt == XLA_FFI_DataType_F32 ? 1
               : dt == XLA_FFI_DataType_C128 ? 2 : 3;
    if (column) {
        if (X->rank != 2 || R->rank != 1 || X->dims[1] != R->dims[0])
            return xa_fail(cf, "xla_array_column_sum: expects (r, k) -> (k,)");
        int64_t rows = X->dims[0], k = X->dims[1];
        if (rows == 0 || k == 0) return xa_fail(cf, "xla_array_column_sum: empty operand");
        column_sums(code, rows, k, X->data, R->data);
        return NULL;
    }
    int64_t rows = numel(R), total = numel(X);
    if (rows == 0) return NULL;
    if (total % rows != 0)
        return xa_fail(cf, "xla_array_pairwise_sum: operand is not a whole number of rows");
    row_sums(code, rows, total / rows, X->data, R->data);
    return NULL;
}

XLA_FFI_Error *xa_pairwise_sum(XLA_FFI_CallFrame *cf) { return sums(cf, 0); }

XLA_FFI_Error *xa_column_sum(XLA_FFI_CallFrame *cf) { return sums(cf, 1); }

#define SCAN(T, OP)                                                                           \
    {                                                                                         \
        const T *x = (const T *)X->data;                                                      \
        T *o = (T *)R->data;                                                                  \
        for (int64_t q = 0; q < p; q++) {                                                     \
            const T *xq = x + q * r * k;                                                      \
            T *oq = o + q * r * k;                                                            \
            memcpy(oq, xq, (size_t)k * sizeof(T));                                            \
            for (int64_t i = 1; i < r; i++)                                                   \
                for (int64_t j = 0; j < k; j++)                                               \
                    oq[i * k + j] = oq[(i - 1) * k + j] OP xq[i * k + j];                     \
        }                                                                                     \
        return NULL;                                                                          \
    }

/* The two scans: sums (prod = 0) or products (prod = 1). */
static XLA_FFI_Error *scan(XLA_FFI_CallFrame *cf, int prod) {
    if (xa_metadata_query(cf)) return NULL;
    if (cf->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
    XLA_FFI_Buffer *X, *R;
    if (!xa_one_buffer_each(cf, &X, &R))
        return xa_fail(cf, "xla_array_cumsum/cumprod: expects one buffer operand and one result");
    XLA_FFI_DataType dt = X->dtype;
    if (dt != R->dtype || (dt != XLA_FFI_DataType_F64 && dt != XLA_FFI_DataType_F32))
        return xa_fail(cf, "xla_array_cumsum/cumprod: operand and result must be float32 or "
                           "float64");
    if (X->rank != 3 || R->rank != 3 || X->dims[0] != R->dims[0] || X->dims[1] != R->dims[1] ||
        X->dims[2] != R->dims[2])
        return xa_fail(cf, "xla_array_cumsum/cumprod: expects (p, r, k) -> (p, r, k)");
    int64_t p = X->dims[0], r = X->dims[1], k = X->dims[2];
    if (p == 0 || r == 0 || k == 0) return NULL;
    if (prod) {
        if (dt == XLA_FFI_DataType_F64) SCAN(double, *)
        SCAN(float, *)
    }
    if (dt == XLA_FFI_DataType_F64) SCAN(double, +)
    SCAN(float, +)
}

XLA_FFI_Error *xa_cumsum(XLA_FFI_CallFrame *cf) { return scan(cf, 0); }

XLA_FFI_Error *xa_cumprod(XLA_FFI_CallFrame *cf) { return scan(cf, 1); }

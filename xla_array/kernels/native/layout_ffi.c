/* XLA FFI handler copying a stack of row-major matrices into column-major ones: the operand
 * of a LAPACK call.
 *
 * Built with the package (setup.py) against jaxlib's FFI header, loaded and registered as the
 * CPU custom-call target xla_array_column_major by xla_array/kernels/layout.py. LAPACK takes
 * its matrices column-major; when the call's operand layout is a constraint of the LAPACK
 * custom call itself, XLA's layout assignment carries it back through the elementwise steps
 * that compute the operand (they write column-major) and then copies every value a row-major
 * reader needs (the user's array, a sum in NumPy's order): two or three more passes over the
 * matrix and a compiled kernel each. Through this call the operand stays row-major and is
 * transposed once, into the buffer LAPACK then overwrites.
 *
 * Operand: (batch..., m, n) in row-major order; result: the same shape, each matrix stored
 * column-major (the result layout the lowering declares), the batch dimensions major. Any
 * element size (float32, float64, complex64, complex128, int32: 4, 8 or 16 bytes). Tiles of
 * 32 x 32 elements keep both sides in cache.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ffi_common.h"

int xa_column_major_abi(void) { return 1; }

#define TILE 32

#define TRANSPOSE(T)                                                                     \
    static void transpose_##T(const T *src, T *dst, int64_t m, int64_t n) {              \
        for (int64_t i0 = 0; i0 < m; i0 += TILE) {                                       \
            int64_t i1 = i0 + TILE < m ? i0 + TILE : m;                                  \
            for (int64_t j0 = 0; j0 < n; j0 += TILE) {                                   \
                int64_t j1 = j0 + TILE < n ? j0 + TILE : n;                              \
                for (int64_t j = j0; j < j1; j++)                                        \
                    for (int64_t i = i0; i < i1; i++) dst[j * m + i] = src[i * n + j];   \
            }                                                                            \
        }                                                                                \
    }

TRANSPOSE(uint32_t)
TRANSPOSE(uint64_t)

typedef struct {
    uint64_t lo, hi;
} xa_u128;
TRANSPOSE(xa_u128)

static int64_t element_size(XLA_FFI_DataType t) {
    switch (t) {
        case XLA_FFI_DataType_F32:
        case XLA_FFI_DataType_S32:
        case XLA_FFI_DataType_U32:
            return 4;
        case XLA_FFI_DataType_F64:
        case XLA_FFI_DataType_C64:
        case XLA_FFI_DataType_S64:
        case XLA_FFI_DataType_U64:
            return 8;
        case XLA_FFI_DataType_C128:
            return 16;
        default:
            return 0;
    }
}

XLA_FFI_Error *xa_column_major(XLA_FFI_CallFrame *cf) {
    if (xa_metadata_query(cf)) return NULL;
    if (cf->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
    XLA_FFI_Buffer *X, *R;
    if (!xa_one_buffer_each(cf, &X, &R))
        return xa_fail(cf, "xla_array_column_major: expects one buffer operand and one result");
    if (X->dtype != R->dtype || X->rank != R->rank || X->rank < 2)
        return xa_fail(cf, "xla_array_column_major: operand and result need one dtype and "
                           "one rank >= 2");
    for (int64_t i = 0; i < X->rank; i++)
        if (X->dims[i] != R->dims[i])
            return xa_fail(cf, "xla_array_column_major: operand and result shapes differ");
    int64_t size = element_size(X->dtype);
    if (size == 0) return xa_fail(cf, "xla_array_column_major: unsupported dtype");
    int64_t m = X->dims[X->rank - 2], n = X->dims[X->rank - 1];
    int64_t batch = xa_elements(X) / (m * n > 0 ? m * n : 1);
    if (m * n == 0) return NULL;
    const char *src = (const char *)X->data;
    char *dst = (char *)R->data;
    int64_t step = m * n * size;
    for (int64_t b = 0; b < batch; b++, src += step, dst += step) {
        if (m == 1 || n == 1) {
            memcpy(dst, src, (size_t)step);
        } else if (size == 4) {
            transpose_uint32_t((const uint32_t *)src, (uint32_t *)dst, m, n);
        } else if (size == 8) {
            transpose_uint64_t((const uint64_t *)src, (uint64_t *)dst, m, n);
        } else {
            transpose_xa_u128((const xa_u128 *)src, (xa_u128 *)dst, m, n);
        }
    }
    return NULL;
}

/* XLA FFI handler turning LAPACK getrf's pivots into the row permutation they apply.
 *
 * Built with the package (setup.py) against jaxlib's FFI header, loaded and registered as the
 * CPU custom-call target xla_array_lu_perm by xla_array/kernels/lu_perm.py. XLA has no op for
 * this sequential loop: as a stablehlo.while it pays a loop iteration's overhead per pivot
 * (figures in docs/architecture.md, "Native kernels"); here it is a few nanoseconds per pivot.
 *
 * Operand: int32 pivots (batch..., k), 1-based as getrf writes them: row i was swapped with row
 * pivots[i] - 1, for i = 0, 1, ..., k - 1 in order. Result: int32 (batch..., m), the 0-based
 * permutation perm with x[perm, :] == L @ U, i.e. arange(m) with those swaps applied. A pivot
 * outside 1..m (getrf never writes one) swaps nothing.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ffi_common.h"

int xa_lu_perm_abi(void) { return 1; }

XLA_FFI_Error *xa_lu_perm(XLA_FFI_CallFrame *cf) {
    if (xa_metadata_query(cf)) return NULL;
    if (cf->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
    XLA_FFI_Buffer *P, *R;
    if (!xa_one_buffer_each(cf, &P, &R))
        return xa_fail(cf, "xla_array_lu_perm: expects one buffer operand and one result");
    if (P->dtype != XLA_FFI_DataType_S32 || R->dtype != XLA_FFI_DataType_S32)
        return xa_fail(cf, "xla_array_lu_perm: pivots and permutation must be int32");
    if (P->rank < 1 || R->rank != P->rank)
        return xa_fail(cf, "xla_array_lu_perm: operand and result need equal ranks >= 1");
    int64_t r = P->rank, batch = 1;
    for (int64_t i = 0; i + 1 < r; i++) {
        if (P->dims[i] != R->dims[i])
            return xa_fail(cf, "xla_array_lu_perm: batch dimensions differ");
        batch *= P->dims[i];
    }
    int64_t k = P->dims[r - 1], m = R->dims[r - 1];
    if (m > INT32_MAX) return xa_fail(cf, "xla_array_lu_perm: too many rows for int32");
    const int32_t *piv = (const int32_t *)P->data;
    int32_t *perm = (int32_t *)R->data;
    for (int64_t b = 0; b < batch; b++, piv += k, perm += m) {
        for (int64_t i = 0; i < m; i++) perm[i] = (int32_t)i;
        for (int64_t i = 0; i < k && i < m; i++) {
            int64_t j = (int64_t)piv[i] - 1;
            if (j < 0 || j >= m || j == i) continue;
            int32_t t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
    }
    return NULL;
}

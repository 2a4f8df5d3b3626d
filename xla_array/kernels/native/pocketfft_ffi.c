/* XLA FFI handler running NumPy's own FFT loops (pocketfft, numpy.fft._pocketfft_umath).
 *
 * Built with the package (setup.py) against jaxlib's FFI header, loaded and registered as the
 * CPU custom-call target xla_array_pocketfft by xla_array/kernels/pocketfft.py, which hands
 * over, for each (transform, dtype) of its table, the inner loop NumPy itself runs for
 * numpy.fft (the generalized ufuncs fft, ifft, rfft_n_even, rfft_n_odd and irfft, taken with
 * ufunc._get_strided_loop: the loop, its context and auxiliary data), once per process
 * (xa_pocketfft_set). XLA's FFT (DUCC) rounds otherwise than NumPy's pocketfft; through this
 * kernel the values are NumPy's, and the host rule of the first-use tier calls the same
 * function (xa_pocketfft_host), so the bits agree.
 *
 * Attribute: `loop`, two int64: the index of the loop in the table and the bits of the
 * normalization factor NumPy passes to the loop (a double; the float32 loops take it as the
 * float it holds exactly). Operand: one buffer (..., nin); result: one buffer (..., nout), the
 * same leading dimensions; the loop transforms each of the rows in turn, as NumPy's does for
 * one axis. XLA runs executables with flush-to-zero and denormals-are-zero on, NumPy without:
 * they are turned off around the loop (x86-64).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ffi_common.h"

/* NumPy's PyArrayMethod_StridedLoop; for a generalized ufunc of signature (n),()->(m):
 * dimensions = {rows, n, m}, strides = {row strides of the three operands, n's stride, m's} */
typedef int (*loop_t)(void *context, char *const *data, const intptr_t *dimensions,
                      const intptr_t *strides, void *auxdata);

/* the transforms, in the table's order: entry 2 * kind + (float64 ? 1 : 0) */
enum { XA_FFT = 0, XA_IFFT = 1, XA_RFFT_EVEN = 2, XA_RFFT_ODD = 3, XA_IRFFT = 4, XA_KINDS = 5 };
#define MAX_LOOPS (2 * XA_KINDS)

static struct {
    loop_t fn;
    void *context;
    void *auxdata;
} loops[MAX_LOOPS];

int xa_pocketfft_abi(void) { return 1; }

/* Entry i of the table: NumPy's loop, its context and auxiliary data. Returns 1, or 0 for a
 * bad entry. */
int xa_pocketfft_set(int64_t i, void *fn, void *context, void *auxdata) {
    if (i < 0 || i >= MAX_LOOPS || fn == NULL) return 0;
    loops[i].context = context;
    loops[i].auxdata = auxdata;
    loops[i].fn = (loop_t)fn;
    return 1;
}

/* The item sizes of loop i's operand and result. */
static void item_sizes(int64_t i, intptr_t *in, intptr_t *out) {
    intptr_t real = (i % 2) ? 8 : 4;
    int kind = (int)(i / 2);
    *in = (kind == XA_RFFT_EVEN || kind == XA_RFFT_ODD) ? real : 2 * real;
    *out = kind == XA_IRFFT ? real : 2 * real;
}

/* Transform the `rows` C-ordered rows of `in` (nin elements each) into those of `out` (nout
 * each) with loop i and normalization factor fct, as the kernel computes them (the host rule
 * calls this too). Returns 1, 0 for an unset loop, -1 if the loop failed. */
int xa_pocketfft_host(int64_t i, int64_t rows, int64_t nin, int64_t nout, const void *in,
                      double fct, void *out) {
    if (i < 0 || i >= MAX_LOOPS || loops[i].fn == NULL || nin < 1 || nout < 1) return 0;
    if (rows == 0) return 1;
    intptr_t sin, sout;
    item_sizes(i, &sin, &sout);
    float fct32 = (float)fct;  /* the float32 loops read a float: the one fct holds exactly */
    char *data[3] = {(char *)in, (i % 2) ? (char *)&fct : (char *)&fct32, (char *)out};
    intptr_t dims[3] = {(intptr_t)rows, (intptr_t)nin, (intptr_t)nout};
    intptr_t strides[5] = {(intptr_t)nin * sin, 0, (intptr_t)nout * sout, sin, sout};
    unsigned int csr = xa_ieee_begin();
    int r = loops[i].fn(loops[i].context, data, dims, strides, loops[i].auxdata);
    xa_ieee_end(csr);
    return r < 0 ? -1 : 1;
}

static XLA_FFI_DataType dtype_of(intptr_t itemsize, int complex) {
    if (complex) return itemsize == 16 ? XLA_FFI_DataType_C128 : XLA_FFI_DataType_C64;
    return itemsize == 8 ? XLA_FFI_DataType_F64 : XLA_FFI_DataType_F32;
}

XLA_FFI_Error *xa_pocketfft(XLA_FFI_CallFrame *cf) {
    if (xa_metadata_query(cf)) return NULL;
    if (cf->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
    const XLA_FFI_Array *attr = xa_find_array(cf, "loop");
    if (attr == NULL || attr->dtype != XLA_FFI_DataType_S64 || attr->size != 2)
        return xa_fail(cf, "xla_array_pocketfft: no loop attribute (two int64)");
    int64_t i = ((const int64_t *)attr->data)[0];
    double fct;
    memcpy(&fct, &((const int64_t *)attr->data)[1], sizeof fct);
    if (i < 0 || i >= MAX_LOOPS || loops[i].fn == NULL)
        return xa_fail(cf, "xla_array_pocketfft: that loop was not set");
    XLA_FFI_Buffer *X, *R;
    if (!xa_one_buffer_each(cf, &X, &R))
        return xa_fail(cf, "xla_array_pocketfft: one buffer operand and one buffer result");
    intptr_t sin, sout;
    item_sizes(i, &sin, &sout);
    int kind = (int)(i / 2);
    if (X->dtype != dtype_of(sin, kind != XA_RFFT_EVEN && kind != XA_RFFT_ODD) ||
        R->dtype != dtype_of(sout, kind != XA_IRFFT))
        return xa_fail(cf, "xla_array_pocketfft: operand or result of another dtype");
    if (X->rank < 1 || X->rank != R->rank)
        return xa_fail(cf, "xla_array_pocketfft: operand and result of one rank, at least 1");
    for (int64_t d = 0; d + 1 < X->rank; d++)
        if (X->dims[d] != R->dims[d])
            return xa_fail(cf, "xla_array_pocketfft: leading dimensions differ");
    int64_t nin = X->dims[X->rank - 1], nout = R->dims[R->rank - 1];
    if (nin < 1 || nout < 1) return NULL;  /* (no row has elements: nothing to write) */
    int64_t rows = xa_elements(R) / nout;
    if (xa_pocketfft_host(i, rows, nin, nout, X->data, fct, R->data) != 1)
        return xa_fail(cf, "xla_array_pocketfft: NumPy's loop failed");
    return NULL;
}

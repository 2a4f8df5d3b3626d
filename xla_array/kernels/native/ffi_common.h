/* Plumbing shared by the XLA FFI handlers in this folder (included by each kernel's .c file,
 * which setup.py builds with the package). */
#ifndef XLA_ARRAY_FFI_COMMON_H
#define XLA_ARRAY_FFI_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "xla/ffi/api/c_api.h"

typedef struct {
    size_t struct_size;
    int type;
} xa_ext_head;

/* At registration XLA calls the handler once with a metadata extension: report the FFI API
 * version this was built against. Returns 1 when the call was that query. */
static int xa_metadata_query(XLA_FFI_CallFrame *cf) {
    if (cf->extension_start == NULL || ((xa_ext_head *)cf->extension_start)->type != 1) return 0;
    XLA_FFI_Metadata *m = ((XLA_FFI_Metadata_Extension *)cf->extension_start)->metadata;
    m->api_version.major_version = XLA_FFI_API_MAJOR;
    m->api_version.minor_version = XLA_FFI_API_MINOR;
    m->traits = 0;
    return 1;
}

/* An INVALID_ARGUMENT error with a static message. */
static XLA_FFI_Error *xa_fail(XLA_FFI_CallFrame *cf, const char *msg) {
    XLA_FFI_Error_Create_Args a;
    memset(&a, 0, sizeof a);
    a.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
    a.message = msg;
    a.errc = XLA_FFI_Error_Code_INVALID_ARGUMENT;
    return cf->api->XLA_FFI_Error_Create(&a);
}

/* Whether the call has one buffer operand and one buffer result (then *x and *r point to them). */
static inline int xa_one_buffer_each(XLA_FFI_CallFrame *cf, XLA_FFI_Buffer **x, XLA_FFI_Buffer **r) {
    if (cf->args.size != 1 || cf->rets.size != 1 ||
        cf->args.types[0] != XLA_FFI_ArgType_BUFFER ||
        cf->rets.types[0] != XLA_FFI_RetType_BUFFER)
        return 0;
    *x = (XLA_FFI_Buffer *)cf->args.args[0];
    *r = (XLA_FFI_Buffer *)cf->rets.rets[0];
    return 1;
}

/* The array attribute `name` of the call (NULL when it has none). */
static inline const XLA_FFI_Array *xa_find_array(XLA_FFI_CallFrame *cf, const char *name) {
    size_t len = strlen(name);
    for (int64_t i = 0; i < cf->attrs.size; i++) {
        XLA_FFI_ByteSpan *s = cf->attrs.names[i];
        if (s->len == len && memcmp(s->ptr, name, len) == 0 &&
            cf->attrs.types[i] == XLA_FFI_AttrType_ARRAY)
            return (const XLA_FFI_Array *)cf->attrs.attrs[i];
    }
    return NULL;
}

/* XLA runs executables with flush-to-zero and denormals-are-zero on, NumPy without: a kernel
 * calling NumPy's code turns both off around the call (x86-64; elsewhere nothing to do).
 * xa_ieee_begin returns the state xa_ieee_end restores. */
#if defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>
static inline unsigned int xa_ieee_begin(void) {
    unsigned int csr = _mm_getcsr();
    _mm_setcsr(csr & ~0x8040u);  /* flush-to-zero (bit 15) and denormals-are-zero (bit 6) off */
    return csr;
}
static inline void xa_ieee_end(unsigned int csr) { _mm_setcsr(csr); }
#else
static inline unsigned int xa_ieee_begin(void) { return 0; }
static inline void xa_ieee_end(unsigned int csr) { (void)csr; }
#endif

/* The number of elements of a buffer. */
static inline int64_t xa_elements(const XLA_FFI_Buffer *x) {
    int64_t c = 1;
    for (int64_t i = 0; i < x->rank; i++) c *= x->dims[i];
    return c;
}

#endif

/* The library's identity, read by the loader (nnkiln/runtime/native/__init__.py), and a function for smoke tests.
 * native/build.py defines NK_SOURCE_DIGEST (a digest of the .c and .h files the library was built from: the loader
 * refuses a library built from other sources than those beside it) and NK_BUILD_FLAGS (the compiler flags, for
 * status reports); a build by hand without them reports empty strings, which the loader does not check. */
#include "nnkiln.h"

#ifndef NK_SOURCE_DIGEST
#define NK_SOURCE_DIGEST ""
#endif
#ifndef NK_BUILD_FLAGS
#define NK_BUILD_FLAGS ""
#endif

const char *nk_source_digest(void) { return NK_SOURCE_DIGEST; }

const char *nk_build_flags(void) { return NK_BUILD_FLAGS; }

/* y[i] = x[i] * 2 + 1 */
void nk_selftest(const float *x, float *y, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; ++i) y[i] = x[i] * 2.0f + 1.0f;
}

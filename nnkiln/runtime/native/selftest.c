/* Smoke test of the native build: y[i] = x[i] * 2 + 1. */
#include <stddef.h>
void nk_selftest(const float *x, float *y, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; ++i) y[i] = x[i] * 2.0f + 1.0f;
}

/* Row programs: fused float32 elementwise chains, row reductions (softmax, layer-norm pieces) and
 * their post-ops, evaluated row by row of a [rows, C] geometry while the row is in cache.
 *
 * A program is a list of instructions run for every block of R rows (R*C about 1-4 Ki floats, in
 * L1). Values live in registers: a register is a scratch buffer of R*C floats per thread; a value is
 * a row block (R*C) or one number per row (R: a reduction's result and what is computed from it).
 * Operands of an instruction are registers (index >= 0) or program arguments (index < 0: argument
 * -1 - index). An argument is a float pointer with a mode: FULL (row r = p + r*C, length C), CHAN
 * (p, length C, the same for every row), ROWV (p + r, length 1), SCAL (p, length 1). A STORE copies
 * a register to an argument (FULL for a row block, ROWV for per-row numbers). A CHAIN followed by
 * n STEP entries applies n cheap operations to one value in vector registers (one pass).
 *
 * This file is part of conv.c's library (#included at its end): nthreads > 1 shares chunks of blocks through
 * conv.c's thread pool (nk_parallel: workers spin for a while after a job, so a row program right after a
 * convolution or GEMM finds them awake; one pool for every kernel, so two pools never spin against each other).
 * Python calls this through ctypes (the GIL is released): nnkiln/runtime/kernels/__init__.py.
 *
 * Numerics: every operation rounds to float32 like the numpy reference kernels; exp and tanh are
 * our own vectorisable float32 implementations (a few ulp, IEEE inf/NaN behaviour); row sums use
 * numpy's pairwise summation order (identical results); max/min are order-independent.
 * Compiled without -ffast-math: no reassociation, NaN/inf follow IEEE.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <stdatomic.h>

#include "nnkiln.h"

/* FP exception flags are never read: let the vectoriser if-convert the selects below (results,
 * including NaN/inf, are unchanged; this is not -ffast-math). gcc only: clang ignores (and warns about) it. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

/* Opcodes (NK_OP_*), operand modes (NK_MODE_*) and the instruction layout (nk_ins): nnkiln.h. */

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef uint32_t v8u __attribute__((vector_size(32)));
/* The elementwise steps work on NK_VL lanes: 16 where AVX-512 registers exist, else 8 (every operation is
 * lane by lane, so the width changes no result; the reductions keep their own 8-lane order). */
#if defined(__AVX512F__)
#define NK_VL 16
#else
#define NK_VL 8
#endif
typedef float vf __attribute__((vector_size(4 * NK_VL)));
typedef int32_t vi __attribute__((vector_size(4 * NK_VL)));
typedef uint32_t vu __attribute__((vector_size(4 * NK_VL)));
#if NK_VL == 16
#include <immintrin.h>
#endif

#if NK_VL == 16
static inline vf vbc(float x) { return (vf)_mm512_set1_ps(x); }
#else
static inline vf vbc(float x) { return (vf){x, x, x, x, x, x, x, x}; }
#endif
static inline vf vsel(vi m, vf a, vf b) { return (vf)(((vi)a & m) | ((vi)b & ~m)); }

/* a*b + c: one rounding with hardware FMA, else two (both well within the runtime's tolerance) */
#if defined(__FMA__) && defined(__AVX__)
#include <immintrin.h>
#define MAD(a, b, c) fmaf((a), (b), (c))
#if NK_VL == 16
#define VMAD(a, b, c) ((vf)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#else
#define VMAD(a, b, c) ((vf)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#endif
#else
#define MAD(a, b, c) ((a) * (b) + (c))
#define VMAD(a, b, c) ((a) * (b) + (c))
#endif

static inline float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* exp(x) in float32, two forms with the same polynomial: exp(r) by a degree-7 Taylor polynomial on
 * |r| <= ln2/2 (truncation < 2e-9 relative), x = n ln2 + r.
 * - In [NK_EXP_LO, NK_EXP_HI] (every softmax and tanh argument in practice): n = x log2(e) rounded by adding
 *   1.5 * 2^23 (a multiply-add: n is then in the low bits of the sum), r by two multiply-adds with the high
 *   and low parts of ln2, and 2^n built from n's bits in one step (normal results only). 16 operations.
 * - Elsewhere (nk_expf_wide): x clamped to [-103.97, 88.72], 2^n in two steps (subnormal results), overflow
 *   -> inf, underflow -> 0, NaN -> NaN.
 * The vector forms below do the same operations lane by lane (a vector with a lane outside the range computes
 * both and selects per lane), so results do not depend on the vector width. */
#define NK_EXP_LO (-87.0f)
#define NK_EXP_HI 88.0f
#define NK_EXP_MAGIC 12582912.0f /* 1.5 * 2^23 */

static inline float nk_expf_wide(float x) {
    const float hi_lim = 88.7228394f, lo_lim = -103.972084f;
    float xc = x > hi_lim ? hi_lim : (x < lo_lim ? lo_lim : x);
    float n = (xc * 1.44269502f + 12582912.0f) - 12582912.0f; /* round to nearest (|.| < 2^22) */
    float r = xc - n * 0.693145752f;     /* ln2 high part (exact product) */
    r = r - n * 1.42860677e-6f;          /* ln2 low part */
    float p = 1.98412701e-4f;             /* 1/5040 */
    p = MAD(p, r, 1.38888892e-3f);        /* 1/720 */
    p = MAD(p, r, 8.33333377e-3f);        /* 1/120 */
    p = MAD(p, r, 4.16666679e-2f);        /* 1/24 */
    p = MAD(p, r, 1.66666672e-1f);        /* 1/6 */
    p = MAD(p, r, 0.5f);
    p = MAD(p * r, r, r) + 1.0f;
    int32_t ni = (int32_t)n;
    int32_t n1 = ni >> 1, n2 = ni - n1;
    float s1 = u2f((uint32_t)(n1 + 127) << 23), s2 = u2f((uint32_t)(n2 + 127) << 23);
    float y = p * s1 * s2;
    y = x > hi_lim ? INFINITY : y;
    y = x < lo_lim ? 0.0f : y;
    return x != x ? x : y;
}

/* exp(x) for x in [NK_EXP_LO, NK_EXP_HI] (the fast form above). */
static inline float nk_exp_pos(float x) {
    float t = MAD(x, 1.44269502f, NK_EXP_MAGIC);
    float n = t - NK_EXP_MAGIC;
    float r = MAD(n, -0.693145752f, x);
    r = MAD(n, -1.42860677e-6f, r);
    float p = 1.98412701e-4f;
    p = MAD(p, r, 1.38888892e-3f);
    p = MAD(p, r, 8.33333377e-3f);
    p = MAD(p, r, 4.16666679e-2f);
    p = MAD(p, r, 1.66666672e-1f);
    p = MAD(p, r, 0.5f);
    p = MAD(p * r, r, r) + 1.0f;
    return p * u2f((f2u(t) - f2u(NK_EXP_MAGIC) + 127u) << 23);
}

static inline float nk_expf(float x) {
    return (x >= NK_EXP_LO && x <= NK_EXP_HI) ? nk_exp_pos(x) : nk_expf_wide(x);
}

/* tanh(x): odd Taylor series up to x^13 for |x| < 0.25 (truncation < 1e-10 relative), else
 * 1 - 2/(exp(2|x|) + 1) (relative error a few ulp for |x| >= 0.25); sign of x. */
static inline float nk_tanhf(float x) {
    float a = fabsf(x);
    float z = x * x;
    /* coefficients of x^3..x^13: -1/3, 2/15, -17/315, 62/2835, -1382/155925, 21844/6081075 */
    float q = 3.5921280e-3f;
    q = MAD(q, z, -8.8632355e-3f);
    q = MAD(q, z, 2.1869488e-2f);
    q = MAD(q, z, -5.3968254e-2f);
    q = MAD(q, z, 1.3333334e-1f);
    q = MAD(q, z, -3.3333334e-1f);
    float small = MAD(x * z, q, x);
    float a2 = 2.0f * a;
    float e = nk_exp_pos(a2 < NK_EXP_HI ? a2 : NK_EXP_HI); /* exp(88) ~ 1.6e38: tanh is 1 long before */
    float big = 1.0f - 2.0f / (e + 1.0f);
    /* numpy's float32 tanh (the reference) stays at 1 - 2^-24 below |x| = 10 and is 1 from there:
     * do the same, so 1 + tanh(x) never cancels to 0 where the reference's does not (1 ulp) */
    big = a < 10.0f ? (big < 0.99999994f ? big : 0.99999994f) : 1.0f;
    float y = a < 0.25f ? fabsf(small) : big;
    y = copysignf(y, x);
    return x != x ? x : y;
}

/* The same two functions on 8 lanes (GCC vector extensions): the same operations in the same
 * order (fused multiply-adds where the scalar code has them), so the same results, lane by lane. */
static inline vf vexp_wide(vf x) {
    const vf hi = vbc(88.7228394f), lo = vbc(-103.972084f);
    vf xc = vsel(x > hi, hi, vsel(x < lo, lo, x));
    vf n = (xc * vbc(1.44269502f) + vbc(12582912.0f)) - vbc(12582912.0f);
    vf r = xc - n * vbc(0.693145752f);
    r = r - n * vbc(1.42860677e-6f);
    vf p = vbc(1.98412701e-4f);
    p = VMAD(p, r, vbc(1.38888892e-3f));
    p = VMAD(p, r, vbc(8.33333377e-3f));
    p = VMAD(p, r, vbc(4.16666679e-2f));
    p = VMAD(p, r, vbc(1.66666672e-1f));
    p = VMAD(p, r, vbc(0.5f));
    p = VMAD(p * r, r, r) + vbc(1.0f);
    vi ni = __builtin_convertvector(n, vi);
    vi n1 = ni >> 1, n2 = ni - n1;
    vf s1 = (vf)((vu)(n1 + 127) << 23), s2 = (vf)((vu)(n2 + 127) << 23);
    vf y = p * s1 * s2;
    y = vsel(x > hi, vbc(INFINITY), y);
    y = vsel(x < lo, vbc(0.0f), y);
    return vsel(x != x, x, y);
}

static inline vf vexp_pos(vf x) {
    vf t = VMAD(x, vbc(1.44269502f), vbc(NK_EXP_MAGIC));
    vf n = t - vbc(NK_EXP_MAGIC);
    vf r = VMAD(n, vbc(-0.693145752f), x);
    r = VMAD(n, vbc(-1.42860677e-6f), r);
    vf p = vbc(1.98412701e-4f);
    p = VMAD(p, r, vbc(1.38888892e-3f));
    p = VMAD(p, r, vbc(8.33333377e-3f));
    p = VMAD(p, r, vbc(4.16666679e-2f));
    p = VMAD(p, r, vbc(1.66666672e-1f));
    p = VMAD(p, r, vbc(0.5f));
    p = VMAD(p * r, r, r) + vbc(1.0f);
    return p * (vf)(((vu)t - (vu)vbc(NK_EXP_MAGIC) + 127u) << 23);
}

/* 1 when every lane of the mask is set */
static inline int vall(vi m) {
#if NK_VL == 16
    return _mm512_test_epi32_mask((__m512i)m, (__m512i)m) == 0xFFFF;
#elif defined(__AVX__)
    return _mm256_movemask_ps((__m256)m) == 0xFF;
#else
    int all = 1;
    for (int i = 0; i < NK_VL; i++) all &= m[i] != 0;
    return all;
#endif
}

static inline vf vexp(vf x) {
    vi in = (x >= vbc(NK_EXP_LO)) & (x <= vbc(NK_EXP_HI)); /* NaN: out */
    vf y = vexp_pos(x);
    return vall(in) ? y : vsel(in, y, vexp_wide(x));
}

static inline vf vabs(vf x) { return (vf)((vu)x & (vu)vbc(u2f(0x7fffffffu))); }

static inline vf vtanh(vf x) {
    vf a = vabs(x);
    vf z = x * x;
    vf q = vbc(3.5921280e-3f);
    q = VMAD(q, z, vbc(-8.8632355e-3f));
    q = VMAD(q, z, vbc(2.1869488e-2f));
    q = VMAD(q, z, vbc(-5.3968254e-2f));
    q = VMAD(q, z, vbc(1.3333334e-1f));
    q = VMAD(q, z, vbc(-3.3333334e-1f));
    vf small = VMAD(x * z, q, x);
    vf a2 = vbc(2.0f) * a;
    vf e = vexp_pos(vsel(a2 < vbc(NK_EXP_HI), a2, vbc(NK_EXP_HI)));
    vf big = vbc(1.0f) - vbc(2.0f) / (e + vbc(1.0f));
    big = vsel(a < vbc(10.0f), vsel(big < vbc(0.99999994f), big, vbc(0.99999994f)), vbc(1.0f));
    vf y = vsel(a < vbc(0.25f), vabs(small), big);
    y = (vf)(((vu)y & (vu)vbc(u2f(0x7fffffffu))) | ((vu)x & (vu)vbc(u2f(0x80000000u))));
    return vsel(x != x, x, y);
}

/* Elementwise kernels over n elements; sa / sb: 1 for a vector operand, 0 for a broadcast scalar. */
#define BIN_LOOP(EXPR)                                                                             \
    if (sa && sb) { for (ptrdiff_t i = 0; i < n; ++i) { float x = a[i], y = b[i]; o[i] = (EXPR); } } \
    else if (sa) { float y = b[0]; for (ptrdiff_t i = 0; i < n; ++i) { float x = a[i]; o[i] = (EXPR); } } \
    else if (sb) { float x = a[0]; for (ptrdiff_t i = 0; i < n; ++i) { float y = b[i]; o[i] = (EXPR); } } \
    else { float x = a[0], y = b[0]; o[0] = (EXPR); }

/* numpy's maximum/minimum propagate NaN from either side. */
static inline float nk_max(float x, float y) { return (x != x) ? x : ((y != y) ? y : (x > y ? x : y)); }
static inline float nk_min(float x, float y) { return (x != x) ? x : ((y != y) ? y : (x < y ? x : y)); }

static void binary(int op, const float *a, int sa, const float *b, int sb,
                   float *o, ptrdiff_t n) {
    switch (op) {
    case NK_OP_ADD: { BIN_LOOP(x + y) break; }
    case NK_OP_SUB: { BIN_LOOP(x - y) break; }
    case NK_OP_MUL: { BIN_LOOP(x * y) break; }
    case NK_OP_MAXIMUM: { BIN_LOOP(nk_max(x, y)) break; }
    case NK_OP_MINIMUM: { BIN_LOOP(nk_min(x, y)) break; }
    case NK_OP_DIV: { BIN_LOOP(x / y) break; }
    default: break;
    }
}


/* An operand as seen by one block of R rows: V = R*C contiguous values (a row block), H = C values
 * shared by every row (a channel vector), S = R values (one per row), K = one value. */
enum { K_V = 0, K_H = 1, K_S = 2, K_K = 3 };

typedef struct { const float *p; int kind; } nk_opnd;

/* CHAIN: dst = s_n(...s_2(s_1(a))) where each step is a binary operation with an operand (add, sub,
 * mul, maximum, minimum) or a unary one (clamp, abs, negate, exp, tanh, sigmoid, reciprocal),
 * evaluated in registers 32 values at a time: one
 * pass over the block instead of one per operation. Same float32 operations, same results. At most NK_MAX_STEPS
 * steps (nnkiln.h). */
typedef struct { int op; int kind; const float *p; float v, lo, hi; } nk_step;


static inline vf vstep(int op, vf t, vf x, float lo, float hi) {
    switch (op) {
    case NK_OP_ADD: return t + x;
    case NK_OP_SUB: return t - x;
    case NK_OP_MUL: return t * x;
    case NK_OP_MAXIMUM: return vsel((t > x) | (t != t), t, x); /* numpy: first if greater or NaN, else second */
    case NK_OP_MINIMUM: return vsel((t < x) | (t != t), t, x);
    case NK_OP_CLAMP: { vf y = vsel(t < vbc(lo), vbc(lo), t); return vsel(y > vbc(hi), vbc(hi), y); }
    case NK_OP_ABS: return vabs(t);
    case NK_OP_NEGATE: return -t;
    case NK_OP_EXP: return vexp(t);
    case NK_OP_TANH: return vtanh(t);
    case NK_OP_SIGMOID: return vbc(1.0f) / (vexp(-t) + vbc(1.0f));
    case NK_OP_RECIPROCAL: return vbc(1.0f) / t;
    default: return t;
    }
}

static inline float sstep(int op, float t, float x, float lo, float hi) {
    switch (op) {
    case NK_OP_ADD: return t + x;
    case NK_OP_SUB: return t - x;
    case NK_OP_MUL: return t * x;
    case NK_OP_MAXIMUM: return (t > x || t != t) ? t : x;
    case NK_OP_MINIMUM: return (t < x || t != t) ? t : x;
    case NK_OP_CLAMP: { float y = t < lo ? lo : t; return y > hi ? hi : y; }
    case NK_OP_ABS: return fabsf(t);
    case NK_OP_NEGATE: return -t;
    case NK_OP_EXP: return nk_expf(t);
    case NK_OP_TANH: return nk_tanhf(t);
    case NK_OP_SIGMOID: return 1.0f / (nk_expf(-t) + 1.0f);
    case NK_OP_RECIPROCAL: return 1.0f / t;
    default: return t;
    }
}

static inline vf vld(const float *p) { vf v; memcpy(&v, p, sizeof v); return v; }
static inline void vst(float *p, vf v) { memcpy(p, &v, sizeof v); }

static void unary(int op, const float *a, float *o, ptrdiff_t n, float lo, float hi) {
    switch (op) {
    case NK_OP_EXP: case NK_OP_TANH: case NK_OP_SIGMOID: { /* the vector steps, then the scalar tail */
        ptrdiff_t i = 0;
        for (; i + NK_VL <= n; i += NK_VL) vst(o + i, vstep(op, vld(a + i), vbc(0.0f), lo, hi));
        for (; i < n; ++i) o[i] = sstep(op, a[i], 0.0f, lo, hi);
        break;
    }
    case NK_OP_ABS: for (ptrdiff_t i = 0; i < n; ++i) o[i] = fabsf(a[i]); break;
    case NK_OP_NEGATE: for (ptrdiff_t i = 0; i < n; ++i) o[i] = -a[i]; break;
    case NK_OP_RECIPROCAL: for (ptrdiff_t i = 0; i < n; ++i) o[i] = 1.0f / a[i]; break;
    case NK_OP_RSQRT: for (ptrdiff_t i = 0; i < n; ++i) o[i] = 1.0f / sqrtf(a[i]); break;
    case NK_OP_CLAMP: /* min(max(x, lo), hi); NaN propagates */
        for (ptrdiff_t i = 0; i < n; ++i) { float x = a[i]; float y = x < lo ? lo : x; y = y > hi ? hi : y; o[i] = x != x ? x : y; }
        break;
    case NK_OP_COPY: if (o != a) memmove(o, a, (size_t)n * sizeof(float)); break;
    default: break;
    }
}

/* One row of C values: a -> o through the steps (operand pointers already at this row). Four
 * vectors (32 values) stay in registers through all the steps; the operation is chosen once per
 * step for the four. */
static void chain_row(const float *a, float *o, const nk_step *st, int ns, ptrdiff_t C) {
    ptrdiff_t i = 0;
    for (; i + 4 * NK_VL <= C; i += 4 * NK_VL) {
        vf t0 = vld(a + i), t1 = vld(a + i + NK_VL), t2 = vld(a + i + 2 * NK_VL), t3 = vld(a + i + 3 * NK_VL);
        for (int s = 0; s < ns; ++s) {
            const nk_step *q = &st[s];
            vf x0, x1, x2, x3;
            if (q->kind == K_V || q->kind == K_H) {
                const float *p = q->p + i;
                x0 = vld(p); x1 = vld(p + NK_VL); x2 = vld(p + 2 * NK_VL); x3 = vld(p + 3 * NK_VL);
            } else {
                x0 = x1 = x2 = x3 = vbc(q->v);
            }
            switch (q->op) {
            case NK_OP_ADD: t0 = t0 + x0; t1 = t1 + x1; t2 = t2 + x2; t3 = t3 + x3; break;
            case NK_OP_SUB: t0 = t0 - x0; t1 = t1 - x1; t2 = t2 - x2; t3 = t3 - x3; break;
            case NK_OP_MUL: t0 = t0 * x0; t1 = t1 * x1; t2 = t2 * x2; t3 = t3 * x3; break;
            default:
                t0 = vstep(q->op, t0, x0, q->lo, q->hi); t1 = vstep(q->op, t1, x1, q->lo, q->hi);
                t2 = vstep(q->op, t2, x2, q->lo, q->hi); t3 = vstep(q->op, t3, x3, q->lo, q->hi);
                break;
            }
        }
        vst(o + i, t0); vst(o + i + NK_VL, t1); vst(o + i + 2 * NK_VL, t2); vst(o + i + 3 * NK_VL, t3);
    }
    for (; i + NK_VL <= C; i += NK_VL) {
        vf t = vld(a + i);
        for (int s = 0; s < ns; ++s) {
            const nk_step *q = &st[s];
            vf x = (q->kind == K_V || q->kind == K_H) ? vld(q->p + i) : vbc(q->v);
            t = vstep(q->op, t, x, q->lo, q->hi);
        }
        vst(o + i, t);
    }
    for (; i < C; ++i) {
        float t = a[i];
        for (int s = 0; s < ns; ++s) {
            const nk_step *q = &st[s];
            t = sstep(q->op, t, (q->kind == K_V || q->kind == K_H) ? q->p[i] : q->v, q->lo, q->hi);
        }
        o[i] = t;
    }
}

/* numpy's float32 pairwise summation (blocks of at most 128 summed with 8 interleaved partial sums,
 * halves at a multiple of 8 above that): the same additions in the same order as the reference's
 * np.sum over a contiguous row, so row sums are identical to the reference's. */
static float pairwise_sum(const float *a, ptrdiff_t n) {
    if (n < 8) {
        float res = 0.0f;
        for (ptrdiff_t i = 0; i < n; ++i) res += a[i];
        return res;
    }
    if (n <= 128) {
        float r[8];
        for (int j = 0; j < 8; ++j) r[j] = a[j];
        ptrdiff_t i = 8;
        for (; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; ++j) r[j] += a[i + j];
        float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; ++i) res += a[i];
        return res;
    }
    ptrdiff_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

static float reduce(int op, const float *a, ptrdiff_t n) {
    if (op == NK_OP_REDUCE_SUM) return 0.0f + pairwise_sum(a, n); /* numpy adds the sum to the identity 0 */
    /* max/min: a NaN anywhere makes the result NaN (numpy); lane-wise select of x where x beats the
     * lane or is NaN (a NaN lane stays NaN: comparisons with it are false), 8 lanes at a time */
    if (n == 0) return op == NK_OP_REDUCE_MAX ? -INFINITY : INFINITY;
    int is_max = op == NK_OP_REDUCE_MAX;
    float r = a[0];
    ptrdiff_t i = 0;
    if (n >= 8) {
        v8f m;
        memcpy(&m, a, sizeof m);
        i = 8;
#define NK_TAKE(m, x) { v8i take_ = (is_max ? ((x) > (m)) : ((x) < (m))) | ((x) != (x)); \
                        m = (v8f)(((v8i)(x) & take_) | ((v8i)(m) & ~take_)); }
        if (n >= 32) { /* four independent lanes of 8 (the order of a max does not change its value) */
            v8f m1, m2, m3, x0, x1, x2, x3;
            memcpy(&m1, a + 8, sizeof m1); memcpy(&m2, a + 16, sizeof m2); memcpy(&m3, a + 24, sizeof m3);
            for (i = 32; i + 32 <= n; i += 32) {
                memcpy(&x0, a + i, sizeof x0); memcpy(&x1, a + i + 8, sizeof x1);
                memcpy(&x2, a + i + 16, sizeof x2); memcpy(&x3, a + i + 24, sizeof x3);
                NK_TAKE(m, x0) NK_TAKE(m1, x1) NK_TAKE(m2, x2) NK_TAKE(m3, x3)
            }
            NK_TAKE(m, m1) NK_TAKE(m2, m3) NK_TAKE(m, m2)
        }
        for (; i + 8 <= n; i += 8) {
            v8f x;
            memcpy(&x, a + i, sizeof x);
            NK_TAKE(m, x)
        }
#undef NK_TAKE
        float lanes[8];
        memcpy(lanes, &m, sizeof lanes);
        r = lanes[0];
        for (int k = 1; k < 8; ++k) {
            float x = lanes[k];
            r = ((is_max ? x > r : x < r) || x != x) && r == r ? x : r;
        }
    }
    for (; i < n; ++i) {
        float x = a[i];
        r = ((is_max ? x > r : x < r) || x != x) && r == r ? x : r;
    }
    return r;
}


static void block_binary(int op, nk_opnd a, nk_opnd b, float *o, int *okind, ptrdiff_t R, ptrdiff_t C) {
    int vec = a.kind <= K_H || b.kind <= K_H;
    if (!vec) { /* one value per row */
        binary(op, a.p, a.kind == K_S, b.p, b.kind == K_S, o, (a.kind == K_S || b.kind == K_S) ? R : 1);
        if (a.kind == K_K && b.kind == K_K) for (ptrdiff_t r = 1; r < R; ++r) o[r] = o[0];
        *okind = K_S;
        return;
    }
    *okind = K_V;
    if ((a.kind == K_V || a.kind == K_K) && (b.kind == K_V || b.kind == K_K)) {
        binary(op, a.p, a.kind == K_V, b.p, b.kind == K_V, o, R * C);
        return;
    }
    for (ptrdiff_t r = 0; r < R; ++r) {
        const float *pa = a.kind == K_V ? a.p + r * C : (a.kind == K_S ? a.p + r : a.p);
        const float *pb = b.kind == K_V ? b.p + r * C : (b.kind == K_S ? b.p + r : b.p);
        binary(op, pa, a.kind <= K_H, pb, b.kind <= K_H, o + r * C, C);
    }
}

typedef struct {
    const nk_ins *prog;
    int nins, nregs;
    float **args;
    const int32_t *modes;
    ptrdiff_t rows, C, block, nblocks, chunk;
    size_t stride;
    atomic_int status;
} rows_job;

/* Blocks [b0, b1) of the job with this thread's scratch registers. */
static void run_blocks(rows_job *job, ptrdiff_t b0, ptrdiff_t b1, float *regs, int *kind) {
    const nk_ins *prog = job->prog;
    int nins = job->nins;
    float **args = job->args;
    const int32_t *modes = job->modes;
    ptrdiff_t rows = job->rows, C = job->C, block = job->block;
    size_t stride = job->stride;
    for (ptrdiff_t bi = b0; bi < b1; ++bi) {
        ptrdiff_t r0 = bi * block;
        ptrdiff_t R = rows - r0 < block ? rows - r0 : block;
        for (int k = 0; k < nins; ++k) {
            const nk_ins *in = &prog[k];
            nk_opnd o2[2] = {{NULL, K_K}, {NULL, K_K}};
            int nops = in->op < NK_OP_EXP ? 2 : 1; /* CHAIN / unary / reduce / STORE: a only */
            int ids[2] = {in->a, in->b};
            for (int s = 0; s < nops; ++s) {
                int id = ids[s];
                if (id >= 0) { o2[s].p = regs + (size_t)id * stride; o2[s].kind = kind[id]; }
                else {
                    int g = -1 - id;
                    switch (modes[g]) {
                    case NK_MODE_FULL: o2[s].p = args[g] + r0 * C; o2[s].kind = K_V; break;
                    case NK_MODE_CHAN: o2[s].p = args[g]; o2[s].kind = K_H; break;
                    case NK_MODE_ROWV: o2[s].p = args[g] + r0; o2[s].kind = K_S; break;
                    default: o2[s].p = args[g]; o2[s].kind = K_K; break;
                    }
                }
            }
            if (in->op == NK_OP_STORE) {
                int g = in->dst;
                float *dst = modes[g] == NK_MODE_FULL ? args[g] + r0 * C : args[g] + r0;
                ptrdiff_t n = modes[g] == NK_MODE_FULL ? R * C : R;
                if (dst != o2[0].p) memmove(dst, o2[0].p, (size_t)n * sizeof(float));
                continue;
            }
            /* dst >= 0: a register; dst < 0: straight into argument -1 - dst (the program's last
             * computed value, whose only use was a STORE: no later instruction reads anything) */
            int dummy_kind;
            int *kd = in->dst >= 0 ? &kind[in->dst] : &dummy_kind;
            float *o = in->dst >= 0 ? regs + (size_t)in->dst * stride
                                    : (modes[-1 - in->dst] == NK_MODE_FULL ? args[-1 - in->dst] + r0 * C
                                                                     : args[-1 - in->dst] + r0);
            if (in->op == NK_OP_CHAIN) {
                int ns = in->b;
                const nk_ins *steps = prog + k + 1;
                k += ns;
                nk_step st[NK_MAX_STEPS];
                int ok = o2[0].kind == K_V && ns <= NK_MAX_STEPS;
                for (int s2 = 0; s2 < ns && ok; ++s2) {
                    const nk_ins *q = &steps[s2];
                    st[s2].op = q->op2; st[s2].lo = q->lo; st[s2].hi = q->hi;
                    st[s2].p = NULL; st[s2].kind = K_K; st[s2].v = 0.0f;
                    if (q->op2 >= NK_OP_EXP) continue; /* unary steps: no operand */
                    int id = q->c;
                    if (id >= 0) { st[s2].p = regs + (size_t)id * stride; st[s2].kind = kind[id]; }
                    else {
                        int g = -1 - id;
                        switch (modes[g]) {
                        case NK_MODE_FULL: st[s2].p = args[g] + r0 * C; st[s2].kind = K_V; break;
                        case NK_MODE_CHAN: st[s2].p = args[g]; st[s2].kind = K_H; break;
                        case NK_MODE_ROWV: st[s2].p = args[g] + r0; st[s2].kind = K_S; break;
                        default: st[s2].p = args[g]; st[s2].kind = K_K; break;
                        }
                    }
                }
                if (ok) {
                    nk_step rs[NK_MAX_STEPS];
                    for (ptrdiff_t r = 0; r < R; ++r) {
                        for (int s2 = 0; s2 < ns; ++s2) {
                            rs[s2] = st[s2];
                            if (st[s2].kind == K_V) rs[s2].p = st[s2].p + r * C;
                            else if (st[s2].kind == K_S) rs[s2].v = st[s2].p[r];
                            else if (st[s2].kind == K_K && st[s2].p) rs[s2].v = st[s2].p[0];
                        }
                        chain_row(o2[0].p + r * C, o + r * C, rs, ns, C);
                    }
                    *kd = K_V;
                } else { /* generic: step by step in place (the destination is not a source) */
                    nk_opnd t = o2[0];
                    for (int s2 = 0; s2 < ns; ++s2) {
                        const nk_ins *q = &steps[s2];
                        if (q->op2 >= NK_OP_EXP) {
                            if (t.kind == K_H) {
                                for (ptrdiff_t r = 0; r < R; ++r) unary(q->op2, t.p, o + r * C, C, q->lo, q->hi);
                                *kd = K_V;
                            } else {
                                unary(q->op2, t.p, o, t.kind == K_V ? R * C : (t.kind == K_S ? R : 1), q->lo, q->hi);
                                *kd = t.kind == K_K ? K_S : t.kind;
                                if (t.kind == K_K) for (ptrdiff_t r = 1; r < R; ++r) o[r] = o[0];
                            }
                        } else {
                            nk_opnd c3;
                            int id = q->c;
                            if (id >= 0) { c3.p = regs + (size_t)id * stride; c3.kind = kind[id]; }
                            else {
                                int g = -1 - id;
                                switch (modes[g]) {
                                case NK_MODE_FULL: c3.p = args[g] + r0 * C; c3.kind = K_V; break;
                                case NK_MODE_CHAN: c3.p = args[g]; c3.kind = K_H; break;
                                case NK_MODE_ROWV: c3.p = args[g] + r0; c3.kind = K_S; break;
                                default: c3.p = args[g]; c3.kind = K_K; break;
                                }
                            }
                            block_binary(q->op2, t, c3, o, kd, R, C);
                        }
                        t.p = o; t.kind = *kd;
                    }
                }
            } else if (in->op < NK_OP_EXP) {
                block_binary(in->op, o2[0], o2[1], o, kd, R, C);
            } else if (in->op < NK_OP_REDUCE_SUM) {
                nk_opnd a = o2[0];
                if (a.kind == K_H) { /* a channel vector: expand to the block first */
                    for (ptrdiff_t r = 0; r < R; ++r) unary(in->op, a.p, o + r * C, C, in->lo, in->hi);
                    *kd = K_V;
                } else if (a.kind == K_K) {
                    unary(in->op, a.p, o, 1, in->lo, in->hi);
                    for (ptrdiff_t r = 1; r < R; ++r) o[r] = o[0];
                    *kd = K_S;
                } else {
                    unary(in->op, a.p, o, a.kind == K_V ? R * C : R, in->lo, in->hi);
                    *kd = a.kind;
                }
            } else {
                const float *a = o2[0].p;
                for (ptrdiff_t r = 0; r < R; ++r) o[r] = reduce(in->op, o2[0].kind == K_V ? a + r * C : a, C);
                *kd = K_S;
            }
        }
    }
}

/* This thread's scratch registers (kept between runs: a pool worker or the caller reuses them). */
static _Thread_local float *tl_regs = NULL;
static _Thread_local size_t tl_floats = 0;
static _Thread_local int *tl_kind = NULL;
static _Thread_local size_t tl_kinds = 0;

static int scratch(size_t floats, size_t kinds) {
    if (floats > tl_floats) {
        free(tl_regs);
        tl_regs = (float *)aligned_alloc(64, ((floats * sizeof(float) + 63) / 64) * 64);
        tl_floats = tl_regs ? floats : 0;
    }
    if (kinds > tl_kinds) {
        free(tl_kind);
        tl_kind = (int *)malloc(kinds * sizeof(int));
        tl_kinds = tl_kind ? kinds : 0;
    }
    return tl_regs != NULL && tl_kind != NULL;
}

/* Work item c of nk_parallel: chunk c of the job's blocks, with this thread's scratch. */
static void rows_item(void *ctx, long c) {
    rows_job *job = (rows_job *)ctx;
    size_t n = (size_t)(job->nregs > 0 ? job->nregs : 1);
    ptrdiff_t b0 = (ptrdiff_t)c * job->chunk;
    ptrdiff_t b1 = b0 + job->chunk < job->nblocks ? b0 + job->chunk : job->nblocks;
    if (scratch(n * job->stride, n)) run_blocks(job, b0, b1, tl_regs, tl_kind);
    else atomic_store(&job->status, -1);
}

/* Run ``prog`` (``nins`` instructions, ``nregs`` registers) on rows [0, rows) of width C, ``block``
 * rows at a time. args[k] / modes[k]: argument pointers and modes. nthreads > 1: chunks of blocks (about 4 per
 * thread) are shared through conv.c's pool (nk_parallel; when it is busy, this run stays on the caller).
 * Returns 0, or -1 if scratch memory could not be allocated. */
int nk_rows_run(const nk_ins *prog, int nins, int nregs, float **args, const int32_t *modes,
                ptrdiff_t rows, ptrdiff_t C, ptrdiff_t block, int nthreads) {
    rows_job job;
    if (block < 1) block = 1;
    job.prog = prog; job.nins = nins; job.nregs = nregs; job.args = args; job.modes = modes;
    job.rows = rows; job.C = C; job.block = block;
    job.nblocks = (rows + block - 1) / block;
    job.stride = ((size_t)(block * (C > 0 ? C : 1)) + 15) & ~(size_t)15;
    atomic_init(&job.status, 0);
    if (job.nblocks < 1) return 0;
    if (nthreads < 2 || job.nblocks < 2) {
        job.chunk = job.nblocks;
        rows_item(&job, 0);
        return atomic_load(&job.status);
    }
    ptrdiff_t parts = 4 * (ptrdiff_t)nthreads;
    job.chunk = (job.nblocks + parts - 1) / parts;
    nk_parallel(rows_item, &job, (long)((job.nblocks + job.chunk - 1) / job.chunk), nthreads);
    return atomic_load(&job.status);
}


/* Elementwise helpers exposed for tests: y = exp(x), y = tanh(x). */
void nk_exp(const float *x, float *y, ptrdiff_t n) { for (ptrdiff_t i = 0; i < n; ++i) y[i] = nk_expf(x[i]); }
void nk_tanh(const float *x, float *y, ptrdiff_t n) { for (ptrdiff_t i = 0; i < n; ++i) y[i] = nk_tanhf(x[i]); }

/* nk_rows_run with its parameters as 64-bit slots (conv.c's bound calls: kernels/bound.py); its thread count
 * is fixed by the program, not by the run. */
int nk_rows_run_b(const int64_t *a, int nthreads) {
    (void)nthreads;
    return nk_rows_run((const nk_ins *)(intptr_t)a[0], (int)a[1], (int)a[2], (float **)(intptr_t)a[3],
                       (const int32_t *)(intptr_t)a[4], (ptrdiff_t)a[5], (ptrdiff_t)a[6], (ptrdiff_t)a[7], (int)a[8]);
}

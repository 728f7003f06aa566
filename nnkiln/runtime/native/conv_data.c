/* Pooling, reductions and data movement on conv.c's thread pool: MAX_POOL2D / AVG_POOL2D, REDUCE_SUM over an outer
 * axis, the zero-padded input copies of CONV2D (NHWC and NCHW inputs), TRANSPOSE (two groups of axes: tiled; any
 * permutation: rows), GATHER, and the int32 / bool elementwise ops of index arithmetic. Part of conv.c (#included
 * before its bound-call wrappers). Every kernel here copies or computes exactly what the reference does. */

#include "nnkiln.h"

/* -- MAX_POOL2D / AVG_POOL2D (TOSA spec §2.3.6 / §2.3.1), float32, NHWC ----------------------------- */
/* Per output element the taps inside the input, row-major: max: acc = -inf, acc = maximum(acc, x) with
 * NaN propagating (numpy's maximum); avg: acc = 0, acc = acc + x, then acc / count (count = taps inside
 * the input, > 0: checked by the caller). The same float32 operations as the numpy path and the
 * reference, so identical results. Output rows (n, oy) are the work items. */

typedef struct {
    const float *x;
    int IH, IW, C;
    float *y;
    int OH, OW, KH, KW, sy, sx, pt, pl, is_max;
} pool_job;

static inline float nk_fmax_nan(float acc, float v) { return (v != v || v > acc) ? v : acc; }

static void pool_item(void *ctx, long r) {
    const pool_job *j = (const pool_job *)ctx;
    int n = (int)(r / j->OH), oy = (int)(r % j->OH), C = j->C;
    int iy0 = oy * j->sy - j->pt;
    int ky0 = iy0 < 0 ? -iy0 : 0, ky1 = j->IH - iy0 < j->KH ? j->IH - iy0 : j->KH;
    const float *xn = j->x + (ptrdiff_t)n * j->IH * j->IW * C;
    for (int ox = 0; ox < j->OW; ox++) {
        int ix0 = ox * j->sx - j->pl;
        int kx0 = ix0 < 0 ? -ix0 : 0, kx1 = j->IW - ix0 < j->KW ? j->IW - ix0 : j->KW;
        float *yo = j->y + (((ptrdiff_t)n * j->OH + oy) * j->OW + ox) * C;
        int cnt = (ky1 > ky0 && kx1 > kx0) ? (ky1 - ky0) * (kx1 - kx0) : 0;
        int c = 0;
#if defined(__AVX__)
        for (; c + 8 <= C; c += 8) {
            __m256 acc = _mm256_set1_ps(j->is_max ? -__builtin_inff() : 0.0f);
            for (int ky = ky0; ky < ky1; ky++) {
                const float *xr = xn + ((ptrdiff_t)(iy0 + ky) * j->IW + ix0) * C + c;
                for (int kx = kx0; kx < kx1; kx++) {
                    __m256 v = _mm256_loadu_ps(xr + (ptrdiff_t)kx * C);
                    if (j->is_max) {
                        __m256 m = _mm256_max_ps(v, acc);  /* acc when either is NaN: NaN acc kept */
                        acc = _mm256_blendv_ps(m, v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));  /* NaN v taken */
                    } else {
                        acc = _mm256_add_ps(acc, v);
                    }
                }
            }
            if (!j->is_max && cnt) acc = _mm256_div_ps(acc, _mm256_set1_ps((float)cnt));
            _mm256_storeu_ps(yo + c, acc);
        }
#endif
        for (; c < C; c++) {
            float acc = j->is_max ? -__builtin_inff() : 0.0f;
            for (int ky = ky0; ky < ky1; ky++)
                for (int kx = kx0; kx < kx1; kx++) {
                    float v = xn[((ptrdiff_t)(iy0 + ky) * j->IW + ix0 + kx) * C + c];
                    acc = j->is_max ? nk_fmax_nan(acc, v) : acc + v;
                }
            if (!j->is_max && cnt) acc = acc / (float)cnt;
            yo[c] = acc;
        }
    }
}

int nk_pool2d_f32(const float *x, int N, int IH, int IW, int C, float *y, int OH, int OW, int KH, int KW,
                  int sy, int sx, int pt, int pl, int is_max, int nthreads) {
    pool_job job = {x, IH, IW, C, y, OH, OW, KH, KW, sy, sx, pt, pl, is_max};
    nk_parallel(pool_item, &job, (long)N * OH, nthreads);
    return 0;
}

/* -- REDUCE_SUM over an axis that is not the innermost (TOSA spec §2.6.5), float32 ------------------ */
/* x [outer, n, inner] -> y [outer, inner]: y = x[:, 0]; y += x[:, i] for i = 1 .. n-1, then the fused
 * post-ops (epi_scalar: element offset, channel = offset % C). numpy's np.add.reduce over such an axis adds
 * the rows in this order (its inner loop runs along the contiguous axis), so the results are identical to
 * the reference's. A global average pool is this plus a multiplication. */
int nk_reduce_sum_f32(const float *x, long outer, long n, long inner, float *y, int C,
                      int nops, const int *codes, const float *prm, const float *const *ptrs) {
    for (long o = 0; o < outer; o++) {
        const float *xo = x + o * n * inner;
        float *yo = y + o * inner;
        memcpy(yo, xo, (size_t)inner * sizeof(float));
        for (long i = 1; i < n; i++) {
            const float *xi = xo + i * inner;
            for (long j = 0; j < inner; j++) yo[j] = yo[j] + xi[j];
        }
        if (nops)
            for (long j = 0; j < inner; j++)
                yo[j] = epi_scalar(yo[j], nops, codes, prm, ptrs, (ptrdiff_t)(o * inner + j), (int)(j % C));
    }
    return 0;
}

/* -- zero padding ----------------------------------------------------------------------------------- */
/* xp [N, IH+pt+pb, IW+pl+pr, C] = x [N, IH, IW, C] with zero borders; padded rows are the work items. */

typedef struct {
    const float *x;
    float *xp;
    int IH, IW, C, pt, pl, Hp, Wp;
    int nchw; /* x is [N, C, IH, IW] (a network's NCHW input transposed on the way: kernels/fused.py) */
    long rows, per; /* padded rows in all, rows per work item */
} pad_job;

static void pad_row(const pad_job *j, long r) {
    long n = r / j->Hp;
    int py = (int)(r % j->Hp), iy = py - j->pt;
    size_t C = (size_t)j->C;
    float *dst = j->xp + (size_t)r * j->Wp * C;
    if (iy < 0 || iy >= j->IH) {
        memset(dst, 0, sizeof(float) * (size_t)j->Wp * C);
        return;
    }
    size_t left = (size_t)j->pl * C, mid = (size_t)j->IW * C;
    memset(dst, 0, sizeof(float) * left);
    if (!j->nchw) {
        memcpy(dst + left, j->x + ((size_t)n * j->IH + iy) * mid, sizeof(float) * mid);
    } else {
        size_t plane = (size_t)j->IH * j->IW;
        const float *src = j->x + (size_t)n * C * plane + (size_t)iy * j->IW;
        float *o = dst + left;
        if (C == 3) {
            const float *s0 = src, *s1 = src + plane, *s2 = src + 2 * plane;
            for (int x = 0; x < j->IW; x++) { o[3 * x] = s0[x]; o[3 * x + 1] = s1[x]; o[3 * x + 2] = s2[x]; }
        } else {
            for (int x = 0; x < j->IW; x++)
                for (size_t c = 0; c < C; c++) o[(size_t)x * C + c] = src[c * plane + x];
        }
    }
    memset(dst + left + mid, 0, sizeof(float) * ((size_t)j->Wp * C - left - mid));
}

/* Work item b: padded rows [b·per, (b+1)·per). Bands, not single rows: with one row per item (2.7 KB for a
 * 224x224x3 input) two threads spent more on taking items than on copying (MobileNetV2's input copy was slower at
 * 2 threads than at 1: bench/RESULTS.md). */
static void pad_item(void *ctx, long b) {
    const pad_job *j = (const pad_job *)ctx;
    long r1 = (b + 1) * j->per < j->rows ? (b + 1) * j->per : j->rows;
    for (long r = b * j->per; r < r1; r++) pad_row(j, r);
}

static void pad_run(pad_job *job, int N, int nthreads) {
    job->rows = (long)N * job->Hp;
    long items = nthreads > 1 ? 4L * nthreads : 1;
    job->per = (job->rows + items - 1) / items;
    nk_parallel(pad_item, job, (job->rows + job->per - 1) / job->per, nthreads);
}

int nk_pad_f32(const float *x, int N, int IH, int IW, int C, float *xp, int pt, int pb, int pl, int pr, int nthreads) {
    pad_job job = {x, xp, IH, IW, C, pt, pl, IH + pt + pb, IW + pl + pr, 0, 0, 0};
    pad_run(&job, N, nthreads);
    return 0;
}

/* The same padded NHWC copy from an NCHW x [N, C, IH, IW] (one pass instead of a transpose and a copy). */
int nk_pad_nchw_f32(const float *x, int N, int IH, int IW, int C, float *xp, int pt, int pb, int pl, int pr,
                    int nthreads) {
    pad_job job = {x, xp, IH, IW, C, pt, pl, IH + pt + pb, IW + pl + pr, 1, 0, 0};
    pad_run(&job, N, nthreads);
    return 0;
}

/* -- TRANSPOSE ----------------------------------------------------------------------------------------- */

/* TRANSPOSE (spec §2.10.7) of 4-byte elements when the permutation swaps two groups of axes: src
 * [P, A, B] -> dst [P, B, A], dst[p, b, a] = src[p, a, b] (NHWC -> NCHW is P = N, A = H*W, B = C). A copy:
 * the result is the reference's bit for bit. Work items are strips of NK_TT output rows (b) of one p;
 * within a strip, NK_TT x NK_TT tiles keep the strided reads inside L1 while the writes run along a. */
#define NK_TT 32

typedef struct {
    const unsigned *src;
    unsigned *dst;
    long A, B, strips, tt; /* tt: columns b per work item */
} tr_job;

#ifdef NK_SIMD
/* One 8x8 block: rows a..a+7 of s (stride sB, 8 elements from column b) into rows b..b+7 of d (stride dA). */
static inline void tr8x8(const float *s, size_t sB, float *d, size_t dA) {
    __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + sB), r2 = _mm256_loadu_ps(s + 2 * sB);
    __m256 r3 = _mm256_loadu_ps(s + 3 * sB), r4 = _mm256_loadu_ps(s + 4 * sB), r5 = _mm256_loadu_ps(s + 5 * sB);
    __m256 r6 = _mm256_loadu_ps(s + 6 * sB), r7 = _mm256_loadu_ps(s + 7 * sB);
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(d + dA, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(d + 2 * dA, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(d + 3 * dA, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(d + 4 * dA, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(d + 5 * dA, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(d + 6 * dA, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps(d + 7 * dA, _mm256_permute2f128_ps(u3, u7, 0x31));
}
#endif

static void tr_item(void *ctx, long it) {
    const tr_job *j = (const tr_job *)ctx;
    long p = it / j->strips, b0 = (it % j->strips) * j->tt;
    long b1 = b0 + j->tt < j->B ? b0 + j->tt : j->B;
    size_t A = (size_t)j->A, B = (size_t)j->B;
    const unsigned *s = j->src + (size_t)p * A * B;
    unsigned *d = j->dst + (size_t)p * A * B;
    if (A < 8) { /* a narrow output row (NCHW -> NHWC with 3 channels): A input rows read side by side */
        switch (A) {
        case 1: memcpy(d + b0, s + b0, (size_t)(b1 - b0) * 4); break;
        case 2: for (long b = b0; b < b1; b++) { d[2 * b] = s[b]; d[2 * b + 1] = s[B + b]; } break;
        case 3:
            for (long b = b0; b < b1; b++) { d[3 * b] = s[b]; d[3 * b + 1] = s[B + b]; d[3 * b + 2] = s[2 * B + b]; }
            break;
        case 4:
            for (long b = b0; b < b1; b++) {
                d[4 * b] = s[b]; d[4 * b + 1] = s[B + b]; d[4 * b + 2] = s[2 * B + b]; d[4 * b + 3] = s[3 * B + b];
            }
            break;
        default:
            for (long b = b0; b < b1; b++)
                for (size_t a = 0; a < A; a++) d[(size_t)b * A + a] = s[a * B + (size_t)b];
            break;
        }
        return;
    }
    for (long a0 = 0; a0 < j->A; a0 += NK_TT) {
        long a1 = a0 + NK_TT < j->A ? a0 + NK_TT : j->A;
        long b = b0;
#ifdef NK_SIMD
        /* full 8x8 blocks with 8-lane shuffles (the bits are moved, never interpreted as floats) */
        long a8 = a0 + ((a1 - a0) & ~7L);
        for (; b + 8 <= b1; b += 8) {
            for (long a = a0; a < a8; a += 8)
                tr8x8((const float *)(s + (size_t)a * B + b), B, (float *)(d + (size_t)b * A + a), A);
            for (long bb = b; bb < b + 8; bb++)
                for (long a = a8; a < a1; a++) d[(size_t)bb * A + a] = s[(size_t)a * B + bb];
        }
#endif
        for (; b < b1; b++) {
            unsigned *drow = d + (size_t)b * A;
            const unsigned *scol = s + b;
            for (long a = a0; a < a1; a++) drow[a] = scol[(size_t)a * B];
        }
    }
}

int nk_transpose32(const void *src, void *dst, long P, long A, long B, int nthreads) {
    /* at least ~4 Ki elements per work item (narrow rows: few elements per column, so wide items) */
    long tt = A < 8 ? 8192 : (A >= 4096 / NK_TT ? NK_TT : (4096 / (A * NK_TT)) * NK_TT);
    tr_job job = {(const unsigned *)src, (unsigned *)dst, A, B, (B + tt - 1) / tt, tt};
    nk_parallel(tr_item, &job, P * job.strips, nthreads);
    return 0;
}

/* Any permutation of 4-byte elements: dst (C-contiguous, dims d[0..nd-1]) = src read with element strides
 * s[0..nd-1] (src's strides in the output's axis order), nd <= 8. Work items: runs of whole output rows (the
 * last axis); a row whose source stride is 1 is one memcpy (the last axis kept: [N, H, heads, D] <-> [N, heads,
 * H, D]), else an element loop. A copy: bit for bit. */
typedef struct {
    const uint32_t *src;
    uint32_t *dst;
    int nd;
    const int64_t *d, *s;
    long rows, per;
} perm_job;

static void perm_item(void *ctx, long it) {
    const perm_job *j = (const perm_job *)ctx;
    long r0 = it * j->per, r1 = r0 + j->per < j->rows ? r0 + j->per : j->rows;
    int nd = j->nd;
    long L = (long)j->d[nd - 1], sl = (long)j->s[nd - 1];
    long idx[8];
    long rem = r0;
    ptrdiff_t off = 0;
    for (int k = nd - 2; k >= 0; k--) {  /* the first row's index and source offset */
        idx[k] = rem % j->d[k];
        rem /= j->d[k];
        off += (ptrdiff_t)idx[k] * j->s[k];
    }
    for (long r = r0; r < r1; r++) {
        uint32_t *o = j->dst + (size_t)r * L;
        const uint32_t *q = j->src + off;
        if (sl == 1) memcpy(o, q, (size_t)L * 4);
        else for (long e = 0; e < L; e++) o[e] = q[e * sl];
        for (int k = nd - 2; k >= 0; k--) {  /* next row: odometer */
            off += j->s[k];
            if (++idx[k] < j->d[k]) break;
            off -= (ptrdiff_t)j->d[k] * j->s[k];
            idx[k] = 0;
        }
    }
}

int nk_permute32(const void *src, void *dst, int nd, const int64_t *d, const int64_t *s, int nthreads) {
    if (nd < 1 || nd > 8) return -1;
    long rows = 1;
    for (int k = 0; k < nd - 1; k++) rows *= (long)d[k];
    long L = (long)d[nd - 1];
    long per = L >= 4096 ? 1 : 4096 / (L > 0 ? L : 1);
    perm_job job = {(const uint32_t *)src, (uint32_t *)dst, nd, d, s, rows, per};
    if (rows < 1 || L < 1) return 0;
    nk_parallel(perm_item, &job, (rows + per - 1) / per, nthreads);
    return 0;
}

/* GATHER (TOSA spec §2.11.1) of 4-byte values [N, K, C] by int32 indices [N, W] into [N, W, C]: a row copy per
 * index. Returns 1 without writing anything when an index is outside [0, K) (the caller then lets the reference
 * kernel report it), else 0. */
int nk_gather32(const void *values, const int32_t *idx, void *out, long N, long K, long C, long W) {
    for (long i = 0; i < N * W; i++)
        if (idx[i] < 0 || idx[i] >= K) return 1;
    for (long n = 0; n < N; n++)
        for (long w = 0; w < W; w++)
            memcpy((char *)out + ((size_t)(n * W + w) * C) * 4,
                   (const char *)values + ((size_t)(n * K + idx[n * W + w]) * C) * 4, (size_t)C * 4);
    return 0;
}

/* The int32 / bool elementwise ops of index arithmetic (kernels/integer.py has their semantics: the reference
 * kernels'), over n elements; each operand is either n elements (step 1) or one (step 0). op (enum nk_int_op): ADD,
 * SUB (both return 1 without writing when a result does not fit int32: the caller reports the spec's REQUIRE), MUL
 * (the product's low 32 bits), MAXIMUM, MINIMUM, GREATER, GREATER_EQUAL, EQUAL (1-byte bool results), SELECT (a:
 * 1-byte bool condition; b, c and the result: ``width``-byte values). */
int nk_int_ew(int op, const void *a, long sa, const void *b, long sb, const void *c, long sc, void *out, long n,
              int width) {
    const int32_t *x = (const int32_t *)a, *y = (const int32_t *)b;
    if (op <= NK_INT_OP_SUB) {
        for (long i = 0; i < n; i++) {
            int64_t r = op == NK_INT_OP_ADD ? (int64_t)x[i * sa] + y[i * sb] : (int64_t)x[i * sa] - y[i * sb];
            if (r < INT32_MIN || r > INT32_MAX) return 1;
        }
    }
    int32_t *o = (int32_t *)out;
    uint8_t *ob = (uint8_t *)out;
    switch (op) {
    case NK_INT_OP_ADD: for (long i = 0; i < n; i++) o[i] = (int32_t)((int64_t)x[i * sa] + y[i * sb]); break;
    case NK_INT_OP_SUB: for (long i = 0; i < n; i++) o[i] = (int32_t)((int64_t)x[i * sa] - y[i * sb]); break;
    case NK_INT_OP_MUL: for (long i = 0; i < n; i++) o[i] = (int32_t)((uint32_t)x[i * sa] * (uint32_t)y[i * sb]); break;
    case NK_INT_OP_MAXIMUM: for (long i = 0; i < n; i++) o[i] = x[i * sa] > y[i * sb] ? x[i * sa] : y[i * sb]; break;
    case NK_INT_OP_MINIMUM: for (long i = 0; i < n; i++) o[i] = x[i * sa] < y[i * sb] ? x[i * sa] : y[i * sb]; break;
    case NK_INT_OP_GREATER: for (long i = 0; i < n; i++) ob[i] = x[i * sa] > y[i * sb]; break;
    case NK_INT_OP_GREATER_EQUAL: for (long i = 0; i < n; i++) ob[i] = x[i * sa] >= y[i * sb]; break;
    case NK_INT_OP_EQUAL: for (long i = 0; i < n; i++) ob[i] = x[i * sa] == y[i * sb]; break;
    case NK_INT_OP_SELECT: {
        const uint8_t *cond = (const uint8_t *)a;
        const char *bb = (const char *)b, *cc = (const char *)c;
        for (long i = 0; i < n; i++)
            memcpy((char *)out + (size_t)i * width, cond[i * sa] ? bb + (size_t)(i * sb) * width : cc + (size_t)(i * sc) * width,
                   (size_t)width);
        break;
    }
    default: return -1;
    }
    return 0;
}


/* An int64 input narrowed to int32 (token ids: the model's int32 input), when every value is in [lo, hi]; else
 * nothing is promised about y and the result is 1 (the caller reports the range). */
int nk_narrow_i64_i32(const int64_t *x, int32_t *y, long n, int64_t lo, int64_t hi) {
    int bad = 0;
    for (long i = 0; i < n; i++) {
        bad |= x[i] < lo || x[i] > hi;
        y[i] = (int32_t)x[i];
    }
    return bad;
}

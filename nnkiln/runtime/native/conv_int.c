/* Integer kernels of quantized graphs; part of conv.c (#included there, so that they share its thread pool).
 * Used by nnkiln/runtime/kernels/quantized.py, which keeps the reference kernels for everything else.
 *
 * RESCALE (TOSA spec §2.13.2), nk_rescale: value = in - input_zp in 64-bit integers, then apply_scale_32
 * (with double rounding when asked) or apply_scale_16 exactly as the spec's pseudocode, + output_zp, clamped
 * to the output type. The REQUIREs of apply_scale_32 / apply_scale_16 on the values are checked: a violation
 * returns 1 (nothing else is promised about the output) and the caller runs the reference kernel, whose
 * error names the rule; the checks on multiplier and shift are the caller's (they are attributes).
 *
 * CONV2D of int8 (TOSA spec §2.3.3, acc_t int32), nk_conv_i16: the implicit GEMM of nk_conv_f32 on int16
 * values: the input copied with its zero point subtracted and zero borders (nk_pad_i8_i16: padded taps are
 * skipped by the spec, i.e. contribute 0), the weights minus theirs packed in panels of 16 output channels as
 * pairs along k (nk_pack_weights_i16). Each step multiplies a pair of input values by the pair of weights of
 * 16 channels and adds both products to the int32 sums (vpmaddwd, or vpdpwssd with AVX512-VNNI): integer
 * arithmetic, exact, so the result is the reference's bit for bit as long as no sum leaves int32 (the caller
 * only uses it where |x - izp| * |w - wzp| * K + |bias| cannot reach 2^31). A tap segment of odd length
 * gets a zero weight after it (its pair reads one value past the segment, times 0).
 *
 * DEPTHWISE_CONV2D of int8 (§2.3.5, channel multiplier 1), nk_depthwise_i16: the same int16 input, int32 sums
 * of the taps' products channel by channel (loops the compiler vectorizes), exact under the same bound.
 */

#include <stdint.h>

#include "nnkiln.h"

/* -- RESCALE ----------------------------------------------------------------------------------------- */

typedef struct {
    const void *x;
    void *y;
    int in_kind, out_kind, scale32, L;  /* rows of L elements: the channels (per channel) or a block */
    long n, rows_per;
    const int64_t *mult, *half, *dr, *shift, *vlo, *vhi;  /* per position in a row (see nk_rescale) */
    int64_t izp, ozp, lo, hi;
    atomic_int bad;
} rescale_job;

#define NK_RB 256

static void load_block(const void *x, int kind, long b, int cnt, int64_t *v) {
    switch (kind) {
    case NK_KIND_I8: for (int i = 0; i < cnt; i++) v[i] = ((const int8_t *)x)[b + i]; break;
    case NK_KIND_U8: for (int i = 0; i < cnt; i++) v[i] = ((const uint8_t *)x)[b + i]; break;
    case NK_KIND_I16: for (int i = 0; i < cnt; i++) v[i] = ((const int16_t *)x)[b + i]; break;
    case NK_KIND_U16: for (int i = 0; i < cnt; i++) v[i] = ((const uint16_t *)x)[b + i]; break;
    case NK_KIND_I32: for (int i = 0; i < cnt; i++) v[i] = ((const int32_t *)x)[b + i]; break;
    default: for (int i = 0; i < cnt; i++) v[i] = ((const int64_t *)x)[b + i]; break;
    }
}

static void store_block(void *y, int kind, long b, int cnt, const int64_t *v) {
    switch (kind) {
    case NK_KIND_I8: for (int i = 0; i < cnt; i++) ((int8_t *)y)[b + i] = (int8_t)v[i]; break;
    case NK_KIND_U8: for (int i = 0; i < cnt; i++) ((uint8_t *)y)[b + i] = (uint8_t)v[i]; break;
    case NK_KIND_I16: for (int i = 0; i < cnt; i++) ((int16_t *)y)[b + i] = (int16_t)v[i]; break;
    case NK_KIND_U16: for (int i = 0; i < cnt; i++) ((uint16_t *)y)[b + i] = (uint16_t)v[i]; break;
    case NK_KIND_I32: for (int i = 0; i < cnt; i++) ((int32_t *)y)[b + i] = (int32_t)v[i]; break;
    default: for (int i = 0; i < cnt; i++) ((int64_t *)y)[b + i] = v[i]; break;
    }
}

/* Rows [it*rows_per, ..) of L elements, in blocks of NK_RB: branch-free loops the compiler vectorizes. With
 * q = p >> (s - 1): ((q + 1) >> 1) == (p + 2^(s-1)) >> s (p + 2^(s-1) < 2^63: no overflow), so the spec's
 * rounding is one add and one shift; ``dr`` is double_round's +-2^30 where s > 31 (else 0). */
static void rescale_item(void *ctx, long it) {
    rescale_job *j = (rescale_job *)ctx;
    long r0 = it * j->rows_per, nrows = (j->n + j->L - 1) / j->L;
    long r1 = r0 + j->rows_per < nrows ? r0 + j->rows_per : nrows;
    int64_t v[NK_RB];
    const int64_t I32MIN = -(1LL << 31), I32MAX = (1LL << 31) - 1;
    int64_t bad = 0;
    for (long row = r0; row < r1; row++)
        for (int c0 = 0; c0 < j->L; c0 += NK_RB) {
            long b = row * j->L + c0;
            if (b >= j->n) break;
            int cnt = j->L - c0 < NK_RB ? j->L - c0 : NK_RB;
            if (b + cnt > j->n) cnt = (int)(j->n - b);
            load_block(j->x, j->in_kind, b, cnt, v);
            const int64_t *m = j->mult + c0, *h = j->half + c0, *d = j->dr + c0, *sh = j->shift + c0;
            const int64_t *lo = j->vlo + c0, *hi = j->vhi + c0;
            const int64_t izp = j->izp, ozp = j->ozp, olo = j->lo, ohi = j->hi;  /* locals: v may alias *j */
            if (j->scale32) {
                for (int i = 0; i < cnt; i++) {
                    int64_t val = v[i] - izp;
                    bad |= (val < lo[i]) | (val > hi[i]);
                    int64_t r = ((val * m[i] + (val >= 0 ? d[i] : -d[i]) + h[i]) >> sh[i]) + ozp;
                    v[i] = r < olo ? olo : r > ohi ? ohi : r;
                }
            } else {
                for (int i = 0; i < cnt; i++) {
                    int64_t val = v[i] - izp;
                    bad |= (val < lo[i]) | (val > hi[i]);
                    int64_t r = (val * m[i] + h[i]) >> sh[i];
                    bad |= (r < I32MIN) | (r > I32MAX);
                    r += ozp;
                    v[i] = r < olo ? olo : r > ohi ? ohi : r;
                }
            }
            store_block(j->y, j->out_kind, b, cnt, v);
        }
    if (bad) atomic_store(&j->bad, 1);
}

/* y = RESCALE(x) over n elements (kinds: enum nk_kind, I8 .. I64). Per-channel parameters: C = the last dimension, mult / shift
 * one per channel; per tensor: one each (C ignored). Returns 0, or 1 if a value breaks a REQUIRE of
 * apply_scale_32 (value in int32 and in [-2^(s-2), 2^(s-2))) or apply_scale_16 (value in int48, result in
 * int32), or -1 if memory ran out. */
int nk_rescale(const void *x, int in_kind, void *y, int out_kind, long n, int C, const int64_t *mult,
               const int64_t *shift, int per_channel, long izp, long ozp, int scale32, int double_round, long lo,
               long hi, int nthreads) {
    int L = per_channel ? (C > 0 ? C : 1) : NK_RB;
    int64_t *t = (int64_t *)malloc(sizeof(int64_t) * 6 * (size_t)L);
    if (t == NULL) return -1;
    int64_t *m = t, *h = t + L, *d = t + 2 * L, *sh = t + 3 * L, *vlo = t + 4 * L, *vhi = t + 5 * L;
    for (int c = 0; c < L; c++) {
        int k = per_channel ? c : 0;
        int64_t s = shift[k];
        m[c] = mult[k];
        sh[c] = s;
        h[c] = 1LL << (s - 1);
        d[c] = (scale32 && double_round && s > 31) ? (1LL << 30) : 0;
        if (scale32) {
            int64_t bound = 1LL << (s - 2);
            vlo[c] = -bound > -(1LL << 31) ? -bound : -(1LL << 31);
            vhi[c] = bound - 1 < (1LL << 31) - 1 ? bound - 1 : (1LL << 31) - 1;
        } else {
            vlo[c] = -(1LL << 47);
            vhi[c] = (1LL << 47) - 1;
        }
    }
    long nrows = (n + L - 1) / L;
    long rows_per = (16384 + L - 1) / L;
    rescale_job j = {x, y, in_kind, out_kind, scale32, L, n, rows_per, m, h, d, sh, vlo, vhi, izp, ozp, lo, hi, 0};
    nk_parallel(rescale_item, &j, (nrows + rows_per - 1) / rows_per, nthreads);
    free(t);
    return atomic_load(&j.bad);
}

/* CAST (TOSA spec §2.13.1) between int8 / uint8 / int16 / int32 / bool / float32 with the reference's results
 * (kernels/quantized.py's numpy path): int -> int wraps, int -> float rounds to nearest even, -> bool is != 0,
 * float -> int rounds half to even, NaN -> 0, then saturates (in double for int32). Kinds: enum
 * nk_kind (I8, U8, I16, I32, BOOL, F32). */
/* dst[i] = CONV(src[i]) for one source element type, every destination kind (simple loops: vectorised) */
#define NK_CAST_FROM(ST, CONV_F)                                                                          \
    {                                                                                                       \
        const ST *s = (const ST *)x;                                                                        \
        switch (dk) {                                                                                       \
        case NK_KIND_I8: for (long i = 0; i < n; i++) ((int8_t *)y)[i] = (int8_t)(uint8_t)(uint32_t)(int64_t)s[i]; break;   \
        case NK_KIND_U8: for (long i = 0; i < n; i++) ((uint8_t *)y)[i] = (uint8_t)(uint32_t)(int64_t)s[i]; break;          \
        case NK_KIND_I16: for (long i = 0; i < n; i++) ((int16_t *)y)[i] = (int16_t)(uint16_t)(uint32_t)(int64_t)s[i]; break; \
        case NK_KIND_I32: for (long i = 0; i < n; i++) ((int32_t *)y)[i] = (int32_t)(uint32_t)(int64_t)s[i]; break;          \
        case NK_KIND_BOOL: for (long i = 0; i < n; i++) ((uint8_t *)y)[i] = s[i] != 0; break;                                 \
        case NK_KIND_F32: for (long i = 0; i < n; i++) ((float *)y)[i] = CONV_F(s[i]); break;                                \
        default: return -1;                                                                                 \
        }                                                                                                   \
        return 0;                                                                                           \
    }
#define NK_TO_FLOAT(v) ((float)(v))
#define NK_BOOL_TO_FLOAT(v) ((float)((v) != 0))

int nk_cast(const void *x, int sk, void *y, int dk, long n) {
    switch (sk) {
    case NK_KIND_I8: NK_CAST_FROM(int8_t, NK_TO_FLOAT)
    case NK_KIND_U8: NK_CAST_FROM(uint8_t, NK_TO_FLOAT)
    case NK_KIND_I16: NK_CAST_FROM(int16_t, NK_TO_FLOAT)
    case NK_KIND_I32: NK_CAST_FROM(int32_t, NK_TO_FLOAT)
    case NK_KIND_BOOL: { /* bool: 0 / 1 whatever the stored byte (numpy's bool is 0 or 1) */
        const uint8_t *b = (const uint8_t *)x;
        for (long i = 0; i < n; i++) {
            int v = b[i] != 0;
            switch (dk) {
            case NK_KIND_I8: ((int8_t *)y)[i] = (int8_t)v; break;
            case NK_KIND_U8: case NK_KIND_BOOL: ((uint8_t *)y)[i] = (uint8_t)v; break;
            case NK_KIND_I16: ((int16_t *)y)[i] = (int16_t)v; break;
            case NK_KIND_I32: ((int32_t *)y)[i] = v; break;
            default: ((float *)y)[i] = (float)v; break;
            }
        }
        return 0;
    }
    default: break;
    }
    const float *f = (const float *)x; /* float32 */
    if (dk == NK_KIND_F32) { memcpy(y, x, (size_t)n * 4); return 0; }
    if (dk == NK_KIND_BOOL) { for (long i = 0; i < n; i++) ((uint8_t *)y)[i] = f[i] != 0.0f; return 0; }
    if (dk == NK_KIND_I32) {
        for (long i = 0; i < n; i++) {
            double t = nearbyint((double)f[i]);
            t = t != t ? 0.0 : t;
            t = t < -2147483648.0 ? -2147483648.0 : (t > 2147483647.0 ? 2147483647.0 : t);
            ((int32_t *)y)[i] = (int32_t)t;
        }
        return 0;
    }
    float lo = dk == NK_KIND_I8 ? -128.0f : dk == NK_KIND_U8 ? 0.0f : -32768.0f;
    float hi = dk == NK_KIND_I8 ? 127.0f : dk == NK_KIND_U8 ? 255.0f : 32767.0f;
    for (long i = 0; i < n; i++) {
        float t = nearbyintf(f[i]);
        t = t != t ? 0.0f : t;
        t = t < lo ? lo : (t > hi ? hi : t);
        int32_t v = (int32_t)t;
        if (dk == NK_KIND_I8) ((int8_t *)y)[i] = (int8_t)v;
        else if (dk == NK_KIND_U8) ((uint8_t *)y)[i] = (uint8_t)v;
        else ((int16_t *)y)[i] = (int16_t)v;
    }
    return 0;
}
#undef NK_CAST_FROM
#undef NK_TO_FLOAT
#undef NK_BOOL_TO_FLOAT

int nk_cast_b(const int64_t *a, int nthreads) {
    (void)nthreads;
    return nk_cast((const void *)(intptr_t)a[0], (int)a[1], (void *)(intptr_t)a[2], (int)a[3], (long)a[4]);
}

int nk_rescale_b(const int64_t *a, int nthreads) {
    return nk_rescale((const void *)(intptr_t)a[0], (int)a[1], (void *)(intptr_t)a[2], (int)a[3], (long)a[4], (int)a[5],
                      (const int64_t *)(intptr_t)a[6], (const int64_t *)(intptr_t)a[7], (int)a[8], (long)a[9],
                      (long)a[10], (int)a[11], (int)a[12], (long)a[13], (long)a[14], a[15] > 0 ? (int)a[15] : nthreads);
}

/* -- CONV2D of int8 ----------------------------------------------------------------------------------- */

typedef struct {
    const int8_t *x;
    int16_t *xp;
    int IH, IW, C, pt, pl, Hp, Wp, zp;
} pad16_job;

static void pad16_item(void *ctx, long r) {
    const pad16_job *j = (const pad16_job *)ctx;
    long n = r / j->Hp, yy = r % j->Hp;
    int16_t *dst = j->xp + r * j->Wp * j->C;
    long iy = yy - j->pt;
    if (iy < 0 || iy >= j->IH) {
        memset(dst, 0, sizeof(int16_t) * (size_t)j->Wp * j->C);
        return;
    }
    memset(dst, 0, sizeof(int16_t) * (size_t)j->pl * j->C);
    const int8_t *src = j->x + (n * j->IH + iy) * j->IW * j->C;
    int16_t *d = dst + (long)j->pl * j->C;
    long cnt = (long)j->IW * j->C;
    for (long i = 0; i < cnt; i++) d[i] = (int16_t)(src[i] - j->zp);
    long tail = (long)(j->Wp - j->pl - j->IW) * j->C;
    memset(d + cnt, 0, sizeof(int16_t) * (size_t)tail);
}

/* xp [N, IH+pt+pb, IW+pl+pr, C] = x - zp inside, 0 on the borders, then two zeros (the last pair's partner). */
int nk_pad_i8_i16(const int8_t *x, int N, int IH, int IW, int C, int zp, int16_t *xp, int pt, int pb, int pl, int pr,
                  int nthreads) {
    pad16_job j = {x, xp, IH, IW, C, pt, pl, IH + pt + pb, IW + pl + pr, zp};
    nk_parallel(pad16_item, &j, (long)N * j.Hp, nthreads);
    long total = (long)N * j.Hp * j.Wp * C;
    xp[total] = 0;
    xp[total + 1] = 0;
    return 0;
}

/* bp[((j * KP + kk) * NR + q) * 2 + e] = w[j*16 + q, k] - wzp for packed index 2*kk + e = t * sege + i (tap t,
 * i < seg; sege = seg rounded up to even), 0 for i = seg and beyond OC. w: [OC, ntaps * seg] int8. */
void nk_pack_weights_i16(const int8_t *w, int OC, int ntaps, int seg, int wzp, int16_t *bp) {
    int sege = seg + (seg & 1), panels = (OC + NR - 1) / NR;
    long K = (long)ntaps * seg, KP = (long)ntaps * sege / 2;
    for (int j = 0; j < panels; j++)
        for (long kk = 0; kk < KP; kk++)
            for (int q = 0; q < NR; q++)
                for (int e = 0; e < 2; e++) {
                    long kp = 2 * kk + e, t = kp / sege, i = kp % sege;
                    int oc = j * NR + q;
                    bp[((j * KP + kk) * NR + q) * 2 + e] =
                        (oc < OC && i < seg) ? (int16_t)(w[(long)oc * K + t * seg + i] - wzp) : 0;
                }
}

typedef struct {
    const int16_t *xp;
    int Hp, Wp, IC, OH, OW, sy, sx;
    const long *toff;
    int ntaps, seg, sege;
    long KP;
    const int16_t *bp;
    int OC, panels;
    const int32_t *bias;
    int32_t *y;
    long rows, tiles, chunk;
} convi_job;

static inline int32_t nk_pair(const int16_t *p) {
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* rows r0 .. r0+mr-1 (input row starts base[i]) x panel j: int32 sums, + bias, stored. */
static void tile_i16(const convi_job *a, const int16_t *const *base, long r0, int mr, int j) {
    int32_t acc[MR][NR];
    int oc0 = j * NR, nc = a->OC - oc0 < NR ? a->OC - oc0 : NR;
    const int16_t *bq = a->bp + (long)j * a->KP * NR * 2;
#if defined(__AVX512BW__)
    __m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0;
    for (int t = 0; t < a->ntaps; t++) {
        long o = a->toff[t];
        const int16_t *p0 = base[0] + o, *p1 = base[1] + o, *p2 = base[2] + o;
        const int16_t *p3 = base[3] + o, *p4 = base[4] + o, *p5 = base[5] + o;
        for (int i = 0; i < a->sege; i += 2, bq += 2 * NR) {
            __m512i wv = _mm512_loadu_si512((const void *)bq);
#if defined(__AVX512VNNI__)
#define NK_ACC(s, p) s = _mm512_dpwssd_epi32(s, _mm512_set1_epi32(nk_pair((p) + i)), wv);
#else
#define NK_ACC(s, p) s = _mm512_add_epi32(s, _mm512_madd_epi16(_mm512_set1_epi32(nk_pair((p) + i)), wv));
#endif
            NK_ACC(s0, p0) NK_ACC(s1, p1) NK_ACC(s2, p2) NK_ACC(s3, p3) NK_ACC(s4, p4) NK_ACC(s5, p5)
#undef NK_ACC
        }
    }
    _mm512_storeu_si512((void *)acc[0], s0); _mm512_storeu_si512((void *)acc[1], s1);
    _mm512_storeu_si512((void *)acc[2], s2); _mm512_storeu_si512((void *)acc[3], s3);
    _mm512_storeu_si512((void *)acc[4], s4); _mm512_storeu_si512((void *)acc[5], s5);
#elif defined(__AVX2__)
    __m256i u0 = _mm256_setzero_si256(), u1 = u0, u2 = u0, u3 = u0, u4 = u0, u5 = u0;
    __m256i v0 = u0, v1 = u0, v2 = u0, v3 = u0, v4 = u0, v5 = u0;
    for (int t = 0; t < a->ntaps; t++) {
        long o = a->toff[t];
        const int16_t *p0 = base[0] + o, *p1 = base[1] + o, *p2 = base[2] + o;
        const int16_t *p3 = base[3] + o, *p4 = base[4] + o, *p5 = base[5] + o;
        for (int i = 0; i < a->sege; i += 2, bq += 2 * NR) {
            __m256i w0 = _mm256_loadu_si256((const __m256i *)bq), w1 = _mm256_loadu_si256((const __m256i *)(bq + NR));
            __m256i xb;
#define NK_ACC(u, v, p) xb = _mm256_set1_epi32(nk_pair((p) + i)); \
            u = _mm256_add_epi32(u, _mm256_madd_epi16(xb, w0)); v = _mm256_add_epi32(v, _mm256_madd_epi16(xb, w1));
            NK_ACC(u0, v0, p0) NK_ACC(u1, v1, p1) NK_ACC(u2, v2, p2) NK_ACC(u3, v3, p3) NK_ACC(u4, v4, p4)
            NK_ACC(u5, v5, p5)
#undef NK_ACC
        }
    }
#define NK_ST(i) _mm256_storeu_si256((__m256i *)acc[i], u##i); _mm256_storeu_si256((__m256i *)(acc[i] + 8), v##i);
    NK_ST(0) NK_ST(1) NK_ST(2) NK_ST(3) NK_ST(4) NK_ST(5)
#undef NK_ST
#else
    memset(acc, 0, sizeof acc);
    for (int t = 0; t < a->ntaps; t++) {
        long o = a->toff[t];
        for (int i = 0; i < a->sege; i += 2, bq += 2 * NR)
            for (int r = 0; r < MR; r++) {
                const int16_t *p = base[r] + o + i;
                for (int q = 0; q < NR; q++) acc[r][q] += (int32_t)p[0] * bq[2 * q] + (int32_t)p[1] * bq[2 * q + 1];
            }
    }
#endif
    for (int i = 0; i < mr; i++) {
        int32_t *dst = a->y + (r0 + i) * (long)a->OC + oc0;
        for (int q = 0; q < nc; q++) dst[q] = acc[i][q] + a->bias[oc0 + q];
    }
}

static void convi_item(void *ctx, long it) {
    const convi_job *a = (const convi_job *)ctx;
    const int16_t *base[NK_MAXCHUNK][MR];
    long t0 = it * a->chunk, t1 = t0 + a->chunk < a->tiles ? t0 + a->chunk : a->tiles;
    long off[NK_MAXCHUNK][MR];
    row_offsets(t0, t1, a->rows, a->OH, a->OW, a->Hp, a->Wp, a->IC, a->sy, a->sx, off);
    for (long ti = t0; ti < t1; ti++)
        for (int i = 0; i < MR; i++) base[ti - t0][i] = a->xp + off[ti - t0][i];
    for (int j = 0; j < a->panels; j++)  /* a panel's weights (K x 64 bytes) serve every tile of the chunk */
        for (long ti = t0; ti < t1; ti++) {
            long r0 = ti * MR;
            tile_i16(a, base[ti - t0], r0, a->rows - r0 < MR ? (int)(a->rows - r0) : MR, j);
        }
}

/* y [N*OH*OW, OC] int32 = bias + the int16 implicit GEMM (see the header). xp from nk_pad_i8_i16, bp from
 * nk_pack_weights_i16 (same ntaps / seg), toff in int16 elements as for nk_conv_f32. Returns 0. */
int nk_conv_i16(const int16_t *xp, int N, int Hp, int Wp, int IC, int OH, int OW, int sy, int sx, const long *toff,
                int ntaps, int seg, const int16_t *bp, int OC, const int32_t *bias, int32_t *y, int nthreads) {
    int sege = seg + (seg & 1);
    long rows = (long)N * OH * OW, tiles = (rows + MR - 1) / MR;
    if (nthreads < 1) nthreads = 1;
    long chunk = (tiles + 8L * nthreads - 1) / (8L * nthreads);
    if (chunk < 1) chunk = 1;
    if (chunk > 16) chunk = 16;
    convi_job a = {xp, Hp, Wp, IC, OH, OW, sy, sx, toff, ntaps, seg, sege, (long)ntaps * sege / 2, bp, OC,
                   (OC + NR - 1) / NR, bias, y, rows, tiles, chunk};
    nk_parallel(convi_item, &a, (tiles + chunk - 1) / chunk, nthreads);
    return 0;
}

/* -- DEPTHWISE_CONV2D of int8 (TOSA spec §2.3.5, multiplier 1) ----------------------------------------
 * y[n, oy, ox, c] = bias[c] + sum over taps of xp[...] * w[tap, c], xp from nk_pad_i8_i16 (zero point off,
 * zero borders), w [KH*KW, C] int16 (weight zero point off): int32 sums, exact under the caller's bound. */
typedef struct {
    const int16_t *xp;
    int Hp, Wp, C;
    const int16_t *w;
    int KH, KW;
    const int32_t *bias;
    int32_t *y;
    int OH, OW, sy, sx, dy, dx;
} dwi_job;

#define NK_DWC 256

static void dwi_item(void *ctx, long row) {
    const dwi_job *j = (const dwi_job *)ctx;
    long n = row / j->OH, oy = row % j->OH;
    const int C = j->C, KH = j->KH, KW = j->KW;
    int32_t acc[NK_DWC];
    for (int ox = 0; ox < j->OW; ox++) {
        int32_t *dst = j->y + (row * j->OW + ox) * (long)C;
        for (int c0 = 0; c0 < C; c0 += NK_DWC) {
            int cnt = C - c0 < NK_DWC ? C - c0 : NK_DWC;
            const int32_t *b = j->bias + c0;
            for (int c = 0; c < cnt; c++) acc[c] = b[c];
            for (int ky = 0; ky < KH; ky++) {
                const int16_t *rowp = j->xp + ((n * j->Hp + oy * j->sy + (long)ky * j->dy) * j->Wp
                                              + (long)ox * j->sx) * C + c0;
                for (int kx = 0; kx < KW; kx++) {
                    const int16_t *p = rowp + (long)kx * j->dx * C;
                    const int16_t *wp = j->w + (long)(ky * KW + kx) * C + c0;
                    for (int c = 0; c < cnt; c++) acc[c] += (int32_t)p[c] * (int32_t)wp[c];
                }
            }
            for (int c = 0; c < cnt; c++) dst[c0 + c] = acc[c];
        }
    }
}

int nk_depthwise_i16(const int16_t *xp, int N, int Hp, int Wp, int C, const int16_t *w, int KH, int KW,
                     const int32_t *bias, int32_t *y, int OH, int OW, int sy, int sx, int dy, int dx, int nthreads) {
    dwi_job j = {xp, Hp, Wp, C, w, KH, KW, bias, y, OH, OW, sy, sx, dy, dx};
    nk_parallel(dwi_item, &j, (long)N * OH, nthreads);
    return 0;
}

/* -- CONV2D 3x3, stride 1, dilation 1 by Winograd's minimal filtering F(2x2, 3x3) ----------------------------
 * #included by conv.c (its thread pool, GEMM tiles and epilogue stores).
 *
 * Each 2x2 block of output pixels ("tile") of one image comes from the 4x4 input patch at (2ty, 2tx) of the
 * zero-bordered input xp [N, Hp, Wp, IC]:  Y = A^T [ (G g G^T) .* (B^T d B) ] A  per (input, output) channel
 * pair, summed over the input channels, with
 *     B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1],  G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1],
 *     A^T = [1 1 1 0; 0 1 -1 -1].
 * The sum over input channels of the 16 elementwise products is 16 GEMMs: M[xi] = V[xi] . U[xi] with V[xi]
 * [tiles, IC] (transformed patches), U[xi] [IC, OC] (transformed weights, computed once at load time in float64
 * and packed into the GEMM's 16-column panels: ``kernels.winograd``) and M[xi] [tiles, OC]. 2.25x fewer
 * multiplications than the direct sum; the transforms only add and subtract.
 *
 * Three phases, each shared by the threads: input transform (tile by tile, 16 channels at a time), the 16 GEMMs
 * (conv.c's implicit-GEMM tiles, the batches' work items in one pool job as in nk_bmm_f32), output transform
 * (+ bias, + the fused post-ops through store8; pixels past OH/OW are dropped). Patch rows/columns past Hp/Wp
 * (odd OH/OW) read as 0. ``work`` holds V and M: 16 * tiles * (IC + OC) floats. With few channels the three
 * steps run block of tiles by block of tiles instead, in L2 (see wino_fused_item).
 *
 * Numerics: sums of the same products in another association (float32 transforms, weights rounded once after
 * the float64 transform): results differ from the direct convolution by a few float32 roundings of the
 * operands' magnitude (the runtime promises 1e-5 relative for float). */

#include "nnkiln.h"

typedef struct {
    const float *xp;
    int Hp, Wp, IC, th, tw;
    long tiles;
    float *v;
} wino_in_job;

/* Transform tile t's patch into v + (16 matrices ``stride`` floats apart, this tile's row at ``row``). */
static void wino_in_tile_to(const wino_in_job *j, long t, float *row, long stride);

#define NK_WINO_CHUNK 16  /* tiles per work item: one tile is too little work for a pool item */

static void wino_in_tile(const wino_in_job *j, long t) {
    wino_in_tile_to(j, t, j->v + t * j->IC, j->tiles * j->IC);
}

static void wino_in_tile_to(const wino_in_job *j, long t, float *out, long stride) {
    long per = (long)j->th * j->tw;
    long n = t / per, ty = (t % per) / j->tw, tx = t % j->tw;
    int IC = j->IC;
    const float *rows[4][4];
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) {
            long y = 2 * ty + r, x = 2 * tx + c;
            rows[r][c] = (y < j->Hp && x < j->Wp) ? j->xp + ((n * j->Hp + y) * j->Wp + x) * IC : NULL;
        }
    int c0 = 0;
#ifdef NK_SIMD
    for (; c0 + 8 <= IC; c0 += 8) {
        __m256 d[4][4];
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++)
                d[r][c] = rows[r][c] != NULL ? _mm256_loadu_ps(rows[r][c] + c0) : _mm256_setzero_ps();
        for (int r = 0; r < 4; r++) {
            __m256 t0, t1, t2, t3;  /* row r of B^T d */
#define NK_BT(c) (r == 0 ? _mm256_sub_ps(d[0][c], d[2][c]) : r == 1 ? _mm256_add_ps(d[1][c], d[2][c]) \
                  : r == 2 ? _mm256_sub_ps(d[2][c], d[1][c]) : _mm256_sub_ps(d[1][c], d[3][c]))
            t0 = NK_BT(0); t1 = NK_BT(1); t2 = NK_BT(2); t3 = NK_BT(3);
#undef NK_BT
            float *o = out + (long)(4 * r) * stride + c0;
            _mm256_storeu_ps(o, _mm256_sub_ps(t0, t2));
            _mm256_storeu_ps(o + stride, _mm256_add_ps(t1, t2));
            _mm256_storeu_ps(o + 2 * stride, _mm256_sub_ps(t2, t1));
            _mm256_storeu_ps(o + 3 * stride, _mm256_sub_ps(t1, t3));
        }
    }
#endif
    for (; c0 < IC; c0 += 8) {
        int cnt = IC - c0 < 8 ? IC - c0 : 8;
        float d[4][4][8], tt[4][4][8];
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++)
                for (int q = 0; q < 8; q++) d[r][c][q] = (rows[r][c] != NULL && q < cnt) ? rows[r][c][c0 + q] : 0.0f;
        for (int c = 0; c < 4; c++)  /* B^T d */
            for (int q = 0; q < 8; q++) {
                tt[0][c][q] = d[0][c][q] - d[2][c][q];
                tt[1][c][q] = d[1][c][q] + d[2][c][q];
                tt[2][c][q] = d[2][c][q] - d[1][c][q];
                tt[3][c][q] = d[1][c][q] - d[3][c][q];
            }
        for (int r = 0; r < 4; r++) {  /* (B^T d) B */
            float *o = out + (long)(4 * r) * stride + c0;
            for (int q = 0; q < cnt; q++) {
                o[q] = tt[r][0][q] - tt[r][2][q];
                o[stride + q] = tt[r][1][q] + tt[r][2][q];
                o[2 * stride + q] = tt[r][2][q] - tt[r][1][q];
                o[3 * stride + q] = tt[r][1][q] - tt[r][3][q];
            }
        }
    }
}

static void wino_in_item(void *ctx, long it) {
    const wino_in_job *j = (const wino_in_job *)ctx;
    for (long t = it * NK_WINO_CHUNK; t < (it + 1) * NK_WINO_CHUNK && t < j->tiles; t++) wino_in_tile(j, t);
}

typedef struct {
    const conv_args *a;  /* the output: y, OC, the epilogue (mode / post-ops) */
    const float *m;      /* M[16][tiles][OC] */
    const float *bias;   /* padded to whole panels */
    int OH, OW, th, tw;
    long tiles;
} wino_out_job;

/* Tile t's 2x2 outputs from the 16 sums at ``m`` (matrices ``stride`` floats apart). */
static void wino_out_tile_from(const wino_out_job *j, long t, const float *m, long stride);

static void wino_out_tile(const wino_out_job *j, long t) {
    wino_out_tile_from(j, t, j->m + t * j->a->OC, j->tiles * j->a->OC);
}

static void wino_out_tile_from(const wino_out_job *j, long t, const float *m, long stride) {
    const conv_args *a = j->a;
    int OC = a->OC;
    long per = (long)j->th * j->tw;
    long n = t / per, ty = (t % per) / j->tw, tx = t % j->tw;
    int c0 = 0;
#ifdef NK_SIMD
    for (; c0 + 8 <= OC; c0 += 8) {
        __m256 s0[4], s1[4];
        for (int c = 0; c < 4; c++) {  /* A^T m */
            __m256 m0 = _mm256_loadu_ps(m + (long)c * stride + c0), m1 = _mm256_loadu_ps(m + (long)(4 + c) * stride + c0);
            __m256 m2 = _mm256_loadu_ps(m + (long)(8 + c) * stride + c0), m3 = _mm256_loadu_ps(m + (long)(12 + c) * stride + c0);
            s0[c] = _mm256_add_ps(_mm256_add_ps(m0, m1), m2);
            s1[c] = _mm256_sub_ps(_mm256_sub_ps(m1, m2), m3);
        }
        __m256 bv = _mm256_loadu_ps(j->bias + c0);
        __m256 y[2][2];
        y[0][0] = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(s0[0], s0[1]), s0[2]), bv);
        y[0][1] = _mm256_add_ps(_mm256_sub_ps(_mm256_sub_ps(s0[1], s0[2]), s0[3]), bv);
        y[1][0] = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(s1[0], s1[1]), s1[2]), bv);
        y[1][1] = _mm256_add_ps(_mm256_sub_ps(_mm256_sub_ps(s1[1], s1[2]), s1[3]), bv);
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 2; c++) {
                long oy = 2 * ty + r, ox = 2 * tx + c;
                if (oy < j->OH && ox < j->OW)
                    store8(a, y[r][c], ((n * j->OH + oy) * j->OW + ox) * (ptrdiff_t)OC + c0, c0, 8);
            }
    }
#endif
    for (; c0 < OC; c0 += 8) {
        int cnt = OC - c0 < 8 ? OC - c0 : 8;
        float s[2][4][8], y[2][2][8];
        for (int c = 0; c < 4; c++)  /* A^T m */
            for (int q = 0; q < 8; q++) {
                float m0 = q < cnt ? m[(long)c * stride + c0 + q] : 0.0f;
                float m1 = q < cnt ? m[(long)(4 + c) * stride + c0 + q] : 0.0f;
                float m2 = q < cnt ? m[(long)(8 + c) * stride + c0 + q] : 0.0f;
                float m3 = q < cnt ? m[(long)(12 + c) * stride + c0 + q] : 0.0f;
                s[0][c][q] = m0 + m1 + m2;
                s[1][c][q] = m1 - m2 - m3;
            }
        for (int r = 0; r < 2; r++)  /* (A^T m) A + bias */
            for (int q = 0; q < 8; q++) {
                y[r][0][q] = s[r][0][q] + s[r][1][q] + s[r][2][q] + j->bias[c0 + q];
                y[r][1][q] = s[r][1][q] - s[r][2][q] - s[r][3][q] + j->bias[c0 + q];
            }
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 2; c++) {
                long oy = 2 * ty + r, ox = 2 * tx + c;
                if (oy >= j->OH || ox >= j->OW) continue;
                ptrdiff_t off = ((n * j->OH + oy) * j->OW + ox) * (ptrdiff_t)OC + c0;
#ifdef NK_SIMD
                store8(a, _mm256_loadu_ps(y[r][c]), off, c0, cnt);
#else
                for (int q = 0; q < cnt; q++)
                    a->y[off + q] = epi_scalar(y[r][c][q], a->nops, a->codes, a->prm, a->ptrs, off + q, c0 + q);
#endif
            }
    }
}

static void wino_out_item(void *ctx, long it) {
    const wino_out_job *j = (const wino_out_job *)ctx;
    for (long t = it * NK_WINO_CHUNK; t < (it + 1) * NK_WINO_CHUNK && t < j->tiles; t++) wino_out_tile(j, t);
}

/* Fused blocks, for few channels: each work item transforms a block of ``tb`` tiles, runs the 16 GEMMs on it and
 * transforms back, with the block's V and M in this thread's scratch (L2) instead of whole-image matrices that
 * stream through memory. The transformed weights are read once per block, so only small weight sets (few
 * channels) take this path (``NK_WINO_FUSED_CHANNELS``). */
#ifndef NK_WINO_FUSED_CHANNELS
#define NK_WINO_FUSED_CHANNELS 256  /* IC + OC: up to it fused blocks were faster than the three whole-image
                                     * passes, or nearly as fast (bench/RESULTS.md) */
#endif
#define NK_WINO_BLOCK_BYTES (384 * 1024)

typedef struct {
    wino_in_job in;
    wino_out_job out;
    const float *u, *zero;
    int IC, OC, panels, tb;
    atomic_int failed;
} wino_fused_job;

static void wino_fused_item(void *ctx, long it) {
    wino_fused_job *f = (wino_fused_job *)ctx;
    int IC = f->IC, OC = f->OC;
    long t0 = it * f->tb, t1 = t0 + f->tb < f->in.tiles ? t0 + f->tb : f->in.tiles;
    int nt = (int)(t1 - t0);
    float *v = nk_thread_scratch((size_t)16 * f->tb * (IC + OC));
    if (v == NULL) {
        atomic_store(&f->failed, 1);
        return;
    }
    float *m = v + (size_t)16 * f->tb * IC;
    long vs = (long)nt * IC, ms = (long)nt * OC;
    for (long t = t0; t < t1; t++) wino_in_tile_to(&f->in, t, v + (t - t0) * IC, vs);
    static const long toff0 = 0;
    for (int xi = 0; xi < 16; xi++) {
        conv_args a = {v + xi * vs, 1, nt, IC, 1, nt, 1, 1, &toff0, 1, IC, (long)IC,
                       f->u + (long)xi * f->panels * IC * NR, OC, f->zero, m + xi * ms,
                       0, NULL, NULL, NULL, 0, NULL, 0.0f, 0.0f, f->zero};
        const float *base[MR];
        for (int r0 = 0; r0 < nt; r0 += MR) {
            int mr = nt - r0 < MR ? nt - r0 : MR;
            for (int i = 0; i < MR; i++) base[i] = a.xp + (long)(r0 + (i < mr ? i : 0)) * IC;
            for (int jp = 0, step; jp < f->panels; jp += step) {
                step = pair_step(&a, jp, f->panels);
                tile_step(&a, base, r0, mr, jp, step, 0, IC, NULL);
            }
        }
    }
    for (long t = t0; t < t1; t++) wino_out_tile_from(&f->out, t, m + (t - t0) * OC, ms);
}

/* The floats of ``work`` nk_wino_f32 needs (0: fused blocks, in per-thread scratch). */
long nk_wino_work_floats(int N, int OH, int OW, int IC, int OC) {
    if (IC + OC <= NK_WINO_FUSED_CHANNELS) return 0;
    return 16L * N * ((OH + 1) / 2) * ((OW + 1) / 2) * (IC + OC);
}

/* The whole convolution: xp [N, Hp, Wp, IC] already zero-bordered (OH = Hp - 2, OW = Wp - 2), u the 16 packed
 * transformed weight matrices (each ceil(OC/16) * IC * 16 floats), bias [OC], y [N, OH, OW, OC] with the fused
 * post-ops (as nk_conv_f32), work nk_wino_work_floats(...) floats. Returns 0, or -1 when out of memory. */
int nk_wino_f32(const float *xp, int N, int Hp, int Wp, int IC, int OH, int OW, const float *u, int OC,
                const float *bias, float *y, int nops, const int *codes, const float *prm, const float *const *ptrs,
                float *work, int nthreads) {
    int panels = (OC + NR - 1) / NR;
    int th = (OH + 1) / 2, tw = (OW + 1) / 2;
    long tiles = (long)N * th * tw;
    float *v = work, *m = work + 16 * tiles * IC;
    float *zero = (float *)calloc((size_t)panels * NR, sizeof(float));
    float *bpad = (float *)calloc((size_t)panels * NR, sizeof(float));
    if (zero == NULL || bpad == NULL) {
        free(zero); free(bpad);
        return -1;
    }
    for (int q = 0; q < OC; q++) bpad[q] = bias[q];
    conv_args o = {NULL, 0, 0, 0, OH, OW, 1, 1, NULL, 0, 0, 0, NULL, OC, bpad, y, nops, codes, prm, ptrs, 4, NULL,
                   0.0f, 0.0f, bpad};
    set_epilogue_mode(&o);
    if (IC + OC <= NK_WINO_FUSED_CHANNELS) {
        int tb = NK_WINO_BLOCK_BYTES / (64 * (IC + OC)) / MR * MR;
        if (tb < MR) tb = MR;
        wino_fused_job f = {{xp, Hp, Wp, IC, th, tw, tiles, NULL}, {&o, NULL, bpad, OH, OW, th, tw, tiles},
                            u, zero, IC, OC, panels, tb, 0};
        nk_parallel(wino_fused_item, &f, (tiles + tb - 1) / tb, nthreads);
        int failed = atomic_load(&f.failed);
        free(zero); free(bpad);
        return failed ? -1 : 0;
    }
    wino_in_job in = {xp, Hp, Wp, IC, th, tw, tiles, v};
    long chunks = (tiles + NK_WINO_CHUNK - 1) / NK_WINO_CHUNK;
    nk_parallel(wino_in_item, &in, chunks, nthreads);
    static const long toff0 = 0;
    conv_args args[16];
    conv_job jobs[16];
    long per = 0;
    for (int xi = 0; xi < 16; xi++) {
        conv_args t = {v + xi * tiles * IC, 1, (int)tiles, IC, 1, (int)tiles, 1, 1, &toff0, 1, IC, (long)IC,
                       u + (long)xi * panels * IC * NR, OC, zero, m + xi * tiles * OC,
                       0, NULL, NULL, NULL, 0, NULL, 0.0f, 0.0f, zero};
        args[xi] = t;
        per = conv_plan(&jobs[xi], &args[xi], tiles, panels, nthreads);
    }
    bmm_job gj = {jobs, per};
    nk_parallel(bmm_item, &gj, 16 * per, nthreads);
    wino_out_job out = {&o, m, bpad, OH, OW, th, tw, tiles};
    nk_parallel(wino_out_item, &out, chunks, nthreads);
    free(zero); free(bpad);
    return 0;
}

int nk_wino_f32_b(const int64_t *a, int nthreads) {
    return nk_wino_f32((const float *)(intptr_t)a[0], (int)a[1], (int)a[2], (int)a[3], (int)a[4], (int)a[5],
                       (int)a[6], (const float *)(intptr_t)a[7], (int)a[8], (const float *)(intptr_t)a[9],
                       (float *)(intptr_t)a[10], (int)a[11], (const int *)(intptr_t)a[12],
                       (const float *)(intptr_t)a[13], (const float *const *)(intptr_t)a[14],
                       (float *)(intptr_t)a[15], a[16] > 0 ? (int)a[16] : nthreads);
}

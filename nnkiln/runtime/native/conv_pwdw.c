/* A 1x1 CONV2D feeding a DEPTHWISE_CONV2D, fused (MobileNet's expansion then depthwise), nk_pwdw_f32.
 * Part of conv.c (#included after the depthwise kernel: same tiles, row functions and thread pool).
 *
 * y = DW(PW(x)) without the expanded tensor in memory. Per image, the output rows of the depthwise
 * convolution are cut into ``parts`` work items; an item walks its rows in bands of ``band`` rows. A band
 * needs expanded rows [lo, hi) (the depthwise taps inside the image); rows the previous band of the item
 * already computed are moved to the front of the thread's scratch, the others are computed there by the
 * 1x1 convolution's tiles (``tile_step``: the same sums, bias and clamp as nk_conv_f32), then the band's
 * depthwise rows run on the scratch (``dw_row_m1``, as nk_depthwise_f32 does for channel multiplier 1).
 * Every value is computed by the same operations as the two kernels run one after the other: identical
 * results. The expanded rows of a band stay in L2 (``band`` is chosen for about 256 KiB of them); only
 * ``parts - 1`` boundaries per image compute a few rows twice.
 *
 * Limits (checked by the caller, kernels/fused.py): stride 1 and no padding for the 1x1 convolution, its
 * post-ops a clamp at most; depthwise channel multiplier 1, dilation 1, post-ops a clamp at most. */

#include "nnkiln.h"

typedef struct {
    const float *x;
    int N, H, W, CI;
    conv_args pw;     /* the 1x1 convolution (y: set per thread to its scratch) */
    const float *w;
    int KH, KW;
    const float *bias;
    float *y;
    int OH, OW, sy, sx, pt, pl;
    int nops;
    const int *codes;
    const float *prm;
    int parts, band;
    atomic_int failed;
} pwdw_job;

static const float *const pwdw_noptrs[2] = {NULL, NULL}; /* the post-ops are clamps: no operand is read */

/* Expanded rows [a, b) of image n into scratch rows [a - s_lo, b - s_lo). */
static void pwdw_expand(const pwdw_job *j, conv_args *pa, int n, int a, int b, int s_lo) {
    const float *xn = j->x + (ptrdiff_t)n * j->H * j->W * j->CI;
    long r = (long)a * j->W, r_end = (long)b * j->W;
    int panels = (pa->OC + NR - 1) / NR;
    const float *base[MR], *base1[MR];
    for (; r < r_end; r += MR) {
        int mr = r_end - r < MR ? (int)(r_end - r) : MR;
        for (int i = 0; i < MR; i++) base[i] = xn + (ptrdiff_t)(r + (i < mr ? i : 0)) * j->CI;
        long local = r - (long)s_lo * j->W;
#if NK_PAIR
        if (pa->K <= NK_TILE12_K && r_end - r >= 2 * MR && pa->mode <= 3) {  /* two row tiles at once, as conv_item */
            for (int i = 0; i < MR; i++) base1[i] = base[i] + (ptrdiff_t)MR * j->CI;
            for (int p = 0, step; p < panels; p += step) {
                step = pair_step(pa, p, panels);
                if (step == 2) {
                    tile2_12(pa, base, base1, local, p);
                } else {
                    tile_step(pa, base, local, MR, p, 1, 0, pa->K, NULL);
                    tile_step(pa, base1, local + MR, MR, p, 1, 0, pa->K, NULL);
                }
            }
            r += MR;
            continue;
        }
#endif
        for (int p = 0, step; p < panels; p += step) {
            step = pair_step(pa, p, panels);
            tile_step(pa, base, local, mr, p, step, 0, pa->K, NULL);
        }
    }
    (void)base1;
}

static void pwdw_item(void *ctx, long it) {
    pwdw_job *j = (pwdw_job *)ctx;
    int n = (int)(it / j->parts), part = (int)(it % j->parts);
    int per = (j->OH + j->parts - 1) / j->parts;
    int oy0 = part * per, oy1 = oy0 + per < j->OH ? oy0 + per : j->OH;
    if (oy0 >= oy1) return;
    int C = j->pw.OC, W = j->W;
    size_t row = (size_t)W * C;
    float *s = nk_thread_scratch((size_t)((j->band - 1) * j->sy + j->KH) * row);
    if (s == NULL) {
        atomic_store(&j->failed, 1);
        return;
    }
    conv_args pa = j->pw;
    pa.y = s;
    float *yn = j->y + (ptrdiff_t)n * j->OH * j->OW * C;
    int s_lo = 0, s_hi = 0;  /* expanded rows held in the scratch */
    for (int oy = oy0; oy < oy1; oy += j->band) {
        int oe = oy + j->band < oy1 ? oy + j->band : oy1;
        int lo = oy * j->sy - j->pt, hi = (oe - 1) * j->sy - j->pt + j->KH;
        if (lo < 0) lo = 0;
        if (hi > j->H) hi = j->H;
        if (lo >= hi) {  /* every tap of the band in the padding: the depthwise rows see no input row */
            s_lo = s_hi = 0;
        } else if (s_hi > lo && s_lo <= lo) {  /* keep rows [lo, s_hi), compute the rest */
            memmove(s, s + (size_t)(lo - s_lo) * row, (size_t)(s_hi - lo) * row * sizeof(float));
            s_lo = lo;
            pwdw_expand(j, &pa, n, s_hi, hi, s_lo);
            s_hi = hi;
        } else {
            s_lo = lo;
            pwdw_expand(j, &pa, n, lo, hi, s_lo);
            s_hi = hi;
        }
        /* the depthwise rows read rows iy of "the image" at x + iy * row: a view whose row s_lo is the scratch
         * (only rows inside [lo, hi) are read: taps outside the image are skipped) */
        const float *xv = (const float *)((uintptr_t)s - (uintptr_t)((size_t)s_lo * row * sizeof(float)));
        for (int r = oy; r < oe; r++)
            dw_row_m1(xv, j->H, W, C, j->w, j->KH, j->KW, j->bias, yn, j->OW, j->sy, j->sx, 1, 1, j->pt, j->pl, 0, r,
                      j->OH, j->nops, j->codes, j->prm, pwdw_noptrs);
    }
}

/* x [N, H, W, CI] -> 1x1 convolution (packed weights bp, bias, clamp when pw_nops) -> [N, H, W, C] ->
 * depthwise KHxKW (w [KH, KW, C], bias, stride, padding top/left, clamp when nops) -> y [N, OH, OW, C].
 * Returns 0, or -1 when a scratch allocation failed. */
int nk_pwdw_f32(const float *x, int N, int H, int W, int CI, const float *bp, int C, const float *pw_bias,
                int pw_nops, const int *pw_codes, const float *pw_prm,
                const float *w, int KH, int KW, const float *bias, float *y, int OH, int OW, int sy, int sx,
                int pt, int pl, int nops, const int *codes, const float *prm, int nthreads) {
    int panels = (C + NR - 1) / NR;
    float bstack[1024];
    float *bpad = panels * NR <= 1024 ? bstack : (float *)malloc(sizeof(float) * (size_t)panels * NR);
    if (bpad == NULL) return -1;
    for (int q = 0; q < panels * NR; q++) bpad[q] = q < C ? pw_bias[q] : 0.0f;
    static const long toff0[1] = {0};
    pwdw_job job;
    job.x = x; job.N = N; job.H = H; job.W = W; job.CI = CI;
    conv_args pa = {x, H, W, CI, H, W, 1, 1, toff0, 1, CI, (long)CI, bp, C, pw_bias, NULL,
                    pw_nops, pw_codes, pw_prm, pwdw_noptrs, 4, NULL, 0.0f, 0.0f, bpad};
    set_epilogue_mode(&pa);
    job.pw = pa;
    job.w = w; job.KH = KH; job.KW = KW; job.bias = bias; job.y = y;
    job.OH = OH; job.OW = OW; job.sy = sy; job.sx = sx; job.pt = pt; job.pl = pl;
    job.nops = nops; job.codes = codes; job.prm = prm;
    /* bands of about 256 KiB of expanded rows (at least one output row) */
    long rows = (256L * 1024) / ((long)W * C * (long)sizeof(float));
    int band = rows > KH ? (int)((rows - KH) / sy + 1) : 1;
    job.band = band;
    /* one item per image and thread when the batch is smaller than the thread count, else one per image */
    job.parts = nthreads > N ? (nthreads + N - 1) / N : 1;
    if (job.parts > OH) job.parts = OH;
    atomic_init(&job.failed, 0);
    nk_parallel(pwdw_item, &job, (long)N * job.parts, nthreads);
    if (bpad != bstack) free(bpad);
    return atomic_load(&job.failed) ? -1 : 0;
}

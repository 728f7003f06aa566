/* Float32 NHWC convolutions with fused epilogues, used by nnkiln/runtime/kernels/conv.py (which keeps a
 * numpy/BLAS fallback for everything here). Compiled without -ffast-math: NaN/inf follow IEEE.
 *
 * CONV2D (TOSA spec §2.3.3) as an implicit GEMM, nk_conv_f32:
 * out[r, oc] = sum_k A[r, k] * W[oc, k] with k = (ky, kx, ic) and row r = (n, oy, ox); A is never
 * materialised: row r of tap (ky, kx) starts at xp + ((n*Hp + oy*sy)*Wp + ox*sx)*IC + toff[t],
 * toff[t] = (ky*dy*Wp + kx*dx)*IC, where xp is the (already zero-padded) input [N, Hp, Wp, IC]; with
 * dx = 1 the taps of one kernel row are one contiguous segment of KW*IC values (toff per ky, seg =
 * KW*IC), else every tap is a segment of IC values.
 * The weights are packed once (nk_pack_weights) into panels of NR = 16 output channels:
 * bp[(j*K + k)*16 + q] = W[j*16 + q, k] (zero beyond OC).
 * Micro-kernel: MR = 6 rows x 16 channels in 12 AVX registers starting from the bias, the whole K
 * summed in registers (fused multiply-add, k in order), then the post-ops, then one store. With AVX-512
 * (compiled with -march=native on such a CPU): two full panels at once, 6 rows x 32 channels in 12 zmm
 * registers (tile2: every broadcast input value feeds two FMAs); a full lone panel (16 channels, or the odd
 * panel of e.g. 144) takes six zmm sums (faster than the AVX2 tile once the epilogues stored whole registers).
 * The same FMAs per output element in the same order, so results are identical to the AVX2 build; whole models
 * ran faster than with the AVX2 tiles (bench/RESULTS.md). Numerics: a different summation order (and rounding)
 * from the reference's, within the runtime's 1e-5 relative float tolerance, as the BLAS path. Products of at most
 * 4 rows (a classifier at batch 1), and the last row
 * tile of a larger one when it has at most 4 rows, run in few_rows instead (the weights streamed once for those
 * rows, the same sums). Column blocks keep K x NC of the packed weights
 * within about 256 KiB (L2) while every row tile passes over them: panel by panel for long sums (a
 * panel's k block of NK_KC stays in L2), tile by tile for short ones (K <= NK_SHORT_K: output-bound).
 *
 * DEPTHWISE_CONV2D (TOSA spec §2.3.5), nk_depthwise_f32: for every output element the taps (ky, kx)
 * are visited in row-major order and taps outside the input are skipped, acc = 0; acc = fma(x, w, acc)
 * in the vector paths (acc = acc + x * w, two roundings, in the scalar channel tails), then acc + bias,
 * then the post-ops in order: the reference interpreter's order of sums, with the products unrounded
 * where fused (within the runtime's 1e-5 relative float tolerance). Decision: the fused multiply-add
 * halves the vector arithmetic (MobileNetV2 ran faster: bench/RESULTS.md). Until then the kernel did the
 * reference's exact float32 operations (identical results).
 *
 * Pooling, REDUCE_SUM, the zero-padded input copies of CONV2D, TRANSPOSE, GATHER and the int32 elementwise ops
 * (conv_data.c), Winograd (conv_wino.c), the fused expansion + depthwise (conv_pwdw.c), the integer kernels of
 * quantized graphs (conv_int.c) and the row programs (eltwise_rows.c) are parts of this library (#included), to
 * share the thread pool; a run of them whose arguments are fixed is one call (the bound calls at the end).
 *
 * Epilogue ops (code, param0, param1, pointer): enum nk_epi in nnkiln.h (CLAMP; ADD / SUB / MUL with a full,
 * channel or scalar operand).
 *
 * Threads: work items (chunks of row tiles / output rows) are shared by the calling thread and up to
 * nthreads - 1 pool workers (nk_parallel): each thread first takes the items of its own contiguous range, in
 * order, through that range's atomic counter, then what is left of the others' (run_items). The caller never
 * waits for a worker to arrive: only for items already taken, so a worker whose core is busy elsewhere
 * (shared machine) costs nothing; workers spin briefly after a job, then sleep. Results do not depend
 * on the thread count (items split outputs, never a sum). Home ranges instead of one shared counter: a core
 * then mostly reads the rows it wrote in the layer before, from its own L2 (faster at 2 threads on every model
 * measured: bench/RESULTS.md).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nnkiln.h"
#if defined(__AVX__)
#include <immintrin.h>
#endif
#if defined(__AVX2__) && defined(__FMA__)
#define NK_SIMD 1
#endif

/* -- the thread pool ------------------------------------------------------------------------------ */

typedef void (*nk_job)(void *ctx, long item);

#define NK_MAXW 31
#define NK_SPIN_NS 200000L  /* workers spin this long after a job before sleeping */

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cv = PTHREAD_COND_INITIALIZER;
static atomic_flag pool_busy = ATOMIC_FLAG_INIT;
static int pool_nw = 0, pool_sleepers = 0;
static unsigned pool_seen0[NK_MAXW];
static atomic_uint pool_gen;
/* Thread t's home range of a job's items (t = 0 the caller, t = worker id + 1): (generation << 32) | next item,
 * one cache line each. */
typedef struct {
    _Alignas(64) atomic_ullong ticket;
} nk_range;
static nk_range pool_range[NK_MAXW + 1];
static atomic_long pool_done;
static nk_job pool_fn;
static void *pool_ctx;
static long pool_items;
static int pool_active;

static inline void nk_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static inline long nk_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* The first item of range r of ``items`` split into n contiguous ranges (range r ends where r + 1 starts). */
static inline long range_start(long items, int n, int r) { return (long)((long long)items * r / n); }

/* Thread t of n takes the items of its home range in order, then what is left of the others'. Work items are
 * numbered along the output (row bands, chunks of row tiles), so a thread's home range covers about the same rows
 * in consecutive layers: each core then reads mostly the rows that it wrote itself, from its own L2, where one
 * shared counter dealt the items out alternately. A range's counter carries the job's generation: a worker still
 * in an earlier job cannot take an item of a new one. */
static void run_items(unsigned gen, nk_job fn, void *ctx, long items, int n, int t) {
    for (int k = 0; k < n; k++) {
        int r = (t + k) % n;
        long end = range_start(items, n, r + 1);
        atomic_ullong *tk = &pool_range[r].ticket;
        for (;;) {
            unsigned long long v = atomic_load(tk);
            if ((unsigned)(v >> 32) != gen) return;  /* the job is over */
            long i = (long)(v & 0xffffffffULL);
            if (i >= end) break;
            if (!atomic_compare_exchange_weak(tk, &v, v + 1)) continue;
            fn(ctx, i);
            atomic_fetch_add(&pool_done, 1);
        }
    }
}

static void *pool_worker(void *arg) {
    int id = (int)(long)arg;
    unsigned seen = pool_seen0[id];
    for (;;) {
        unsigned g = atomic_load(&pool_gen);
        if (g == seen) {
            long start = nk_now_ns();
            int k = 0;
            while ((g = atomic_load(&pool_gen)) == seen) {
                nk_relax();
                if (++k == 256) {
                    k = 0;
                    if (nk_now_ns() - start > NK_SPIN_NS) break;
                }
            }
        }
        pthread_mutex_lock(&pool_mu);
        while ((g = atomic_load(&pool_gen)) == seen) {
            pool_sleepers++;
            pthread_cond_wait(&pool_cv, &pool_mu);
            pool_sleepers--;
        }
        nk_job fn = pool_fn;
        void *ctx = pool_ctx;
        long items = pool_items;
        int active = pool_active;
        pthread_mutex_unlock(&pool_mu);
        seen = g;
        if (id < active) run_items(g, fn, ctx, items, active + 1, id + 1);
    }
    return NULL;
}

/* fn(ctx, i) for i in [0, items), on the caller and up to nthreads - 1 workers. */
static void nk_parallel(nk_job fn, void *ctx, long items, int nthreads) {
    if (nthreads > items) nthreads = (int)items;
    if (nthreads > NK_MAXW + 1) nthreads = NK_MAXW + 1;
    if (nthreads <= 1 || atomic_flag_test_and_set(&pool_busy)) {
        for (long i = 0; i < items; i++) fn(ctx, i);
        return;
    }
    pthread_mutex_lock(&pool_mu);
    while (pool_nw < nthreads - 1) {
        pthread_t th;
        pthread_attr_t at;
        pool_seen0[pool_nw] = atomic_load(&pool_gen);
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        int err = pthread_create(&th, &at, pool_worker, (void *)(long)pool_nw);
        pthread_attr_destroy(&at);
        if (err) break;
        pool_nw++;
    }
    unsigned g = atomic_load(&pool_gen) + 1;
    if (g == 0) g = 1;
    pool_fn = fn;
    pool_ctx = ctx;
    pool_items = items;
    pool_active = nthreads - 1;
    atomic_store(&pool_done, 0);
    for (int r = 0; r < nthreads; r++) {
        unsigned long long first = (unsigned long long)range_start(items, nthreads, r);
        atomic_store(&pool_range[r].ticket, ((unsigned long long)g << 32) | first);
    }
    atomic_store(&pool_gen, g);
    if (pool_sleepers) pthread_cond_broadcast(&pool_cv);
    pthread_mutex_unlock(&pool_mu);
    run_items(g, fn, ctx, items, nthreads, 0);
    long k = 0;
    while (atomic_load(&pool_done) < items) {
        nk_relax();
        if (++k % 4096 == 0) sched_yield();  /* a worker holding an item may share this core */
    }
    atomic_flag_clear(&pool_busy);
}

/* The number of pool workers started so far (tests). */
int nk_pool_workers(void) { return pool_nw; }

/* -- CONV2D ---------------------------------------------------------------------------------------- */

#define MR 6
#define NR 16
_Static_assert(NR == NK_PANEL_WIDTH, "a weight panel is NK_PANEL_WIDTH channels");

void nk_pack_weights(const float *w, int OC, long K, float *bp) {
    int panels = (OC + NR - 1) / NR;
    for (int j = 0; j < panels; j++) {
        for (long k = 0; k < K; k++) {
            float *dst = bp + ((long)j * K + k) * NR;
            for (int q = 0; q < NR; q++) {
                int oc = j * NR + q;
                dst[q] = oc < OC ? w[(long)oc * K + k] : 0.0f;
            }
        }
    }
}

static inline float epi_scalar(float v, int nops, const int *codes, const float *prm,
                               const float *const *ptrs, ptrdiff_t off, int c) {
    for (int i = 0; i < nops; i++) {
        const float *p = ptrs[i];
        switch (codes[i]) {
        case NK_EPI_CLAMP: { float lo = prm[2 * i], hi = prm[2 * i + 1];
                  v = v < lo ? lo : v; v = v > hi ? hi : v; break; }
        case NK_EPI_ADD_FULL: v = v + p[off]; break;
        case NK_EPI_ADD_CHAN: v = v + p[c]; break;
        case NK_EPI_SUB_FULL: v = v - p[off]; break;
        case NK_EPI_SUB_CHAN: v = v - p[c]; break;
        case NK_EPI_MUL_FULL: v = v * p[off]; break;
        case NK_EPI_MUL_CHAN: v = v * p[c]; break;
        case NK_EPI_ADD_SCAL: v = v + p[0]; break;
        case NK_EPI_SUB_SCAL: v = v - p[0]; break;
        case NK_EPI_MUL_SCAL: v = v * p[0]; break;
        default: break;
        }
    }
    return v;
}

typedef struct {
    const float *xp;
    int Hp, Wp, IC, OH, OW, sy, sx;
    const long *toff;
    int ntaps, seg;    /* K = ntaps * seg: segments of seg contiguous input values per tap list entry */
    long K;
    const float *bp;
    int OC;
    const float *bias;
    float *y;
    int nops;
    const int *codes;
    const float *prm;
    const float *const *ptrs;
    int mode;          /* 0 bias only, 1 bias+clamp, 2 bias+add(full), 3 bias+add(full)+clamp, 4 generic */
    const float *res;  /* the full operand of modes 2 and 3 */
    float lo, hi;      /* the clamp of modes 1 and 3 */
    const float *bpad; /* SIMD path: the bias padded to whole panels (the sums start from it) */
} conv_args;


#ifdef NK_SIMD
/* Post-ops and store of 8 channels (c ..) of one row (the bias is already in v); cnt < 8 valid ones:
 * scalar tail. */
static inline void store8(const conv_args *a, __m256 v, ptrdiff_t off, int c, int cnt) {
    if (cnt >= 8) {
        switch (a->mode) {
        case 0: _mm256_storeu_ps(a->y + off, v); return;
        case 1:  /* max_ps/min_ps return the second operand when either is NaN: NaN propagates */
            v = _mm256_min_ps(_mm256_set1_ps(a->hi), _mm256_max_ps(_mm256_set1_ps(a->lo), v));
            _mm256_storeu_ps(a->y + off, v);
            return;
        case 2: _mm256_storeu_ps(a->y + off, _mm256_add_ps(v, _mm256_loadu_ps(a->res + off))); return;
        case 3:
            v = _mm256_add_ps(v, _mm256_loadu_ps(a->res + off));
            v = _mm256_min_ps(_mm256_set1_ps(a->hi), _mm256_max_ps(_mm256_set1_ps(a->lo), v));
            _mm256_storeu_ps(a->y + off, v);
            return;
        default: break;
        }
        for (int e = 0; e < a->nops; e++) {
            const float *p = a->ptrs[e];
            switch (a->codes[e]) {
            case NK_EPI_CLAMP: /* max_ps/min_ps return the second operand when either is NaN: NaN propagates */
                v = _mm256_max_ps(_mm256_set1_ps(a->prm[2 * e]), v);
                v = _mm256_min_ps(_mm256_set1_ps(a->prm[2 * e + 1]), v);
                break;
            case NK_EPI_ADD_FULL: v = _mm256_add_ps(v, _mm256_loadu_ps(p + off)); break;
            case NK_EPI_ADD_CHAN: v = _mm256_add_ps(v, _mm256_loadu_ps(p + c)); break;
            case NK_EPI_SUB_FULL: v = _mm256_sub_ps(v, _mm256_loadu_ps(p + off)); break;
            case NK_EPI_SUB_CHAN: v = _mm256_sub_ps(v, _mm256_loadu_ps(p + c)); break;
            case NK_EPI_MUL_FULL: v = _mm256_mul_ps(v, _mm256_loadu_ps(p + off)); break;
            case NK_EPI_MUL_CHAN: v = _mm256_mul_ps(v, _mm256_loadu_ps(p + c)); break;
            case NK_EPI_ADD_SCAL: v = _mm256_add_ps(v, _mm256_set1_ps(p[0])); break;
            case NK_EPI_SUB_SCAL: v = _mm256_sub_ps(v, _mm256_set1_ps(p[0])); break;
            case NK_EPI_MUL_SCAL: v = _mm256_mul_ps(v, _mm256_set1_ps(p[0])); break;
            default: break;
            }
        }
        _mm256_storeu_ps(a->y + off, v);
        return;
    }
    float tmp[8] __attribute__((aligned(32)));
    _mm256_store_ps(tmp, v);
    for (int q = 0; q < cnt; q++)
        a->y[off + q] = epi_scalar(tmp[q], a->nops, a->codes, a->prm, a->ptrs, off + q, c + q);
}
#endif

/* W-bit vector intrinsics by width: NK_V(256, fmadd_ps) is _mm256_fmadd_ps, NK_V(512, loadu_ps) _mm512_loadu_ps. */
#define NK_V(W, op) _mm##W##_##op

/* Store the W-bit sums x (bias included) at y + ro: + the residual when ``res``, then the clamp [lo, hi] when
 * ``clamp`` (conv_args modes 0-3; max_ps/min_ps return the second operand when either is NaN: NaN propagates). */
#define NK_EPI_STORE(W, x, ro, lo, hi) { __m##W t_ = x; \
        if (res) t_ = NK_V(W, add_ps)(t_, NK_V(W, loadu_ps)(a->res + (ro))); \
        if (clamp) t_ = NK_V(W, min_ps)(hi, NK_V(W, max_ps)(lo, t_)); \
        NK_V(W, storeu_ps)(a->y + (ro), t_); }

/* tile()'s six sums d0..d5 of one panel's first W/32 channels over [kb, ke), in W-bit registers: from the bias
 * (or cb's partial sums), k in order; when the block is not the last, they go back to cb and tile() returns. */
#define NK_SIX_SUMS(W) \
        __m##W d0, d1, d2, d3, d4, d5; \
        if (cb == NULL || kb == 0) { \
            d0 = NK_V(W, loadu_ps)(a->bpad + oc0); d1 = d0; d2 = d0; d3 = d0; d4 = d0; d5 = d0; \
        } else { \
            d0 = NK_V(W, loadu_ps)(cb); d1 = NK_V(W, loadu_ps)(cb + NR); d2 = NK_V(W, loadu_ps)(cb + 2 * NR); \
            d3 = NK_V(W, loadu_ps)(cb + 3 * NR); d4 = NK_V(W, loadu_ps)(cb + 4 * NR); d5 = NK_V(W, loadu_ps)(cb + 5 * NR); \
        } \
        for (long k = kb; k < ke; t++, ic0 = 0) { \
            int len = seg - ic0; \
            if (len > ke - k) len = (int)(ke - k); \
            long o = a->toff[t] + ic0; \
            const float *p0 = base[0] + o, *p1 = base[1] + o, *p2 = base[2] + o; \
            const float *p3 = base[3] + o, *p4 = base[4] + o, *p5 = base[5] + o; \
            for (int ic = 0; ic < len; ic++) { \
                __m##W b0 = NK_V(W, loadu_ps)(bp); \
                d0 = NK_V(W, fmadd_ps)(NK_V(W, set1_ps)(p0[ic]), b0, d0); \
                d1 = NK_V(W, fmadd_ps)(NK_V(W, set1_ps)(p1[ic]), b0, d1); \
                d2 = NK_V(W, fmadd_ps)(NK_V(W, set1_ps)(p2[ic]), b0, d2); \
                d3 = NK_V(W, fmadd_ps)(NK_V(W, set1_ps)(p3[ic]), b0, d3); \
                d4 = NK_V(W, fmadd_ps)(NK_V(W, set1_ps)(p4[ic]), b0, d4); \
                d5 = NK_V(W, fmadd_ps)(NK_V(W, set1_ps)(p5[ic]), b0, d5); \
                bp += NR; \
            } \
            k += len; \
        } \
        if (!last) { \
            NK_V(W, storeu_ps)(cb, d0); NK_V(W, storeu_ps)(cb + NR, d1); NK_V(W, storeu_ps)(cb + 2 * NR, d2); \
            NK_V(W, storeu_ps)(cb + 3 * NR, d3); NK_V(W, storeu_ps)(cb + 4 * NR, d4); NK_V(W, storeu_ps)(cb + 5 * NR, d5); \
            return; \
        }

/* Rows r0 .. r0+mr-1 (mr <= MR; their input pointers in base), channel panel j, the k range [kb, ke).
 * cb == NULL: the whole K in one pass (sums start from the bias, end in the epilogue and y). Otherwise
 * cb holds the tile's partial sums [MR][NR] between k blocks: the first block starts from the bias,
 * the last one finishes into y. */
static void tile(const conv_args *a, const float *const *base, long r0, int mr, int j, long kb, long ke, float *cb) {
    const float *bp = a->bp + ((long)j * a->K + kb) * NR;
    int oc0 = j * NR;
    int nc = a->OC - oc0 < NR ? a->OC - oc0 : NR;
    int seg = a->seg;
    int OC = a->OC;
    int t = (int)(kb / seg), ic0 = (int)(kb - (long)t * seg);
    int last = ke == a->K;
#ifdef NK_SIMD
    if (nc <= 8) {  /* a last panel of at most 8 channels: half the work (6 sums) */
        NK_SIX_SUMS(256)
        ptrdiff_t off = r0 * (ptrdiff_t)OC + oc0;
        if (mr > 0) store8(a, d0, off, oc0, nc);
        if (mr > 1) store8(a, d1, off + OC, oc0, nc);
        if (mr > 2) store8(a, d2, off + 2 * (ptrdiff_t)OC, oc0, nc);
        if (mr > 3) store8(a, d3, off + 3 * (ptrdiff_t)OC, oc0, nc);
        if (mr > 4) store8(a, d4, off + 4 * (ptrdiff_t)OC, oc0, nc);
        if (mr > 5) store8(a, d5, off + 5 * (ptrdiff_t)OC, oc0, nc);
        return;
    }
#if defined(__AVX512F__)
    if (nc == NR && mr > 3 && a->mode <= 3) {  /* a full lone panel: 6 x 16 in six zmm sums, bias/residual/clamp */
        NK_SIX_SUMS(512)
        ptrdiff_t off = r0 * (ptrdiff_t)OC + oc0;
        const __m512 zlo = _mm512_set1_ps(a->lo), zhi = _mm512_set1_ps(a->hi);
        const int res = a->mode >= 2, clamp = a->mode & 1;
#define NK_OUT(x, i) if (mr > i) NK_EPI_STORE(512, x, off + (ptrdiff_t)i * OC, zlo, zhi)
        NK_OUT(d0, 0) NK_OUT(d1, 1) NK_OUT(d2, 2) NK_OUT(d3, 3) NK_OUT(d4, 4) NK_OUT(d5, 5)
#undef NK_OUT
        return;
    }
#endif
    if (mr <= 3) {  /* a last tile of at most 3 rows (e.g. 7x7 = 49 rows): half the work */
        __m256 e00, e01, e10, e11, e20, e21;
        if (cb == NULL || kb == 0) {
            e00 = _mm256_loadu_ps(a->bpad + oc0); e01 = _mm256_loadu_ps(a->bpad + oc0 + 8);
            e10 = e00; e11 = e01; e20 = e00; e21 = e01;
        } else {
            e00 = _mm256_loadu_ps(cb); e01 = _mm256_loadu_ps(cb + 8);
            e10 = _mm256_loadu_ps(cb + NR); e11 = _mm256_loadu_ps(cb + NR + 8);
            e20 = _mm256_loadu_ps(cb + 2 * NR); e21 = _mm256_loadu_ps(cb + 2 * NR + 8);
        }
        for (long k = kb; k < ke; t++, ic0 = 0) {
            int len = seg - ic0;
            if (len > ke - k) len = (int)(ke - k);
            long o = a->toff[t] + ic0;
            const float *p0 = base[0] + o, *p1 = base[1] + o, *p2 = base[2] + o;
            for (int ic = 0; ic < len; ic++) {
                __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
                __m256 av;
                av = _mm256_broadcast_ss(p0 + ic); e00 = _mm256_fmadd_ps(av, b0, e00); e01 = _mm256_fmadd_ps(av, b1, e01);
                av = _mm256_broadcast_ss(p1 + ic); e10 = _mm256_fmadd_ps(av, b0, e10); e11 = _mm256_fmadd_ps(av, b1, e11);
                av = _mm256_broadcast_ss(p2 + ic); e20 = _mm256_fmadd_ps(av, b0, e20); e21 = _mm256_fmadd_ps(av, b1, e21);
                bp += NR;
            }
            k += len;
        }
        if (!last) {
            _mm256_storeu_ps(cb, e00); _mm256_storeu_ps(cb + 8, e01);
            _mm256_storeu_ps(cb + NR, e10); _mm256_storeu_ps(cb + NR + 8, e11);
            _mm256_storeu_ps(cb + 2 * NR, e20); _mm256_storeu_ps(cb + 2 * NR + 8, e21);
            return;
        }
        int m0 = nc < 8 ? nc : 8, m1 = nc - 8;
        ptrdiff_t off = r0 * (ptrdiff_t)OC + oc0;
        store8(a, e00, off, oc0, m0);
        if (m1 > 0) store8(a, e01, off + 8, oc0 + 8, m1);
        if (mr > 1) { store8(a, e10, off + OC, oc0, m0); if (m1 > 0) store8(a, e11, off + OC + 8, oc0 + 8, m1); }
        if (mr > 2) { store8(a, e20, off + 2 * (ptrdiff_t)OC, oc0, m0); if (m1 > 0) store8(a, e21, off + 2 * (ptrdiff_t)OC + 8, oc0 + 8, m1); }
        return;
    }
    __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
    if (cb == NULL || kb == 0) {  /* the sums start from the bias (bpad: zero-padded to whole panels) */
        c00 = _mm256_loadu_ps(a->bpad + oc0); c01 = _mm256_loadu_ps(a->bpad + oc0 + 8);
        c10 = c00; c11 = c01; c20 = c00; c21 = c01; c30 = c00; c31 = c01; c40 = c00; c41 = c01; c50 = c00; c51 = c01;
    } else {
        c00 = _mm256_loadu_ps(cb + 0 * NR); c01 = _mm256_loadu_ps(cb + 0 * NR + 8);
        c10 = _mm256_loadu_ps(cb + 1 * NR); c11 = _mm256_loadu_ps(cb + 1 * NR + 8);
        c20 = _mm256_loadu_ps(cb + 2 * NR); c21 = _mm256_loadu_ps(cb + 2 * NR + 8);
        c30 = _mm256_loadu_ps(cb + 3 * NR); c31 = _mm256_loadu_ps(cb + 3 * NR + 8);
        c40 = _mm256_loadu_ps(cb + 4 * NR); c41 = _mm256_loadu_ps(cb + 4 * NR + 8);
        c50 = _mm256_loadu_ps(cb + 5 * NR); c51 = _mm256_loadu_ps(cb + 5 * NR + 8);
    }
    for (long k = kb; k < ke; t++, ic0 = 0) {
        int len = seg - ic0;
        if (len > ke - k) len = (int)(ke - k);
        long o = a->toff[t] + ic0;
        const float *p0 = base[0] + o, *p1 = base[1] + o, *p2 = base[2] + o;
        const float *p3 = base[3] + o, *p4 = base[4] + o, *p5 = base[5] + o;
#pragma GCC unroll 4
        for (int ic = 0; ic < len; ic++) {
            __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
            __m256 av;
            av = _mm256_broadcast_ss(p0 + ic); c00 = _mm256_fmadd_ps(av, b0, c00); c01 = _mm256_fmadd_ps(av, b1, c01);
            av = _mm256_broadcast_ss(p1 + ic); c10 = _mm256_fmadd_ps(av, b0, c10); c11 = _mm256_fmadd_ps(av, b1, c11);
            av = _mm256_broadcast_ss(p2 + ic); c20 = _mm256_fmadd_ps(av, b0, c20); c21 = _mm256_fmadd_ps(av, b1, c21);
            av = _mm256_broadcast_ss(p3 + ic); c30 = _mm256_fmadd_ps(av, b0, c30); c31 = _mm256_fmadd_ps(av, b1, c31);
            av = _mm256_broadcast_ss(p4 + ic); c40 = _mm256_fmadd_ps(av, b0, c40); c41 = _mm256_fmadd_ps(av, b1, c41);
            av = _mm256_broadcast_ss(p5 + ic); c50 = _mm256_fmadd_ps(av, b0, c50); c51 = _mm256_fmadd_ps(av, b1, c51);
            bp += NR;
        }
        k += len;
    }
    if (!last) {
        _mm256_storeu_ps(cb + 0 * NR, c00); _mm256_storeu_ps(cb + 0 * NR + 8, c01);
        _mm256_storeu_ps(cb + 1 * NR, c10); _mm256_storeu_ps(cb + 1 * NR + 8, c11);
        _mm256_storeu_ps(cb + 2 * NR, c20); _mm256_storeu_ps(cb + 2 * NR + 8, c21);
        _mm256_storeu_ps(cb + 3 * NR, c30); _mm256_storeu_ps(cb + 3 * NR + 8, c31);
        _mm256_storeu_ps(cb + 4 * NR, c40); _mm256_storeu_ps(cb + 4 * NR + 8, c41);
        _mm256_storeu_ps(cb + 5 * NR, c50); _mm256_storeu_ps(cb + 5 * NR + 8, c51);
        return;
    }
    int n0 = nc < 8 ? nc : 8, n1 = nc - 8;
    ptrdiff_t off = r0 * (ptrdiff_t)OC + oc0;
    if (a->mode <= 3 && nc == NR) {  /* a full panel, bias (+ residual) (+ clamp): store8's operations inline */
        const __m256 vlo = _mm256_set1_ps(a->lo), vhi = _mm256_set1_ps(a->hi);
        const int res = a->mode >= 2, clamp = a->mode & 1;
#define NK_ROWS6 NK_ROW(0, c00, c01) NK_ROW(1, c10, c11) NK_ROW(2, c20, c21) \
                 NK_ROW(3, c30, c31) NK_ROW(4, c40, c41) NK_ROW(5, c50, c51)
#define NK_ROW(i, lo, hi) if (mr > i) { ptrdiff_t ro = off + (ptrdiff_t)i * OC; \
                                        NK_EPI_STORE(256, lo, ro, vlo, vhi) NK_EPI_STORE(256, hi, ro + 8, vlo, vhi) }
        NK_ROWS6
#undef NK_ROW
        return;
    }
#define NK_ROW(i, lo, hi) \
    if (mr > i) { store8(a, lo, off + (ptrdiff_t)i * OC, oc0, n0); \
                  if (n1 > 0) store8(a, hi, off + (ptrdiff_t)i * OC + 8, oc0 + 8, n1); }
    NK_ROWS6
#undef NK_ROW
#undef NK_ROWS6
#else
    float acc[MR][NR];
    if (cb == NULL || kb == 0) memset(acc, 0, sizeof acc);
    else memcpy(acc, cb, sizeof acc);
    for (long k = kb; k < ke; t++, ic0 = 0) {
        int len = seg - ic0;
        if (len > ke - k) len = (int)(ke - k);
        long o = a->toff[t] + ic0;
        for (int ic = 0; ic < len; ic++) {
            for (int i = 0; i < MR; i++) {
                float av = base[i][o + ic];
                for (int q = 0; q < NR; q++) acc[i][q] += av * bp[q];
            }
            bp += NR;
        }
        k += len;
    }
    if (!last) {
        memcpy(cb, acc, sizeof acc);
        return;
    }
    for (int i = 0; i < mr; i++) {
        ptrdiff_t off = (r0 + i) * (ptrdiff_t)OC + oc0;
        for (int q = 0; q < nc; q++)
            a->y[off + q] = epi_scalar(acc[i][q] + a->bias[oc0 + q], a->nops, a->codes, a->prm, a->ptrs, off + q, oc0 + q);
    }
#endif
}

#if defined(__AVX512F__) && defined(NK_SIMD)
#define NK_PAIR 1
/* Two full panels j, j+1 (32 channels) of rows r0 .. r0+mr-1 at once: 6 x 2 vectors of 16, each broadcast
 * input value serving two FMAs (AVX-512's 32 registers hold the 12 sums). cb: [MR][2*NR] as in tile(). */
static void tile2(const conv_args *a, const float *const *base, long r0, int mr, int j, long kb, long ke, float *cb) {
    const float *bq = a->bp + ((long)j * a->K + kb) * NR;
    const long pstride = a->K * NR;
    int oc0 = j * NR;
    int seg = a->seg;
    int OC = a->OC;
    int t = (int)(kb / seg), ic0 = (int)(kb - (long)t * seg);
    __m512 u0, u1, u2, u3, u4, u5, v0, v1, v2, v3, v4, v5;
    if (cb == NULL || kb == 0) {
        u0 = _mm512_loadu_ps(a->bpad + oc0); v0 = _mm512_loadu_ps(a->bpad + oc0 + NR);
        u1 = u0; u2 = u0; u3 = u0; u4 = u0; u5 = u0; v1 = v0; v2 = v0; v3 = v0; v4 = v0; v5 = v0;
    } else {
#define NK_LD(i) u##i = _mm512_loadu_ps(cb + i * 2 * NR); v##i = _mm512_loadu_ps(cb + i * 2 * NR + NR);
        NK_LD(0) NK_LD(1) NK_LD(2) NK_LD(3) NK_LD(4) NK_LD(5)
#undef NK_LD
    }
    for (long k = kb; k < ke; t++, ic0 = 0) {
        int len = seg - ic0;
        if (len > ke - k) len = (int)(ke - k);
        long o = a->toff[t] + ic0;
        const float *p0 = base[0] + o, *p1 = base[1] + o, *p2 = base[2] + o;
        const float *p3 = base[3] + o, *p4 = base[4] + o, *p5 = base[5] + o;
#pragma GCC unroll 2
        for (int ic = 0; ic < len; ic++) {
            __m512 b0 = _mm512_loadu_ps(bq), b1 = _mm512_loadu_ps(bq + pstride);
            __m512 x;
            x = _mm512_set1_ps(p0[ic]); u0 = _mm512_fmadd_ps(x, b0, u0); v0 = _mm512_fmadd_ps(x, b1, v0);
            x = _mm512_set1_ps(p1[ic]); u1 = _mm512_fmadd_ps(x, b0, u1); v1 = _mm512_fmadd_ps(x, b1, v1);
            x = _mm512_set1_ps(p2[ic]); u2 = _mm512_fmadd_ps(x, b0, u2); v2 = _mm512_fmadd_ps(x, b1, v2);
            x = _mm512_set1_ps(p3[ic]); u3 = _mm512_fmadd_ps(x, b0, u3); v3 = _mm512_fmadd_ps(x, b1, v3);
            x = _mm512_set1_ps(p4[ic]); u4 = _mm512_fmadd_ps(x, b0, u4); v4 = _mm512_fmadd_ps(x, b1, v4);
            x = _mm512_set1_ps(p5[ic]); u5 = _mm512_fmadd_ps(x, b0, u5); v5 = _mm512_fmadd_ps(x, b1, v5);
            bq += NR;
        }
        k += len;
    }
    if (ke != a->K) {
#define NK_ST(i) _mm512_storeu_ps(cb + i * 2 * NR, u##i); _mm512_storeu_ps(cb + i * 2 * NR + NR, v##i);
        NK_ST(0) NK_ST(1) NK_ST(2) NK_ST(3) NK_ST(4) NK_ST(5)
#undef NK_ST
        return;
    }
    ptrdiff_t off = r0 * (ptrdiff_t)OC + oc0;
    if (a->mode <= 3) {  /* bias (+ residual) (+ clamp) on whole registers: the store8 path's operations */
        const __m512 lo = _mm512_set1_ps(a->lo), hi = _mm512_set1_ps(a->hi);
        const int res = a->mode >= 2, clamp = a->mode & 1;
#define NK_ROW(i) if (mr > i) { ptrdiff_t ro = off + (ptrdiff_t)i * OC; \
                                NK_EPI_STORE(512, u##i, ro, lo, hi) NK_EPI_STORE(512, v##i, ro + NR, lo, hi) }
        NK_ROW(0) NK_ROW(1) NK_ROW(2) NK_ROW(3) NK_ROW(4) NK_ROW(5)
#undef NK_ROW
        return;
    }
#define NK_LO(v) _mm512_castps512_ps256(v)
#define NK_HI(v) _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))
#define NK_ROW(i) \
    if (mr > i) { ptrdiff_t ro = off + (ptrdiff_t)i * OC; \
                  store8(a, NK_LO(u##i), ro, oc0, 8); store8(a, NK_HI(u##i), ro + 8, oc0 + 8, 8); \
                  store8(a, NK_LO(v##i), ro + 16, oc0 + 16, 8); store8(a, NK_HI(v##i), ro + 24, oc0 + 24, 8); }
    NK_ROW(0) NK_ROW(1) NK_ROW(2) NK_ROW(3) NK_ROW(4) NK_ROW(5)
#undef NK_ROW
#undef NK_LO
#undef NK_HI
}

/* Two full row tiles (12 rows: base0 then base1) x the panel pair j, j+1 (``pair``: 24 zmm sums) or the one full
 * panel j (12 sums) over the whole K, for the output modes 0-3. For short sums (1x1 convolutions of 16-192
 * channels) the fixed work of a tile (the sums' start from the bias, the stores) is then shared by twice the rows,
 * and each weight vector loaded serves 12 rows. The same fused multiply-adds in the same k order per output as
 * tile2 / tile: identical results. Always inlined with a constant ``pair``: tile2_12 and tile1_12 below. */
static inline __attribute__((always_inline)) void tile_12(const conv_args *a, const float *const *base0,
                                                          const float *const *base1, long r0, int j, int pair) {
    const float *bq = a->bp + (long)j * a->K * NR;
    const long pstride = a->K * NR;
    int oc0 = j * NR, seg = a->seg, OC = a->OC;
    __m512 u0, u1, u2, u3, u4, u5, u6, u7, u8, u9, u10, u11, v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11;
    u0 = _mm512_loadu_ps(a->bpad + oc0);
    v0 = pair ? _mm512_loadu_ps(a->bpad + oc0 + NR) : u0;
    u1 = u2 = u3 = u4 = u5 = u6 = u7 = u8 = u9 = u10 = u11 = u0;
    v1 = v2 = v3 = v4 = v5 = v6 = v7 = v8 = v9 = v10 = v11 = v0;
    for (int t = 0; t < a->ntaps; t++) {
        long o = a->toff[t];
        const float *p0 = base0[0] + o, *p1 = base0[1] + o, *p2 = base0[2] + o;
        const float *p3 = base0[3] + o, *p4 = base0[4] + o, *p5 = base0[5] + o;
        const float *p6 = base1[0] + o, *p7 = base1[1] + o, *p8 = base1[2] + o;
        const float *p9 = base1[3] + o, *p10 = base1[4] + o, *p11 = base1[5] + o;
        for (int ic = 0; ic < seg; ic++) {
            __m512 b0 = _mm512_loadu_ps(bq), b1 = pair ? _mm512_loadu_ps(bq + pstride) : b0;
            __m512 x;
#define NK_FMA(i) x = _mm512_set1_ps(p##i[ic]); u##i = _mm512_fmadd_ps(x, b0, u##i); \
                  if (pair) v##i = _mm512_fmadd_ps(x, b1, v##i);
            NK_FMA(0) NK_FMA(1) NK_FMA(2) NK_FMA(3) NK_FMA(4) NK_FMA(5)
            NK_FMA(6) NK_FMA(7) NK_FMA(8) NK_FMA(9) NK_FMA(10) NK_FMA(11)
#undef NK_FMA
            bq += NR;
        }
    }
    ptrdiff_t off = r0 * (ptrdiff_t)OC + oc0;
    const __m512 lo = _mm512_set1_ps(a->lo), hi = _mm512_set1_ps(a->hi);
    const int res = a->mode >= 2, clamp = a->mode & 1;
#define NK_ROW(i) { ptrdiff_t ro = off + (ptrdiff_t)i * OC; NK_EPI_STORE(512, u##i, ro, lo, hi) \
                    if (pair) NK_EPI_STORE(512, v##i, ro + NR, lo, hi) }
    NK_ROW(0) NK_ROW(1) NK_ROW(2) NK_ROW(3) NK_ROW(4) NK_ROW(5)
    NK_ROW(6) NK_ROW(7) NK_ROW(8) NK_ROW(9) NK_ROW(10) NK_ROW(11)
#undef NK_ROW
}

/* The panel pair j, j+1 (two full panels) in 12-row tiles. */
static void tile2_12(const conv_args *a, const float *const *base0, const float *const *base1, long r0, int j) {
    tile_12(a, base0, base1, r0, j, 1);
}

/* A lone full panel j (16 output channels, or the last 16 of 16 + 32·n) in 12-row tiles. */
static void tile1_12(const conv_args *a, const float *const *base0, const float *const *base1, long r0, int j) {
    tile_12(a, base0, base1, r0, j, 0);
}

/* R <= NK_FEW_ROWS rows from r0 (a whole GEMM of so few rows: FULLY_CONNECTED at batch 1, a matrix-vector product;
 * or the last row tile of a larger one, see conv_item), panels j .. j+P-1 (P <= 4) over the whole K: R x P zmm
 * sums, each weight vector loaded once and used by every row. The row tiles above would compute 6 rows (or 3, at
 * half width) for every one needed; here the weights stream once and the P independent sums per row hide the FMA
 * latency. The same sums from the bias, k in order, as the tiles: identical results. Faster than the row tiles on
 * MobileNetV2's classifier, alone and inside the network (bench/RESULTS.md). */
#define NK_FEW_ROWS 4
static inline __attribute__((always_inline)) void few_rows(const conv_args *a, const float *const *base, long r0,
                                                           int R, int j, int P) {
    const long pstride = a->K * NR;
    const float *bq = a->bp + (long)j * pstride;
    __m512 s[NK_FEW_ROWS][4];
    for (int p = 0; p < P; p++) {
        __m512 b = _mm512_loadu_ps(a->bpad + (j + p) * NR);
        for (int r = 0; r < R; r++) s[r][p] = b;
    }
    for (int t = 0; t < a->ntaps; t++) {
        long o = a->toff[t];
        const float *px[NK_FEW_ROWS];
        for (int r = 0; r < R; r++) px[r] = base[r] + o;
        for (int ic = 0; ic < a->seg; ic++) {
            __m512 w[4];
            for (int p = 0; p < P; p++) w[p] = _mm512_loadu_ps(bq + p * pstride);
            for (int r = 0; r < R; r++) {
                __m512 x = _mm512_set1_ps(px[r][ic]);
                for (int p = 0; p < P; p++) s[r][p] = _mm512_fmadd_ps(x, w[p], s[r][p]);
            }
            bq += NR;
        }
    }
    const int OC = a->OC;
    const __m512 lo = _mm512_set1_ps(a->lo), hi = _mm512_set1_ps(a->hi);
    const int res = a->mode >= 2, clamp = a->mode & 1;
    for (int r = 0; r < R; r++)
        for (int p = 0; p < P; p++) {
            int oc0 = (j + p) * NR, nc = OC - oc0 < NR ? OC - oc0 : NR;
            ptrdiff_t ro = (ptrdiff_t)(r0 + r) * OC + oc0;
            if (nc == NR && a->mode <= 3) {
                NK_EPI_STORE(512, s[r][p], ro, lo, hi)
            } else {
                store8(a, _mm512_castps512_ps256(s[r][p]), ro, oc0, nc < 8 ? nc : 8);
                if (nc > 8)
                    store8(a, _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s[r][p]), 1)), ro + 8,
                           oc0 + 8, nc - 8);
            }
        }
}

/* Panels j0 .. j1-1 of rows r0 .. r0+R-1 (R <= NK_FEW_ROWS), four at a time (a constant row count per call). */
static inline __attribute__((always_inline)) void few_rows_panels_r(const conv_args *a, const float *const *base,
                                                                    long r0, int R, int j0, int j1) {
    int j = j0;
    for (; j + 4 <= j1; j += 4) few_rows(a, base, r0, R, j, 4);
    for (; j < j1; j++) few_rows(a, base, r0, R, j, 1);
}

/* Rows r0 .. r0+rows-1 over panels j0 .. j1-1, the whole K: a GEMM of at most 4 rows, or the last row tile of a
 * larger one when it has at most 4 rows (49 = 8 x 6 + 1 rows at 7x7: the tiles would compute 3 or 6 rows for it). */
static void few_rows_panels(const conv_args *a, const float *const *base, long r0, int rows, int j0, int j1) {
    switch (rows) {
    case 1: few_rows_panels_r(a, base, r0, 1, j0, j1); break;
    case 2: few_rows_panels_r(a, base, r0, 2, j0, j1); break;
    case 3: few_rows_panels_r(a, base, r0, 3, j0, j1); break;
    default: few_rows_panels_r(a, base, r0, 4, j0, j1); break;
    }
}
#else
#define NK_PAIR 0
#endif

/* 1 if this build has the AVX-512 pair tiles (the runtime then also routes constant-weight GEMMs here). */
int nk_wide_tiles(void) { return NK_PAIR; }

/* Panel j, or the pair j, j+1 when ``step`` is 2 (both full; the pair kernel for tiles of more than 3 rows,
 * else two single-panel tiles with their partial sums side by side in cb). */
static inline void tile_step(const conv_args *a, const float *const *base, long r0, int mr, int j, int step,
                             long kb, long ke, float *cb) {
#if NK_PAIR
    if (step == 2 && mr > 3) {
        tile2(a, base, r0, mr, j, kb, ke, cb);
        return;
    }
#endif
    tile(a, base, r0, mr, j, kb, ke, cb);
    if (step == 2) tile(a, base, r0, mr, j + 1, kb, ke, cb == NULL ? NULL : cb + MR * NR);
}

/* 2 if panels j and j+1 can go together (both full, both in [.., j1)), else 1. */
static inline int pair_step(const conv_args *a, int j, int j1) {
    return NK_PAIR && j + 1 < j1 && (j + 2) * NR <= a->OC ? 2 : 1;
}

typedef struct {
    const conv_args *a;
    long rows, tiles, chunk, nchunks, pb;
    int panels;
} conv_job;

#define NK_KC 1024    /* k block when K is long: 64 KiB of a weight panel (128 of a pair), kept in L2 across the row
                       * tiles. Faster than blocks of 256 (16 KiB, L1): fewer partial-sum round trips, and the L2
                       * feeds the weights fast enough (bench/RESULTS.md). */
#define NK_MAXCHUNK 64
#define NK_SHORT_K 256  /* sums at most this long: tile-major order (see conv_item) */
#define NK_TILE12_K 64  /* sums at most this long: 12-row pair tiles (tile2_12), faster on short sums; longer ones
                         * were slower (the 12 row pointers no longer stay in registers next to 24 sums). A lone
                         * full panel takes 12-row tiles too (tile1_12). Measurements: bench/RESULTS.md. */

/* The input offsets of the rows of row tiles t0 .. t1-1 (at most NK_MAXCHUNK) of an implicit GEMM over an input
 * [N, Hp, Wp, IC]: walking (n, oy, ox) from the first row (no division per row); missing rows of the last tile
 * repeat its first row (computed, not stored). */
static void row_offsets(long t0, long t1, long rows, int OH, int OW, int Hp, int Wp, int IC, int sy, int sx,
                        long off[][MR]) {
    long r = t0 * MR, ohw = (long)OH * OW;
    long n = r / ohw, oy = (r % ohw) / OW, ox = r % OW;
    long rowo = ((n * Hp + oy * sy) * Wp) * IC, xstep = (long)sx * IC;
    for (long ti = t0; ti < t1; ti++)
        for (int i = 0; i < MR; i++) {
            if (r < rows) {
                off[ti - t0][i] = rowo + ox * xstep;
                r++;
                if (++ox == OW) {
                    ox = 0;
                    if (++oy == OH) { oy = 0; n++; }
                    rowo = ((n * Hp + oy * sy) * Wp) * IC;
                }
            } else {
                off[ti - t0][i] = off[ti - t0][0];
            }
        }
}

static void conv_tiles(const conv_job *jb, const float *(*base)[MR], long t0, long t1, int j0, int j1);

static void conv_item(void *ctx, long wi) {
    const conv_job *jb = (const conv_job *)ctx;
    const conv_args *a = jb->a;
    const float *base[NK_MAXCHUNK][MR];
    long blk = wi / jb->nchunks, t0 = (wi % jb->nchunks) * jb->chunk;
    long t1 = t0 + jb->chunk < jb->tiles ? t0 + jb->chunk : jb->tiles;
    int j0 = (int)(blk * jb->pb);
    int j1 = (int)((blk + 1) * jb->pb < jb->panels ? (blk + 1) * jb->pb : jb->panels);
    {
        long off[NK_MAXCHUNK][MR];
        row_offsets(t0, t1, jb->rows, a->OH, a->OW, a->Hp, a->Wp, a->IC, a->sy, a->sx, off);
        for (long ti = t0; ti < t1; ti++)
            for (int i = 0; i < MR; i++) base[ti - t0][i] = a->xp + off[ti - t0][i];
    }
    /* panel by panel (and for long K, k block by k block), the block of weights (at most about 16 KiB:
     * L1) serves every tile of the chunk, whose input rows come from L2 */
    long tl = t1;  /* the loops below run tiles [t0, tl) */
#if NK_PAIR
    if (jb->rows <= NK_FEW_ROWS) {  /* one tile of at most 4 rows: the whole GEMM (t0 = 0) */
        few_rows_panels(a, base[0], 0, (int)jb->rows, j0, j1);
        return;
    }
    /* a last tile of at most 4 rows goes to few_rows after them, where the sums are not cut into k blocks (its
     * block of weights is then still in L2): the tiles would compute 6 rows for it, or 3 at half width (49 = 8 x 6
     * + 1 rows at 7x7): faster on MobileNetV2's 7x7 layers and BERT-tiny. With k blocks it was slower: the whole
     * sum then streams the weights again for one row (bench/RESULTS.md). */
    if (t1 == jb->tiles && jb->rows - (t1 - 1) * MR <= NK_FEW_ROWS && a->K <= 2 * NK_KC) tl = t1 - 1;
#endif
    conv_tiles(jb, base, t0, tl, j0, j1);
#if NK_PAIR
    if (tl < t1)
        few_rows_panels(a, base[tl - t0], tl * MR, (int)(jb->rows - tl * MR), j0, j1);
#endif
}

/* Row tiles [t0, t1) of a chunk whose first tile is t0 (base[ti - t0]: their input rows), panels [j0, j1), by
 * the row tiles above (conv_item's work, after its few-row cases). */
static void conv_tiles(const conv_job *jb, const float *(*base)[MR], long t0, long t1, int j0, int j1) {
    const conv_args *a = jb->a;
    float cbuf[NK_MAXCHUNK * MR * 2 * NR];
    if (a->K <= NK_SHORT_K) {
        /* short sums (e.g. a 1x1 convolution of 64 channels): the output traffic dominates, so each tile's
         * output rows are finished across all panels of the block (one sequential stream of writes, and of
         * reads of a fused residual) while the block of weights (at most 256 KiB) stays in L2: faster than
         * panel-major order with cold caches, with no gain beyond K = 256 (bench/RESULTS.md). */
        for (long ti = t0; ti < t1; ti++) {
            long r0 = ti * MR;
            int mr = jb->rows - r0 < MR ? (int)(jb->rows - r0) : MR;
#if NK_PAIR
            if (a->K <= NK_TILE12_K && ti + 1 < t1 && jb->rows - r0 >= 2 * MR && a->mode <= 3) {  /* two tiles at once */
                for (int j = j0, step; j < j1; j += step) {
                    step = pair_step(a, j, j1);
                    if (step == 2) {
                        tile2_12(a, base[ti - t0], base[ti + 1 - t0], r0, j);
                    } else if ((j + 1) * NR <= a->OC) {
                        tile1_12(a, base[ti - t0], base[ti + 1 - t0], r0, j);
                    } else {
                        tile_step(a, base[ti - t0], r0, MR, j, 1, 0, a->K, NULL);
                        tile_step(a, base[ti + 1 - t0], r0 + MR, MR, j, 1, 0, a->K, NULL);
                    }
                }
                ti++;
                continue;
            }
#endif
            for (int j = j0, step; j < j1; j += step) {
                step = pair_step(a, j, j1);
                tile_step(a, base[ti - t0], r0, mr, j, step, 0, a->K, NULL);
            }
        }
        return;
    }
    for (int j = j0, step; j < j1; j += step) {
        step = pair_step(a, j, j1);
        if (a->K <= 2 * NK_KC) {
            for (long ti = t0; ti < t1; ti++) {
                long r0 = ti * MR;
                int mr = jb->rows - r0 < MR ? (int)(jb->rows - r0) : MR;
                tile_step(a, base[ti - t0], r0, mr, j, step, 0, a->K, NULL);
            }
            continue;
        }
        for (long kb = 0; kb < a->K; kb += NK_KC) {
            long ke = kb + NK_KC < a->K ? kb + NK_KC : a->K;
            if (a->K - ke < NK_KC / 2) ke = a->K;  /* no tiny last block */
            for (long ti = t0; ti < t1; ti++) {
                long r0 = ti * MR;
                int mr = jb->rows - r0 < MR ? (int)(jb->rows - r0) : MR;
                tile_step(a, base[ti - t0], r0, mr, j, step, kb, ke, cbuf + (ti - t0) * MR * 2 * NR);
            }
            kb = ke - NK_KC;
        }
    }
}

/* The work items of one convolution of ``rows`` output rows for ``nthreads`` threads; returns their number. */
static long conv_plan(conv_job *job, const conv_args *a, long rows, int panels, int nthreads) {
    long tiles = (rows + MR - 1) / MR;
    long pb = (256L * 1024) / (a->K * NR * (long)sizeof(float));  /* panels per column block */
    if (pb < 1) pb = 1;
    if (NK_PAIR && (pb & 1)) pb++;  /* whole pairs of panels: the pair tiles are twice as fast per flop */
    if (pb > panels) pb = panels;
    long nblocks = (panels + pb - 1) / pb;
    if (nthreads < 1) nthreads = 1;
    if (nthreads > tiles * nblocks) nthreads = (int)(tiles * nblocks);
    /* items: chunks of row tiles of one column block (about 16 items per thread when there are several, for
     * balance, 8 for one; as large as that allows, so that a block of weights serves many tiles). 16 instead of 8
     * with 2 threads: slightly faster at batch 1, neutral at batch 8 (bench/RESULTS.md). */
    long per_block = ((nthreads > 1 ? 16L : 8L) * nthreads + nblocks - 1) / nblocks;  /* chunks per column block */
    long chunk = (tiles + per_block - 1) / per_block;
    if (chunk < 1) chunk = 1;
    if (chunk > NK_MAXCHUNK) chunk = NK_MAXCHUNK;
    job->a = a;
    job->rows = rows;
    job->tiles = tiles;
    job->chunk = chunk;
    job->nchunks = (tiles + chunk - 1) / chunk;
    job->pb = pb;
    job->panels = panels;
    return nblocks * job->nchunks;
}

/* The output modes of conv_args from its post-ops (nops, codes, prm, ptrs): 0 bias only, 1 + clamp, 2 + a full
 * residual, 3 residual then clamp (stored as whole registers by the tiles), else 4 (the generic list). */
static void set_epilogue_mode(conv_args *a) {
    a->mode = 4;
    if (a->nops == 0) a->mode = 0;
    else if (a->nops == 1 && a->codes[0] == NK_EPI_CLAMP) { a->mode = 1; a->lo = a->prm[0]; a->hi = a->prm[1]; }
    else if (a->nops == 1 && a->codes[0] == NK_EPI_ADD_FULL) { a->mode = 2; a->res = a->ptrs[0]; }
    else if (a->nops == 2 && a->codes[0] == NK_EPI_ADD_FULL && a->codes[1] == NK_EPI_CLAMP) {
        a->mode = 3; a->res = a->ptrs[0]; a->lo = a->prm[2]; a->hi = a->prm[3];
    }
}

/* The whole convolution (see the header comment). Returns 0. */
int nk_conv_f32(const float *xp, int N, int Hp, int Wp, int IC, int OH, int OW, int sy, int sx,
                const long *toff, int ntaps, int seg, const float *bp, int OC, const float *bias, float *y,
                int nops, const int *codes, const float *prm, const float *const *ptrs, int nthreads) {
    int panels = (OC + NR - 1) / NR;
    float bstack[1024];
    float *bpad = panels * NR <= 1024 ? bstack : (float *)malloc(sizeof(float) * (size_t)panels * NR);
    if (bpad == NULL) return -1;
    for (int q = 0; q < panels * NR; q++) bpad[q] = q < OC ? bias[q] : 0.0f;
    conv_args a = {xp, Hp, Wp, IC, OH, OW, sy, sx, toff, ntaps, seg, (long)ntaps * seg, bp, OC, bias, y,
                   nops, codes, prm, ptrs, 4, NULL, 0.0f, 0.0f, bpad};
    set_epilogue_mode(&a);
    conv_job job;
    long items = conv_plan(&job, &a, (long)N * OH * OW, panels, nthreads);
    nk_parallel(conv_item, &job, items, nthreads);
    if (bpad != bstack) free(bpad);
    return 0;
}

/* -- batched MATMUL (TOSA spec §2.3.7) of two run-time operands --------------------------------------
 * c[b] = a[b] · B[b] for b < batch, a[b] [M, K] with unit stride along k and rows ``sam`` floats apart (a
 * multiple of K: a transposed view of [M, heads, K] is fine), B[b] [K, N] with any strides, c contiguous
 * [batch, M, N]. Every B[b] is packed into panels in ``scratch`` (batch * ceil(N/16) * K * 16 floats, plus
 * ceil(N/16) * 16 for the zero bias), then each product runs as the implicit GEMM above (a 1x1 convolution of
 * 1 x M pixels, input pixel stride ``sam``): the same tiles as the constant-weight GEMMs, and the batches'
 * work items shared by the threads, so that attention's small per-head products use every core. */
typedef struct {
    const float *b;
    long sbb, sbk, sbn, K;
    int N, panels;
    float *bp;
} bpack_job;

static void bpack_item(void *ctx, long it) {
    const bpack_job *j = (const bpack_job *)ctx;
    long bi = it / j->panels;
    int p = (int)(it % j->panels);
    const float *src = j->b + bi * j->sbb;
    float *dst = j->bp + (bi * j->panels + p) * j->K * NR;
    int n0 = p * NR, nc = j->N - n0 < NR ? j->N - n0 : NR;
    for (long k = 0; k < j->K; k++, dst += NR) {
        const float *row = src + k * j->sbk + (long)n0 * j->sbn;
        int q = 0;
        if (j->sbn == 1)
            for (; q < nc; q++) dst[q] = row[q];
        else
            for (; q < nc; q++) dst[q] = row[(long)q * j->sbn];
        for (; q < NR; q++) dst[q] = 0.0f;
    }
}

typedef struct {
    conv_job *jobs;
    long per;
} bmm_job;

static void bmm_item(void *ctx, long wi) {
    const bmm_job *m = (const bmm_job *)ctx;
    conv_item(&m->jobs[wi / m->per], wi % m->per);
}

int nk_bmm_f32(const float *a, long sab, long sam, const float *b, long sbb, long sbk, long sbn, float *c,
               int batch, int M, int K, int N, float *scratch, int nthreads) {
    if (batch < 1 || M < 1 || K < 1 || N < 1 || sam % K != 0) return -2;
    int panels = (N + NR - 1) / NR;
    float *bp = scratch, *zero = scratch + (long)batch * panels * K * NR;
    memset(zero, 0, sizeof(float) * (size_t)panels * NR);
    bpack_job pk = {b, sbb, sbk, sbn, K, N, panels, bp};
    nk_parallel(bpack_item, &pk, (long)batch * panels, nthreads);
    conv_args *args = (conv_args *)malloc(sizeof(conv_args) * (size_t)batch);
    conv_job *jobs = (conv_job *)malloc(sizeof(conv_job) * (size_t)batch);
    if (args == NULL || jobs == NULL) {
        free(args);
        free(jobs);
        return -1;
    }
    static const long toff0 = 0;
    long per = 0;
    int sx = (int)(sam / K);
    for (int i = 0; i < batch; i++) {
        conv_args t = {a + i * sab, 1, M * sx, K, 1, M, 1, sx, &toff0, 1, K, (long)K,
                       bp + (long)i * panels * K * NR, N, zero, c + (long)i * M * N,
                       0, NULL, NULL, NULL, 0, NULL, 0.0f, 0.0f, zero};
        args[i] = t;
        per = conv_plan(&jobs[i], &args[i], M, panels, nthreads);
    }
    bmm_job job = {jobs, per};
    nk_parallel(bmm_item, &job, (long)batch * per, nthreads);
    free(args);
    free(jobs);
    return 0;
}

/* -- CONV2D 3x3 by Winograd F(2x2, 3x3) (its own file: the tiles and the pool above) -- */
/* A thread's scratch of at least ``floats`` floats, 64-byte aligned, kept between calls (a pool worker or the caller
 * reuses it; the kernels that use it run one at a time per thread); NULL when it cannot grow. */
static _Thread_local float *nk_tl = NULL;
static _Thread_local size_t nk_tl_floats = 0;

static float *nk_thread_scratch(size_t floats) {
    if (floats > nk_tl_floats) {
        free(nk_tl);
        nk_tl = (float *)aligned_alloc(64, ((floats * sizeof(float) + 63) / 64) * 64);
        nk_tl_floats = nk_tl != NULL ? floats : 0;
    }
    return nk_tl;
}

#include "conv_wino.c"

/* -- DEPTHWISE_CONV2D ------------------------------------------------------------------------------ */

#ifdef NK_SIMD  /* AVX2 and FMA */
static inline __m256 epi_vec(__m256 v, int nops, const int *codes, const float *prm,
                             const float *const *ptrs, ptrdiff_t off, int c) {
    for (int i = 0; i < nops; i++) {
        const float *p = ptrs[i];
        switch (codes[i]) {
        case NK_EPI_CLAMP: /* max_ps/min_ps return the second operand when either is NaN: NaN propagates */
            v = _mm256_max_ps(_mm256_set1_ps(prm[2 * i]), v);
            v = _mm256_min_ps(_mm256_set1_ps(prm[2 * i + 1]), v);
            break;
        case NK_EPI_ADD_FULL: v = _mm256_add_ps(v, _mm256_loadu_ps(p + off)); break;
        case NK_EPI_ADD_CHAN: v = _mm256_add_ps(v, _mm256_loadu_ps(p + c)); break;
        case NK_EPI_SUB_FULL: v = _mm256_sub_ps(v, _mm256_loadu_ps(p + off)); break;
        case NK_EPI_SUB_CHAN: v = _mm256_sub_ps(v, _mm256_loadu_ps(p + c)); break;
        case NK_EPI_MUL_FULL: v = _mm256_mul_ps(v, _mm256_loadu_ps(p + off)); break;
        case NK_EPI_MUL_CHAN: v = _mm256_mul_ps(v, _mm256_loadu_ps(p + c)); break;
        case NK_EPI_ADD_SCAL: v = _mm256_add_ps(v, _mm256_set1_ps(p[0])); break;
        case NK_EPI_SUB_SCAL: v = _mm256_sub_ps(v, _mm256_set1_ps(p[0])); break;
        case NK_EPI_MUL_SCAL: v = _mm256_mul_ps(v, _mm256_set1_ps(p[0])); break;
        default: break;
        }
    }
    return v;
}
#endif

/* Output pixels (n, oy, ox) for ox in [ox0, ox1), channel multiplier 1, any kernel size, taps outside
 * the input skipped. x: [N, IH, IW, C]; w: [KH, KW, C]; y: [N, OH, OW, C]. */
static void dw_pixels_m1(const float *x, int IH, int IW, int C, const float *w, int KH, int KW,
                         const float *bias, float *y, int OW, int sy, int sx, int dy, int dx, int pt, int pl,
                         int n, int oy, int OH, int nops, const int *codes, const float *prm,
                         const float *const *ptrs, int ox0, int ox1) {
    const float *xn = x + (ptrdiff_t)n * IH * IW * C;
    int iy0 = oy * sy - pt;
    for (int ox = ox0; ox < ox1; ox++) {
        int ix0 = ox * sx - pl;
        ptrdiff_t ooff = (((ptrdiff_t)n * OH + oy) * OW + ox) * C;
        float *yo = y + ooff;
        int c = 0;
#ifdef NK_SIMD  /* AVX2 and FMA */
        /* the taps inside the input, row-major (the reference's order), listed once per pixel */
        ptrdiff_t xo[64], wo[64];
        int nt = 0;
        if (KH * KW <= 64) {
            for (int ky = 0; ky < KH; ky++) {
                int iy = iy0 + ky * dy;
                if (iy < 0 || iy >= IH) continue;
                for (int kx = 0; kx < KW; kx++) {
                    int ix = ix0 + kx * dx;
                    if (ix < 0 || ix >= IW) continue;
                    xo[nt] = ((ptrdiff_t)iy * IW + ix) * C;
                    wo[nt] = ((ptrdiff_t)ky * KW + kx) * C;
                    nt++;
                }
            }
        }
        for (; KH * KW <= 64 && c + 8 <= C; c += 8) {
            __m256 acc = _mm256_setzero_ps();
            for (int t = 0; t < nt; t++)
                acc = _mm256_fmadd_ps(_mm256_loadu_ps(xn + xo[t] + c), _mm256_loadu_ps(w + wo[t] + c), acc);
            acc = _mm256_add_ps(acc, _mm256_loadu_ps(bias + c));
            acc = epi_vec(acc, nops, codes, prm, ptrs, ooff + c, c);
            _mm256_storeu_ps(yo + c, acc);
        }
#endif
        for (; c < C; c++) {
            float acc = 0.0f;
            for (int ky = 0; ky < KH; ky++) {
                int iy = iy0 + ky * dy;
                if (iy < 0 || iy >= IH) continue;
                for (int kx = 0; kx < KW; kx++) {
                    int ix = ix0 + kx * dx;
                    if (ix < 0 || ix >= IW) continue;
                    float prod = xn[((ptrdiff_t)iy * IW + ix) * C + c] * w[((ptrdiff_t)ky * KW + kx) * C + c];
                    acc = acc + prod;
                }
            }
            acc = acc + bias[c];
            yo[c] = epi_scalar(acc, nops, codes, prm, ptrs, ooff + c, c);
        }
    }
}

#ifdef NK_SIMD
/* The interior pixels [lo, hi) of a 3x3 depthwise output row whose three input rows r0..r2 are all inside the
 * input (dilation 1, stride sx, C a multiple of 8, no post-op but a clamp): channel blocks outermost with the nine
 * weight vectors and the bias in registers, pixels inside, two at a time. The same sums in the same order as the
 * other paths (fused multiply-adds from zero, taps row-major), so the same results. With AVX-512, 16 channels per
 * pass (one cache line of each pixel: every input line is read once per pass over the row). */
static void dw3_full_rows(const float *r0, const float *r1, const float *r2, const float *w, const float *bias,
                          float *yrow, int C, int sx, int pl, int lo, int hi, int clamp, float flo, float fhi) {
    const ptrdiff_t sxc = (ptrdiff_t)sx * C, c1 = C, c2 = 2 * (ptrdiff_t)C;
    int cb = 0;
/* One pass of LANES channels with W-bit vectors (see NK_V). */
#define NK_DW3_ROW(W, p, q, wa, wb, wc) \
    a = NK_V(W, fmadd_ps)(NK_V(W, loadu_ps)(p), wa, a); b = NK_V(W, fmadd_ps)(NK_V(W, loadu_ps)(q), wa, b); \
    a = NK_V(W, fmadd_ps)(NK_V(W, loadu_ps)((p) + c1), wb, a); b = NK_V(W, fmadd_ps)(NK_V(W, loadu_ps)((q) + c1), wb, b); \
    a = NK_V(W, fmadd_ps)(NK_V(W, loadu_ps)((p) + c2), wc, a); b = NK_V(W, fmadd_ps)(NK_V(W, loadu_ps)((q) + c2), wc, b);
#define NK_DW3_FIN(W, v) v = NK_V(W, add_ps)(v, bv); \
    if (clamp) v = NK_V(W, min_ps)(vhi, NK_V(W, max_ps)(vlo, v)); /* NaN propagates: see store8 */
#define NK_DW3_PASS(W, LANES) \
    for (; cb + (LANES) <= C; cb += (LANES)) { \
        const __m##W vlo = NK_V(W, set1_ps)(flo), vhi = NK_V(W, set1_ps)(fhi), zero = NK_V(W, setzero_ps)(); \
        const __m##W w00 = NK_V(W, loadu_ps)(w + cb), w01 = NK_V(W, loadu_ps)(w + C + cb); \
        const __m##W w02 = NK_V(W, loadu_ps)(w + 2 * C + cb), w10 = NK_V(W, loadu_ps)(w + 3 * C + cb); \
        const __m##W w11 = NK_V(W, loadu_ps)(w + 4 * C + cb), w12 = NK_V(W, loadu_ps)(w + 5 * C + cb); \
        const __m##W w20 = NK_V(W, loadu_ps)(w + 6 * C + cb), w21 = NK_V(W, loadu_ps)(w + 7 * C + cb); \
        const __m##W w22 = NK_V(W, loadu_ps)(w + 8 * C + cb), bv = NK_V(W, loadu_ps)(bias + cb); \
        ptrdiff_t at = (ptrdiff_t)(lo * sx - pl) * C + cb; \
        const float *p0 = r0 + at, *p1 = r1 + at, *p2 = r2 + at; \
        float *o = yrow + (ptrdiff_t)lo * C + cb; \
        int ox = lo; \
        for (; ox + 2 <= hi; ox += 2, p0 += 2 * sxc, p1 += 2 * sxc, p2 += 2 * sxc, o += 2 * C) { \
            __m##W a = zero, b = zero; \
            NK_DW3_ROW(W, p0, p0 + sxc, w00, w01, w02) \
            NK_DW3_ROW(W, p1, p1 + sxc, w10, w11, w12) \
            NK_DW3_ROW(W, p2, p2 + sxc, w20, w21, w22) \
            NK_DW3_FIN(W, a) NK_DW3_FIN(W, b) \
            NK_V(W, storeu_ps)(o, a); NK_V(W, storeu_ps)(o + C, b); \
        } \
        if (ox < hi) { \
            __m##W a = zero, b = zero; \
            NK_DW3_ROW(W, p0, p0, w00, w01, w02) \
            NK_DW3_ROW(W, p1, p1, w10, w11, w12) \
            NK_DW3_ROW(W, p2, p2, w20, w21, w22) \
            NK_DW3_FIN(W, a) \
            NK_V(W, storeu_ps)(o, a); \
            (void)b; \
        } \
    }
#if defined(__AVX512F__)
    NK_DW3_PASS(512, 16)  /* 16 channels (a cache line) per pass: each input line is read once per pass over the row */
#endif
    NK_DW3_PASS(256, 8)
#undef NK_DW3_PASS
#undef NK_DW3_FIN
#undef NK_DW3_ROW
}
#endif

/* One output row (n, oy), channel multiplier 1. For 3x3 kernels the pixels whose three columns are
 * all inside the input take a path with the nine weight vectors in registers (the same sums in the
 * same order: rows outside the input are skipped as a whole); the others use dw_pixels_m1. */
static void dw_row_m1(const float *x, int IH, int IW, int C, const float *w, int KH, int KW,
                      const float *bias, float *y, int OW, int sy, int sx, int dy, int dx, int pt, int pl,
                      int n, int oy, int OH, int nops, const int *codes, const float *prm,
                      const float *const *ptrs) {
#ifdef NK_SIMD  /* AVX2 and FMA */
    if (KH == 3 && KW == 3 && C >= 8) {
        /* interior columns: ox*sx - pl >= 0 and ox*sx - pl + 2*dx <= IW - 1 */
        int lo = (pl + sx - 1) / sx;
        int hi = (IW - 1 - 2 * dx + pl) >= 0 ? (IW - 1 - 2 * dx + pl) / sx + 1 : 0;
        if (lo > OW) lo = OW;
        if (hi > OW) hi = OW;
        if (hi < lo) hi = lo;
        dw_pixels_m1(x, IH, IW, C, w, KH, KW, bias, y, OW, sy, sx, dy, dx, pt, pl, n, oy, OH, nops, codes, prm, ptrs, 0, lo);
        dw_pixels_m1(x, IH, IW, C, w, KH, KW, bias, y, OW, sy, sx, dy, dx, pt, pl, n, oy, OH, nops, codes, prm, ptrs, hi, OW);
        const float *xn = x + (ptrdiff_t)n * IH * IW * C;
        int iy0 = oy * sy - pt;
        int v0 = iy0 >= 0 && iy0 < IH, v1 = iy0 + dy >= 0 && iy0 + dy < IH, v2 = iy0 + 2 * dy >= 0 && iy0 + 2 * dy < IH;
        const float *r0 = xn + (ptrdiff_t)(v0 ? iy0 : 0) * IW * C;
        const float *r1 = xn + (ptrdiff_t)(v1 ? iy0 + dy : 0) * IW * C;
        const float *r2 = xn + (ptrdiff_t)(v2 ? iy0 + 2 * dy : 0) * IW * C;
        ptrdiff_t dxc = (ptrdiff_t)dx * C, sxc = (ptrdiff_t)sx * C;
        ptrdiff_t orow = ((ptrdiff_t)n * OH + oy) * OW * C;
        int clamp_only = nops == 1 && codes[0] == NK_EPI_CLAMP;
        __m256 vlo = _mm256_set1_ps(prm[0]), vhi = _mm256_set1_ps(prm[1]);
        int C8 = C & ~7, c = C8;
        /* pixel groups outermost, channel blocks inside: the group's input (3 rows x a few pixels x C)
         * stays in L1 while every channel block passes; the nine weight vectors come from L1 */
#define NK_W(ky, kx) _mm256_loadu_ps(w + (ky * 3 + kx) * C + cb)
#define NK_TAP4(q, d, wv) { __m256 wt = (wv); \
                a0 = _mm256_fmadd_ps(_mm256_loadu_ps((q) + (d)), wt, a0); \
                a1 = _mm256_fmadd_ps(_mm256_loadu_ps((q) + (d) + sxc), wt, a1); \
                a2 = _mm256_fmadd_ps(_mm256_loadu_ps((q) + (d) + 2 * sxc), wt, a2); \
                a3 = _mm256_fmadd_ps(_mm256_loadu_ps((q) + (d) + 3 * sxc), wt, a3); }
        int ox = lo;
        if (v0 && v1 && v2 && dx == 1 && C8 == C && (nops == 0 || clamp_only)) {
            dw3_full_rows(r0, r1, r2, w, bias, y + orow, C, sx, pl, lo, hi, clamp_only, prm[0], prm[1]);
            ox = hi;
        } else if (sx == 1 && dx == 1) {
            /* stride 1: the four pixels' three taps of a kernel row read six input pixels, each loaded once */
#define NK_ROW6(q, w0, w1, w2) { \
                __m256 x0 = _mm256_loadu_ps(q), x1 = _mm256_loadu_ps((q) + C), x2 = _mm256_loadu_ps((q) + 2 * C); \
                __m256 x3 = _mm256_loadu_ps((q) + 3 * C), x4 = _mm256_loadu_ps((q) + 4 * C), x5 = _mm256_loadu_ps((q) + 5 * C); \
                __m256 u0 = (w0), u1 = (w1), u2 = (w2); \
                a0 = _mm256_fmadd_ps(x0, u0, a0); a1 = _mm256_fmadd_ps(x1, u0, a1); \
                a2 = _mm256_fmadd_ps(x2, u0, a2); a3 = _mm256_fmadd_ps(x3, u0, a3); \
                a0 = _mm256_fmadd_ps(x1, u1, a0); a1 = _mm256_fmadd_ps(x2, u1, a1); \
                a2 = _mm256_fmadd_ps(x3, u1, a2); a3 = _mm256_fmadd_ps(x4, u1, a3); \
                a0 = _mm256_fmadd_ps(x2, u2, a0); a1 = _mm256_fmadd_ps(x3, u2, a1); \
                a2 = _mm256_fmadd_ps(x4, u2, a2); a3 = _mm256_fmadd_ps(x5, u2, a3); }
            for (; ox + 4 <= hi; ox += 4) {
                ptrdiff_t ix = (ptrdiff_t)(ox - pl) * C;
                ptrdiff_t off0 = orow + (ptrdiff_t)ox * C;
                for (int cb = 0; cb < C8; cb += 8) {
                    const float *q0 = r0 + ix + cb, *q1 = r1 + ix + cb, *q2 = r2 + ix + cb;
                    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
                    if (v0) NK_ROW6(q0, NK_W(0, 0), NK_W(0, 1), NK_W(0, 2))
                    if (v1) NK_ROW6(q1, NK_W(1, 0), NK_W(1, 1), NK_W(1, 2))
                    if (v2) NK_ROW6(q2, NK_W(2, 0), NK_W(2, 1), NK_W(2, 2))
                    __m256 bv = _mm256_loadu_ps(bias + cb);
                    a0 = _mm256_add_ps(a0, bv); a1 = _mm256_add_ps(a1, bv); a2 = _mm256_add_ps(a2, bv); a3 = _mm256_add_ps(a3, bv);
                    ptrdiff_t off = off0 + cb;
                    if (clamp_only) {
                        a0 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, a0)); a1 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, a1));
                        a2 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, a2)); a3 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, a3));
                    } else if (nops) {
                        a0 = epi_vec(a0, nops, codes, prm, ptrs, off, cb);
                        a1 = epi_vec(a1, nops, codes, prm, ptrs, off + C, cb);
                        a2 = epi_vec(a2, nops, codes, prm, ptrs, off + 2 * C, cb);
                        a3 = epi_vec(a3, nops, codes, prm, ptrs, off + 3 * C, cb);
                    }
                    _mm256_storeu_ps(y + off, a0); _mm256_storeu_ps(y + off + C, a1);
                    _mm256_storeu_ps(y + off + 2 * C, a2); _mm256_storeu_ps(y + off + 3 * C, a3);
                }
            }
#undef NK_ROW6
        } else if (sx == 2 && dx == 1) {
            /* stride 2: the four pixels' three taps of a kernel row read nine input pixels, each loaded once */
#define NK_ROW9(q, w0, w1, w2) { \
                __m256 u0 = (w0), u1 = (w1), u2 = (w2); \
                __m256 x0 = _mm256_loadu_ps(q), x1 = _mm256_loadu_ps((q) + C), x2 = _mm256_loadu_ps((q) + 2 * C); \
                a0 = _mm256_fmadd_ps(x0, u0, a0); a0 = _mm256_fmadd_ps(x1, u1, a0); \
                a0 = _mm256_fmadd_ps(x2, u2, a0); a1 = _mm256_fmadd_ps(x2, u0, a1); \
                x0 = _mm256_loadu_ps((q) + 3 * C); x1 = _mm256_loadu_ps((q) + 4 * C); \
                a1 = _mm256_fmadd_ps(x0, u1, a1); a1 = _mm256_fmadd_ps(x1, u2, a1); \
                a2 = _mm256_fmadd_ps(x1, u0, a2); \
                x0 = _mm256_loadu_ps((q) + 5 * C); x2 = _mm256_loadu_ps((q) + 6 * C); \
                a2 = _mm256_fmadd_ps(x0, u1, a2); a2 = _mm256_fmadd_ps(x2, u2, a2); \
                a3 = _mm256_fmadd_ps(x2, u0, a3); \
                x0 = _mm256_loadu_ps((q) + 7 * C); x1 = _mm256_loadu_ps((q) + 8 * C); \
                a3 = _mm256_fmadd_ps(x0, u1, a3); a3 = _mm256_fmadd_ps(x1, u2, a3); }
            for (; ox + 4 <= hi; ox += 4) {
                ptrdiff_t ix = (ptrdiff_t)(2 * ox - pl) * C;
                ptrdiff_t off0 = orow + (ptrdiff_t)ox * C;
                for (int cb = 0; cb < C8; cb += 8) {
                    const float *q0 = r0 + ix + cb, *q1 = r1 + ix + cb, *q2 = r2 + ix + cb;
                    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
                    if (v0) NK_ROW9(q0, NK_W(0, 0), NK_W(0, 1), NK_W(0, 2))
                    if (v1) NK_ROW9(q1, NK_W(1, 0), NK_W(1, 1), NK_W(1, 2))
                    if (v2) NK_ROW9(q2, NK_W(2, 0), NK_W(2, 1), NK_W(2, 2))
                    __m256 bv = _mm256_loadu_ps(bias + cb);
                    a0 = _mm256_add_ps(a0, bv); a1 = _mm256_add_ps(a1, bv); a2 = _mm256_add_ps(a2, bv); a3 = _mm256_add_ps(a3, bv);
                    ptrdiff_t off = off0 + cb;
                    if (clamp_only) {
                        a0 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, a0)); a1 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, a1));
                        a2 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, a2)); a3 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, a3));
                    } else if (nops) {
                        a0 = epi_vec(a0, nops, codes, prm, ptrs, off, cb);
                        a1 = epi_vec(a1, nops, codes, prm, ptrs, off + C, cb);
                        a2 = epi_vec(a2, nops, codes, prm, ptrs, off + 2 * C, cb);
                        a3 = epi_vec(a3, nops, codes, prm, ptrs, off + 3 * C, cb);
                    }
                    _mm256_storeu_ps(y + off, a0); _mm256_storeu_ps(y + off + C, a1);
                    _mm256_storeu_ps(y + off + 2 * C, a2); _mm256_storeu_ps(y + off + 3 * C, a3);
                }
            }
#undef NK_ROW9
        }
        for (; ox + 4 <= hi; ox += 4) {
            ptrdiff_t ix = (ptrdiff_t)(ox * sx - pl) * C;
            ptrdiff_t off0 = orow + (ptrdiff_t)ox * C;
            for (int cb = 0; cb < C8; cb += 8) {
                const float *q0 = r0 + ix + cb, *q1 = r1 + ix + cb, *q2 = r2 + ix + cb;
                /* four pixels at a time: four independent sums hide the add latency */
                __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
                if (v0) { NK_TAP4(q0, 0, NK_W(0, 0)) NK_TAP4(q0, dxc, NK_W(0, 1)) NK_TAP4(q0, 2 * dxc, NK_W(0, 2)) }
                if (v1) { NK_TAP4(q1, 0, NK_W(1, 0)) NK_TAP4(q1, dxc, NK_W(1, 1)) NK_TAP4(q1, 2 * dxc, NK_W(1, 2)) }
                if (v2) { NK_TAP4(q2, 0, NK_W(2, 0)) NK_TAP4(q2, dxc, NK_W(2, 1)) NK_TAP4(q2, 2 * dxc, NK_W(2, 2)) }
                __m256 bv = _mm256_loadu_ps(bias + cb);
                a0 = _mm256_add_ps(a0, bv); a1 = _mm256_add_ps(a1, bv); a2 = _mm256_add_ps(a2, bv); a3 = _mm256_add_ps(a3, bv);
                ptrdiff_t off = off0 + cb;
                if (clamp_only) {
                    a0 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, a0)); a1 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, a1));
                    a2 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, a2)); a3 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, a3));
                } else if (nops) {
                    a0 = epi_vec(a0, nops, codes, prm, ptrs, off, cb);
                    a1 = epi_vec(a1, nops, codes, prm, ptrs, off + C, cb);
                    a2 = epi_vec(a2, nops, codes, prm, ptrs, off + 2 * C, cb);
                    a3 = epi_vec(a3, nops, codes, prm, ptrs, off + 3 * C, cb);
                }
                _mm256_storeu_ps(y + off, a0); _mm256_storeu_ps(y + off + C, a1);
                _mm256_storeu_ps(y + off + 2 * C, a2); _mm256_storeu_ps(y + off + 3 * C, a3);
            }
        }
#undef NK_TAP4
        for (; ox < hi; ox++) {
            ptrdiff_t ix = (ptrdiff_t)(ox * sx - pl) * C;
            for (int cb = 0; cb < C8; cb += 8) {
                const float *q0 = r0 + ix + cb, *q1 = r1 + ix + cb, *q2 = r2 + ix + cb;
                __m256 acc = _mm256_setzero_ps();
                if (v0) {
                    acc = _mm256_fmadd_ps(_mm256_loadu_ps(q0), NK_W(0, 0), acc);
                    acc = _mm256_fmadd_ps(_mm256_loadu_ps(q0 + dxc), NK_W(0, 1), acc);
                    acc = _mm256_fmadd_ps(_mm256_loadu_ps(q0 + 2 * dxc), NK_W(0, 2), acc);
                }
                if (v1) {
                    acc = _mm256_fmadd_ps(_mm256_loadu_ps(q1), NK_W(1, 0), acc);
                    acc = _mm256_fmadd_ps(_mm256_loadu_ps(q1 + dxc), NK_W(1, 1), acc);
                    acc = _mm256_fmadd_ps(_mm256_loadu_ps(q1 + 2 * dxc), NK_W(1, 2), acc);
                }
                if (v2) {
                    acc = _mm256_fmadd_ps(_mm256_loadu_ps(q2), NK_W(2, 0), acc);
                    acc = _mm256_fmadd_ps(_mm256_loadu_ps(q2 + dxc), NK_W(2, 1), acc);
                    acc = _mm256_fmadd_ps(_mm256_loadu_ps(q2 + 2 * dxc), NK_W(2, 2), acc);
                }
                acc = _mm256_add_ps(acc, _mm256_loadu_ps(bias + cb));
                ptrdiff_t off = orow + (ptrdiff_t)ox * C + cb;
                if (nops) acc = epi_vec(acc, nops, codes, prm, ptrs, off, cb);
                _mm256_storeu_ps(y + off, acc);
            }
        }
#undef NK_W
        if (c < C) {  /* channel tail: scalar, same order */
            for (int ox = lo; ox < hi; ox++) {
                int ix = ox * sx - pl;
                ptrdiff_t off = orow + (ptrdiff_t)ox * C;
                for (int cc = c; cc < C; cc++) {
                    float acc = 0.0f;
                    const float *rows[3] = {r0, r1, r2};
                    int valid[3] = {v0, v1, v2};
                    for (int ky = 0; ky < 3; ky++) {
                        if (!valid[ky]) continue;
                        for (int kx = 0; kx < 3; kx++) {
                            float prod = rows[ky][((ptrdiff_t)ix + kx * dx) * C + cc] * w[(ky * 3 + kx) * C + cc];
                            acc = acc + prod;
                        }
                    }
                    acc = acc + bias[cc];
                    y[off + cc] = epi_scalar(acc, nops, codes, prm, ptrs, off + cc, cc);
                }
            }
        }
        return;
    }
#endif
    dw_pixels_m1(x, IH, IW, C, w, KH, KW, bias, y, OW, sy, sx, dy, dx, pt, pl, n, oy, OH, nops, codes, prm, ptrs, 0, OW);
}

/* One output row, general channel multiplier M: w [KH, KW, C, M], output channel c*M + m. */
static void dw_row_gen(const float *x, int IH, int IW, int C, int M, const float *w, int KH, int KW,
                       const float *bias, float *y, int OW, int sy, int sx, int dy, int dx, int pt, int pl,
                       int n, int oy, int OH, int nops, const int *codes, const float *prm,
                       const float *const *ptrs) {
    const float *xn = x + (ptrdiff_t)n * IH * IW * C;
    int CO = C * M;
    int iy0 = oy * sy - pt;
    for (int ox = 0; ox < OW; ox++) {
        int ix0 = ox * sx - pl;
        ptrdiff_t ooff = (((ptrdiff_t)n * OH + oy) * OW + ox) * CO;
        for (int co = 0; co < CO; co++) {
            int c = co / M;
            float acc = 0.0f;
            for (int ky = 0; ky < KH; ky++) {
                int iy = iy0 + ky * dy;
                if (iy < 0 || iy >= IH) continue;
                for (int kx = 0; kx < KW; kx++) {
                    int ix = ix0 + kx * dx;
                    if (ix < 0 || ix >= IW) continue;
                    float prod = xn[((ptrdiff_t)iy * IW + ix) * C + c] * w[((ptrdiff_t)ky * KW + kx) * CO + co];
                    acc = acc + prod;
                }
            }
            acc = acc + bias[co];
            y[ooff + co] = epi_scalar(acc, nops, codes, prm, ptrs, ooff + co, co);
        }
    }
}

typedef struct {
    const float *x;
    int IH, IW, C, M;
    const float *w;
    int KH, KW;
    const float *bias;
    float *y;
    int OH, OW, sy, sx, dy, dx, pt, pl, nops;
    int band, nbands;  /* consecutive output rows per work item (a thread reuses their input rows) */
    const int *codes;
    const float *prm;
    const float *const *ptrs;
} dw_job;

static void dw_item(void *ctx, long item) {
    const dw_job *j = (const dw_job *)ctx;
    int n = (int)(item / j->nbands), oy0 = (int)(item % j->nbands) * j->band;
    int oy1 = oy0 + j->band < j->OH ? oy0 + j->band : j->OH;
    for (int oy = oy0; oy < oy1; oy++) {
        if (j->M == 1)
            dw_row_m1(j->x, j->IH, j->IW, j->C, j->w, j->KH, j->KW, j->bias, j->y, j->OW, j->sy, j->sx, j->dy, j->dx,
                      j->pt, j->pl, n, oy, j->OH, j->nops, j->codes, j->prm, j->ptrs);
        else
            dw_row_gen(j->x, j->IH, j->IW, j->C, j->M, j->w, j->KH, j->KW, j->bias, j->y, j->OW, j->sy, j->sx, j->dy,
                       j->dx, j->pt, j->pl, n, oy, j->OH, j->nops, j->codes, j->prm, j->ptrs);
    }
}

/* The whole depthwise convolution: bands of output rows of one image are the work items.
 * Returns 0 (the Python side has checked every shape and bound). */
int nk_depthwise_f32(const float *x, int N, int IH, int IW, int C, int M,
                     const float *w, int KH, int KW, const float *bias,
                     float *y, int OH, int OW, int sy, int sx, int dy, int dx, int pt, int pl,
                     int nops, const int *codes, const float *prm, const float *const *ptrs, int nthreads) {
    /* bands of rows: about 4 items per thread over the batch (balance), 1 row when single-threaded */
    long per_image = nthreads > 1 ? (4L * nthreads + N - 1) / N : OH;
    int band = nthreads > 1 ? (int)((OH + per_image - 1) / per_image) : 1;
    if (band < 1) band = 1;
    int nbands = (OH + band - 1) / band;
    dw_job job = {x, IH, IW, C, M, w, KH, KW, bias, y, OH, OW, sy, sx, dy, dx, pt, pl, nops, band, nbands, codes, prm, ptrs};
    nk_parallel(dw_item, &job, (long)N * nbands, nthreads);
    return 0;
}

/* -- a 1x1 convolution feeding a depthwise one, fused (its own file: the tiles and rows above) ------- */
#include "conv_pwdw.c"

/* -- pooling, reductions, padding, TRANSPOSE, GATHER, int32 elementwise (their own file, this pool) --- */
#include "conv_data.c"

/* -- bound calls ------------------------------------------------------------------------------------ */
/* A run of kernels whose arguments are fixed once the executable's arrays are (kernels/bound.py): each
 * kernel's parameters as 64-bit slots in declaration order, called from one Python call instead of one
 * ctypes call each (whose argument conversion costs microseconds). A thread-count slot of 0 stands for
 * the run's thread count, which the caller decides at run time. */
typedef int (*nk_bound_fn)(const int64_t *a, int nthreads);
#define NK_P(i) ((void *)(intptr_t)a[i])
#define NK_T(i) (a[i] > 0 ? (int)a[i] : nthreads)

int nk_conv_f32_b(const int64_t *a, int nthreads) {
    return nk_conv_f32(NK_P(0), (int)a[1], (int)a[2], (int)a[3], (int)a[4], (int)a[5], (int)a[6], (int)a[7], (int)a[8],
                       NK_P(9), (int)a[10], (int)a[11], NK_P(12), (int)a[13], NK_P(14), NK_P(15), (int)a[16], NK_P(17),
                       NK_P(18), NK_P(19), NK_T(20));
}

int nk_pad_f32_b(const int64_t *a, int nthreads) {
    return nk_pad_f32(NK_P(0), (int)a[1], (int)a[2], (int)a[3], (int)a[4], NK_P(5), (int)a[6], (int)a[7], (int)a[8],
                      (int)a[9], NK_T(10));
}

int nk_pad_nchw_f32_b(const int64_t *a, int nthreads) {
    return nk_pad_nchw_f32(NK_P(0), (int)a[1], (int)a[2], (int)a[3], (int)a[4], NK_P(5), (int)a[6], (int)a[7], (int)a[8],
                           (int)a[9], NK_T(10));
}

int nk_depthwise_f32_b(const int64_t *a, int nthreads) {
    return nk_depthwise_f32(NK_P(0), (int)a[1], (int)a[2], (int)a[3], (int)a[4], (int)a[5], NK_P(6), (int)a[7],
                            (int)a[8], NK_P(9), NK_P(10), (int)a[11], (int)a[12], (int)a[13], (int)a[14], (int)a[15],
                            (int)a[16], (int)a[17], (int)a[18], (int)a[19], NK_P(20), NK_P(21), NK_P(22), NK_T(23));
}

int nk_pool2d_f32_b(const int64_t *a, int nthreads) {
    return nk_pool2d_f32(NK_P(0), (int)a[1], (int)a[2], (int)a[3], (int)a[4], NK_P(5), (int)a[6], (int)a[7],
                         (int)a[8], (int)a[9], (int)a[10], (int)a[11], (int)a[12], (int)a[13], (int)a[14], NK_T(15));
}

int nk_bmm_f32_b(const int64_t *a, int nthreads) {
    return nk_bmm_f32(NK_P(0), (long)a[1], (long)a[2], NK_P(3), (long)a[4], (long)a[5], (long)a[6], NK_P(7), (int)a[8],
                      (int)a[9], (int)a[10], (int)a[11], NK_P(12), NK_T(13));
}

int nk_int_ew_b(const int64_t *a, int nthreads) {
    (void)nthreads;
    return nk_int_ew((int)a[0], NK_P(1), (long)a[2], NK_P(3), (long)a[4], NK_P(5), (long)a[6], NK_P(7), (long)a[8],
                     (int)a[9]);
}

int nk_gather32_b(const int64_t *a, int nthreads) {
    (void)nthreads;
    return nk_gather32(NK_P(0), NK_P(1), NK_P(2), (long)a[3], (long)a[4], (long)a[5], (long)a[6]);
}

int nk_permute32_b(const int64_t *a, int nthreads) {
    return nk_permute32(NK_P(0), NK_P(1), (int)a[2], NK_P(3), NK_P(4), NK_T(5));
}

int nk_transpose32_b(const int64_t *a, int nthreads) {
    return nk_transpose32(NK_P(0), NK_P(1), (long)a[2], (long)a[3], (long)a[4], NK_T(5));
}

int nk_pwdw_f32_b(const int64_t *a, int nthreads) {
    return nk_pwdw_f32(NK_P(0), (int)a[1], (int)a[2], (int)a[3], (int)a[4], NK_P(5), (int)a[6], NK_P(7), (int)a[8],
                       NK_P(9), NK_P(10), NK_P(11), (int)a[12], (int)a[13], NK_P(14), NK_P(15), (int)a[16], (int)a[17],
                       (int)a[18], (int)a[19], (int)a[20], (int)a[21], (int)a[22], NK_P(23), NK_P(24), NK_T(25));
}

/* memcpy(a[1], a[0], a[2] bytes), in pieces of 256 KiB shared by the threads (thread slot a[3]) */
typedef struct { const char *src; char *dst; size_t n; } copy_job;

static void copy_item(void *ctx, long i) {
    const copy_job *j = (const copy_job *)ctx;
    size_t at = (size_t)i << 18, len = j->n - at < ((size_t)1 << 18) ? j->n - at : ((size_t)1 << 18);
    memcpy(j->dst + at, j->src + at, len);
}

int nk_copy_b(const int64_t *a, int nthreads) {
    copy_job job = {(const char *)NK_P(0), (char *)NK_P(1), (size_t)a[2]};
    nk_parallel(copy_item, &job, (long)((job.n + ((size_t)1 << 18) - 1) >> 18), NK_T(3));
    return 0;
}

int nk_reduce_sum_f32_b(const int64_t *a, int nthreads) {
    (void)nthreads;
    return nk_reduce_sum_f32(NK_P(0), (long)a[1], (long)a[2], (long)a[3], NK_P(4), (int)a[5], (int)a[6], NK_P(7),
                             NK_P(8), NK_P(9));
}

/* fns[i](args[i], nthreads) for i in [0, n) in order; 0, or i + 1 for the first call that failed. */
int nk_run_bound(const void *const *fns, const int64_t *const *args, int n, int nthreads) {
    for (int i = 0; i < n; i++)
        if (((nk_bound_fn)(intptr_t)fns[i])(args[i], nthreads) != 0) return i + 1;
    return 0;
}

/* nk_run_bound for a whole program run straight from the caller's arrays (runtime/direct.py, DirectRun), with the
 * per-run address work done here rather than in Python (each numpy attribute or ctypes conversion costs tens of
 * microseconds per run with the interpreter's code and data out of cache after a network's worth of kernels:
 * bench/RESULTS.md). o0 .. o(nobj-1)
 * are Python ndarray objects (ctypes.py_object; the rest None, never read), whose data pointer is the pointer-sized
 * field at byte offset ``data_off`` of the object (numpy's PyArrayObject.data: the Python side finds the offset
 * and checks it on probe arrays, else it never calls this). First ``nconv`` conversions, rows of int64 (object, destination,
 * count, lo, hi): the object's int64 values narrowed into the int32 destination, which then stands for the object
 * (token ids of an int32 input); a value outside [lo, hi] returns -1 before any kernel ran. Then ``npatch`` patches,
 * rows (slot address, object, byte offset): *slot = object data + offset. Then the calls, as nk_run_bound. */
int nk_run_bound_io(const void *const *fns, const int64_t *const *args, int n, int nthreads, const int64_t *conv,
                    int nconv, const int64_t *patch, int npatch, long data_off, int nobj, nk_pyobj o0, nk_pyobj o1,
                    nk_pyobj o2, nk_pyobj o3, nk_pyobj o4, nk_pyobj o5, nk_pyobj o6, nk_pyobj o7) {
    void *objs[NK_IO_MAX] = {o0, o1, o2, o3, o4, o5, o6, o7};
    char *base[NK_IO_MAX];
    if (nobj > NK_IO_MAX) return -2;
    for (int i = 0; i < nobj; i++) base[i] = *(char **)((char *)objs[i] + data_off);
    for (int c = 0; c < nconv; c++) {
        const int64_t *row = conv + 5 * c;
        int32_t *dst = (int32_t *)(intptr_t)row[1];
        if (nk_narrow_i64_i32((const int64_t *)base[row[0]], dst, (long)row[2], row[3], row[4])) return -1;
        base[row[0]] = (char *)dst;
    }
    for (int p = 0; p < npatch; p++) {
        const int64_t *row = patch + 3 * p;
        *(int64_t *)(intptr_t)row[0] = (int64_t)(intptr_t)(base[row[1]] + row[2]);
    }
    return nk_run_bound(fns, args, n, nthreads);
}
#undef NK_P
#undef NK_T

/* -- integer kernels of quantized graphs (their own file, this thread pool) -------------------------- */
#include "conv_int.c"

/* -- row programs: fused float32 elementwise chains and row reductions (their own file, this thread pool) -- */
#include "eltwise_rows.c"

/* nnkiln.h: the one definition of what the native kernels and Python share.
 *
 * Every function Python calls (the .c files beside this header, built at install time into the library
 * nnkiln/runtime/native/_nnkiln<extension suffix>) and every constant both sides use: row-program opcodes,
 * operand modes, epilogue codes, element kinds, the row-program instruction layout. Each .c file includes this
 * header, so the compiler checks every definition against its declaration here; Python parses it when it loads
 * the library (nnkiln/native_header.py) and takes the ctypes signatures, the constants and the struct
 * layout from it: nothing of it is copied by hand on the Python side.
 *
 * The parser reads a small subset of C; keep to it:
 * - `#define NK_NAME <integer>` (a `#define` without a value is the include guard);
 * - `enum nk_tag { NK_TAG_MEMBER = <integer>, ... };`: every member numbered explicitly and named with the tag in
 *   capitals as its prefix (Python sees `enum("nk_tag")["MEMBER"]`);
 * - `typedef struct nk_name { <scalar type> a, b; ... } nk_name;`;
 * - prototypes `<type> nk_name(<type> name, ...);`, over several lines if need be. Types: void, int, long, float,
 *   double, size_t, ptrdiff_t, [u]int{8,16,32,64}_t, char pointers (C strings), any other pointer (an address),
 *   nk_pyobj; `const` is ignored;
 * - comments anywhere; `#include`, `#ifndef`, `#endif` lines.
 */
#ifndef NNKILN_H
#define NNKILN_H

#include <stddef.h>
#include <stdint.h>

/* A Python object passed by ctypes as py_object (a PyObject *, never dereferenced as such by Python). */
typedef void *nk_pyobj;

/* Output channels per packed weight panel (the blob format's b_panels; conv.c's NR). */
#define NK_PANEL_WIDTH 16
/* Inputs plus outputs of a direct run (nk_run_bound_io's o0 .. o7). */
#define NK_IO_MAX 8

/* -- row programs (eltwise_rows.c) ------------------------------------------------------------------------ */

/* Steps of one CHAIN at most. */
#define NK_MAX_STEPS 32

/* Opcodes of nk_ins.op. Ranges the interpreter relies on: binary ops < NK_OP_EXP <= unary ops <
 * NK_OP_REDUCE_SUM <= row reductions < NK_OP_STORE. Names are those of the TOSA operators they compute. */
enum nk_op {
    NK_OP_ADD = 0, NK_OP_SUB = 1, NK_OP_MUL = 2, NK_OP_MAXIMUM = 3, NK_OP_MINIMUM = 4, NK_OP_DIV = 5,
    NK_OP_EXP = 10, NK_OP_TANH = 11, NK_OP_SIGMOID = 12, NK_OP_ABS = 13, NK_OP_NEGATE = 14, NK_OP_RECIPROCAL = 15,
    NK_OP_RSQRT = 16, NK_OP_CLAMP = 17, NK_OP_COPY = 18,
    NK_OP_REDUCE_SUM = 20, NK_OP_REDUCE_MAX = 21, NK_OP_REDUCE_MIN = 22,
    NK_OP_STORE = 30,
    NK_OP_CHAIN = 40, NK_OP_STEP = 41
};

/* How a program argument is read for row r of a [rows, C] block: FULL p + r*C (C values), CHAN p (C values, every
 * row), ROWV p + r (one value), SCAL p (one value, every row). */
enum nk_mode { NK_MODE_FULL = 0, NK_MODE_CHAN = 1, NK_MODE_ROWV = 2, NK_MODE_SCAL = 3 };

/* One instruction. Operands are registers (>= 0) or arguments (< 0: argument -1 - index). */
typedef struct nk_ins {
    int32_t op, dst, a, b; /* STORE: a = register, dst = argument index (>= 0) */
    float lo, hi;          /* CLAMP bounds */
    int32_t op2, c;        /* STEP entries of a CHAIN: the step's operation and operand */
} nk_ins;

/* -- fused epilogues of the float kernels (conv.c) ------------------------------------------------------------ */

/* Post-op codes (codes[i], parameters prm[2i], prm[2i + 1], operand ptrs[i]): CLAMP min(max(v, p0), p1) with NaN
 * kept; ADD / SUB (v - operand) / MUL with a FULL operand (the output's layout [rows, C]), a CHAN one (indexed by
 * the channel) or a SCAL one (one number, p[0]). */
enum nk_epi {
    NK_EPI_CLAMP = 1,
    NK_EPI_ADD_FULL = 2, NK_EPI_ADD_CHAN = 3, NK_EPI_SUB_FULL = 4, NK_EPI_SUB_CHAN = 5, NK_EPI_MUL_FULL = 6,
    NK_EPI_MUL_CHAN = 7, NK_EPI_ADD_SCAL = 8, NK_EPI_SUB_SCAL = 9, NK_EPI_MUL_SCAL = 10
};

/* -- integer kernels (conv_int.c, conv_data.c) ------------------------------------------------------------------ */

/* Element kinds of nk_rescale (I8 .. I64; I64 also holds int48 values) and nk_cast (I8, U8, I16, I32, BOOL, F32). */
enum nk_kind {
    NK_KIND_I8 = 0, NK_KIND_U8 = 1, NK_KIND_I16 = 2, NK_KIND_U16 = 3, NK_KIND_I32 = 4, NK_KIND_I64 = 5,
    NK_KIND_BOOL = 6, NK_KIND_F32 = 7
};

/* Operations of nk_int_ew (int32 operands; GREATER .. EQUAL give 1-byte bools; SELECT: a is the bool condition).
 * Names are those of the TOSA operators they compute. */
enum nk_int_op {
    NK_INT_OP_ADD = 0, NK_INT_OP_SUB = 1, NK_INT_OP_MUL = 2, NK_INT_OP_MAXIMUM = 3, NK_INT_OP_MINIMUM = 4,
    NK_INT_OP_GREATER = 5, NK_INT_OP_GREATER_EQUAL = 6, NK_INT_OP_EQUAL = 7, NK_INT_OP_SELECT = 8
};

/* -- functions ------------------------------------------------------------------------------------------------ */
/* Kernels return 0 on success; what else they return is said at their definition. */

/* conv.c: float32 convolutions, batched matmul, the thread pool */
int nk_pool_workers(void);
int nk_wide_tiles(void);
void nk_pack_weights(const float *w, int OC, long K, float *bp);
int nk_conv_f32(const float *xp, int N, int Hp, int Wp, int IC, int OH, int OW, int sy, int sx, const long *toff,
                int ntaps, int seg, const float *bp, int OC, const float *bias, float *y, int nops, const int *codes,
                const float *prm, const float *const *ptrs, int nthreads);
int nk_bmm_f32(const float *a, long sab, long sam, const float *b, long sbb, long sbk, long sbn, float *c, int batch,
               int M, int K, int N, float *scratch, int nthreads);
int nk_depthwise_f32(const float *x, int N, int IH, int IW, int C, int M, const float *w, int KH, int KW,
                     const float *bias, float *y, int OH, int OW, int sy, int sx, int dy, int dx, int pt, int pl,
                     int nops, const int *codes, const float *prm, const float *const *ptrs, int nthreads);

/* conv_wino.c: Winograd F(2x2, 3x3) */
long nk_wino_work_floats(int N, int OH, int OW, int IC, int OC);
int nk_wino_f32(const float *xp, int N, int Hp, int Wp, int IC, int OH, int OW, const float *u, int OC,
                const float *bias, float *y, int nops, const int *codes, const float *prm, const float *const *ptrs,
                float *work, int nthreads);

/* conv_pwdw.c: expansion 1x1 convolution + depthwise convolution */
int nk_pwdw_f32(const float *x, int N, int H, int W, int CI, const float *bp, int C, const float *pw_bias,
                int pw_nops, const int *pw_codes, const float *pw_prm, const float *w, int KH, int KW,
                const float *bias, float *y, int OH, int OW, int sy, int sx, int pt, int pl, int nops,
                const int *codes, const float *prm, int nthreads);

/* conv_data.c: pooling, reductions, padding, data movement, int32 elementwise */
int nk_pool2d_f32(const float *x, int N, int IH, int IW, int C, float *y, int OH, int OW, int KH, int KW, int sy,
                  int sx, int pt, int pl, int is_max, int nthreads);
int nk_reduce_sum_f32(const float *x, long outer, long n, long inner, float *y, int C, int nops, const int *codes,
                      const float *prm, const float *const *ptrs);
int nk_pad_f32(const float *x, int N, int IH, int IW, int C, float *xp, int pt, int pb, int pl, int pr,
               int nthreads);
int nk_pad_nchw_f32(const float *x, int N, int IH, int IW, int C, float *xp, int pt, int pb, int pl, int pr,
                    int nthreads);
int nk_transpose32(const void *src, void *dst, long P, long A, long B, int nthreads);
int nk_permute32(const void *src, void *dst, int nd, const int64_t *d, const int64_t *s, int nthreads);
int nk_gather32(const void *values, const int32_t *idx, void *out, long N, long K, long C, long W);
int nk_int_ew(int op, const void *a, long sa, const void *b, long sb, const void *c, long sc, void *out, long n,
              int width);
int nk_narrow_i64_i32(const int64_t *x, int32_t *y, long n, int64_t lo, int64_t hi);

/* conv_int.c: integer kernels of quantized graphs */
int nk_rescale(const void *x, int in_kind, void *y, int out_kind, long n, int C, const int64_t *mult,
               const int64_t *shift, int per_channel, long izp, long ozp, int scale32, int double_round, long lo,
               long hi, int nthreads);
int nk_cast(const void *x, int sk, void *y, int dk, long n);
int nk_pad_i8_i16(const int8_t *x, int N, int IH, int IW, int C, int zp, int16_t *xp, int pt, int pb, int pl,
                  int pr, int nthreads);
void nk_pack_weights_i16(const int8_t *w, int OC, int ntaps, int seg, int wzp, int16_t *bp);
int nk_conv_i16(const int16_t *xp, int N, int Hp, int Wp, int IC, int OH, int OW, int sy, int sx, const long *toff,
                int ntaps, int seg, const int16_t *bp, int OC, const int32_t *bias, int32_t *y, int nthreads);
int nk_depthwise_i16(const int16_t *xp, int N, int Hp, int Wp, int C, const int16_t *w, int KH, int KW,
                     const int32_t *bias, int32_t *y, int OH, int OW, int sy, int sx, int dy, int dx, int nthreads);

/* eltwise_rows.c: row programs and the float32 functions they use */
int nk_rows_run(const nk_ins *prog, int nins, int nregs, float **args, const int32_t *modes, ptrdiff_t rows,
                ptrdiff_t C, ptrdiff_t block, int nthreads);
void nk_exp(const float *x, float *y, ptrdiff_t n);
void nk_tanh(const float *x, float *y, ptrdiff_t n);

/* Bound calls (kernels/bound.py): each kernel's parameters as 64-bit slots a[0 ..] in declaration order, a thread
 * count slot of 0 standing for nthreads; nk_run_bound calls fns[i](args[i], nthreads) in order and returns 0, or
 * i + 1 for the first call that failed. */
int nk_conv_f32_b(const int64_t *a, int nthreads);
int nk_pad_f32_b(const int64_t *a, int nthreads);
int nk_pad_nchw_f32_b(const int64_t *a, int nthreads);
int nk_depthwise_f32_b(const int64_t *a, int nthreads);
int nk_pool2d_f32_b(const int64_t *a, int nthreads);
int nk_bmm_f32_b(const int64_t *a, int nthreads);
int nk_int_ew_b(const int64_t *a, int nthreads);
int nk_gather32_b(const int64_t *a, int nthreads);
int nk_permute32_b(const int64_t *a, int nthreads);
int nk_transpose32_b(const int64_t *a, int nthreads);
int nk_pwdw_f32_b(const int64_t *a, int nthreads);
int nk_copy_b(const int64_t *a, int nthreads);
int nk_reduce_sum_f32_b(const int64_t *a, int nthreads);
int nk_wino_f32_b(const int64_t *a, int nthreads);
int nk_cast_b(const int64_t *a, int nthreads);
int nk_rescale_b(const int64_t *a, int nthreads);
int nk_rows_run_b(const int64_t *a, int nthreads);
int nk_run_bound(const void *const *fns, const int64_t *const *args, int n, int nthreads);
int nk_run_bound_io(const void *const *fns, const int64_t *const *args, int n, int nthreads, const int64_t *conv,
                    int nconv, const int64_t *patch, int npatch, long data_off, int nobj, nk_pyobj o0, nk_pyobj o1,
                    nk_pyobj o2, nk_pyobj o3, nk_pyobj o4, nk_pyobj o5, nk_pyobj o6, nk_pyobj o7);

/* info.c: the build's identity (native/build.py defines NK_SOURCE_DIGEST and NK_BUILD_FLAGS) and a smoke test */
const char *nk_source_digest(void);
const char *nk_build_flags(void);
void nk_selftest(const float *x, float *y, ptrdiff_t n);

#endif /* NNKILN_H */

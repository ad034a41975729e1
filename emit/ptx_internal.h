/* Private interface of the PTX emitter. Not for use outside emit/ptx*.
 * Its files, arrows one way (a file calls only down the list):
 *   emit/ptx.c         the driver: per-kernel analysis, the passes in
 *                      order, entry and module framing (kf_ptx_emit)
 *   emit/ptx_ops.c     instruction selection, one IR instruction at a time
 *   emit/ptx_math.c    float math sequences (called by ptx_ops.c)
 *   emit/ptx_tensor.c  mma, ldmatrix, cp.async (called by ptx_ops.c)
 *   emit/ptx_mem.c     addresses of buffer and array elements, packing
 *                      lanes into 32-bit words
 *   emit/ptx_text.c    text and register helpers: kf_ptx_ins, kf_ptx_reg, ...
 *   emit/ptx_tables.c  instruction spelling tables
 *
 * The emitter writes each kernel body into its own buffer while it hands out
 * virtual registers per class; the entry header with the `.reg` declarations
 * is written once the body is known. Every body line records the .kf location
 * that produced it, so the module's line map (PTX line -> .kf loc) and the
 * `.loc` directives come from the same place. */
#ifndef KF_PTX_INTERNAL_H
#define KF_PTX_INTERNAL_H

#include "emit.h"

/* What a register holds: one rule for values narrower than their register,
 * obeyed by every instruction that writes one (emit/ptx_ops.c).
 *
 *   bool       %p.
 *   f16, bf16  %h (.b16), exactly their 16 bits.
 *   i16, u16   %rs (.b16), exactly their 16 bits (they fill it).
 *   i8         %rs, sign-extended to 16 bits: bits 15..8 equal bit 7.
 *   u8         %rs, zero-extended to 16 bits: bits 15..8 are 0.
 *
 * So a 16-bit compare, division, remainder, right shift, min or max reads an
 * 8-bit value right. An instruction writing an 8-bit value either makes that
 * form by construction (ld and cvt with an .s8/.u8 type extend into the
 * register; bfe; mov/selp of such values; and, or, xor, min, max, shr of
 * such operands) or is followed by kf_ptx_normalize (cvt.s16.s8 / cvt.u16.u8):
 * + - * << ~ neg abs cdiv, and a bitcast between u8 and i8.
 *
 * Wrapping arithmetic on a %rs register uses instructions ptxas keeps
 * wrapped: + - * as .u16 (the same bits as .s16), negation as sub.u16 0, a,
 * abs as max.s16(a, 0 - a). Never neg.s16 or abs.s16: ptxas 13 widens those
 * to 32 bits as if they could not overflow (-(-32768) read as +32768).
 *
 * A value leaves its register for a wider one only through a cvt whose
 * source type is its own (cvt.u32.u8, cvt.s32.s16, cvt.s64.s16), never a mov,
 * so the rule above is all a reader of the register relies on.
 *
 * The other instruction patterns ptxas 13 miscompiles are avoided too (and
 * emit/ptx_hazards.h checks every emitted module for all of them): a cvt
 * between f16 and bf16 feeding a cvt.rzi (the two convert through f32), an
 * 8-bit store of a cvt-to-f16/bf16 result register; a shift by an
 * immediate of the width or more (mul.lo.s64 then shl.b64 by 64 became one
 * multiply: such shifts are a mov of 0 or a shift by width - 1); scalar
 * f16/bf16 min/max (a clamp's HMNMX2 result was read back as a u16 with
 * its upper half set: they compare in f32); abs.f32 (taken for never NaN:
 * it is and.b32); and cvt.rzi's NaN, the destination's most negative
 * pattern, is replaced by 0 (setp.nan). Found by the difftest's second H200
 * run: 16-bit integer min/max (max.u16 then a setp.eq of the result became
 * one VIMNMX.U16x2 whose halves share a predicate: they are done in 32
 * bits), bfe/bfi with a known field past the value (bfe.s32 x, 33, 101 was
 * -1: the field is brought inside first), and a sign-extended byte of a
 * vector load converted u32 -> float (a signed I2F.S8: the u32 is converted
 * as the sum of its halves). Found by the H200 run of 2026-12-02: min/max
 * .f64 (after a loop, the low word of a result whose high word was dead was
 * chosen by a compare with zero: f64 min/max are setp and selp). Found by
 * the H200 runs of 2026-12-03, each a dropped or misplaced negation or mask:
 * 32-bit 0 - x (and x * -1) inside a three-way VIMNMX3 (written ~x + 1, as
 * neg already was); a - b that a min/max reads, fused into a VIADDMNMX with
 * the wrong side negated once a became a constant in ptxas (written
 * a + (~b + 1) where b is not a constant); u32 -> bf16 of a sign-extended
 * byte (I2F.BF16.S8: the halves, as for the other floats); and an and/shr
 * of the bits of a cvt to f16/bf16 packed into a 16-bit vector store (the
 * bits come from a word holding the half twice). Found by the H200 run of
 * 2026-12-05: an f32 max of a constant zero and a min with a constant,
 * max(min(x, 1.0), 0.0), made FADD.SAT, +0 for a NaN x where the chain is
 * 1.0; the same day, select(a > 0.0, a, 0.0) of a = select(x < 1.0, x,
 * 1.0) made it too (both are now a selp on an integer predicate of the
 * min's bits, ptx_ops.c zero_pick: ir.h kf_ir_zero_select). */

/* Register classes. X(enum, prefix, decl type) */
#define PTX_RCLASSES(X) \
    X(PTX_RC_P, "%p", ".pred")  X(PTX_RC_RS, "%rs", ".b16") X(PTX_RC_H, "%h", ".b16") \
    X(PTX_RC_R, "%r", ".b32")   X(PTX_RC_RD, "%rd", ".b64") X(PTX_RC_F, "%f", ".f32") \
    X(PTX_RC_FD, "%fd", ".f64")
typedef enum {
#define X(e, p, d) e,
    PTX_RCLASSES(X)
#undef X
    PTX_RC_COUNT
} ptx_rclass;
extern const char *const kf_ptx_rc_prefix[PTX_RC_COUNT];
extern const char *const kf_ptx_rc_decl[PTX_RC_COUNT];

/* Per scalar: register class, arithmetic type, bit type, memory type (ld/st,
 * cvt), parameter type. */
typedef struct {
    uint8_t rc;
    const char *arith;   /* "s32", "f16", "pred" */
    const char *bits;    /* "b32" */
    const char *mem;     /* "s8", "u8", "b16" (f16/bf16), "f32", "u8" (bool) */
} ptx_scalar_info;
extern const ptx_scalar_info kf_ptx_scalars[KF_S_COUNT];

/* Binary operator spelling per operand class: X(op, int, float) */
typedef struct {
    const char *ints;
    const char *floats;
} ptx_binop_info;
extern const ptx_binop_info kf_ptx_binops[KF_OP_COUNT];
/* Comparison spelling: ints, floats (NE is unordered for floats, like C). */
extern const ptx_binop_info kf_ptx_cmps[KF_OP_COUNT];

/* Warp shuffles: mode, whether the c operand is the warp's clamp register
 * (existing lanes - 1; else 0, the lower bound of .up), and whether the
 * amount is an offset that gives the own value when >= 32 (xor/up/down). */
typedef struct {
    const char *mode;
    bool clamp, offset;
} ptx_shfl_info;
extern const ptx_shfl_info kf_ptx_shfls[KF_BI_COUNT];
/* Atomic operation names ("add", "min", ...), indexed by builtin. */
extern const char *const kf_ptx_atomic_ops[KF_BI_COUNT];
/* f32 math that is one approximate instruction ("ex2.approx.f32"). */
extern const char *const kf_ptx_math_f32[KF_BI_COUNT];

/* A register name, returned by value so it can be passed to printf. */
typedef struct {
    char s[24];
} preg;

typedef KF_VEC(kf_loc) ptx_locvec;

/* A global address register computed for buf[idx] with elements of `bytes`. */
typedef struct {
    kf_val buf, idx;
    uint32_t bytes;
    preg addr;
} ptx_addr_entry;

typedef struct {
    const kf_module *m;
    const kf_ir_kernel *k;
    const kf_emit_opts *o;
    kf_diags *diags;
    kf_buf body;
    ptx_locvec locs;              /* location of each body line */
    kf_loc cur;                   /* location of the IR instruction being emitted */
    uint32_t last_loc_line, last_loc_col, last_comment_line;
    uint32_t nreg[PTX_RC_COUNT];  /* registers handed out per class */
    uint32_t *vreg;               /* per value: first register (lanes follow); 0 = none yet */
    uint32_t *wreg;               /* per value written once: first of the words its 16-bit lanes came from
                                     (ldmatrix, then same-width bitcasts), or 0; kf_ptx_pack_word reuses them */
    uint32_t *ndefs;              /* per value: instructions that write it */
    int32_t *def1;                /* per value: index of its only definition, or -1 */
    uint32_t *areg;               /* per array: first register when held in registers, else 0 */
    char **aname;                 /* per array: PTX name */
    ptx_addr_entry acache[16];    /* global addresses computed in the current straight-line code */
    uint32_t nacache;
    uint32_t *line_start;         /* offset of each source line (1-based index), or NULL */
    uint32_t nlines;
    kf_val *alias;                /* per value: a var whose registers it is written into directly, or 0 */
    uint8_t *skip;                /* per instruction: a MOV made redundant by alias */
    uint8_t *flip;                /* per IF: its condition is the operand of a skipped NOT */
    uint8_t *named;               /* per value: its source name was already written as a comment */
    uint8_t *needreg;             /* per value: a single-CONST value some use needs in a register */
    uint8_t *feeds;               /* per value: KF_IR_FEEDS_* (kf_ir_feed_flags) */
    bool final_pass;              /* second pass: CONSTs nobody needs in a register emit nothing */
    const char *lf_file;          /* line comments: the last file seen, its base name, */
    const char *lf_base;          /* its length and whether it needs no '?' patching */
    size_t lf_len;
    bool lf_clean;
    uint32_t at;                  /* index of the IR instruction being emitted */
    uint32_t dep_at;              /* the kernel's dep_wait() (kf_ir_dep_wait_at), UINT32_MAX: none or below sm_90 */
    uint64_t early;               /* the buffer parameters it loads before that (kf_ir_early_params) */
    preg wmask, wclamp;           /* existing lanes of this warp: membermask and count - 1 (SHFL/VOTE) */
    bool minmax_negzero;          /* the MATH being emitted has a constant -0.0 operand: f32 min/max as
                                     compares and selects (ptx_math.c float_minmax) */
    bool failed;
} ptx_cx;

/* ---- emit/ptx_text.c: text and registers ------------------------------- */

/* Appends n bytes of source text for a PTX comment or string, any byte
 * ptxas would reject (non-ASCII, '\\', '"', controls) as '?'. */
void kf_ptx_put_ascii(kf_buf *b, const char *s, size_t n);
/* Indexes the module's source lines for the source-line comments; false
 * when out of memory. */
bool kf_ptx_index_lines(ptx_cx *cx, kf_arena *arena);
/* Writes one instruction line ("\t<text>;") with line info and the map. */
void kf_ptx_ins(ptx_cx *cx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes a label line. */
void kf_ptx_label(ptx_cx *cx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes a comment line ("\t// ..."). */
void kf_ptx_comment(ptx_cx *cx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reports an error at the current instruction's location. */
void kf_ptx_error(ptx_cx *cx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

ptx_rclass kf_ptx_class_of(kf_type t);
preg kf_ptx_reg(ptx_cx *cx, kf_val v, uint32_t lane);
preg kf_ptx_tmp(ptx_cx *cx, ptx_rclass rc);
/* The name of register n of class rc (empty in the first pass). */
preg kf_ptx_regn(const ptx_cx *cx, ptx_rclass rc, uint32_t n);
/* An operand where PTX accepts an immediate: the constant's immediate
 * when v is a single-CONST value (not bool/f16/bf16), else its register. */
preg kf_ptx_opnd(ptx_cx *cx, kf_val v, uint32_t lane);
/* The source of a mov: any constant's immediate (mov takes them all), else
 * the register. */
preg kf_ptx_movsrc(ptx_cx *cx, kf_val v, uint32_t lane);
/* Immediate spelling of `bits` as a value of scalar s ("0f3F800000"). */
preg kf_ptx_imm(kf_scalar s, uint64_t bits);
/* True when v is written exactly once, by a CONST; *bits gets its value. */
bool kf_ptx_const_of(const ptx_cx *cx, kf_val v, uint64_t *bits);

/* The predicate an IF branches on and whether it is negated ("!" or ""),
 * seeing through a NOT that was folded into the branch. */
preg kf_ptx_if_pred(ptx_cx *cx, uint32_t at, bool want_true, const char **neg);

/* ---- emit/ptx_mem.c: addresses and words -------------------------------- */

/* An address operand: "reg", "sym" or "reg+off" / "sym+off". */
typedef struct {
    char s[64];
} ptx_addr;

/* Global address of buf[idx] for elements of `bytes` (64-bit). */
ptx_addr kf_ptx_buf_addr(ptx_cx *cx, kf_val buf, kf_val idx, uint32_t bytes);
/* Address of element idx of arrays[ai] accessed as `elem` (a view of a
 * shared array: its own element type), in the shared or local window. */
ptx_addr kf_ptx_arr_addr(ptx_cx *cx, uint32_t ai, kf_val idx, kf_type elem);
/* Lanes first .. first+n-1 of v (scalar s, 1, 2 or 4 bytes: n * size <= 4)
 * packed into the 32-bit register w, low lane lowest / unpacked from it. */
void kf_ptx_pack_word(ptx_cx *cx, const char *w, kf_val v, uint32_t first, uint32_t n, kf_scalar s);
void kf_ptx_unpack_word(ptx_cx *cx, const char *w, kf_val v, uint32_t first, uint32_t n, kf_scalar s);

/* ---- emit/ptx_tensor.c: tensor cores and async copies ---------------------- */

/* mma, ldmatrix, cp_async, cp_async_commit, cp_async_wait (an INTRIN that
 * is not KF_II_PURE). */
void kf_ptx_emit_tensor(ptx_cx *cx, const kf_ir_ins *in);

/* ---- emit/ptx_ops.c, emit/ptx_math.c: instruction selection -------------- */

/* Lane-level operations (emit/ptx_ops.c). d, a, b are register names. */
void kf_ptx_cvt_lane(ptx_cx *cx, const char *d, kf_scalar ds, const char *a, kf_scalar as);
/* The low `bits` (8 or 16) of the 32-bit register w, zero-extended into the
 * 16-bit register d, masked with and.b32 first (see ptx_ops.c). */
void kf_ptx_low_bits(ptx_cx *cx, const char *d, const char *w, uint32_t bits);
void kf_ptx_normalize(ptx_cx *cx, const char *d, kf_scalar s);
/* Float math of builtin `bi` on one lane (emit/ptx_math.c). */
void kf_ptx_math_lane(ptx_cx *cx, kf_builtin bi, kf_scalar s, const char *d, const char *a,
                   const char *b, const char *c);
/* Emits one IR instruction (emit/ptx_ops.c). */
void kf_ptx_emit_ins(ptx_cx *cx, const kf_ir_ins *in);
/* Accounts for an instruction that writes no text (a skipped MOV). */
void kf_ptx_forget_ins(ptx_cx *cx, const kf_ir_ins *in);

#endif

/* PTX emitter: core IR -> PTX text that the driver loads directly (no NVRTC,
 * no LLVM). This file holds the module and entry framing: the `.version` /
 * `.target` header, one `.visible .entry` per kernel with its parameters (the
 * launch ABI: buffers as 64-bit global addresses, scalars by value in their
 * natural size, vectors as aligned byte arrays), `.maxntid` (and
 * `.minnctapersm` for min_blocks) from the schedule, `.reg` declarations
 * per register class, `.shared`/`.local` arrays (every shared one 16-byte
 * aligned; the dynamic one is the module's one `.extern .shared` array,
 * where every kernel's dynamic bytes start), line info (`.file`/`.loc` with -g) and the line map, the
 * `griddepcontrol.wait` that opens every sm_90 body (so the runtime may
 * launch it as a programmatic dependent, emit.h); and the driver:
 * per-kernel analysis, then the passes in order (emit_passes).
 * Instruction selection is in emit/ptx_ops.c, float math sequences in
 * emit/ptx_math.c, tensor cores and async copies in emit/ptx_tensor.c,
 * addresses in emit/ptx_mem.c, the text and register helpers all of them
 * use in emit/ptx_text.c, opcode spelling in emit/ptx_tables.c.
 *
 * Values map to virtual registers one per lane (%r, %rd, %f, %fd, %h, %rs,
 * %p), numbered in order of first appearance; ptxas does the register
 * allocation. For the reader the text carries a comment with the source line
 * before each statement's instructions, the source name where a let/var/
 * parameter is first written, and stays close to the IR with a few local
 * rewrites that never change a result:
 *   - constants appear as immediates wherever PTX takes one; a CONST whose
 *     every use is an immediate writes no register (a first pass over the
 *     instructions that read constants finds which ones need one);
 *   - `t = op ...; v = mov t` writes v directly when t has no other use;
 *   - `c = not x; if c` branches on x with the sense flipped; `if c break`
 *     is one predicated branch;
 *   - a global address computed for buf[i] is reused until buf or i change
 *     or control flow joins.
 * Output is a pure function of the IR and options (byte-identical). */
#include "ptx_internal.h"

#include <string.h>

#define PTX_VERSION "8.0"
#define PTX_REG_ARRAY_MAX 128  /* local arrays up to this many registers may live in registers */
#define PTX_DYN_SMEM "kf_dyn_smem"   /* the module's dynamic shared memory (.extern .shared) */

/* ---- per-kernel analysis ------------------------------------------------------ */

static bool reads(const kf_ir_ins *in, kf_val v)
{
    for (uint32_t j = 0; j < 4; j++)
        if (j < kf_ir_op_nargs[in->op] && in->a[j] == v) return true;
    return false;
}

/* An op that writes each destination lane with one instruction after
 * reading that lane's sources only (so its destination may be a source). */
static bool lanewise_single(const kf_ir_ins *in)
{
    if (in->op == KF_IR_INTRIN && in->sub == KF_BI_MMA) return true;   /* one mma reads C, then writes D */
    if (in->op != KF_IR_BINOP || in->type.kind == KF_TK_BUFFER) return false;
    kf_scalar s = (kf_scalar)in->type.scalar;
    bool ints = kf_scalar_class[s] == 'i' || kf_scalar_class[s] == 'u';
    bool op_ok = in->sub == KF_OP_ADD || in->sub == KF_OP_SUB || in->sub == KF_OP_MUL ||
                 (ints && (in->sub == KF_OP_AND || in->sub == KF_OP_OR || in->sub == KF_OP_XOR));
    return op_ok && ((ints && kf_scalar_bytes[s] >= 2) || s == KF_S_F32 || s == KF_S_F64);
}

/* `t = op ...; v = mov t` where t is used nowhere else and op does not
 * read v (or reads it lane by lane before writing): op writes v's
 * registers directly and the MOV disappears (`i = i + 1` is one add). */
static void forward_moves(ptx_cx *cx, const uint32_t *nuses)
{
    const kf_ir_kernel *k = cx->k;
    for (uint32_t i = 0; i + 1 < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i], *mv = &k->ins[i + 1];
        kf_val t = in->dst, v = mv->dst;
        if (!t || t >= k->nvals || in->op >= KF_IR_OP_COUNT || in->op == KF_IR_CONST || mv->op != KF_IR_MOV ||
            mv->a[0] != t || !v || v >= k->nvals || v == t || cx->ndefs[t] != 1 || nuses[t] != 1 ||
            cx->alias[v] || !kf_type_eq(k->vals[t].type, k->vals[v].type) || (reads(in, v) && !lanewise_single(in)))
            continue;
        cx->alias[t] = v;
        cx->skip[i + 1] = 1;
        i++;
    }
}

/* `c = not x; IF c` branches on x with the sense flipped (`@x bra` for
 * `@!c bra`) when c is used nowhere else: the NOT disappears. */
static void fold_not_into_branches(ptx_cx *cx, const uint32_t *nuses)
{
    const kf_ir_kernel *k = cx->k;
    for (uint32_t i = 1; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i], *n = &k->ins[i - 1];
        kf_val c = in->a[0];
        if (in->op != KF_IR_IF || n->op != KF_IR_UNOP || n->sub != KF_OP_NOT || n->dst != c || !c ||
            c >= k->nvals || cx->ndefs[c] != 1 || nuses[c] != 1 || cx->skip[i - 1] || !n->a[0])
            continue;
        cx->skip[i - 1] = 1;
        cx->flip[i] = 1;
    }
}

/* Counts definitions per value, finds single-CONST values and which local
 * arrays can stay in registers (every index a constant). */
static bool analyse(ptx_cx *cx, kf_arena *arena)
{
    const kf_ir_kernel *k = cx->k;
    cx->vreg = kf_arena_calloc(arena, k->nvals + 1, sizeof *cx->vreg);
    cx->wreg = kf_arena_calloc(arena, k->nvals + 1, sizeof *cx->wreg);
    cx->ndefs = kf_arena_calloc(arena, k->nvals + 1, sizeof *cx->ndefs);
    cx->def1 = kf_arena_calloc(arena, k->nvals + 1, sizeof *cx->def1);
    cx->areg = kf_arena_calloc(arena, k->narrays + 1, sizeof *cx->areg);
    cx->aname = kf_arena_calloc(arena, k->narrays + 1, sizeof *cx->aname);
    cx->needreg = kf_arena_calloc(arena, k->nvals + 1, sizeof *cx->needreg);
    cx->alias = kf_arena_calloc(arena, k->nvals + 1, sizeof *cx->alias);
    cx->skip = kf_arena_calloc(arena, k->nins + 1, sizeof *cx->skip);
    cx->named = kf_arena_calloc(arena, k->nvals + 1, sizeof *cx->named);
    cx->flip = kf_arena_calloc(arena, k->nins + 1, sizeof *cx->flip);
    cx->feeds = kf_arena_calloc(arena, k->nvals + 1, sizeof *cx->feeds);
    uint8_t *ftmp = kf_arena_calloc(arena, k->nvals + 1, 1);
    if (!cx->flip || !cx->feeds || !ftmp) return false;
    kf_ir_feed_flags(k, cx->feeds, ftmp);
    uint32_t *nuses = kf_arena_calloc(arena, k->nvals + 1, sizeof *nuses);
    if (!cx->alias || !cx->skip || !cx->named || !nuses) return false;
    bool *dyn = kf_arena_calloc(arena, k->narrays + 1, sizeof *dyn);
    if (!cx->vreg || !cx->wreg || !cx->ndefs || !cx->def1 || !cx->areg || !cx->aname || !dyn || !cx->needreg ||
        !kf_ptx_index_lines(cx, arena))
        return false;
    if (!kf_ir_linked(k)) {   /* labels and branches follow kf_ir_link's structure */
        cx->cur = k->loc;
        kf_ptx_error(cx, "internal error: the control markers of kernel '%s' are not paired (kf_ir_link)", k->name);
    }
    cx->dep_at = kf_emit_pdl_wait(cx->o) ? kf_ir_dep_wait_at(k) : UINT32_MAX;   /* below sm_90: no wait */
    cx->early = kf_ir_early_params(k);
    for (uint32_t v = 0; v <= k->nvals; v++) cx->def1[v] = -1;
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        if (in->dst && in->dst < k->nvals) {
            cx->ndefs[in->dst]++;
            cx->def1[in->dst] = (int32_t)i;
        }
        for (uint32_t j = 0; j < 4 && in->op < KF_IR_OP_COUNT; j++)
            if (j < kf_ir_op_nargs[in->op] && in->a[j] < k->nvals) nuses[in->a[j]]++;
    }
    for (uint32_t v = 0; v <= k->nvals; v++)   /* only single-definition values keep def1 */
        if (cx->ndefs[v] != 1) cx->def1[v] = -1;
    forward_moves(cx, nuses);
    fold_not_into_branches(cx, nuses);
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        uint64_t b;
        if ((in->op == KF_IR_ALOAD || in->op == KF_IR_ASTORE) && in->imm < k->narrays &&
            !kf_ptx_const_of(cx, in->a[0], &b))
            dyn[in->imm] = true;
    }
    for (uint32_t a = 0; a < k->narrays; a++) {
        const kf_ir_array *ar = &k->arrays[a];
        uint64_t nregs = (uint64_t)ar->type.len * ar->type.lanes;
        if (!(ar->type.flags & KF_TF_SHARED) && !dyn[a] && nregs <= PTX_REG_ARRAY_MAX && nregs > 0) {
            ptx_rclass rc = (ptx_rclass)kf_ptx_scalars[ar->type.scalar].rc;
            cx->areg[a] = cx->nreg[rc] + 1;
            cx->nreg[rc] += (uint32_t)nregs;
        }
        bool dup = false;
        for (uint32_t b2 = 0; b2 < a; b2++)
            dup |= k->arrays[b2].name && ar->name && !strcmp(k->arrays[b2].name, ar->name);
        /* unique by construction: a .kf name never holds '$', so "loc_x$3" (the
         * array's index after a '$') never meets another array's "loc_x_3" */
        const char *pre = (ar->type.flags & KF_TF_SHARED) ? "sh" : "loc";
        const char *nm = ar->name && strlen(ar->name) <= 24 ? ar->name : "arr";   /* addresses hold 40 chars */
        cx->aname[a] = dup || nm != ar->name ? kf_arena_printf(arena, "%s_%s$%u", pre, nm, a)
                                             : kf_arena_printf(arena, "%s_%s", pre, nm);
        if (ar->type.flags & KF_TF_DYN) cx->aname[a] = PTX_DYN_SMEM;
        if (!cx->aname[a]) return false;
    }
    return true;
}

/* ---- entry framing ------------------------------------------------------------ */

static const char *param_type(kf_type t)
{
    static const char *const names[KF_S_COUNT] = {
        [KF_S_BOOL] = ".u8", [KF_S_I8] = ".s8", [KF_S_U8] = ".u8", [KF_S_I16] = ".s16",
        [KF_S_U16] = ".u16", [KF_S_I32] = ".s32", [KF_S_U32] = ".u32", [KF_S_I64] = ".s64",
        [KF_S_U64] = ".u64", [KF_S_F16] = ".b16", [KF_S_BF16] = ".b16", [KF_S_F32] = ".f32",
        [KF_S_F64] = ".f64",
    };
    return names[t.scalar] ? names[t.scalar] : ".b32";
}

static void emit_params(kf_buf *out, const kf_ir_kernel *k)
{
    for (uint32_t i = 0; i < k->nparams; i++) {
        const kf_ir_param *p = &k->params[i];
        const char *sep = i + 1 < k->nparams ? "," : "";
        if (p->type.kind == KF_TK_BUFFER) {
            uint32_t al = p->align ? p->align : kf_type_elem_bytes(p->type);
            if (al < 1) al = 1;
            kf_buf_printf(out, "\t.param .u64 .ptr .global .align %u p_%s%s\n", al, p->name, sep);
        } else if (p->type.kind == KF_TK_VECTOR) {
            uint32_t sz = kf_type_elem_bytes(p->type);
            kf_buf_printf(out, "\t.param .align %u .b8 p_%s[%u]%s\n", sz, p->name, sz, sep);
        } else {
            kf_buf_printf(out, "\t.param %s p_%s%s\n", param_type(p->type), p->name, sep);
        }
    }
}

static uint32_t array_align(kf_type t)
{
    uint32_t b = kf_type_elem_bytes(t);
    return b < 4 ? 4 : b;
}

/* Byte size of an array's element in memory (bool is one byte). */
static uint32_t array_bytes(kf_type t)
{
    return kf_type_elem_bytes(t) * t.len;
}

/* The header of one entry (everything before the body), as lines whose
 * locations go to the map. */
static void emit_entry_head(ptx_cx *cx, kf_buf *out, ptx_locvec *locs)
{
    const kf_ir_kernel *k = cx->k;
    size_t start = out->len;
    kf_buf_printf(out, "\n// kernel %s", k->name);
    if (k->loc.line) {
        const char *f = k->loc.file ? k->loc.file : "";
        kf_buf_puts(out, " (");
        kf_ptx_put_ascii(out, f, strlen(f));
        kf_buf_printf(out, ":%u)", k->loc.line);
    }
    kf_buf_printf(out, "\n.visible .entry %s(\n", k->name);
    emit_params(out, k);
    kf_buf_puts(out, ")\n");
    const uint32_t *b = k->sched.block;
    if (b[0]) kf_buf_printf(out, ".maxntid %u, %u, %u\n", b[0], b[1] ? b[1] : 1, b[2] ? b[2] : 1);
    if (b[0] && k->sched.min_blocks) kf_buf_printf(out, ".minnctapersm %u\n", k->sched.min_blocks);
    kf_buf_puts(out, "{\n");
    for (int rc = 0; rc < PTX_RC_COUNT; rc++)
        if (cx->nreg[rc])
            kf_buf_printf(out, "\t.reg %s %s<%u>;\n", kf_ptx_rc_decl[rc], kf_ptx_rc_prefix[rc], cx->nreg[rc] + 1);
    for (uint32_t a = 0; a < k->narrays; a++) {
        const kf_ir_array *ar = &k->arrays[a];
        if (cx->areg[a]) {
            char tn[32];
            kf_buf_printf(out, "\t// %s: %s[%u] held in registers %s%u..%s%u\n", ar->name ? ar->name : "?",
                          kf_type_str(kf_type_elem(ar->type), tn, sizeof tn), ar->type.len,
                          kf_ptx_rc_prefix[kf_ptx_scalars[ar->type.scalar].rc], cx->areg[a],
                          kf_ptx_rc_prefix[kf_ptx_scalars[ar->type.scalar].rc],
                          cx->areg[a] + ar->type.len * ar->type.lanes - 1);
            continue;
        }
        if (ar->type.flags & KF_TF_DYN)   /* the launch's dynamic bytes: the module's extern array */
            kf_buf_printf(out, "\t// %s: %s[] is the dynamic shared memory %s\n", ar->name ? ar->name : "?",
                          kf_type_str(kf_type_elem(ar->type), (char[32]){0}, 32), PTX_DYN_SMEM);
        else if (ar->type.flags & KF_TF_SHARED)
            kf_buf_printf(out, "\t.shared .align %u .b8 %s[%u];\n", KF_SHARED_ALIGN, cx->aname[a], array_bytes(ar->type));
        else
            kf_buf_printf(out, "\t.local .align %u .b8 %s[%u];\n", array_align(ar->type), cx->aname[a],
                          array_bytes(ar->type));
    }
    for (size_t i = start; i < out->len; i++)
        if (out->data[i] == '\n' && !KF_VEC_PUSH(locs, k->loc)) cx->failed = true;
}

static bool check_arch(uint32_t arch)
{
    return arch == 80 || arch == 86 || arch == 89 || arch == 90;
}

/* The first time a named value (a let, var or parameter) is written, its
 * source name goes at the end of the instruction line: `add.u32 %r6, ...;
 * // i`. */
static void name_comment(ptx_cx *cx, const kf_ir_ins *in)
{
    kf_val v = in->dst;
    if (!cx->final_pass || !v || v >= cx->k->nvals) return;
    if (cx->alias[v]) v = cx->alias[v];
    const char *name = cx->k->vals[v].name;
    kf_buf *b = &cx->body;
    if (!name || cx->named[v] || b->len < 2 || b->data[b->len - 1] != '\n' || b->data[b->len - 2] != ';') return;
    cx->named[v] = 1;
    b->len--;
    kf_buf_append(b, "\t// ", 4);
    kf_buf_puts(b, name);
    kf_buf_append(b, "\n", 1);
}

/* For kernels with warp operations: the membermask of the lanes of this
 * thread's warp that exist and their count - 1 (the shfl clamp), from the
 * launched block (%ntid; a block that is not a multiple of 32 threads has a
 * partial last warp): n = min(32, threads - first linear thread of the warp),
 * mask = (1 << n) - 1 (shl by 32 gives 0 in PTX, so a full warp gets ~0). */
static void emit_warp_lanes(ptx_cx *cx)
{
    const kf_ir_kernel *k = cx->k;
    uint32_t i = 0;
    while (i < k->nins && k->ins[i].op != KF_IR_SHFL && k->ins[i].op != KF_IR_VOTE) i++;
    if (i == k->nins) return;
    preg nx = kf_ptx_tmp(cx, PTX_RC_R), ny = kf_ptx_tmp(cx, PTX_RC_R), t = kf_ptx_tmp(cx, PTX_RC_R), u = kf_ptx_tmp(cx, PTX_RC_R);
    cx->wmask = kf_ptx_tmp(cx, PTX_RC_R);
    cx->wclamp = kf_ptx_tmp(cx, PTX_RC_R);
    kf_ptx_comment(cx, "lanes of this warp that exist: membermask %s, shfl clamp %s", cx->wmask.s, cx->wclamp.s);
    kf_ptx_ins(cx, "mov.u32 %s, %%ntid.x", nx.s);
    kf_ptx_ins(cx, "mov.u32 %s, %%ntid.y", ny.s);
    kf_ptx_ins(cx, "mov.u32 %s, %%tid.z", t.s);
    kf_ptx_ins(cx, "mov.u32 %s, %%tid.y", u.s);
    kf_ptx_ins(cx, "mad.lo.u32 %s, %s, %s, %s", t.s, t.s, ny.s, u.s);
    kf_ptx_ins(cx, "mov.u32 %s, %%tid.x", u.s);
    kf_ptx_ins(cx, "mad.lo.u32 %s, %s, %s, %s", t.s, t.s, nx.s, u.s);
    kf_ptx_ins(cx, "and.b32 %s, %s, 0xffffffe0", t.s, t.s);
    kf_ptx_ins(cx, "mul.lo.u32 %s, %s, %s", nx.s, nx.s, ny.s);
    kf_ptx_ins(cx, "mov.u32 %s, %%ntid.z", u.s);
    kf_ptx_ins(cx, "mul.lo.u32 %s, %s, %s", nx.s, nx.s, u.s);
    kf_ptx_ins(cx, "sub.u32 %s, %s, %s", nx.s, nx.s, t.s);
    kf_ptx_ins(cx, "min.u32 %s, %s, 32", nx.s, nx.s);
    kf_ptx_ins(cx, "sub.u32 %s, %s, 1", cx->wclamp.s, nx.s);
    kf_ptx_ins(cx, "mov.u32 %s, 1", u.s);
    kf_ptx_ins(cx, "shl.b32 %s, %s, %s", u.s, u.s, nx.s);
    kf_ptx_ins(cx, "sub.u32 %s, %s, 1", cx->wmask.s, u.s);
}

/* Programmatic dependent launch (emit.h, kf_emit_pdl_wait): before any
 * memory access, wait for the grids this one depends on; with pdl_trigger,
 * then let the next one be scheduled. A kernel with dep_wait() waits there
 * instead (emit/ptx_tensor.c). */
static void emit_pdl(ptx_cx *cx)
{
    if (!kf_emit_pdl_wait(cx->o) || kf_ir_places_dep_wait(cx->k)) return;
    kf_ptx_comment(cx, "programmatic dependent launch: wait for the grids this one depends on");
    kf_ptx_ins(cx, "griddepcontrol.wait");
    if (cx->o->pdl_trigger) kf_ptx_ins(cx, "griddepcontrol.launch_dependents");
}

/* Emits one kernel body into cx->body. */
static void emit_body(ptx_cx *cx)
{
    const kf_ir_kernel *k = cx->k;
    cx->cur = k->loc;
    if (!cx->cur.file && cx->m) cx->cur.file = cx->m->file;
    emit_pdl(cx);
    emit_warp_lanes(cx);
    for (uint32_t i = 0; i < k->nins && !cx->failed; i++) {
        cx->at = i;
        if (cx->skip[i]) {
            kf_ptx_forget_ins(cx, &k->ins[i]);
            continue;
        }
        cx->cur = k->ins[i].loc;
        if (!cx->cur.file && cx->m) cx->cur.file = cx->m->file;
        /* IF c; BREAK/CONTINUE/RET; ENDIF is one predicated branch or ret. */
        if (k->ins[i].op == KF_IR_IF && i + 2 < k->nins && k->ins[i + 2].op == KF_IR_ENDIF &&
            (k->ins[i + 1].op == KF_IR_BREAK || k->ins[i + 1].op == KF_IR_CONTINUE ||
             k->ins[i + 1].op == KF_IR_RET)) {
            const kf_ir_ins *j = &k->ins[i + 1];
            kf_ir_flow lp = kf_ir_flow_of(k, i + 1);
            const char *suffix = j->op == KF_IR_BREAK ? "_end" : (lp.mid ? "_latch" : "");
            const char *neg;
            preg c = kf_ptx_if_pred(cx, i, true, &neg);
            if (j->op == KF_IR_RET) kf_ptx_ins(cx, "@%s%s ret", neg, c.s);
            else kf_ptx_ins(cx, "@%s%s bra $L_loop_%u%s", neg, c.s, lp.head, suffix);
            i += 2;
            continue;
        }
        kf_ptx_emit_ins(cx, &k->ins[i]);
        name_comment(cx, &k->ins[i]);
    }
    if (!k->nins) cx->cur = k->loc;
    cx->last_comment_line = cx->cur.line;   /* the closing ret needs no source comment */
    kf_ptx_ins(cx, "ret");
}

static bool has_const_operand(const ptx_cx *cx, const kf_ir_ins *in)
{
    uint64_t b;
    for (uint32_t j = 0; j < 4; j++)
        if (in->op < KF_IR_OP_COUNT && j < kf_ir_op_nargs[in->op] && kf_ptx_const_of(cx, in->a[j], &b)) return true;
    return false;
}

/* The first pass: selects, without writing text, the instructions that
 * read a single-CONST value (only they decide whether it needs a register)
 * and the branch conditions. */
static void find_needed_consts(ptx_cx *cx)
{
    const kf_ir_kernel *k = cx->k;
    for (uint32_t i = 0; i < k->nins && !cx->failed; i++) {
        const kf_ir_ins *in = &k->ins[i];
        cx->at = i;
        cx->cur = in->loc;
        if (cx->skip[i]) continue;
        if (in->op == KF_IR_IF) {
            const char *neg;
            (void)kf_ptx_if_pred(cx, i, true, &neg);
        } else if (has_const_operand(cx, in)) {
            kf_ptx_emit_ins(cx, in);
        }
    }
}

/* Two passes over the body: the first finds which constants some use needs
 * in a register (the others appear only as immediates), the second writes
 * the text. Both make the same decisions, so the first pass's needs hold. */
static void emit_passes(ptx_cx *cx)
{
    uint32_t nreg0[PTX_RC_COUNT];
    memcpy(nreg0, cx->nreg, sizeof nreg0);
    kf_diags *diags = cx->diags, scratch = {0};
    cx->diags = &scratch;
    find_needed_consts(cx);
    kf_diags_free(&scratch);
    cx->diags = diags;
    kf_buf_reset(&cx->body);
    cx->locs.len = 0;
    memcpy(cx->nreg, nreg0, sizeof nreg0);
    memset(cx->vreg, 0, (cx->k->nvals + 1) * sizeof *cx->vreg);
    memset(cx->wreg, 0, (cx->k->nvals + 1) * sizeof *cx->wreg);
    cx->nacache = 0;
    cx->last_loc_line = cx->last_loc_col = cx->last_comment_line = 0;
    cx->failed = false;
    cx->final_pass = true;
    /* about 40 bytes and 1.5 lines of PTX per IR instruction: reserve once */
    kf_buf_append(&cx->body, "", 0);
    if (!kf_vec_grow((void **)&cx->body.data, &cx->body.cap, (size_t)cx->k->nins * 48 + 256, 1) ||
        !KF_VEC_RESERVE(&cx->locs, (size_t)cx->k->nins * 2 + 16))
        cx->failed = true;
    emit_body(cx);
}

static kf_status emit_kernel(const kf_module *m, const kf_ir_kernel *k, const kf_emit_opts *o, kf_buf *out,
                             ptx_locvec *locs, kf_diags *diags)
{
    kf_arena arena;
    kf_arena_init(&arena);
    ptx_cx cx = {.m = m, .k = k, .o = o, .diags = diags};
    kf_status st = KF_OK;
    if (!analyse(&cx, &arena)) {
        st = KF_ERR_NOMEM;
        goto done;
    }
    if (!cx.failed) emit_passes(&cx);
    if (cx.failed || cx.body.oom) {
        st = cx.body.oom ? KF_ERR_NOMEM : KF_ERR_SOURCE;
        goto done;
    }
    emit_entry_head(&cx, out, locs);
    kf_buf_append(out, cx.body.data, cx.body.len);
    kf_buf_puts(out, "}\n");
    if (!KF_VEC_RESERVE(locs, cx.locs.len + 1)) {
        st = KF_ERR_NOMEM;
        goto done;
    }
    if (cx.locs.len) memcpy(locs->data + locs->len, cx.locs.data, cx.locs.len * sizeof *cx.locs.data);
    locs->len += cx.locs.len;
    locs->data[locs->len++] = k->loc;
done:
    if (cx.failed && st == KF_OK) st = KF_ERR_SOURCE;
    kf_buf_free(&cx.body);
    KF_VEC_FREE(&cx.locs);
    kf_arena_free(&arena);
    return st;
}

static bool has_dynamic_shared(const kf_ir_kernel *k)
{
    for (uint32_t a = 0; a < k->narrays; a++)
        if (k->arrays[a].type.flags & KF_TF_DYN) return true;
    return false;
}

static void emit_module_head(const kf_module *m, const kf_emit_opts *o, uint32_t arch, bool dyn, kf_buf *out,
                             ptx_locvec *locs)
{
    size_t start = out->len;
    const char *file = m && m->file ? m->file : "?";
    kf_buf_printf(out, "//\n// Generated by kforge %s from ", KF_VERSION);
    kf_ptx_put_ascii(out, file, strlen(file));
    kf_buf_puts(out, "\n//\n");
    kf_buf_printf(out, ".version %s\n.target sm_%u\n.address_size 64\n", PTX_VERSION, arch);
    if (o->lineinfo) {
        kf_buf_puts(out, ".file 1 \"");
        kf_ptx_put_ascii(out, file, strlen(file));
        kf_buf_puts(out, "\"\n");
    }
    if (dyn) kf_buf_printf(out, "\n.extern .shared .align %u .b8 %s[];\n", KF_SHARED_ALIGN, PTX_DYN_SMEM);
    for (size_t i = start; i < out->len; i++)
        if (out->data[i] == '\n') (void)KF_VEC_PUSH(locs, ((kf_loc){0}));
}

kf_status kf_ptx_emit(const kf_module *m, const kf_ir_kernel *k, const kf_emit_opts *o,
                      kf_buf *out, kf_linemap *linemap, kf_diags *diags)
{
    kf_emit_opts defaults = {.arch = 90, .lineinfo = false};
    if (!o) o = &defaults;
    kf_emit_opts opts = *o;
    if (!opts.arch) opts.arch = 90;
    kf_loc mloc = {m && m->file ? m->file : "?", 1, 1};
    if (!check_arch(opts.arch)) {
        kf_diag_error(diags, mloc, "unsupported target sm_%u: the PTX back end supports sm_80, sm_86, sm_89 and sm_90",
                      opts.arch);
        return KF_ERR_SOURCE;
    }
    if (!k && (!m || m->nkernels == 0)) {
        kf_diag_error(diags, mloc, "no kernel to emit: the module declares no `kernel`");
        return KF_ERR_SOURCE;
    }
    ptx_locvec locs = {0};
    uint32_t n = k ? 1 : m->nkernels;
    /* reserve the whole module once (about 48 bytes of PTX per IR
     * instruction, as for the bodies) instead of growing by doubling */
    size_t est = 1024;
    for (uint32_t i = 0; i < n; i++) est += (size_t)(k ? k : &m->kernels[i])->nins * 48 + 1024;
    if (!out->oom) (void)kf_vec_grow((void **)&out->data, &out->cap, out->len + est, 1);
    bool dyn = false;
    for (uint32_t i = 0; i < n; i++) dyn |= has_dynamic_shared(k ? k : &m->kernels[i]);
    emit_module_head(m, &opts, opts.arch, dyn, out, &locs);
    kf_status st = KF_OK;
    for (uint32_t i = 0; i < n && st == KF_OK; i++)
        st = emit_kernel(m, k ? k : &m->kernels[i], &opts, out, &locs, diags);
    if (out->oom && st == KF_OK) st = KF_ERR_NOMEM;
    if (linemap && st == KF_OK) {
        KF_VEC_FREE(&linemap->lines);
        linemap->lines.data = locs.data;
        linemap->lines.len = locs.len;
        linemap->lines.cap = locs.cap;
    } else {
        KF_VEC_FREE(&locs);
    }
    return st;
}

void kf_linemap_free(kf_linemap *lm)
{
    KF_VEC_FREE(&lm->lines);
}

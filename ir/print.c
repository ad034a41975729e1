/* The core IR printer behind `kforge emit --target ir` (ir.h kf_ir_print).
 *
 * Layout: one header line per kernel (name, parameters with types and
 * buffer alignment, schedule), one line per local or shared array, then one
 * instruction per line, indented by structure (IF/LOOP bodies one step in),
 * each ending with its source location:
 *
 *   kernel saxpy(a: f32, x: &[f32] align 4, y: &mut [f32] align 4, n: u32) block(256, 1, 1) grid(cdiv(n, 256))
 *     %7:f32 = load %2[%6]                    ; saxpy.kf:6:24
 *
 * A destination is `%id:type` followed by its source name when it has one;
 * operands are `%id`. Output depends only on the kernel, so it is stable. */
#include "ir.h"
#include "numeric.h"

#include <math.h>
#include <string.h>

#define LOC_COLUMN 44   /* where the `; file:line:col` comment starts */

static const char *const binop_names[KF_OP_COUNT] = {
    [KF_OP_ADD] = "add", [KF_OP_SUB] = "sub", [KF_OP_MUL] = "mul", [KF_OP_DIV] = "div",
    [KF_OP_REM] = "rem", [KF_OP_AND] = "and", [KF_OP_OR] = "or", [KF_OP_XOR] = "xor",
    [KF_OP_SHL] = "shl", [KF_OP_SHR] = "shr", [KF_OP_EQ] = "eq", [KF_OP_NE] = "ne",
    [KF_OP_LT] = "lt", [KF_OP_LE] = "le", [KF_OP_GT] = "gt", [KF_OP_GE] = "ge",
    [KF_OP_NEG] = "neg", [KF_OP_NOT] = "not", [KF_OP_BNOT] = "bnot",
};

static const char *op_name(uint16_t op)
{
    return op < KF_OP_COUNT && binop_names[op] ? binop_names[op] : "?";
}

static const char *bi_name(uint16_t b)
{
    return b < KF_BI_COUNT ? kf_builtin_names[b] : "?";
}

static void print_float(kf_buf *out, double d, int digits)
{
    if (isnan(d)) kf_buf_puts(out, "nan");
    else if (isinf(d)) kf_buf_puts(out, d < 0 ? "-inf" : "inf");
    else kf_buf_printf(out, "%.*g", digits, d);
}

/* A CONST's value in the spelling of its type. */
static void print_const(kf_buf *out, kf_type t, uint64_t bits)
{
    kf_scalar s = (kf_scalar)t.scalar;
    switch (kf_scalar_class[s]) {
    case 'b': kf_buf_puts(out, bits ? "true" : "false"); break;
    case 'i': kf_buf_printf(out, "%lld", (long long)kf_bits_to_i64(s, bits)); break;
    case 'f': {
        int digits = s == KF_S_F64 ? 17 : s == KF_S_F32 ? 9 : s == KF_S_F16 ? 5 : 4;
        print_float(out, kf_bits_to_double(s, bits), digits);
        break;
    }
    default: kf_buf_printf(out, "%llu", (unsigned long long)bits); break;
    }
}

/* ---- grid expressions (typed AST) ------------------------------------------ */

static void print_expr(kf_buf *out, const kf_node *e);

/* Binding strength of an expression (LANGUAGE.md section 5); 99: atoms. */
static int prec(const kf_node *e)
{
    if (!e) return 99;
    if (e->kind == KF_N_CAST) return 11;
    if (e->kind == KF_N_UNARY) return 12;
    if (e->kind != KF_N_BINARY) return 99;
    switch (e->op) {
    case KF_OP_LOR: return 1;
    case KF_OP_LAND: return 2;
    case KF_OP_OR: return 3;
    case KF_OP_XOR: return 4;
    case KF_OP_AND: return 5;
    case KF_OP_EQ: case KF_OP_NE: return 6;
    case KF_OP_LT: case KF_OP_LE: case KF_OP_GT: case KF_OP_GE: return 7;
    case KF_OP_SHL: case KF_OP_SHR: return 8;
    case KF_OP_ADD: case KF_OP_SUB: return 9;
    default: return 10;
    }
}

/* Prints a child, in parentheses when it binds looser than its parent (or
 * as tightly, on the right: a - (b - c)). */
static void print_operand(kf_buf *out, const kf_node *e, int parent, bool right)
{
    int p = prec(e);
    bool paren = p < parent || (right && p == parent);
    if (paren) kf_buf_puts(out, "(");
    print_expr(out, e);
    if (paren) kf_buf_puts(out, ")");
}

static void print_expr(kf_buf *out, const kf_node *e)
{
    char tb[48];
    if (!e) {
        kf_buf_puts(out, "?");
        return;
    }
    switch (e->kind) {
    case KF_N_INT: kf_buf_printf(out, "%llu", (unsigned long long)e->ival); break;
    case KF_N_FLOAT: print_float(out, e->fval, 17); break;
    case KF_N_BOOL: kf_buf_puts(out, e->ival ? "true" : "false"); break;
    case KF_N_NAME: kf_buf_puts(out, e->name ? e->name : bi_name(e->op)); break;
    case KF_N_TYPE: kf_buf_puts(out, kf_type_str(e->type, tb, sizeof tb)); break;
    case KF_N_BINARY:
        print_operand(out, e->a, prec(e), false);
        kf_buf_printf(out, " %s ", kf_op_spelling[e->op < KF_OP_COUNT ? e->op : 0]);
        print_operand(out, e->b, prec(e), true);
        break;
    case KF_N_UNARY:
        kf_buf_puts(out, kf_op_spelling[e->op < KF_OP_COUNT ? e->op : 0]);
        print_operand(out, e->a, prec(e), false);
        break;
    case KF_N_CAST:
        print_operand(out, e->a, prec(e), false);
        kf_buf_printf(out, " as %s", kf_type_str(e->type, tb, sizeof tb));
        break;
    case KF_N_MEMBER:
        print_operand(out, e->a, 99, false);
        kf_buf_printf(out, "%s%s", e->name && e->name[0] == '.' ? "" : ".", e->name ? e->name : "?");
        break;
    case KF_N_INDEX:
        print_operand(out, e->a, 99, false);
        kf_buf_puts(out, "[");
        print_expr(out, e->b);
        kf_buf_puts(out, "]");
        break;
    case KF_N_CALL:
        print_expr(out, e->a);
        kf_buf_puts(out, "(");
        for (const kf_node *a = e->b; a; a = a->next) {
            print_expr(out, a);
            if (a->next) kf_buf_puts(out, ", ");
        }
        kf_buf_puts(out, ")");
        break;
    default: kf_buf_printf(out, "<%s>", kf_node_kind_names[e->kind]); break;
    }
}

/* ---- header ------------------------------------------------------------------ */

static void print_loc(kf_buf *out, size_t line_start, kf_loc loc)
{
    size_t col = out->len - line_start;
    kf_buf_printf(out, "%*s; %s:%u:%u\n", col < LOC_COLUMN ? (int)(LOC_COLUMN - col) : 1, "",
                  loc.file ? loc.file : "?", loc.line, loc.col);
}

static void print_header(kf_buf *out, const kf_ir_kernel *k)
{
    char tb[48];
    size_t start = out->len;
    kf_buf_printf(out, "kernel %s(", k->name ? k->name : "?");
    for (uint32_t i = 0; i < k->nparams; i++) {
        const kf_ir_param *p = &k->params[i];
        kf_buf_printf(out, "%s%s: %s", i ? ", " : "", p->name ? p->name : "?", kf_type_str(p->type, tb, sizeof tb));
        if (p->type.kind == KF_TK_BUFFER) kf_buf_printf(out, " align %u", p->align);
    }
    const kf_schedule *s = &k->sched;
    kf_buf_printf(out, ") block(%u, %u, %u) grid(", s->block[0], s->block[1], s->block[2]);
    if (!s->ngrid) kf_buf_printf(out, "cdiv(count, %u)", s->block[0]);
    for (uint32_t i = 0; i < s->ngrid && i < 3; i++) {
        if (i) kf_buf_puts(out, ", ");
        print_expr(out, s->grid[i]);
    }
    kf_buf_puts(out, ")");
    if (s->shared) {
        kf_buf_puts(out, " shared(");
        print_expr(out, s->shared);
        kf_buf_puts(out, ")");
    }
    if (s->min_blocks) kf_buf_printf(out, " min_blocks(%u)", s->min_blocks);
    print_loc(out, start, k->loc);
}

/* An array's printed name: `@name`, or `@name.index` when names repeat. */
static void print_array(kf_buf *out, const kf_ir_kernel *k, uint64_t a)
{
    if (a >= k->narrays) {
        kf_buf_printf(out, "@?%llu", (unsigned long long)a);
        return;
    }
    const char *n = k->arrays[a].name ? k->arrays[a].name : "array";
    bool unique = true;
    for (uint32_t i = 0; i < k->narrays && unique; i++)
        unique = i == a || !k->arrays[i].name || strcmp(k->arrays[i].name, n) != 0;
    if (unique) kf_buf_printf(out, "@%s", n);
    else kf_buf_printf(out, "@%s.%llu", n, (unsigned long long)a);
}

/* ` as T` after an array access through a view of another element type. */
static void print_view(kf_buf *out, const kf_ir_kernel *k, const kf_ir_ins *in)
{
    char tb[48];
    if (in->imm >= k->narrays) return;
    kf_type at = k->arrays[in->imm].type;
    if (at.scalar != in->type.scalar || at.lanes != in->type.lanes)
        kf_buf_printf(out, " as %s", kf_type_str(in->type, tb, sizeof tb));
}

static void print_arrays(kf_buf *out, const kf_ir_kernel *k)
{
    char tb[48];
    for (uint32_t i = 0; i < k->narrays; i++) {
        size_t start = out->len;
        kf_type t = k->arrays[i].type;
        kf_buf_printf(out, "  %s ", (t.flags & KF_TF_SHARED) ? "shared" : "local");
        print_array(out, k, i);
        if (t.flags & KF_TF_DYN) kf_buf_printf(out, ": %s[] dynamic", kf_type_str(kf_type_elem(t), tb, sizeof tb));
        else kf_buf_printf(out, ": %s[%u]", kf_type_str(kf_type_elem(t), tb, sizeof tb), t.len);
        print_loc(out, start, k->arrays[i].loc);
    }
}

/* ---- instructions ------------------------------------------------------------ */

static void print_dst(kf_buf *out, const kf_ir_kernel *k, kf_val v)
{
    char tb[48];
    if (v >= k->nvals) {
        kf_buf_printf(out, "%%%u:? = ", v);
        return;
    }
    kf_buf_printf(out, "%%%u:%s", v, kf_type_str(k->vals[v].type, tb, sizeof tb));
    if (k->vals[v].name) kf_buf_printf(out, " %s", k->vals[v].name);
    kf_buf_puts(out, " = ");
}

static void print_typed(kf_buf *out, const kf_ir_kernel *k, kf_val v)
{
    char tb[48];
    kf_buf_printf(out, "%%%u:%s", v, v < k->nvals ? kf_type_str(k->vals[v].type, tb, sizeof tb) : "?");
}

/* An INTRIN: `dot4 %1, %2, %3`; one naming an array as an access does
 * (`ldmatrix_x4 @t[%5] as f16`, `cp_async @t[%3], %1[%4], %6`);
 * `cp_async_wait 1`. */
static void print_intrin(kf_buf *out, const kf_ir_kernel *k, const kf_ir_ins *in)
{
    const kf_val *a = in->a;
    char tb[48];
    unsigned n = 0, f = 0;
    kf_ir_intrin_info(in->sub, &n, &f);
    kf_buf_puts(out, bi_name(in->sub));
    if (in->sub == KF_BI_CP_ASYNC_WAIT) kf_buf_printf(out, " %llu", (unsigned long long)in->imm);
    if (!(f & KF_II_ARRAY)) {
        for (unsigned i = 0; i < 4 && a[i]; i++) kf_buf_printf(out, "%s%%%u", i ? ", " : " ", a[i]);
        return;
    }
    kf_buf_puts(out, " ");
    print_array(out, k, in->imm);
    kf_type et = kf_builtin_ldmatrix((kf_builtin)in->sub, NULL) ? kf_type_elem(in->type) : in->type;
    kf_buf_printf(out, "[%%%u] as %s", a[0], kf_type_str(et, tb, sizeof tb));
    if (n >= 3) kf_buf_printf(out, ", %%%u[%%%u]", a[1], a[2]);
    if (n >= 4) kf_buf_printf(out, ", %%%u", a[3]);
}

/* The operation part of one instruction (after `dst = `). */
static void print_body(kf_buf *out, const kf_ir_kernel *k, const kf_ir_ins *in)
{
    const kf_val *a = in->a;
    char tb[48];
    switch (in->op) {
    case KF_IR_CONST: kf_buf_puts(out, "const "); print_const(out, in->type, in->imm); break;
    case KF_IR_PARAM: kf_buf_printf(out, "param %llu", (unsigned long long)in->imm); break;
    case KF_IR_MOV: kf_buf_printf(out, "mov %%%u", a[0]); break;
    case KF_IR_BINOP: kf_buf_printf(out, "%s %%%u, %%%u", op_name(in->sub), a[0], a[1]); break;
    case KF_IR_CMP:
        kf_buf_printf(out, "cmp.%s.%s %%%u, %%%u", op_name(in->sub), kf_type_str(in->type, tb, sizeof tb), a[0], a[1]);
        break;
    case KF_IR_UNOP: kf_buf_printf(out, "%s %%%u", op_name(in->sub), a[0]); break;
    case KF_IR_CVT:
    case KF_IR_BITCAST:
        kf_buf_printf(out, "%s ", kf_ir_op_names[in->op]);
        print_typed(out, k, a[0]);
        break;
    case KF_IR_SELECT: kf_buf_printf(out, "select %%%u, %%%u, %%%u", a[0], a[1], a[2]); break;
    case KF_IR_MATH:
        kf_buf_printf(out, "%s %%%u", bi_name(in->sub), a[0]);
        for (int i = 1; i < 3 && a[i]; i++) kf_buf_printf(out, ", %%%u", a[i]);
        break;
    case KF_IR_SPLAT: kf_buf_printf(out, "splat %%%u", a[0]); break;
    case KF_IR_EXTRACT: kf_buf_printf(out, "extract %%%u[%llu]", a[0], (unsigned long long)in->imm); break;
    case KF_IR_INSERT:
        kf_buf_printf(out, "insert %%%u[%llu], %%%u", a[0], (unsigned long long)in->imm, a[1]);
        break;
    case KF_IR_SREG:
        kf_buf_printf(out, "sreg %s", in->imm < KF_SR_COUNT ? kf_ir_sreg_names[in->imm] : "?");
        break;
    case KF_IR_VIEW: kf_buf_printf(out, "view %%%u", a[0]); break;
    case KF_IR_LOAD: kf_buf_printf(out, "load %%%u[%%%u]", a[0], a[1]); break;
    case KF_IR_STORE: kf_buf_printf(out, "store %%%u[%%%u], %%%u", a[0], a[1], a[2]); break;
    case KF_IR_ALOAD:
        kf_buf_puts(out, "aload ");
        print_array(out, k, in->imm);
        kf_buf_printf(out, "[%%%u]", a[0]);
        print_view(out, k, in);
        break;
    case KF_IR_ASTORE:
        kf_buf_puts(out, "astore ");
        print_array(out, k, in->imm);
        kf_buf_printf(out, "[%%%u]", a[0]);
        print_view(out, k, in);
        kf_buf_printf(out, ", %%%u", a[1]);
        break;
    case KF_IR_INTRIN: print_intrin(out, k, in); break;
    case KF_IR_ATOMIC:
        kf_buf_printf(out, "%s %%%u[%%%u], %%%u", bi_name(in->sub), a[0], a[1], a[2]);
        if (in->sub == KF_BI_ATOMIC_CAS) kf_buf_printf(out, ", %%%u", a[3]);
        break;
    case KF_IR_SHFL: kf_buf_printf(out, "%s %%%u, %%%u", bi_name(in->sub), a[0], a[1]); break;
    case KF_IR_VOTE: kf_buf_printf(out, "%s %%%u", bi_name(in->sub), a[0]); break;
    case KF_IR_IF: kf_buf_printf(out, "if %%%u", a[0]); break;
    default: kf_buf_puts(out, in->op < KF_IR_OP_COUNT ? kf_ir_op_names[in->op] : "?"); break;
    }
}

void kf_ir_print(kf_buf *out, const kf_ir_kernel *k)
{
    print_header(out, k);
    print_arrays(out, k);
    int depth = 1;
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        int ind = depth;
        if (in->op == KF_IR_ENDIF || in->op == KF_IR_ENDLOOP) ind = depth = depth > 1 ? depth - 1 : 1;
        else if (in->op == KF_IR_ELSE || in->op == KF_IR_LATCH) ind = depth > 1 ? depth - 1 : 1;
        size_t start = out->len;
        kf_buf_printf(out, "%*s", 2 * ind, "");
        if (in->dst) print_dst(out, k, in->dst);
        print_body(out, k, in);
        print_loc(out, start, in->loc);
        if (in->op == KF_IR_IF || in->op == KF_IR_LOOP) depth++;
    }
}

/* Analysis half of the CUDA-C emitter (passes 1-6 of emit/cuda_c.c's file
 * comment): structure and operand checks, reachability, C scopes, liveness,
 * how each value is declared, the readability folds (constructor chains,
 * single-use temporaries, lane-by-lane folds, else-if, loop headers) and
 * the C names. It decides; emit/cuda_c.c writes. Nothing here moves an
 * operation with an effect. */
#include "cuda_c.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef kf_cu_kernel kw;
typedef kf_cu_vinfo vinfo;
typedef kf_cu_names name_set;

const uint8_t kf_cu_has_dst[KF_IR_OP_COUNT] = {
#define X(e, n, na, d) [e] = d,
    KF_IR_OPS(X)
#undef X
};
#define op_has_dst kf_cu_has_dst

static void *scratch_calloc(kw *w, size_t n, size_t size)
{
    void *p = kf_arena_calloc(&w->c->scratch, n ? n : 1, size);
    if (!p) w->c->failed = true;
    return p;
}

/* ---- names --------------------------------------------------------------- */

/* Names. Every C name the emitter makes for something of the kernel's own
 * (parameter, array, value, temporary) ends in exactly one '_', and nothing
 * else in the output does: C++ keywords, CUDA's builtins and types, its math
 * library (j0, y1, exp, ...) and kforge's kf_ helpers never end in '_'. So
 * no source name collides with or hides any of them, whatever it is, and no
 * list of names to avoid is needed. The only name kept as written is the
 * kernel's (it is the entry point): kf_cu_reserved checks it. */

/* Identifiers a kernel may not be named in CUDA-C: keywords, the builtin
 * variables, the math library and the functions emitted code calls. Sorted
 * for bsearch. */
static const char *const reserved[] = {
    "INFINITY", "NAN", "NULL", "acos", "acosf", "acosh", "acoshf", "alignas", "alignof", "and", "and_eq",
    "asin", "asinf", "asinh", "asinhf", "asm", "assert", "atan", "atan2", "atan2f", "atanf", "atanh",
    "atanhf", "atomicAdd", "atomicCAS", "atomicExch", "atomicMax", "atomicMin", "auto", "bitand", "bitor",
    "blockDim", "blockIdx", "bool", "break", "case", "catch", "cbrt", "cbrtf", "ceil", "ceilf", "char",
    "char16_t", "char32_t", "char8_t", "class", "co_await", "co_return", "co_yield", "compl", "concept",
    "const", "const_cast", "consteval", "constexpr", "constinit", "continue", "copysign", "copysignf", "cos",
    "cosf", "cosh", "coshf", "cospi", "cospif", "cyl_bessel_i0", "cyl_bessel_i0f", "cyl_bessel_i1",
    "cyl_bessel_i1f", "decltype", "default", "delete", "dim3", "do", "double", "dynamic_cast", "else",
    "enum", "erf", "erfc", "erfcf", "erfcinv", "erfcinvf", "erfcx", "erfcxf", "erff", "erfinv", "erfinvf",
    "exp", "exp10", "exp10f", "exp2", "exp2f", "expf", "explicit", "expm1", "expm1f", "export", "extern",
    "fabs", "fabsf", "false", "fdim", "fdimf", "float", "floor", "floorf", "fma", "fmaf", "fmax", "fmaxf",
    "fmin", "fminf", "fmod", "fmodf", "for", "free", "frexp", "frexpf", "friend", "goto", "gridDim", "hypot",
    "hypotf", "if", "ilogb", "ilogbf", "inline", "int", "isfinite", "isinf", "isnan", "j0", "j0f", "j1",
    "j1f", "jn", "jnf", "labs", "ldexp", "ldexpf", "lgamma", "lgammaf", "llabs", "llmax", "llmin", "llrint",
    "llrintf", "llround", "llroundf", "log", "log10", "log10f", "log1p", "log1pf", "log2", "log2f", "logb",
    "logbf", "logf", "long", "lrint", "lrintf", "lround", "lroundf", "malloc", "max", "memcpy", "min", "modf",
    "modff", "mutable", "namespace", "nan", "nanf", "nearbyint", "nearbyintf", "new", "nextafter",
    "nextafterf", "noexcept", "norm", "norm3d", "norm3df", "norm4d", "norm4df", "normcdf", "normcdff",
    "normcdfinv", "normcdfinvf", "normf", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "pow",
    "powf", "printf", "private", "protected", "public", "rcbrt", "rcbrtf", "register", "reinterpret_cast",
    "remainder", "remainderf", "remquo", "remquof", "requires", "return", "rhypot", "rhypotf", "rint",
    "rintf", "rnorm", "rnorm3d", "rnorm3df", "rnorm4d", "rnorm4df", "rnormf", "round", "roundf", "rsqrt",
    "rsqrtf", "scalbln", "scalblnf", "scalbn", "scalbnf", "short", "signbit", "signed", "sin", "sincos",
    "sincosf", "sincospi", "sincospif", "sinf", "sinh", "sinhf", "sinpi", "sinpif", "sizeof", "sqrt", "sqrtf",
    "static", "static_assert", "static_cast", "struct", "switch", "tan", "tanf", "tanh", "tanhf", "template",
    "tgamma", "tgammaf", "this", "threadIdx", "thread_local", "throw", "true", "trunc", "truncf", "try",
    "typedef", "typeid", "typename", "ullmax", "ullmin", "umax", "umin", "union", "unsigned", "using",
    "virtual", "void", "volatile", "warpSize", "wchar_t", "while", "xor", "xor_eq", "y0", "y0f", "y1", "y1f",
    "yn", "ynf",
};

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* CUDA's vector types: (u)char, (u)short, (u)int, (u)long, (u)longlong,
 * float, double with 1..4 lanes. */
static bool cuda_vector_type(const char *s)
{
    static const char *const base[] = {"char", "short", "int", "long", "longlong", "float", "double"};
    size_t n = strlen(s);
    if (n < 2 || s[n - 1] < '1' || s[n - 1] > '4') return false;
    const char *b = s[0] == 'u' ? s + 1 : s;
    for (size_t i = 0; i < sizeof base / sizeof *base; i++)
        if (strlen(base[i]) == (size_t)(s + n - 1 - b) && strncmp(b, base[i], strlen(base[i])) == 0)
            return b == s || i < 5;   /* no ufloat, udouble */
    return false;
}

bool kf_cu_reserved(const char *s)
{
    if (strncmp(s, "kf_", 3) == 0 || strstr(s, "__") != NULL) return true;
    if (s[0] == '_' && isupper((unsigned char)s[1])) return true;
    if (cuda_vector_type(s)) return true;
    return bsearch(&s, reserved, sizeof reserved / sizeof *reserved, sizeof *reserved, cmp_str) != NULL;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Adds s; returns true if it was not present. *at gets its slot. */
static bool names_add(name_set *ns, const char *s, size_t *at)
{
    size_t i = hash_str(s) & (ns->cap - 1);
    for (; ns->slot[i]; i = (i + 1) & (ns->cap - 1))
        if (strcmp(ns->slot[i], s) == 0) break;
    *at = i;
    if (ns->slot[i]) return false;
    ns->slot[i] = s;
    ns->next[i] = 2;
    return true;
}

/* `src` as a C identifier stem: other characters become '_', a run of '_'
 * is one, no trailing '_', a leading '_' or digit (or nothing) gets a 'v'
 * first. clean holds at least 128 bytes. */
static void name_stem(const char *src, char *clean)
{
    size_t n = 0;
    clean[n++] = 'v';   /* dropped below unless needed */
    for (const char *p = src; *p && n < 120; p++) {
        char ch = (isalnum((unsigned char)*p) || *p == '_') ? *p : '_';
        if (ch == '_' && clean[n - 1] == '_') continue;
        clean[n++] = ch;
    }
    while (n > 1 && clean[n - 1] == '_') n--;
    clean[n] = 0;
    if (n > 1 && isalpha((unsigned char)clean[1])) memmove(clean, clean + 1, n);
}

/* The C name of source name `src` (see the comment on names above): its
 * stem and '_', unique within the kernel (stem_2_, stem_3_, ... after it;
 * the set remembers where to resume). */
static const char *unique_name(kw *w, const char *src)
{
    kf_cu *c = w->c;
    char clean[128];
    name_stem(src, clean);
    const char *base = kf_cu_str(c, "%s_", clean);
    size_t at, at2;
    if (names_add(&w->names, base, &at)) return base;
    for (;;) {
        const char *s = kf_cu_str(c, "%s_%u_", clean, w->names.next[at]++);
        if (c->failed) return s;
        if (names_add(&w->names, s, &at2)) return s;
    }
}

/* ---- pass 1: structure check --------------------------------------------- */
/* The array an INTRIN names (ldmatrix reads it, cp_async writes it). */
static bool intrin_array(const kf_ir_ins *in)
{
    unsigned n, f;
    return in->op == KF_IR_INTRIN && kf_ir_intrin_info(in->sub, &n, &f) && (f & KF_II_ARRAY);
}


static bool bad_ir(kw *w, uint32_t i, const char *what)
{
    kf_loc loc = i < w->k->nins ? w->k->ins[i].loc : w->k->loc;
    kf_diag_error(w->c->diags, loc, "internal error in CUDA-C emission of kernel '%s': %s (instruction %u)",
                  w->k->name, what, i);
    w->c->failed = true;
    return false;
}

static bool check_operands(kw *w, uint32_t i)
{
    const kf_ir_ins *in = &w->k->ins[i];
    if (in->op >= KF_IR_OP_COUNT) return bad_ir(w, i, "unknown opcode");
    if (in->dst >= w->k->nvals) return bad_ir(w, i, "destination out of range");
    for (int a = 0; a < 4; a++)
        if (in->a[a] >= w->k->nvals) return bad_ir(w, i, "operand out of range");
    unsigned na, fl;
    if (in->op == KF_IR_INTRIN && !kf_ir_intrin_info(in->sub, &na, &fl)) return bad_ir(w, i, "unknown intrinsic");
    bool arr = in->op == KF_IR_ALOAD || in->op == KF_IR_ASTORE || intrin_array(in);
    if (arr && in->imm >= w->k->narrays) return bad_ir(w, i, "array index out of range");
    if (in->op == KF_IR_PARAM && in->imm >= w->k->nparams) return bad_ir(w, i, "parameter index out of range");
    bool sub_ok = true;
    switch (in->op) {
    case KF_IR_BINOP: sub_ok = in->sub >= KF_OP_ADD && in->sub <= KF_OP_SHR; break;
    case KF_IR_CMP: sub_ok = in->sub >= KF_OP_EQ && in->sub <= KF_OP_GE; break;
    case KF_IR_UNOP: sub_ok = in->sub == KF_OP_NEG || in->sub == KF_OP_NOT || in->sub == KF_OP_BNOT; break;
    case KF_IR_MATH: case KF_IR_ATOMIC: case KF_IR_SHFL: case KF_IR_VOTE: sub_ok = in->sub < KF_BI_COUNT; break;
    case KF_IR_EXTRACT: case KF_IR_INSERT: sub_ok = in->imm < 16; break;
    default: break;
    }
    if (!sub_ok) return bad_ir(w, i, "operation code out of range");
    return true;
}

static bool check_types(kw *w)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t v = 1; v < k->nvals; v++) {
        kf_type t = k->vals[v].type;
        if (t.scalar >= KF_S_COUNT || t.lanes > 16) return bad_ir(w, 0, "value of an impossible type");
    }
    for (uint32_t a = 0; a < k->narrays; a++)
        if (k->arrays[a].type.scalar >= KF_S_COUNT || k->arrays[a].type.lanes > 16)
            return bad_ir(w, 0, "array of an impossible type");
    for (uint32_t p = 0; p < k->nparams; p++)
        if (k->params[p].type.scalar >= KF_S_COUNT || k->params[p].type.lanes > 16)
            return bad_ir(w, 0, "parameter of an impossible type");
    return true;
}

/* The markers' structure is kf_ir_link's (ir.h); here it is only checked
 * (so that corrupted IR is reported, never followed out of range) and the
 * loops are numbered for their latch labels. */
static bool check_structure(kw *w)
{
    const kf_ir_kernel *k = w->k;
    if (!check_types(w)) return false;
    uint32_t nlabels = 0;
    for (uint32_t i = 0; i < k->nins; i++) {
        if (!check_operands(w, i)) return false;
        if (k->ins[i].op == KF_IR_LOOP) w->label[i] = ++nlabels;
    }
    if (!kf_ir_linked(k)) return bad_ir(w, k->nins, "control markers not paired by kf_ir_link");
    return true;
}

/* ---- pass 2: reachability -------------------------------------------------- */

typedef struct {
    uint32_t at;
    bool before;     /* the IF/LOOP itself is reachable */
    bool then_end;   /* IF: end of the then-branch reachable */
    bool has_else;
} reach_frame;

static void mark_reachable(kw *w)
{
    const kf_ir_kernel *k = w->k;
    reach_frame *st = scratch_calloc(w, k->nins + 1, sizeof *st);
    if (!st) return;
    uint32_t sp = 0;
    bool reach = true;
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        w->dead[i] = !reach;
        switch (in->op) {
        case KF_IR_IF:
        case KF_IR_LOOP: st[sp++] = (reach_frame){i, reach, false, false}; break;
        case KF_IR_ELSE:
            st[sp - 1].then_end = reach;
            st[sp - 1].has_else = true;
            reach = st[sp - 1].before;
            w->dead[i] = !reach;
            break;
        case KF_IR_ENDIF: {
            reach_frame f = st[--sp];
            reach = f.has_else ? (f.then_end || reach) : (reach || f.before);
            w->dead[i] = !f.before;
            break;
        }
        case KF_IR_LATCH:
            w->dead[i] = !st[sp - 1].before;
            reach = reach || w->cont_live[st[sp - 1].at];
            break;
        case KF_IR_ENDLOOP: {
            reach_frame f = st[--sp];
            w->dead[i] = !f.before;
            reach = w->brk_live[f.at];
            break;
        }
        case KF_IR_BREAK:
        case KF_IR_CONTINUE:
            if (reach) (in->op == KF_IR_BREAK ? w->brk_live : w->cont_live)[kf_cu_head(w, i)] = true;
            reach = false;
            break;
        case KF_IR_RET: reach = false; break;
        default: break;
        }
    }
}

/* ---- pass 3: scopes ---------------------------------------------------------- */

static uint32_t new_scope(kw *w, uint32_t parent)
{
    w->sparent[w->nscopes] = parent;
    return w->nscopes++;
}

static void assign_scopes(kw *w)
{
    const kf_ir_kernel *k = w->k;
    uint32_t *st = scratch_calloc(w, k->nins + 1, sizeof *st);
    if (!st) return;
    uint32_t sp = 0, cur = new_scope(w, 0);
    for (uint32_t i = 0; i < k->nins; i++) {
        switch (k->ins[i].op) {
        case KF_IR_IF:
            w->scope[i] = cur;
            st[sp++] = cur;
            cur = new_scope(w, cur);
            break;
        case KF_IR_ELSE:
            w->scope[i] = st[sp - 1];
            cur = new_scope(w, st[sp - 1]);
            break;
        case KF_IR_LOOP:
            w->scope[i] = cur;
            st[sp++] = cur;
            cur = new_scope(w, cur);
            if (kf_cu_mid(w, i)) cur = new_scope(w, cur);
            break;
        case KF_IR_LATCH:
            cur = w->sparent[cur];
            w->scope[i] = cur;
            break;
        case KF_IR_ENDIF:
        case KF_IR_ENDLOOP:
            cur = st[--sp];
            w->scope[i] = cur;
            break;
        default: w->scope[i] = cur; break;
        }
    }
}

static bool scope_encloses(const kw *w, uint32_t outer, uint32_t inner)
{
    for (;;) {
        if (inner == outer) return true;
        if (inner == 0) return false;
        inner = w->sparent[inner];
    }
}

/* ---- pass 4: liveness ------------------------------------------------------------ */

/* Kept even when nobody reads the result: markers, stores, barriers,
 * atomics, and the intrinsics that are not pure (warp-collective mma and
 * ldmatrix, the async copies). */
static bool has_effect(const kf_ir_ins *in)
{
    unsigned n, f;
    if (in->op == KF_IR_INTRIN) return !kf_ir_intrin_info(in->sub, &n, &f) || !(f & KF_II_PURE);
    return !op_has_dst[in->op] || in->op == KF_IR_ATOMIC;
}


static void count_uses(kw *w)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t v = 0; v < k->nvals; v++) w->v[v].ndefs = w->v[v].nuses = 0;
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        if (w->dead[i] || w->drop[i]) continue;
        for (int a = 0; a < kf_ir_op_nargs[in->op]; a++)
            if (in->a[a] && in->a[a] != in->dst) {
                w->v[in->a[a]].nuses++;
                w->v[in->a[a]].use = i;
            }
        if (in->dst && op_has_dst[in->op]) {
            if (!w->v[in->dst].ndefs++) w->v[in->dst].def = i;
        }
    }
}

/* Backward passes with use counts kept up to date: dropping a reader may
 * free its operands' writers, which come earlier (loops may need a second
 * pass). */
static bool drop_unread_values(kw *w)
{
    const kf_ir_kernel *k = w->k;
    bool changed = false;
    for (uint32_t i = k->nins; i-- > 0;) {
        const kf_ir_ins *in = &k->ins[i];
        if (w->dead[i] || w->drop[i] || has_effect(in)) continue;
        if (in->dst && w->v[in->dst].nuses != 0) continue;
        w->drop[i] = true;
        changed = true;
        for (int a = 0; a < kf_ir_op_nargs[in->op]; a++)
            if (in->a[a] && in->a[a] != in->dst) w->v[in->a[a]].nuses--;
    }
    return changed;
}

/* Stores into an array no live instruction reads (local or shared: only
 * this kernel could read it) have no effect; the array then goes too. */
static bool drop_unread_arrays(kw *w)
{
    const kf_ir_kernel *k = w->k;
    memset(w->aread, 0, k->narrays + 1);
    for (uint32_t i = 0; i < k->nins; i++)   /* an array cp_async writes is declared: it stays */
        if ((k->ins[i].op == KF_IR_ALOAD || intrin_array(&k->ins[i])) && !w->dead[i] && !w->drop[i])
            w->aread[k->ins[i].imm] = true;
    bool changed = false;
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        if (in->op != KF_IR_ASTORE || w->dead[i] || w->drop[i] || w->aread[in->imm]) continue;
        w->drop[i] = true;
        changed = true;
        for (int a = 0; a < 2; a++)
            if (in->a[a]) w->v[in->a[a]].nuses--;
    }
    return changed;
}

/* Marks the shared arrays whose live accesses (loads, stores, the array
 * builtins: their own size, 16) have more than one element size (AM_MIXED):
 * their 1- and 2-byte loads, and the words of their byte vectors of up to 4
 * bytes, are cuda_c.c's kf_lds_narrow; and those whose scalar loads of 1
 * to 8 bytes have more than one size (AM_LOADS), all of which are
 * kf_lds_narrow: NVVM merged a u64 load with u32 loads into an
 * ld.shared.v4.u32 whose used_bytes_mask called the u64's high word
 * unused, which it then read (difftest seed 3841 program 3232). Vector
 * loads are left out: q4k's x tables mix f16x4 with u32 loads in their hot
 * loops, unmerged in every check so far. */
static void mark_mixed_arrays(kw *w)
{
    const kf_ir_kernel *k = w->k;
    uint32_t *size = scratch_calloc(w, k->narrays + 1, sizeof *size);
    uint8_t *loads = scratch_calloc(w, k->narrays + 1, sizeof *loads);   /* bit s: a scalar load of s bytes */
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        bool plain = in->op == KF_IR_ALOAD || in->op == KF_IR_ASTORE;
        if ((!plain && !intrin_array(in)) || w->dead[i] || w->drop[i]) continue;
        if (!(k->arrays[in->imm].type.flags & (KF_TF_SHARED | KF_TF_DYN))) continue;
        uint32_t s = plain ? kf_type_elem_bytes(in->type) : 16;
        if (size[in->imm] && size[in->imm] != s) w->amixed[in->imm] |= AM_MIXED;
        size[in->imm] = s;
        if (in->op == KF_IR_ALOAD && in->type.kind == KF_TK_SCALAR && s <= 8) loads[in->imm] |= (uint8_t)s;
    }
    for (uint32_t a = 0; a <= k->narrays; a++)
        if (loads[a] & (loads[a] - 1)) w->amixed[a] |= AM_LOADS;   /* two bits or more */
}

/* Backward passes with use counts kept up to date: dropping a reader may
 * free its operands' writers, which come earlier (loops and arrays may need
 * another pass). Keeps NVRTC free of "set but never used" warnings. */
static void drop_unused(kw *w)
{
    count_uses(w);
    for (bool changed = true; changed;) {
        changed = drop_unread_values(w);
        changed = drop_unread_arrays(w) || changed;
    }
    count_uses(w);
    mark_mixed_arrays(w);
}

/* ---- pass 5: how each value is declared --------------------------------------------- */

/* A value may be declared at its first assignment when every other
 * assignment and use comes later, in that block or blocks nested in it. */
/* Marks bad[v] for every value touched before, or outside the block of,
 * its first assignment. One pass over the instructions. */
static void mark_scattered(const kw *w, bool *bad)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        if (w->dead[i] || w->drop[i]) continue;
        for (int a = -1; a < kf_ir_op_nargs[in->op]; a++) {
            kf_val v = a < 0 ? (op_has_dst[in->op] ? in->dst : 0) : in->a[a];
            if (!v || bad[v]) continue;
            uint32_t d = w->v[v].def;
            if (i == d) continue;
            if (!w->v[v].ndefs || i < d || !scope_encloses(w, w->scope[d], w->scope[i])) bad[v] = true;
        }
    }
}

static void decide_kinds(kw *w)
{
    const kf_ir_kernel *k = w->k;
    bool *bad = scratch_calloc(w, k->nvals + 1, sizeof *bad);
    if (!bad) return;
    mark_scattered(w, bad);
    for (kf_val v = 1; v < k->nvals; v++) {
        vinfo *vi = &w->v[v];
        const kf_ir_value *val = &k->vals[v];
        vi->kind = VK_NONE;
        if (vi->nuses == 0) continue;
        const kf_ir_ins *d = vi->ndefs ? &k->ins[vi->def] : NULL;
        if (vi->ndefs == 0) vi->kind = VK_TOP;
        else if (vi->ndefs == 1 && d->op == KF_IR_PARAM) vi->kind = VK_PARAM;
        else if (vi->ndefs == 1 && !val->name &&
                 (d->op == KF_IR_SREG || (d->op == KF_IR_CONST && val->type.kind == KF_TK_SCALAR)))
            vi->kind = VK_INLINE;
        else vi->kind = bad[v] ? VK_TOP : VK_AT_DEF;
    }
}

/* A temporary read once, by the next statement written after it, is
 * folded into that statement's expression: `if (i < n)` rather than a
 * `bool t7 = i < n;` line. Only pure scalar instructions fold; statements
 * between the two must all be folded too (so nothing with an effect moves),
 * and the reader must be a single statement (not a per-lane vector op). */
static bool foldable_def(const kw *w, uint32_t d)
{
    const kf_ir_ins *in = &w->k->ins[d];
    switch (in->op) {
    case KF_IR_BINOP: case KF_IR_CMP: case KF_IR_UNOP: case KF_IR_CVT: case KF_IR_MATH:
    case KF_IR_SELECT: case KF_IR_EXTRACT: case KF_IR_BITCAST: case KF_IR_SHFL: case KF_IR_VOTE:
    case KF_IR_INTRIN:
        return w->k->vals[in->dst].type.kind == KF_TK_SCALAR || kf_cu_packed(in);
    case KF_IR_LOAD: case KF_IR_ALOAD: case KF_IR_SPLAT: case KF_IR_CONST:
        return true;   /* whole vectors too: the reader is one statement */
    default: return false;
    }
}

static bool single_statement(const kw *w, uint32_t u)
{
    const kf_ir_ins *in = &w->k->ins[u];
    if (in->op == KF_IR_SPLAT) return false;   /* would repeat its operand per lane */
    if (in->op == KF_IR_INSERT)                 /* one statement only when in place */
        return in->dst == in->a[0] && !(w->v[in->dst].kind == VK_AT_DEF && w->v[in->dst].def == u);
    if (op_has_dst[in->op] && in->dst && w->k->vals[in->dst].type.kind == KF_TK_VECTOR && !kf_cu_packed(in)) return false;
    return true;
}

bool kf_cu_written(const kw *w, uint32_t i)
{
    const kf_ir_ins *in = &w->k->ins[i];
    if (w->dead[i] || w->drop[i]) return false;
    if (!op_has_dst[in->op] || !in->dst) return true;
    uint8_t kd = w->v[in->dst].kind;
    return kd != VK_INLINE && kd != VK_FOLD && kd != VK_CHAIN && kd != VK_LANEFOLD;
}

static bool reads_itself(const kf_ir_ins *in)
{
    for (int a = 0; a < kf_ir_op_nargs[in->op]; a++)
        if (in->a[a] == in->dst) return true;
    return false;
}

uint32_t kf_cu_next_written(const kw *w, uint32_t i)
{
    while (i < w->k->nins && !kf_cu_written(w, i)) i++;
    return i;
}

/* `} else { if (c) { ... } }` with nothing else in the else block is
 * written `} else if (c) { ... }`. */
static void decide_else_ifs(kw *w)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t e = 0; e < k->nins; e++) {
        if (k->ins[e].op != KF_IR_ELSE || w->dead[e]) continue;
        uint32_t j = kf_cu_next_written(w, e + 1);
        if (j >= k->nins || k->ins[j].op != KF_IR_IF) continue;
        uint32_t inner_end = kf_cu_end(w, j);
        if (kf_cu_next_written(w, inner_end + 1) != kf_cu_end(w, e)) continue;
        w->elif[e] |= ELIF_ELSE;
        w->elif[j] |= ELIF_IF;
        w->elif[inner_end] |= ELIF_END;
    }
}


/* The latch can go in a for header: value assignments only, none of
 * which declares its value, no block, no vector per-lane statement. */
static bool latch_is_expressions(const kw *w, uint32_t latch, uint32_t end)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t i = latch + 1; i < end; i++) {
        if (!kf_cu_written(w, i)) continue;
        const kf_ir_ins *in = &k->ins[i];
        if (!op_has_dst[in->op] || !in->dst || in->op == KF_IR_INSERT || in->op == KF_IR_ATOMIC) return false;
        if (kf_cu_per_lane(w, i) || ((in->op == KF_IR_SPLAT || in->op == KF_IR_CONST) && k->vals[in->dst].type.kind == KF_TK_VECTOR))
            return false;
        const vinfo *vi = &w->v[in->dst];
        if (vi->kind == VK_NONE || (vi->kind == VK_AT_DEF && vi->def == i)) return false;
    }
    return true;
}

/* The statement just before loop l, if it declares a scalar that only the
 * loop touches: it becomes the for's init (`for (unsigned i = 0u; ...)`).
 * Returns its index + 1, or 0. */
static uint32_t loop_variable(const kw *w, uint32_t l)
{
    const kf_ir_kernel *k = w->k;
    uint32_t d = l;
    while (d > 0 && !kf_cu_written(w, d - 1)) d--;
    if (d == 0) return 0;
    d--;
    const kf_ir_ins *in = &k->ins[d];
    if (!op_has_dst[in->op] || !in->dst || in->op == KF_IR_INSERT || in->op == KF_IR_ATOMIC) return 0;
    kf_val v = in->dst;
    if (w->v[v].kind != VK_AT_DEF || w->v[v].def != d || k->vals[v].type.kind != KF_TK_SCALAR) return 0;
    if (w->scope[d] != w->scope[l]) return 0;
    for (uint32_t i = 0; i < k->nins; i++) {
        if (i == d || (i > l && i < kf_cu_end(w, l)) || w->dead[i] || w->drop[i]) continue;
        const kf_ir_ins *o = &k->ins[i];
        if (op_has_dst[o->op] && o->dst == v) return 0;
        switch (kf_ir_op_nargs[o->op]) {   /* unrolled: this scan runs once per loop */
        case 4: if (o->a[3] == v) return 0; /* fall through */
        case 3: if (o->a[2] == v) return 0; /* fall through */
        case 2: if (o->a[1] == v) return 0; /* fall through */
        case 1: if (o->a[0] == v) return 0; /* fall through */
        default: break;
        }
    }
    return d + 1;
}

/* `for (;;) { if (c) break; body; latch }` -- the lowering of for and while
 * -- is written `for (; !c; latch) { body }` (or `while (!c)`), with
 * `continue` a plain continue: C runs the for's third clause on it, which
 * is what CONTINUE -> LATCH means. Only when the break test is the loop's
 * first statement and its condition needs no statement of its own. */
static void decide_loop_headers(kw *w)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t l = 0; l < k->nins; l++) {
        if (k->ins[l].op != KF_IR_LOOP || w->dead[l]) continue;
        uint32_t h = kf_cu_next_written(w, l + 1);
        if (h >= k->nins || k->ins[h].op != KF_IR_IF) continue;
        uint32_t b = kf_cu_next_written(w, h + 1);
        if (b >= k->nins || k->ins[b].op != KF_IR_BREAK || kf_cu_next_written(w, b + 1) != kf_cu_end(w, h)) continue;
        uint32_t lt = kf_cu_mid(w, l), end = kf_cu_end(w, l);
        if (lt && !latch_is_expressions(w, lt, end)) continue;
        w->header[l] = true;
        w->consumed[h] = w->consumed[b] = w->consumed[kf_cu_end(w, h)] = true;
        if (!lt) continue;
        for (uint32_t i = lt; i < end; i++) w->consumed[i] = true;
        w->init[l] = loop_variable(w, l);
        if (w->init[l]) w->consumed[w->init[l] - 1] = true;
    }
}

/* Vector constructors lower to SPLAT then INSERTs into fresh values. A
 * chain whose links are read only by the next INSERT is written as one
 * `T{{a, b, c, d}}` at its last INSERT, provided nothing between writes a
 * value it reads and no block boundary lies between. */
static bool chain_link(const kw *w, kf_val v)
{
    const vinfo *vi = &w->v[v];
    if (w->k->vals[v].name || vi->ndefs != 1 || vi->nuses != 1) return false;
    if (vi->kind != VK_AT_DEF && vi->kind != VK_CHAIN) return false;
    const kf_ir_ins *d = &w->k->ins[vi->def];
    if (reads_itself(d)) return false;
    return d->op == KF_IR_SPLAT || d->op == KF_IR_INSERT;
}

static bool chain_safe(const kw *w, uint32_t head, uint32_t last)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t i = head + 1; i < last; i++) {
        const kf_ir_ins *in = &k->ins[i];
        if (w->dead[i] || w->drop[i]) continue;
        if (!op_has_dst[in->op] && in->op != KF_IR_STORE && in->op != KF_IR_ASTORE) return false;   /* markers */
        if (!op_has_dst[in->op] || !in->dst) continue;
        for (uint32_t j = head; j < i; j++) {   /* an operand read by an earlier link, rewritten here */
            const kf_ir_ins *m = &k->ins[j];
            bool link = m->op == KF_IR_SPLAT || (m->op == KF_IR_INSERT && m->a[0] != m->dst);
            if (link && (m->a[0] == in->dst || (m->op == KF_IR_INSERT && m->a[1] == in->dst))) return false;
        }
    }
    return true;
}

static void decide_chains(kw *w)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t f = 0; f < k->nins; f++) {
        const kf_ir_ins *in = &k->ins[f];
        if (w->dead[f] || w->drop[f] || in->op != KF_IR_INSERT || in->a[0] == in->dst) continue;
        if (!chain_link(w, in->a[0])) continue;
        uint32_t head = w->v[in->a[0]].def;
        while (k->ins[head].op == KF_IR_INSERT && chain_link(w, k->ins[head].a[0])) head = w->v[k->ins[head].a[0]].def;
        if (k->ins[head].op != KF_IR_SPLAT || !chain_safe(w, head, f)) continue;
        for (kf_val v = in->a[0];; v = k->ins[w->v[v].def].a[0]) {
            w->v[v].kind = VK_CHAIN;
            if (w->v[v].def == head) break;
        }
    }
}

/* `c ? a : b` and bool `a && b` / `a || b` may skip an operand in C; the IR
 * evaluates both, so their operands stay statements of their own (a warp
 * shuffle must run on every lane). */
static bool conditional_operand(const kf_ir_ins *r, kf_val v)
{
    if (r->op == KF_IR_SELECT) return r->a[1] == v || r->a[2] == v;
    bool logic = r->op == KF_IR_BINOP && r->type.scalar == KF_S_BOOL && (r->sub == KF_OP_AND || r->sub == KF_OP_OR);
    return logic && r->a[1] == v;
}

bool kf_cu_packed(const kf_ir_ins *in)
{
    kf_type t = in->type;
    bool half = t.kind == KF_TK_VECTOR && (t.scalar == KF_S_F16 || t.scalar == KF_S_BF16) && t.lanes % 2 == 0;
    if (in->op == KF_IR_BINOP) return half && (in->sub == KF_OP_ADD || in->sub == KF_OP_SUB || in->sub == KF_OP_MUL);
    if (in->op == KF_IR_MATH)
        return half && (in->sub == KF_BI_FMA || in->sub == KF_BI_MIN || in->sub == KF_BI_MAX || in->sub == KF_BI_ABS);
    return false;
}

/* A per-lane vector operation (written one statement per lane). */
bool kf_cu_per_lane(const kw *w, uint32_t i)
{
    const kf_ir_ins *in = &w->k->ins[i];
    bool op = in->op == KF_IR_BINOP || in->op == KF_IR_UNOP || in->op == KF_IR_CVT || in->op == KF_IR_MATH;
    return op && w->k->vals[in->dst].type.kind == KF_TK_VECTOR && !kf_cu_packed(in);
}

/* A per-lane result read once, by the per-lane statement written next, is
 * folded lane by lane: `e.v[0] = kf_exp_approx(__fsub_rn(x.v[0], m.v[0]));`.
 * Lane l of the reader reads only lane l of its operands, so writing the
 * reader's lanes in order never reads a lane it already overwrote. */
static bool lane_fold(kw *w, uint32_t d, uint32_t u, const uint32_t *stmt)
{
    const kf_ir_kernel *k = w->k;
    vinfo *vi = &w->v[k->ins[d].dst];
    if (!kf_cu_per_lane(w, d) || u >= k->nins || !kf_cu_per_lane(w, u)) return false;
    uint32_t r = vi->use;
    return r == u || (r > d && r < u && w->v[k->ins[r].dst].kind == VK_LANEFOLD && stmt[r] == u);
}

static bool try_fold(kw *w, uint32_t d, uint32_t u, uint32_t *stmt)
{
    const kf_ir_kernel *k = w->k;
    const kf_ir_ins *in = &k->ins[d];
    if (w->dead[d] || w->drop[d] || !op_has_dst[in->op] || !in->dst) return false;
    vinfo *vi = &w->v[in->dst];
    if (vi->kind != VK_AT_DEF || vi->nuses != 1 || k->vals[in->dst].name || reads_itself(in)) return false;
    if (lane_fold(w, d, u, stmt)) {
        vi->kind = VK_LANEFOLD;
        stmt[d] = u;
        return true;
    }
    if (!foldable_def(w, d) || u >= k->nins || !single_statement(w, u)) return false;
    uint32_t r = vi->use;
    if (conditional_operand(&k->ins[r], in->dst)) return false;
    bool into_fold = r > d && r < u && w->v[k->ins[r].dst].kind == VK_FOLD && stmt[r] == u;
    if (r != u && !into_fold) return false;
    vi->kind = VK_FOLD;
    stmt[d] = u;
    return true;
}

/* One backward pass; `u` tracks the next instruction that is written. */
static void decide_folds(kw *w)
{
    const kf_ir_kernel *k = w->k;
    uint32_t *stmt = scratch_calloc(w, k->nins + 1, sizeof *stmt);   /* folded def -> statement holding it */
    if (!stmt) return;
    uint32_t u = k->nins;
    for (uint32_t d = k->nins; d-- > 0;) {
        try_fold(w, d, u, stmt);
        if (kf_cu_written(w, d)) u = d;
    }
}

/* ---- pass 6: names ------------------------------------------------------------------ */

static const char *const sreg_c[KF_SR_COUNT] = {
    [KF_SR_TID_X] = "threadIdx.x",   [KF_SR_TID_Y] = "threadIdx.y",   [KF_SR_TID_Z] = "threadIdx.z",
    [KF_SR_CTAID_X] = "blockIdx.x",  [KF_SR_CTAID_Y] = "blockIdx.y",  [KF_SR_CTAID_Z] = "blockIdx.z",
    [KF_SR_NTID_X] = "blockDim.x",   [KF_SR_NTID_Y] = "blockDim.y",   [KF_SR_NTID_Z] = "blockDim.z",
    [KF_SR_NCTAID_X] = "gridDim.x",  [KF_SR_NCTAID_Y] = "gridDim.y",  [KF_SR_NCTAID_Z] = "gridDim.z",
    [KF_SR_LANE] = "kf_lane_id()",
};

const char *kf_cu_sreg(kw *w, uint64_t imm)
{
    if (imm >= KF_SR_COUNT) return "0u";
    if (imm == KF_SR_LANE) kf_cu_need(w->c, KF_CU_H_LANE);
    return sreg_c[imm];
}

static void assign_names(kw *w)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t p = 0; p < k->nparams; p++) w->pnames[p] = unique_name(w, k->params[p].name ? k->params[p].name : "p");
    for (uint32_t a = 0; a < k->narrays; a++) w->anames[a] = unique_name(w, k->arrays[a].name ? k->arrays[a].name : "arr");
    for (int pass = 0; pass < 2; pass++)
        for (kf_val v = 1; v < k->nvals; v++) {
            vinfo *vi = &w->v[v];
            const char *src = k->vals[v].name;
            if ((pass == 0) != (src != NULL)) continue;
            if (vi->kind == VK_AT_DEF || vi->kind == VK_TOP)
                vi->name = unique_name(w, src ? src : kf_cu_str(w->c, "t%u", v));
        }
    for (kf_val v = 1; v < k->nvals; v++) {
        vinfo *vi = &w->v[v];
        const kf_ir_ins *d = &k->ins[vi->def];
        if (vi->kind == VK_PARAM) vi->name = w->pnames[d->imm];
        if (vi->kind == VK_INLINE)
            vi->name = d->op == KF_IR_SREG ? kf_cu_sreg(w, d->imm) : kf_cu_literal(w->c, (kf_scalar)d->type.scalar, d->imm);
    }
}

/* The per-kernel arrays, all in the scratch arena. */
static void alloc_writer(kw *w)
{
    const kf_ir_kernel *k = w->k;
    uint32_t n = k->nins + 1, nv = k->nvals + 1;
    w->v = scratch_calloc(w, nv, sizeof *w->v);
    w->dead = scratch_calloc(w, n, sizeof *w->dead);
    w->mm = scratch_calloc(w, nv, sizeof *w->mm);
    w->feeds = scratch_calloc(w, nv, sizeof *w->feeds);
    w->drop = scratch_calloc(w, n, sizeof *w->drop);
    w->scope = scratch_calloc(w, n, sizeof *w->scope);
    w->sparent = scratch_calloc(w, 2 * n + 1, sizeof *w->sparent);
    w->label = scratch_calloc(w, n, sizeof *w->label);
    w->cont_live = scratch_calloc(w, n, sizeof *w->cont_live);
    w->brk_live = scratch_calloc(w, n, sizeof *w->brk_live);
    w->elif = scratch_calloc(w, n, sizeof *w->elif);
    w->pnames = scratch_calloc(w, k->nparams + 1, sizeof *w->pnames);
    w->anames = scratch_calloc(w, k->narrays + 1, sizeof *w->anames);
    w->aread = scratch_calloc(w, k->narrays + 1, sizeof *w->aread);
    w->amixed = scratch_calloc(w, k->narrays + 1, sizeof *w->amixed);
    w->header = scratch_calloc(w, n, sizeof *w->header);
    w->consumed = scratch_calloc(w, n, sizeof *w->consumed);
    w->init = scratch_calloc(w, n, sizeof *w->init);
    w->names.cap = 64;
    while (w->names.cap < 2 * ((size_t)k->nvals + k->nparams + k->narrays)) w->names.cap *= 2;
    w->names.slot = scratch_calloc(w, w->names.cap, sizeof *w->names.slot);
    w->names.next = scratch_calloc(w, w->names.cap, sizeof *w->names.next);
}

/* ---- loop pins (read by the writer at each loop) -------------------------- */

/* NVVM rematerializes cheap loop-invariant integers (row offsets made of
 * block_id, lane_id and parameters) inside a loop, at each use and
 * predicated with it: the loop then recomputes every iteration what the
 * program (and the PTX path) computes once before it; tc_gemv_f16's main
 * loop was 126 SASS instructions against the PTX path's 104. An empty asm
 * taking the value as a "+r" operand where the loop starts makes it opaque
 * to NVVM: computed once, kept in a register through the loop. Pinned are
 * the loop's loop-invariant integer scalars of 32 or 64 bits that are not
 * constants (those must stay foldable). */

bool kf_cu_pure_arith(uint16_t op)
{
    return op == KF_IR_MOV || op == KF_IR_BINOP || op == KF_IR_UNOP || op == KF_IR_CVT || op == KF_IR_MATH ||
           op == KF_IR_SELECT;
}

/* v is a constant expression: a CONST, or pure arithmetic on constants. */
static bool const_valued(const kw *w, kf_val v, int depth)
{
    const vinfo *vi = &w->v[v];
    if (vi->ndefs != 1 || depth > 8) return false;
    const kf_ir_ins *d = &w->k->ins[vi->def];
    if (d->op == KF_IR_CONST) return true;
    if (!kf_cu_pure_arith(d->op)) return false;
    for (int a = 0; a < kf_ir_op_nargs[d->op]; a++)
        if (d->a[a] && !const_valued(w, d->a[a], depth + 1)) return false;
    return true;
}

/* v is a product of two unknowns (a row offset, row · k), through MOVs and
 * conversions: NVVM knows no range for it that a pin would hide, unlike a
 * masked lane index (pinning j = lane_id % 4 cost q4k_q8_gemv 21 instructions
 * a step: it no longer knew j < 4). */
static bool offset_valued(const kw *w, kf_val v)
{
    for (int hops = 0; hops < 8; hops++) {
        const vinfo *vi = &w->v[v];
        if (vi->ndefs != 1) return false;
        const kf_ir_ins *d = &w->k->ins[vi->def];
        if (d->op == KF_IR_MOV || d->op == KF_IR_CVT) {
            v = d->a[0];
            continue;
        }
        return d->op == KF_IR_BINOP && d->sub == KF_OP_MUL && !const_valued(w, d->a[0], 0) &&
               !const_valued(w, d->a[1], 0);
    }
    return false;
}

static bool pin_scalar(kf_scalar s)
{
    char c = kf_scalar_class[s];
    return (c == 'i' || c == 'u') && (kf_scalar_bytes[s] == 4 || kf_scalar_bytes[s] == 8);
}

bool kf_cu_pin_value(const kw *w, uint32_t l, kf_val v)
{
    const vinfo *vi = &w->v[v];
    kf_type t = w->k->vals[v].type;
    if ((vi->kind != VK_AT_DEF && vi->kind != VK_TOP) || vi->ndefs != 1 || vi->def >= l) return false;
    if (t.kind != KF_TK_SCALAR || !pin_scalar((kf_scalar)t.scalar)) return false;
    return scope_encloses(w, w->scope[vi->def], w->scope[l]) && offset_valued(w, v);
}

/* Array ai lives in registers (local, integer scalars, every access at a
 * constant index as its own type) and the loop at l does not write it. */
bool kf_cu_pin_array(const kw *w, uint32_t l, uint32_t ai)
{
    const kf_ir_kernel *k = w->k;
    kf_type at = k->arrays[ai].type;
    if ((at.flags & KF_TF_SHARED) || at.lanes != 1 || !pin_scalar((kf_scalar)at.scalar)) return false;
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        bool access = in->op == KF_IR_ALOAD || in->op == KF_IR_ASTORE;
        if (w->dead[i] || w->drop[i] || !(access || intrin_array(in)) || in->imm != ai) continue;
        if (!access) return false;
        if (in->type.scalar != at.scalar || in->type.lanes != 1 || !const_valued(w, in->a[0], 0)) return false;
        if (in->op == KF_IR_ASTORE && ((i > l && i < kf_cu_end(w, l)) || !offset_valued(w, in->a[1]))) return false;
    }
    return true;
}

const kf_ir_ins *kf_cu_const_def(const kw *w, kf_val v)
{
    const vinfo *vi = &w->v[v];
    const kf_ir_ins *d = vi->ndefs == 1 ? &w->k->ins[vi->def] : NULL;
    return d && d->op == KF_IR_CONST ? d : NULL;
}

/* The operand that in passes on unchanged, or 0: an integer x + 0, x - 0,
 * x | 0, x ^ 0, x << 0, x >> 0, x * 1, x / 1, x & ~0 (either side where
 * the operator commutes), or a conversion between integer types of one
 * width. Unoptimised (-O0) IR keeps these between a min or max and the one
 * it feeds; NVVM folds them and then meets the nest. */
static kf_val passes_through(const kw *w, const kf_ir_ins *in)
{
    const kf_ir_value *vals = w->k->vals;
    if (!kf_type_is_int(vals[in->dst].type)) return 0;
    if (in->op == KF_IR_CVT)
        return kf_type_is_int(vals[in->a[0]].type) && kf_type_bits(vals[in->a[0]].type) == kf_type_bits(vals[in->dst].type)
                   ? in->a[0]
                   : 0;
    if (in->op != KF_IR_BINOP) return 0;
    uint64_t ones = kf_scalar_ones((kf_scalar)vals[in->dst].type.scalar);
    for (int side = 1; side >= 0; side--) {
        const kf_ir_ins *d = kf_cu_const_def(w, in->a[side]);
        if (!d) continue;
        uint64_t c = d->imm & ones;
        bool right_only = in->sub == KF_OP_SUB || in->sub == KF_OP_SHL || in->sub == KF_OP_SHR || in->sub == KF_OP_DIV;
        if (side == 0 && right_only) continue;
        bool zero = in->sub == KF_OP_ADD || in->sub == KF_OP_SUB || in->sub == KF_OP_OR || in->sub == KF_OP_XOR ||
                    in->sub == KF_OP_SHL || in->sub == KF_OP_SHR;
        bool one = in->sub == KF_OP_MUL || in->sub == KF_OP_DIV;
        if ((zero && c == 0) || (one && c == 1) || (in->sub == KF_OP_AND && c == ones)) return in->a[1 - side];
    }
    return 0;
}

/* kw.mm, in one walk and then along copies, and through what NVVM folds to
 * a copy (passes_through), to a fixed point: which values sit next to an
 * integer min, max or clamp or a select, so that the writer can keep NVVM
 * from seeing a min or max of one (KF_CU_H_IMINMAX). */
static void mark_minmax(kw *w)
{
    const kf_ir_kernel *k = w->k;
    for (uint32_t i = 0; i < k->nins; i++) {
        const kf_ir_ins *in = &k->ins[i];
        bool sel = in->op == KF_IR_SELECT;
        bool mm = in->op == KF_IR_MATH && (in->sub == KF_BI_MIN || in->sub == KF_BI_MAX || in->sub == KF_BI_CLAMP) &&
                  kf_scalar_class[k->vals[in->dst].type.scalar] != 'f';
        if (w->dead[i] || (!sel && !mm)) continue;
        w->mm[in->dst] |= MM_DEF;
        for (int a = sel ? 1 : 0; a < 3; a++)
            if (in->a[a]) w->mm[in->a[a]] |= MM_USE;
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t i = 0; i < k->nins; i++) {
            const kf_ir_ins *in = &k->ins[i];
            kf_val src = w->dead[i] ? 0 : in->op == KF_IR_MOV ? in->a[0] : passes_through(w, in);
            if (!src) continue;
            uint8_t d = w->mm[in->dst], s = w->mm[src];
            uint8_t nd = d | (s & MM_DEF), ns = s | (d & MM_USE);
            changed |= nd != d || ns != s;
            w->mm[in->dst] = nd, w->mm[src] = ns;
        }
    }
}

bool kf_cu_analyze(kw *w)
{
    alloc_writer(w);
    if (w->c->failed || !check_structure(w)) return false;
    uint8_t *ftmp = scratch_calloc(w, w->k->nvals + 1, 1);
    if (w->c->failed) return false;
    kf_ir_feed_flags(w->k, w->feeds, ftmp);
    mark_reachable(w);
    assign_scopes(w);
    drop_unused(w);
    mark_minmax(w);
    decide_kinds(w);
    decide_chains(w);
    decide_folds(w);
    decide_else_ifs(w);
    decide_loop_headers(w);
    assign_names(w);
    return !w->c->failed;
}

/* The PTX instruction patterns that ptxas 13 (CUDA 13.0, the H200 machine's)
 * miscompiles, found in the SASS it makes (issue 7). Neither kforge's PTX
 * nor the PTX NVRTC makes of kforge's CUDA-C may contain one:
 *   - neg.s16 / abs.s16: widened to 32 bits as if they could not overflow,
 *     so -(-32768) read sign-extended is +32768;
 *   - a cvt between f16 and bf16: folded into a following cvt.rzi to an
 *     integer and lost (the integer conversion reads the other format);
 *   - st.u8 / st.s8 of a register last written by a cvt to f16 or bf16:
 *     assembled as a float -> u8 conversion of the value, not its low byte;
 *   - shl/shr by an immediate of at least the width: `mul.lo.s64 t, x, C;
 *     shl.b64 d, t, 64` becomes one multiply by C (the shift taken modulo
 *     the width), so d = x * C instead of 0;
 *   - scalar min/max .f16 (and .bf16, alike): `max.f16` then `min.f16` (a
 *     clamp) leave the value in both halves of the 32-bit register, which a
 *     16-bit integer reading of it (a bitcast) then takes as zero-extended;
 *   - a setp.f32 of an abs.f32 result against an immediate <= 0: abs.f32 is
 *     taken for never NaN, so `setp.lt.f32 p, -1.0, |x|` (and |x| >= 0)
 *     fold to true for a NaN x too (kforge writes abs.f32 as and.b32; NVVM's
 *     libdevice compares |x| with positive bounds only, which is safe);
 *   - min/max .u16/.s16: `max.u16 m, x, 8192; setp.eq.u16 p, m, 8192`
 *     became one VIMNMX.U16x2 writing both halves' predicates to one P, so
 *     the high halves' tie decided p (kforge does them in 32 bits);
 *   - bfe/bfi with immediate position and length reaching past the value:
 *     bfe.s32 x, 33, 101 folded to -1 for every x (the ISA: x's sign
 *     replicated), a bfi length of 32 or more taken modulo 32;
 *   - min/max .f64: after a loop, a DSETP.MIN/MAX whose result's high word
 *     is dead became a compare of one operand with zero (DSETP.EQ RZ), so
 *     the low word of clamp(x, -inf, inf) was 0 (kforge compares and
 *     selects; NVVM's libdevice has none in the modules kforge makes);
 *   - max.f32 of an immediate zero (+0 or -0) and a register last written
 *     by a min.f32 with an immediate: made a saturate (FADD.SAT), which
 *     gives +0 for a NaN x in max(min(x, 1.0), 0.0) where min gives 1.0
 *     and the same of selects: a selp.f32 / selp.b32 of an immediate zero
 *     and a min (min.f32 with an immediate, or a selp of a register and an
 *     immediate on an ordered setp.f32) on a setp.f32 of that min against
 *     an immediate zero (kforge and its CUDA-C's kf_zpick_P write both as a
 *     selp on an integer predicate of the min's bits: ir.h
 *     kf_ir_zero_select);
 *   - a cvt from u32 to a float of a register last written by a sign
 *     extension into u32 (cvt.u32.s8, cvt.u32.s16): for a byte of a vector
 *     load it became I2F.S8 / I2F.BF16.S8 of the byte, a signed conversion
 *     (-39 instead of 4294967257; kforge converts the two 16-bit halves;
 *     through u64 ptxas 13 converts right: I2F.*.U64).
 * And the marks NVVM 13 (NVRTC 13.0) leaves when its load-store vectorizer
 * has merged loads of different sizes into one vector of the narrowest and
 * then mistaken a lane for a wider value (difftest seed 3503 program 1280:
 * 16-bit and 8-bit loads of a shared array made one ld.shared.v4.u8, an
 * i16 read as its low byte alone); no correct compile of any source shows
 * them:
 *   - a lane of a vector load that its `.pragma "used_bytes_mask M"` calls
 *     unused (none of its bytes in M), read afterwards;
 *   - a byte lane (ld...v2/v4 .u8/.s8/.b8) compared as a 16-bit value
 *     with a constant no byte holds (setp.ne.s16 p, lane, 30259), or an
 *     unsigned one sign-extended from 16 bits (cvt.s32.s16; NVVM widens a
 *     byte it knows with cvt.u32.u16 or cvt.s32.s8).
 *   Vector loads in inline asm are the asm author's and not tracked.
 * Header-only, used by tests/test_ptxas_kernels.c, test_nvrtc_kernels.c and
 * test_ptx_lowering.c (which checks that each pattern is caught); its
 * ptx_merged_lanes by the cuda device, which refuses NVRTC's PTX with those
 * marks (runtime/cuda_device.c), and by kforge-difftest's CPU-only check
 * of NVRTC's PTX. */
#ifndef KF_PTX_HAZARDS_H
#define KF_PTX_HAZARDS_H

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char reg[32][24];   /* the last 32 registers written by an instruction of interest (kind) */
    char with[32][24];  /* for a 'z' predicate, the min register it compares */
    char kind[32];      /* 'h' (cvt to a half), 'a' (abs.f32), 's' (sign-extended into u32), 'n' (min.f32
                           with an immediate, or its selp form), 'o' / 'z' (a predicate of an ordered
                           setp.f32 / of one comparing an 'n' with zero), 'b' / 'c'
                           (an unsigned / signed byte lane of a vector load), 'm' (a lane its mask calls unused) */
    unsigned next;
    unsigned long long mask;   /* the used_bytes_mask of the next instruction, when has_mask */
    bool has_mask, in_asm;
    bool lanes_only;   /* ptx_merged_lanes: NVVM's merged-load marks only */
} ptx_half_regs;

static inline void hz_forget(ptx_half_regs *h, const char *reg)
{
    for (unsigned i = 0; i < 32; i++)
        if (strcmp(h->reg[i], reg) == 0 || strcmp(h->with[i], reg) == 0) h->reg[i][0] = 0;
}

static inline bool hz_holds(const ptx_half_regs *h, const char *reg, char kind)
{
    for (unsigned i = 0; i < 32; i++)
        if (h->reg[i][0] && h->kind[i] == kind && strcmp(h->reg[i], reg) == 0) return true;
    return false;
}

static inline void hz_remember_with(ptx_half_regs *h, const char *reg, char kind, const char *with)
{
    h->kind[h->next % 32] = kind;
    snprintf(h->with[h->next % 32], sizeof h->with[0], "%s", with);
    snprintf(h->reg[h->next++ % 32], sizeof h->reg[0], "%s", reg);
}

static inline void hz_remember(ptx_half_regs *h, const char *reg, char kind) { hz_remember_with(h, reg, kind, ""); }

/* Whether h holds reg as a 'z' predicate of a compare of register with. */
static inline bool hz_holds_with(const ptx_half_regs *h, const char *reg, const char *with)
{
    for (unsigned i = 0; i < 32; i++)
        if (h->reg[i][0] && h->kind[i] == 'z' && strcmp(h->reg[i], reg) == 0 && strcmp(h->with[i], with) == 0)
            return true;
    return false;
}

/* An instruction that writes its first operand (not a store or reduction)
 * forgets what h knew of each register in it: one, or a braced list (the
 * halves an unpacking mov writes). */
static inline void hz_written(ptx_half_regs *h, const char *op, const char *operands)
{
    if (!strncmp(op, "st.", 3) || !strncmp(op, "red.", 4)) return;
    const char *p = operands + strspn(operands, " \t");
    const char *end = *p == '{' ? strchr(p, '}') : p + strcspn(p, ",");
    for (end = end ? end : p + strlen(p); p < end;) {
        p += strcspn(p, "%");
        if (p >= end) break;
        char reg[24];
        size_t n = strcspn(p, ", \t}");
        snprintf(reg, sizeof reg, "%.*s", (int)(n < 23 ? n : 23), p);
        hz_forget(h, reg);
        p += n;
    }
}

/* The kind ('m', 'b' or 'c') of the first register that h holds as a lane
 * among operands (the text after the opcode), from its from-th
 * comma-separated operand on; 0 if none. */
static inline char hz_lane_read(const ptx_half_regs *h, const char *operands, int from)
{
    int k = 0;
    for (const char *p = operands; *p; p++) {
        if (*p == ',') k++;
        if (*p != '%' || k < from) continue;
        char tok[24];
        size_t n = strspn(p + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$") + 1;
        snprintf(tok, sizeof tok, "%.*s", (int)(n < 23 ? n : 23), p);
        p += n - 1;
        for (const char *kinds = "mbc"; *kinds; kinds++)
            if (hz_holds(h, tok, *kinds)) return *kinds;
    }
    return 0;
}

/* A vector load (op ld...vN.T, operands "{r0, r1, ...}, [addr]"): its lanes
 * are written; byte lanes and lanes the pending mask calls unused are
 * remembered. */
static inline void hz_vector_load(ptx_half_regs *h, const char *at, const char *operands)
{
    const char *open = strchr(operands, '{'), *close = open ? strchr(open, '}') : NULL;
    unsigned w = (unsigned)strtoul(at + 1 + (at[0] == 'b' && at[1] == 'f'), NULL, 10) / 8;
    if (!close || !w) return;
    bool byte = w == 1 && strchr("usb", at[0]);
    unsigned j = 0;
    for (const char *p = open + 1; p < close; j++) {
        p += strspn(p, " \t");
        char reg[24];
        size_t n = strcspn(p, ", \t}");
        snprintf(reg, sizeof reg, "%.*s", (int)(n < 23 ? n : 23), p);
        p += n;
        p += strspn(p, ", \t");
        if (reg[0] != '%') continue;
        hz_forget(h, reg);
        unsigned long long bytes = (w >= 8 ? ~0ull : (1ull << w) - 1) << (j * w < 64 ? j * w : 63);
        if (h->has_mask && !(h->mask & bytes)) hz_remember(h, reg, 'm');
        else if (byte) hz_remember(h, reg, at[0] == 's' ? 'c' : 'b');
    }
}

#define HZ_MERGED ": NVVM merged loads of different sizes"

/* NVVM's merged-load marks (see the header's list) in one instruction whose
 * operands start at `operands`; a reason or NULL. */
static inline const char *hz_merged_lanes(const ptx_half_regs *h, const char *op, const char *at, const char *operands)
{
    bool store = !strncmp(op, "st.", 3) || !strncmp(op, "red.", 4);
    char kind = hz_lane_read(h, operands, store ? 0 : 1);
    if (kind == 'm') return "a vector load's lane that its used_bytes_mask calls unused is read" HZ_MERGED;
    if (!kind) return NULL;
    if (kind == 'b' && !strncmp(op, "cvt.", 4) && !strcmp(at, "s16"))   /* NVVM zero-extends with cvt.u32.u16 */
        return "an unsigned byte lane of a vector load sign-extended from 16 bits" HZ_MERGED;
    if (!strncmp(op, "setp.", 5) && (!strcmp(at, "s16") || !strcmp(at, "u16") || !strcmp(at, "b16"))) {
        const char *c = strrchr(operands, ','), *num = c ? c + 1 + strspn(c + 1, " \t") : "";
        bool imm = isdigit((unsigned char)*num) || *num == '-';
        long long v = imm ? strtoll(num, NULL, 0) : 0;
        if (imm && (kind == 'b' ? v < 0 || v > 255 : v < -128 || v > 127))
            return "a byte lane of a vector load compared with a constant no byte holds" HZ_MERGED;
    }
    return NULL;
}

/* setp.<cmp>.f32 p, a, b with one of a, b an abs.f32 result and the other
 * an f32 immediate <= 0 (0f00000000 or the sign bit set). */
static inline bool hz_abs_vs_nonpositive(const ptx_half_regs *h, const char *ins)
{
    char a[24] = "", b[24] = "";
    const char *c = strchr(ins, ',');
    if (!c || sscanf(c + 1, " %23[^, ] , %23[^;, \t]", a, b) != 2) return false;
    for (int k = 0; k < 2; k++) {
        const char *r = k ? b : a, *imm = k ? a : b;
        bool nonpos = !strncmp(imm, "0f", 2) && strlen(imm) == 10 && (strchr("89ABCDEFabcdef", imm[2]) || !strcmp(imm + 2, "00000000"));
        if (nonpos && hz_holds(h, r, 'a')) return true;
    }
    return false;
}

/* Whether operand text x (after spaces) is an f32 immediate, 0fXXXXXXXX
 * (zero_only: +0 or -0, 0f00000000 or 0f80000000). */
static inline bool hz_f32_imm(const char *x, bool zero_only)
{
    x += strspn(x, " \t");
    if (strncmp(x, "0f", 2) && strncmp(x, "0F", 2)) return false;
    if (strspn(x + 2, "0123456789abcdefABCDEF") != 8) return false;
    return !zero_only || !strncmp(x + 2, "00000000", 8) || !strncmp(x + 2, "80000000", 8);
}

/* Of registers or immediates a and b, the one h holds as a min ('n') when
 * the other is an immediate zero, else NULL. */
static inline const char *hz_zero_and_min(const ptx_half_regs *h, const char *a, const char *b)
{
    return hz_f32_imm(b, true) && hz_holds(h, a, 'n') ? a : hz_f32_imm(a, true) && hz_holds(h, b, 'n') ? b : NULL;
}

/* An instruction `op d, a, b` (max.f32, setp.f32) whose a and b are a
 * zero and a min (hz_zero_and_min): that min's register in m, if not NULL. */
static inline bool hz_min_vs_zero(const ptx_half_regs *h, const char *operands, char m[24])
{
    char a[24] = "", b[24] = "";
    const char *c = strchr(operands, ','), *r = NULL;
    if (c && sscanf(c + 1, " %23[^, ] , %23[^;, \t]", a, b) == 2) r = hz_zero_and_min(h, a, b);
    if (r && m) snprintf(m, 24, "%s", r);
    return r != NULL;
}

/* Whether op is a 32-bit selp that may select floats. */
static inline bool hz_selp32(const char *op) { return !strcmp(op, "selp.f32") || !strcmp(op, "selp.b32"); }

/* The comma-separated operands of a selp (d, a, b, p) into a, b and p. */
static inline bool hz_selp_operands(const char *operands, char *a, char *b, char *p)
{
    const char *c = strchr(operands, ',');
    return c && sscanf(c + 1, " %23[^, ] , %23[^, ] , %23[^;, \t]", a, b, p) == 3;
}

/* selp.f32 / selp.b32 d, a, b, p with a, b a min ('n') and an immediate
 * zero, in either order, and p a setp of that min against zero ('z'). */
static inline bool hz_sat_selp(const ptx_half_regs *h, const char *operands)
{
    char a[24] = "", b[24] = "", p[24] = "";
    const char *m = hz_selp_operands(operands, a, b, p) ? hz_zero_and_min(h, a, b) : NULL;
    return m && hz_holds_with(h, p, m);
}

/* After hz_written: what an f32 setp or selp d writes ('o', 'z', 'n'). */
static inline void hz_remember_select(ptx_half_regs *h, const char *op, const char *d, const char *operands)
{
    if (!strncmp(op, "setp.", 5) && strlen(op) == 11 && !strcmp(op + 7, ".f32")) {
        char cmp[3] = {op[5], op[6], 0};
        if (strcmp(cmp, "lt") && strcmp(cmp, "le") && strcmp(cmp, "gt") && strcmp(cmp, "ge") && strcmp(cmp, "eq"))
            return;
        hz_remember(h, d, 'o');
        char m[24];
        if (strcmp(cmp, "eq") && hz_min_vs_zero(h, operands, m)) hz_remember_with(h, d, 'z', m);
    } else if (hz_selp32(op)) {
        char a[24] = "", b[24] = "", p[24] = "";
        if (!hz_selp_operands(operands, a, b, p) || a[0] != '%' || !hz_f32_imm(b, false)) return;
        if ((strtoul(b + 2, NULL, 16) & 0x7fffffffu) <= 0x7f800000u && hz_holds(h, p, 'o')) hz_remember(h, d, 'n');
    }
}

/* The n-th '.'-separated part of opcode op, counted from its end (0: last). */
static inline void hz_part(const char *op, int from_end, char *out, size_t cap)
{
    const char *end = op + strlen(op), *p = end;
    for (int k = 0;; k++) {
        const char *q = p;
        while (q > op && q[-1] != '.') q--;
        if (k == from_end) {
            size_t n = (size_t)(p - q) < cap - 1 ? (size_t)(p - q) : cap - 1;
            memcpy(out, q, n);
            out[n] = 0;
            return;
        }
        if (q == op) break;
        p = q - 1;
    }
    out[0] = 0;
}

/* Checks one instruction ("op operands", no ';'); returns a reason or NULL. */
static inline const char *hz_instruction(ptx_half_regs *h, const char *ins)
{
    char op[64] = {0}, d[24] = {0}, src[24] = {0};
    while (*ins == ' ' || *ins == '\t' || *ins == '{') ins++;
    if (*ins == '@') ins = strchr(ins, ' ') ? strchr(ins, ' ') + 1 : ins;   /* predicate */
    const char *mask = strstr(ins, ".pragma \"used_bytes_mask ");
    if (mask) {
        h->mask = strtoull(mask + 25, NULL, 0);
        h->has_mask = true;
        return NULL;
    }
    if (sscanf(ins, "%63s %23[^, ]", op, d) < 1 || op[0] == '.' || op[0] == '/' || op[0] == '}') return NULL;
    char dt[16] = {0}, at[16] = {0};   /* whole: at + 1 is read for the width */
    hz_part(op, 1, dt, sizeof dt);
    hz_part(op, 0, at, sizeof at);
    const char *operands = strstr(ins, op) + strlen(op);
    bool vector_load = !strncmp(op, "ld.", 3) && (strstr(op, ".v2.") || strstr(op, ".v4.") || strstr(op, ".v8."));
    if (vector_load && !h->in_asm) hz_vector_load(h, at, operands);
    h->has_mask = false;
    if (vector_load) return NULL;
    const char *merged = hz_merged_lanes(h, op, at, operands);
    if (merged || h->lanes_only) {
        if (!merged) hz_written(h, op, operands);
        return merged;
    }
    if (!strcmp(op, "neg.s16") || !strcmp(op, "abs.s16")) return "neg.s16/abs.s16 (ptxas widens it without wrapping)";
    if (!strncmp(op, "setp.", 5) && !strcmp(at, "f32") && hz_abs_vs_nonpositive(h, ins))
        return "setp of an abs.f32 result against a value <= 0 (ptxas folds it as if never NaN)";
    bool minmax = !strncmp(op, "min.", 4) || !strncmp(op, "max.", 4);
    if (minmax && (!strcmp(at, "f16") || !strcmp(at, "bf16")))
        return "scalar f16/bf16 min/max (ptxas loses the upper half of a clamp's HMNMX2 result)";
    if (!strcmp(op, "max.f32") && hz_min_vs_zero(h, operands, NULL))
        return "max.f32 of zero and a min.f32 with a constant (ptxas makes it a saturate: NaN gives +0)";
    if (hz_selp32(op) && hz_sat_selp(h, operands))
        return "selp of zero and a min with a constant on their float compare (ptxas makes it a saturate: NaN gives +0)";
    if (minmax && !strcmp(at, "f64"))
        return "f64 min/max (ptxas compares with zero when only the low word is used)";
    if (minmax && (!strcmp(at, "u16") || !strcmp(at, "s16")))
        return "16-bit integer min/max (ptxas may merge it and a setp into a VIMNMX.x2 with one predicate)";
    if (!strncmp(op, "bfe.", 4) || !strncmp(op, "bfi.", 4)) {
        const char *c = strrchr(ins, ','), *b = c;
        while (b && b > ins && *--b != ',') {}
        char *e1, *e2;
        unsigned long pos = b && *b == ',' ? strtoul(b + 1, &e1, 10) : 0, len = c ? strtoul(c + 1, &e2, 10) : 0;
        if (b && *b == ',' && c && isdigit((unsigned char)b[1 + strspn(b + 1, " \t")]) &&
            isdigit((unsigned char)c[1 + strspn(c + 1, " \t")]) && pos + len > strtoul(at + 1, NULL, 10))
            return "bfe/bfi with an immediate field past the value (ptxas folds it wrongly)";
    }
    if (!strncmp(op, "shl.", 4) || !strncmp(op, "shr.", 4)) {
        const char *c = strrchr(ins, ',');
        char *end;
        unsigned long amt = c ? strtoul(c + 1, &end, 10) : 0;
        if (c && end != c + 1 && isdigit((unsigned char)c[strspn(c + 1, " \t") + 1]) && amt >= strtoul(at + 1, NULL, 10))
            return "shift by an immediate of at least the width (ptxas folds it into a multiply modulo the width)";
    }
    bool cvt = strncmp(op, "cvt.", 4) == 0;
    if (cvt && ((!strcmp(dt, "f16") && !strcmp(at, "bf16")) || (!strcmp(dt, "bf16") && !strcmp(at, "f16"))))
        return "cvt between f16 and bf16 (ptxas folds it into a following cvt.rzi)";
    if (cvt && !strcmp(at, "u32") && (dt[0] == 'f' || !strcmp(dt, "bf16"))) {
        const char *c = strrchr(ins, ',');
        if (c && sscanf(c + 1, " %23[^;} \t]", src) == 1 && hz_holds(h, src, 's'))
            return "cvt to a float of a narrow signed value sign-extended to u32 (ptxas converts it signed)";
    }
    if (strncmp(op, "st.", 3) == 0) {
        if (!strcmp(at, "u8") || !strcmp(at, "s8") || !strcmp(at, "b8")) {
            const char *c = strrchr(ins, ',');
            if (c && sscanf(c + 1, " %23[^;} \t]", src) == 1 && hz_holds(h, src, 'h'))
                return "8-bit store of a cvt-to-f16/bf16 register (ptxas converts the value)";
        }
        return NULL;
    }
    hz_written(h, op, operands);
    if (d[0] != '%' && !isalpha((unsigned char)d[0])) return NULL;
    bool abs32 = !strncmp(op, "abs.", 4) && !strcmp(at, "f32");
    if (!strcmp(op, "min.f32")) {
        const char *c = strchr(operands, ','), *c2 = c ? strchr(c + 1, ',') : NULL;
        if (c && c2 && (hz_f32_imm(c + 1, false) || hz_f32_imm(c2 + 1, false))) hz_remember(h, d, 'n');
    }
    hz_remember_select(h, op, d, operands);
    bool sext = cvt && !strcmp(dt, "u32") && (!strcmp(at, "s8") || !strcmp(at, "s16"));
    if ((cvt && (!strcmp(dt, "f16") || !strcmp(dt, "bf16"))) || abs32 || sext)
        hz_remember(h, d, abs32 ? 'a' : sext ? 's' : 'h');
    return NULL;
}

/* The first instruction of ptx that ptx_hazard or ptx_merged_lanes finds. */
static inline const char *hz_scan(const char *ptx, bool lanes_only, char *buf, size_t cap)
{
    ptx_half_regs h = {.lanes_only = lanes_only};
    unsigned line = 1;
    for (const char *p = ptx; *p; line++) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char text[512];
        snprintf(text, sizeof text, "%.*s", (int)(len < 511 ? len : 511), p);
        char *cm = strstr(text, "//");
        if (cm && strstr(cm, "begin inline asm")) h.in_asm = true;
        if (cm && strstr(cm, "end inline asm")) h.in_asm = false;
        if (cm) *cm = 0;
        if (strstr(text, ".entry ") || strstr(text, ".func ")) {   /* registers are the function's own */
            memset(h.reg, 0, sizeof h.reg);
            h.has_mask = h.in_asm = false;
        }
        for (char *save, *ins = strtok_r(text, ";", &save); ins; ins = strtok_r(NULL, ";", &save)) {
            const char *why = hz_instruction(&h, ins);
            if (why) {
                snprintf(buf, cap, "line %u: %.*s (%s)", line, (int)(len < 200 ? len : 200), p, why);
                return buf;
            }
        }
        p += len + (e != NULL);
    }
    return NULL;
}

/* The first hazardous instruction of ptx, as "line N: text (reason)" in buf,
 * or NULL when there is none. */
static inline const char *ptx_hazard(const char *ptx, char *buf, size_t cap) { return hz_scan(ptx, false, buf, cap); }

/* The first of NVVM's merged-load marks alone (the last part of the list
 * above), for NVRTC's PTX of any source: the ptxas patterns above are
 * conservative and also match harmless code (a neg.s16 whose result only a
 * byte store reads), so they are kept to kforge's own kernels' tests. */
static inline const char *ptx_merged_lanes(const char *ptx, char *buf, size_t cap)
{
    return hz_scan(ptx, true, buf, cap);
}

#endif

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
 *   - a cvt from u32 to a float of a register last written by a sign
 *     extension into u32 (cvt.u32.s8, cvt.u32.s16): for a byte of a vector
 *     load it became I2F.S8 / I2F.BF16.S8 of the byte, a signed conversion
 *     (-39 instead of 4294967257; kforge converts the two 16-bit halves;
 *     through u64 ptxas 13 converts right: I2F.*.U64).
 * Header-only, used by tests/test_ptxas_kernels.c, test_nvrtc_kernels.c and
 * test_ptx_lowering.c (which checks that each pattern is caught). */
#ifndef KF_PTX_HAZARDS_H
#define KF_PTX_HAZARDS_H

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char reg[32][24];   /* registers last written by a cvt to f16/bf16 or an abs.f32 (the last 32 such) */
    char kind[32];      /* 'h' (cvt to a half), 'a' (abs.f32) or 's' (sign-extended into u32) */
    unsigned next;
} ptx_half_regs;

static inline void hz_forget(ptx_half_regs *h, const char *reg)
{
    for (unsigned i = 0; i < 32; i++)
        if (strcmp(h->reg[i], reg) == 0) h->reg[i][0] = 0;
}

static inline bool hz_holds(const ptx_half_regs *h, const char *reg, char kind)
{
    for (unsigned i = 0; i < 32; i++)
        if (h->reg[i][0] && h->kind[i] == kind && strcmp(h->reg[i], reg) == 0) return true;
    return false;
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
    if (sscanf(ins, "%63s %23[^, ]", op, d) < 1 || op[0] == '.' || op[0] == '/' || op[0] == '}') return NULL;
    if (!strcmp(op, "neg.s16") || !strcmp(op, "abs.s16")) return "neg.s16/abs.s16 (ptxas widens it without wrapping)";
    char dt[16], at[16];
    hz_part(op, 1, dt, sizeof dt);
    hz_part(op, 0, at, sizeof at);
    if (!strncmp(op, "setp.", 5) && !strcmp(at, "f32") && hz_abs_vs_nonpositive(h, ins))
        return "setp of an abs.f32 result against a value <= 0 (ptxas folds it as if never NaN)";
    bool minmax = !strncmp(op, "min.", 4) || !strncmp(op, "max.", 4);
    if (minmax && (!strcmp(at, "f16") || !strcmp(at, "bf16")))
        return "scalar f16/bf16 min/max (ptxas loses the upper half of a clamp's HMNMX2 result)";
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
    if (d[0] != '%' && !isalpha((unsigned char)d[0])) return NULL;
    hz_forget(h, d);
    bool abs32 = !strncmp(op, "abs.", 4) && !strcmp(at, "f32");
    bool sext = cvt && !strcmp(dt, "u32") && (!strcmp(at, "s8") || !strcmp(at, "s16"));
    if ((cvt && (!strcmp(dt, "f16") || !strcmp(dt, "bf16"))) || abs32 || sext) {
        h->kind[h->next % 32] = abs32 ? 'a' : sext ? 's' : 'h';
        snprintf(h->reg[h->next++ % 32], sizeof h->reg[0], "%s", d);
    }
    return NULL;
}

/* The first hazardous instruction of ptx, as "line N: text (reason)" in buf,
 * or NULL when there is none. */
static inline const char *ptx_hazard(const char *ptx, char *buf, size_t cap)
{
    ptx_half_regs h = {0};
    unsigned line = 1;
    for (const char *p = ptx; *p; line++) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char text[512];
        snprintf(text, sizeof text, "%.*s", (int)(len < 511 ? len : 511), p);
        char *cm = strstr(text, "//");
        if (cm) *cm = 0;
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

#endif

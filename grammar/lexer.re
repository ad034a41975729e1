/* The lexer of the .kf language (LANGUAGE.md section 2), for re2c 3.0.
 *
 * It reads NUL-terminated UTF-8 text without refilling (the whole file is in
 * memory) and returns the Lemon parser's own TK_* codes with a kf_token that
 * carries the token's location (file, line, 1-based byte column) and value:
 * integer literals as u64, floats as double, type names as a kf_type,
 * identifiers as an arena copy.
 *
 * No byte is skipped silently. A byte the language has no use for (a stray
 * '$', a control character, non-ASCII text outside comments, invalid UTF-8
 * anywhere, an embedded NUL) is an error at its position; comments are
 * scanned by hand so that their UTF-8 is validated and an unterminated
 * `/ *` is reported where it starts. Literal errors (overflow, bad digits,
 * invalid vector types) are reported here too and the token is still
 * returned with a harmless value so that parsing goes on. The lexer also
 * counts open brackets and stops the parse past KF_LEX_MAX_NESTING. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lexer.h"
#include "parser.h"

typedef const unsigned char *cursor;

/* Descriptions of token kinds, indexed by TK_* code, for messages. */
static const char *const token_names[] = {
    [0] = "end of input",
    [TK_ILLEGAL] = "an unreadable character",
    [TK_OROR] = "'||'", [TK_ANDAND] = "'&&'", [TK_PIPE] = "'|'", [TK_CARET] = "'^'", [TK_AMP] = "'&'",
    [TK_EQEQ] = "'=='", [TK_NE] = "'!='", [TK_LT] = "'<'", [TK_LE] = "'<='", [TK_GT] = "'>'", [TK_GE] = "'>='",
    [TK_SHL] = "'<<'", [TK_SHR] = "'>>'", [TK_PLUS] = "'+'", [TK_MINUS] = "'-'", [TK_STAR] = "'*'",
    [TK_SLASH] = "'/'", [TK_PERCENT] = "'%'", [TK_NOT] = "'!'", [TK_TILDE] = "'~'",
    [TK_LPAREN] = "'('", [TK_RPAREN] = "')'", [TK_LBRACKET] = "'['", [TK_RBRACKET] = "']'",
    [TK_LBRACE] = "'{'", [TK_RBRACE] = "'}'", [TK_DOT] = "'.'", [TK_DOTDOT] = "'..'", [TK_COMMA] = "','",
    [TK_SEMI] = "';'", [TK_COLON] = "':'", [TK_ARROW] = "'->'", [TK_ASSIGN] = "'='",
    [TK_PLUSEQ] = "'+='", [TK_MINUSEQ] = "'-='", [TK_STAREQ] = "'*='", [TK_SLASHEQ] = "'/='",
    [TK_PERCENTEQ] = "'%='", [TK_AMPEQ] = "'&='", [TK_PIPEEQ] = "'|='", [TK_CARETEQ] = "'^='",
    [TK_SHLEQ] = "'<<='", [TK_SHREQ] = "'>>='",
    [TK_KERNEL] = "'kernel'", [TK_FN] = "'fn'", [TK_CONST] = "'const'", [TK_LET] = "'let'", [TK_VAR] = "'var'",
    [TK_SHARED] = "'shared'", [TK_IF] = "'if'", [TK_ELSE] = "'else'", [TK_FOR] = "'for'", [TK_IN] = "'in'",
    [TK_STEP] = "'step'", [TK_WHILE] = "'while'", [TK_BREAK] = "'break'", [TK_CONTINUE] = "'continue'",
    [TK_RETURN] = "'return'", [TK_AS] = "'as'", [TK_MUT] = "'mut'", [TK_TRUE] = "'true'", [TK_FALSE] = "'false'",
    [TK_AT_SCHEDULE] = "'@schedule'", [TK_AT_UNROLL] = "'@unroll'",
    [TK_NAME] = "a name", [TK_TYPE] = "a type", [TK_INT] = "an integer literal", [TK_FLOAT] = "a float literal",
};

const char *kf_lex_token_name(int tk)
{
    if (tk < 0 || (size_t)tk >= sizeof token_names / sizeof *token_names || !token_names[tk]) return "a token";
    return token_names[tk];
}

const char *kf_lex_token_describe(int tk, const kf_token *tok, char *buf, size_t size)
{
    const char *kind = tk == TK_NAME ? "name" : tk == TK_TYPE ? "type" : tk == TK_INT ? "integer literal"
                     : tk == TK_FLOAT ? "float literal" : NULL;
    if (!kind) {
        snprintf(buf, size, "%s", kf_lex_token_name(tk));
        return buf;
    }
    int n = tok->len > 40 ? 40 : (int)tok->len;
    snprintf(buf, size, "%s '%.*s%s'", kind, n, tok->text, tok->len > 40 ? "..." : "");
    return buf;
}

void kf_lex_init(kf_lexer *lx, kf_pass_ctx *cx)
{
    *lx = (kf_lexer){.src = cx->src, .cur = cx->src, .end = cx->src + cx->len,
                     .line_start = cx->src, .line = 1, .cx = cx};
}

static kf_loc loc_at(const kf_lexer *lx, const char *p)
{
    return (kf_loc){lx->cx->file, lx->line, (uint32_t)(p - lx->line_start) + 1};
}

static void lex_error(kf_lexer *lx, const char *p, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void lex_error(kf_lexer *lx, const char *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kf_diag_vadd(lx->cx->diags, KF_DIAG_ERROR, loc_at(lx, p), fmt, ap);
    va_end(ap);
}

/* Length of the valid UTF-8 sequence at p (1-4), or 0 if invalid
 * (overlong forms, surrogates and code points past U+10FFFF are invalid). */
static int utf8_len(cursor p, cursor end, uint32_t *cp)
{
    unsigned c = p[0];
    int n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n == 0 || end - p < n) return 0;
    uint32_t v = n == 1 ? c : c & (0x7fu >> n);
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0;
        v = v << 6 | (p[i] & 0x3fu);
    }
    if ((n == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) || (n == 4 && (v < 0x10000 || v > 0x10ffff)))
        return 0;
    *cp = v;
    return n;
}

/* Skips comment text from p: a line comment up to (not past) its '\n', a
 * block comment up to (not past) its star-slash; the end of the input if
 * neither comes. Validates UTF-8 and reports NUL bytes; counts lines. */
static cursor skip_comment_text(kf_lexer *lx, cursor p, bool block)
{
    cursor end = (cursor)lx->end;
    bool bad_run = false;
    while (p < end) {
        unsigned c = *p;
        if (c == '\n' && !block) return p;
        if (block && c == '*' && p + 1 < end && p[1] == '/') return p;
        uint32_t cp;
        int n = c == 0 ? 0 : utf8_len(p, end, &cp);
        if (n == 0) {
            if (!bad_run) {
                if (c == 0) lex_error(lx, (const char *)p, "NUL byte in a comment; remove it");
                else lex_error(lx, (const char *)p, "invalid UTF-8 byte 0x%02x in a comment; the source must be UTF-8", c);
            }
            bad_run = true;
            p++;
            continue;
        }
        bad_run = false;
        if (c == '\n') {
            lx->line++;
            lx->line_start = (const char *)p + 1;
        }
        p += n;
    }
    return p;
}

/* An unreadable byte (or run of them) at p: reports it once, returns the
 * position after the run. */
static cursor bad_bytes(kf_lexer *lx, cursor p)
{
    cursor end = (cursor)lx->end;
    uint32_t cp = 0;
    unsigned c = *p;
    int n = c >= 0x80 ? utf8_len(p, end, &cp) : 1;
    if (c == 0) lex_error(lx, (const char *)p, "NUL byte in the source; remove it");
    else if (c >= 0x80 && n) lex_error(lx, (const char *)p, "non-ASCII character U+%04X outside a comment "
                                       "(names are ASCII; non-ASCII text may only appear in comments)", (unsigned)cp);
    else if (c >= 0x80) lex_error(lx, (const char *)p, "invalid UTF-8 byte 0x%02x; the source must be UTF-8", c);
    else if (c < 0x20 || c == 0x7f) lex_error(lx, (const char *)p, "unexpected control character 0x%02x", c);
    else if (c == '?') lex_error(lx, (const char *)p, "unexpected character '?' (there is no ?: operator; "
                                 "write select(cond, a, b) or an if statement)");
    else lex_error(lx, (const char *)p, "unexpected character '%c'", (char)c);
    if (c >= 0x20 && c < 0x7f) return p + 1;
    /* Swallow the rest of a run of binary garbage: one error is enough. */
    p += n ? n : 1;
    while (p < end && (*p >= 0x80 || (*p < 0x20 && *p != '\n' && *p != '\t' && *p != '\r') || *p == 0x7f)) p++;
    return p;
}

static bool is_word(unsigned c) { return (c | 0x20) - 'a' < 26 || c - '0' < 10 || c == '_'; }

static int digit_value(unsigned c)
{
    if (c - '0' < 10) return (int)(c - '0');
    if ((c | 0x20) - 'a' < 6) return (int)((c | 0x20) - 'a' + 10);
    return 99;
}

/* The kforge type a C suffix or a type-name suffix of a literal asks for
 * ("1u", "1.0f", "2ull", "1i64"), or NULL if the letters are not one. */
static const char *suffix_type(const char *p, size_t n, bool is_float)
{
    static const char *const types[] = {"i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "bf16", "f32", "f64"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (n == strlen(types[i]) && memcmp(p, types[i], n) == 0) return types[i];
    char c[4] = {0};
    if (n == 0 || n > 3) return NULL;
    for (size_t i = 0; i < n; i++) c[i] = (char)(p[i] | 0x20);
    if (is_float) return n == 1 && c[0] == 'f' ? "f32" : n == 1 && c[0] == 'l' ? "f64" : NULL;
    if (!strcmp(c, "u")) return "u32";
    if (!strcmp(c, "l") || !strcmp(c, "ll")) return "i64";
    if (!strcmp(c, "ul") || !strcmp(c, "lu") || !strcmp(c, "ull") || !strcmp(c, "llu")) return "u64";
    return NULL;
}

/* Reports a literal with a type suffix; false if p .. p + n is not one. */
static bool literal_suffix(kf_lexer *lx, const char *start, const char *p, size_t n, bool is_float)
{
    const char *t = suffix_type(p, n, is_float);
    if (!t) return false;
    int len = (int)(p - start) > 40 ? 40 : (int)(p - start);
    lex_error(lx, start, "invalid suffix '%.*s' on '%.*s%.*s': a literal takes its type from the context; write "
              "'%.*s', or '%.*s as %s'", (int)n, p, len, start, (int)n, p, len, start, len, start, t);
    return true;
}

/* An integer literal [0-9][0-9A-Za-z_]* (decimal, 0x hex, 0b binary, with
 * `_` separators between digits). Errors leave *val = 0. */
static void int_value(kf_lexer *lx, const char *s, size_t len, uint64_t *val)
{
    *val = 0;
    unsigned base = 10;
    size_t i = 0;
    const char *kind = "decimal";
    if (len >= 2 && s[0] == '0' && (s[1] | 0x20) == 'x') base = 16, i = 2, kind = "hex";
    else if (len >= 2 && s[0] == '0' && (s[1] | 0x20) == 'b') base = 2, i = 2, kind = "binary";
    int n = len > 40 ? 40 : (int)len;
    const char *more = len > 40 ? "..." : "";
    uint64_t v = 0;
    size_t digits = 0;
    bool overflow = false;
    for (; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '_') {
            /* between two digits: not after the 0x / 0b prefix, not doubled, not last */
            if (digits == 0 || i + 1 >= len || digit_value((unsigned char)s[i + 1]) >= (int)base) {
                lex_error(lx, s, "'_' in '%.*s%s' must stand between two digits", n, s, more);
                return;
            }
            continue;
        }
        int d = digit_value(c);
        if (base == 10 && (c | 0x20) == 'e' && i + 1 == len) {
            lex_error(lx, s, "exponent of '%.*s' has no digits (write 1e5 or 1e-6)", n, s);
            return;
        }
        if (d >= (int)base) {
            if (digits > 0 && literal_suffix(lx, s, s + i, len - i, false)) return;
            if (base == 10 && digits > 0 && (c | 0x20) == 'e') {   /* "1e5f": an exponent, then a suffix */
                size_t j = i + 1;
                while (j < len && s[j] >= '0' && s[j] <= '9') j++;
                if (j > i + 1 && literal_suffix(lx, s, s + j, len - j, true)) return;
            }
            lex_error(lx, s, "invalid %s digit '%c' in '%.*s%s'%s", kind, c, n, s, more,
                      base == 10 && digits == 0 ? "" : base == 10 ? " (hex literals start with 0x)" : "");
            return;
        }
        if (v > (UINT64_MAX - (uint64_t)d) / base) overflow = true;
        v = v * base + (uint64_t)d;
        digits++;
    }
    if (digits == 0) lex_error(lx, s, "%s literal '%.*s' has no digits", kind, n, s);
    else if (base == 10 && s[0] == '0' && len > 1)
        lex_error(lx, s, "leading zero in '%.*s%s' (there are no octal literals); remove it", n, s, more);
    else if (overflow) lex_error(lx, s, "integer literal '%.*s%s' does not fit in 64 bits", n, s, more);
    else *val = v;
}

/* A float literal; `_` separators are dropped. */
static double float_value(kf_lexer *lx, const char *s, size_t len)
{
    char tmp[128];
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '_') {
            if (i == 0 || (unsigned)(s[i - 1] - '0') >= 10u || i + 1 >= len || (unsigned)(s[i + 1] - '0') >= 10u) {
                lex_error(lx, s, "'_' in a float literal must stand between two digits");
                return 0;
            }
            continue;
        }
        if (n + 1 >= sizeof tmp) {
            lex_error(lx, s, "float literal longer than %zu characters", sizeof tmp - 1);
            return 0;
        }
        tmp[n++] = s[i];
    }
    tmp[n] = 0;
    errno = 0;
    double v = strtod(tmp, NULL);
    if (isinf(v)) {
        lex_error(lx, s, "float literal '%s' is too large for f64", tmp);
        return 0;
    }
    return v;
}

/* A word shaped like a type name: scalar, or scalar 'x' digits. */
static kf_type type_value(kf_lexer *lx, const char *s, size_t len)
{
    kf_type t = kf_type_from_name(s, len);
    if (t.kind != KF_TK_VOID) return t;
    size_t n = 0;
    while (n < len && s[n] != 'x') n++;
    kf_type scalar = kf_type_from_name(s, n);
    if (scalar.kind == KF_TK_SCALAR && scalar.scalar == KF_S_BOOL)
        lex_error(lx, s, "vector %.*s: there are no bool vectors", (int)len, s);
    else
        lex_error(lx, s, "vector %.*s: lane count must be 2, 4, 8 or 16 and total size at most 16 bytes",
                  len > 40 ? 40 : (int)len, s);
    return scalar.kind == KF_TK_SCALAR ? scalar : kf_type_scalar(KF_S_I32);
}

/* A suffix glued to a number ("1.0f", "2x"): reported, and skipped. */
static cursor number_suffix(kf_lexer *lx, const char *start, cursor p)
{
    if (!is_word(*p)) return p;
    cursor q = p;
    while (is_word(*q)) q++;
    if (literal_suffix(lx, start, (const char *)p, (size_t)(q - p), true)) return q;
    int n = (int)(q - (cursor)start) > 40 ? 40 : (int)(q - (cursor)start);
    lex_error(lx, start, "invalid suffix '%.*s' on number '%.*s'", (int)(q - p) > 20 ? 20 : (int)(q - p),
              (const char *)p, n, start);
    return q;
}

static int open_bracket(kf_lexer *lx, const char *p, int tk)
{
    if (lx->nesting < KF_LEX_MAX_NESTING) {
        lx->open_at[lx->nesting] = loc_at(lx, p);
        lx->open_ch[lx->nesting] = *p;
    }
    if (++lx->nesting > KF_LEX_MAX_NESTING) {
        lex_error(lx, p, "nesting deeper than %d levels of ( [ {; split the expression or block up",
                  KF_LEX_MAX_NESTING);
        lx->stop = true;
    }
    return tk;
}

static int close_bracket(kf_lexer *lx, int tk)
{
    if (lx->nesting) lx->nesting--;
    return tk;
}

/*!re2c
    re2c:define:YYCTYPE = "unsigned char";
    re2c:define:YYCURSOR = cur;
    re2c:define:YYMARKER = mar;
    re2c:yyfill:enable = 0;

    D       = [0-9] [0-9_]*;
    E       = [eE] [+-]? D;
    NUMWORD = [0-9] [0-9A-Za-z_]*;
    SCALAR  = "bool" | "i8" | "u8" | "i16" | "u16" | "i32" | "u32" | "i64" | "u64"
            | "f16" | "bf16" | "f32" | "f64";
    IDENT   = [A-Za-z_] [A-Za-z0-9_]*;
*/

/* Scans one token starting at lx->cur; returns its code, or -1 for
 * whitespace and comments (nothing to hand to the parser). */
static int scan(kf_lexer *lx, kf_token *tok)
{
    cursor cur = (cursor)lx->cur, mar = cur;
    const char *s = lx->cur;
    tok->loc = loc_at(lx, s);
    tok->text = s;
    tok->v.ival = 0;
#define TOKEN(tk) do { lx->cur = (const char *)cur; return (tk); } while (0)
    /*!re2c
    "\x00" {
        if (s == lx->end) { lx->cur = s; return 0; }
        lx->cur = (const char *)bad_bytes(lx, (cursor)s);
        return TK_ILLEGAL;
    }
    [ \t\r\v\f]+ { TOKEN(-1); }
    "\n"  { lx->line++; lx->line_start = (const char *)cur; TOKEN(-1); }
    "//"  { cur = skip_comment_text(lx, cur, false); TOKEN(-1); }
    "/*"  {
        kf_loc at = tok->loc;
        cur = skip_comment_text(lx, cur, true);
        if (cur >= (cursor)lx->end) {
            kf_diag_error(lx->cx->diags, at, "unterminated block comment: '/*' without a matching '*/'");
            TOKEN(-1);
        }
        cur += 2;
        TOKEN(-1);
    }

    "kernel"   { TOKEN(TK_KERNEL); }
    "fn"       { TOKEN(TK_FN); }
    "const"    { TOKEN(TK_CONST); }
    "let"      { TOKEN(TK_LET); }
    "var"      { TOKEN(TK_VAR); }
    "shared"   { TOKEN(TK_SHARED); }
    "if"       { TOKEN(TK_IF); }
    "else"     { TOKEN(TK_ELSE); }
    "for"      { TOKEN(TK_FOR); }
    "in"       { TOKEN(TK_IN); }
    "step"     { TOKEN(TK_STEP); }
    "while"    { TOKEN(TK_WHILE); }
    "break"    { TOKEN(TK_BREAK); }
    "continue" { TOKEN(TK_CONTINUE); }
    "return"   { TOKEN(TK_RETURN); }
    "as"       { TOKEN(TK_AS); }
    "mut"      { TOKEN(TK_MUT); }
    "true"     { TOKEN(TK_TRUE); }
    "false"    { TOKEN(TK_FALSE); }

    SCALAR ("x" [0-9]+)? {
        tok->v.type = type_value(lx, s, (size_t)((const char *)cur - s));
        TOKEN(TK_TYPE);
    }
    IDENT {
        tok->v.name = kf_arena_strndup(lx->cx->arena, s, (size_t)((const char *)cur - s));
        if (!tok->v.name) {
            lex_error(lx, s, "out of memory");
            lx->stop = true;
        }
        TOKEN(TK_NAME);
    }
    "@schedule" { tok->v.name = "schedule"; TOKEN(TK_AT_SCHEDULE); }
    "@unroll"   { tok->v.name = "unroll"; TOKEN(TK_AT_UNROLL); }
    "@" IDENT   {
        lex_error(lx, s, "unknown attribute '%.*s'; expected @schedule (before a kernel) or @unroll (before a for)",
                  (int)((const char *)cur - s) > 40 ? 40 : (int)((const char *)cur - s), s);
        TOKEN(TK_ILLEGAL);
    }

    NUMWORD / ".." {
        int_value(lx, s, (size_t)((const char *)cur - s), &tok->v.ival);
        TOKEN(TK_INT);
    }
    D "." D? E? | "." D E? | D E {
        tok->v.fval = float_value(lx, s, (size_t)((const char *)cur - s));
        cur = number_suffix(lx, s, cur);
        TOKEN(TK_FLOAT);
    }
    NUMWORD {
        int_value(lx, s, (size_t)((const char *)cur - s), &tok->v.ival);
        TOKEN(TK_INT);
    }

    "("   { TOKEN(open_bracket(lx, s, TK_LPAREN)); }
    "["   { TOKEN(open_bracket(lx, s, TK_LBRACKET)); }
    "{"   { TOKEN(open_bracket(lx, s, TK_LBRACE)); }
    ")"   { TOKEN(close_bracket(lx, TK_RPAREN)); }
    "]"   { TOKEN(close_bracket(lx, TK_RBRACKET)); }
    "}"   { TOKEN(close_bracket(lx, TK_RBRACE)); }
    ","   { TOKEN(TK_COMMA); }
    ";"   { TOKEN(TK_SEMI); }
    ":"   { TOKEN(TK_COLON); }
    "."   { TOKEN(TK_DOT); }
    ".."  { TOKEN(TK_DOTDOT); }
    "->"  { TOKEN(TK_ARROW); }
    "||"  { TOKEN(TK_OROR); }
    "&&"  { TOKEN(TK_ANDAND); }
    "|"   { TOKEN(TK_PIPE); }
    "^"   { TOKEN(TK_CARET); }
    "&"   { TOKEN(TK_AMP); }
    "=="  { TOKEN(TK_EQEQ); }
    "!="  { TOKEN(TK_NE); }
    "<"   { TOKEN(TK_LT); }
    "<="  { TOKEN(TK_LE); }
    ">"   { TOKEN(TK_GT); }
    ">="  { TOKEN(TK_GE); }
    "<<"  { TOKEN(TK_SHL); }
    ">>"  { TOKEN(TK_SHR); }
    "+"   { TOKEN(TK_PLUS); }
    "-"   { TOKEN(TK_MINUS); }
    "*"   { TOKEN(TK_STAR); }
    "/"   { TOKEN(TK_SLASH); }
    "%"   { TOKEN(TK_PERCENT); }
    "!"   { TOKEN(TK_NOT); }
    "~"   { TOKEN(TK_TILDE); }
    "="   { TOKEN(TK_ASSIGN); }
    "+="  { TOKEN(TK_PLUSEQ); }
    "-="  { TOKEN(TK_MINUSEQ); }
    "*="  { TOKEN(TK_STAREQ); }
    "/="  { TOKEN(TK_SLASHEQ); }
    "%="  { TOKEN(TK_PERCENTEQ); }
    "&="  { TOKEN(TK_AMPEQ); }
    "|="  { TOKEN(TK_PIPEEQ); }
    "^="  { TOKEN(TK_CARETEQ); }
    "<<=" { TOKEN(TK_SHLEQ); }
    ">>=" { TOKEN(TK_SHREQ); }

    * {
        lx->cur = (const char *)bad_bytes(lx, (cursor)s);
        return TK_ILLEGAL;
    }
    */
#undef TOKEN
}

int kf_lex_next(kf_lexer *lx, kf_token *tok)
{
    for (;;) {
        if (lx->stop) {
            tok->loc = loc_at(lx, lx->cur);
            tok->text = lx->cur;
            tok->len = 0;
            return 0;
        }
        int tk = scan(lx, tok);
        tok->len = (uint32_t)(lx->cur - tok->text);
        if (tk >= 0) return tk;
    }
}

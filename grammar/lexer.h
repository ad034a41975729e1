/* The interface between the re2c lexer (grammar/lexer.re) and the Lemon
 * parser (grammar/parser.y), private to grammar/ and its tests.
 *
 * The lexer hands out one kf_token at a time, by value, with the Lemon
 * TK_* code from the generated parser.h as its kind; the parser driver
 * (kf_parse, at the end of parser.y) feeds each straight into the Lemon
 * engine. Nothing is allocated per token except identifier names, which are
 * copied into the compilation arena because the AST keeps them.
 *
 * The lexer reports its own errors (unreadable bytes, invalid UTF-8, bad
 * literals, unterminated comments, nesting too deep) on the diagnostics list
 * and then returns either a usable token (a bad literal becomes INT 0 so the
 * parse goes on undisturbed) or TK_ILLEGAL, which the parser treats as a
 * syntax error it does not report a second time. */
#ifndef KF_LEXER_H
#define KF_LEXER_H

#include "parse.h"

/* Deepest nesting of ( [ { combined; deeper input is an error and the parse
 * stops there (a guard for every recursive pass after the parser). */
#define KF_LEX_MAX_NESTING 200

typedef struct {
    kf_loc loc;          /* first byte of the token */
    const char *text;    /* the token's bytes in the source (not NUL-terminated) */
    uint32_t len;
    union {
        uint64_t ival;   /* TK_INT */
        double fval;     /* TK_FLOAT */
        kf_type type;    /* TK_TYPE */
        const char *name;/* TK_NAME and attribute names: arena copy, NUL-terminated */
    } v;
} kf_token;

typedef struct {
    const char *src;        /* start of the text; src[len] == '\0' */
    const char *cur;        /* next byte to read */
    const char *end;        /* src + len */
    const char *line_start; /* first byte of the current line */
    uint32_t line;
    uint32_t nesting;       /* open ( [ { */
    kf_loc open_at[KF_LEX_MAX_NESTING];  /* where each open bracket is */
    char open_ch[KF_LEX_MAX_NESTING];
    bool stop;              /* a fatal lexical error: the parse must end here */
    kf_pass_ctx *cx;
} kf_lexer;

/* Prepares to read cx->src[0 .. cx->len); cx->src[cx->len] must be '\0'. */
void kf_lex_init(kf_lexer *lx, kf_pass_ctx *cx);
/* Reads the next token into *tok and returns its TK_* code; 0 at the end of
 * the input (tok->loc is then the end position). Errors go to cx->diags. */
int kf_lex_next(kf_lexer *lx, kf_token *tok);
/* A short description of a token kind for messages: "'+'", "a name". */
const char *kf_lex_token_name(int tk);
/* Describes a concrete token for "unexpected ..." messages, into buf. */
const char *kf_lex_token_describe(int tk, const kf_token *tok, char *buf, size_t size);

#endif

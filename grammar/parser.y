/* The grammar of the .kf language (LANGUAGE.md sections 2-7), for Lemon.
 *
 * The lexer (grammar/lexer.re) returns this grammar's own TK_* codes and the
 * driver kf_parse() at the bottom of this file feeds them one by one into
 * the engine, which lives in the compilation arena. Each rule's action is one
 * builder call that makes an AST node (ir/ast.h) in the arena; lists grow at
 * their tail in O(1) through kf_list.
 *
 * Errors: %syntax_error names the unexpected token and the tokens the parser
 * could have taken there (computed from the LALR tables, without running any
 * action), plus a hint for common slips. Recovery: the driver drops the rest
 * of a broken statement (up to a ';', brace or keyword at the error's bracket
 * depth, or a new line), then Lemon's `error` rules at statement and item
 * level resynchronise there (`error ;`, `error { block }` so braces stay
 * balanced, or bare `error` before the next statement or item) and the next
 * error is reported at once. One mistake gives one message; independent
 * mistakes each give theirs.
 *
 * Guards: the lexer stops at nesting deeper than KF_LEX_MAX_NESTING; the
 * parser stack is bounded (%stack_size, overflow is an error); and every node
 * records its depth while parsing (in `aux`, cleared before kf_parse returns)
 * so that no tree deeper than KF_PARSE_MAX_DEPTH reaches the recursive
 * passes after the parser (long `a + b + ...` chains, long else-if chains). */

%name kf_lemon
%token_prefix TK_
%token_type {kf_token}
%default_type {kf_node *}
%extra_context {kf_parser *px}
%stack_size 1000

%include {
#include <string.h>
#include "lexer.h"

#define kf_lemon_ENGINEALWAYSONSTACK 1   /* no kf_lemonAlloc: the engine lives in the arena */
#define KF_PARSE_MAX_DEPTH 1000

typedef struct {
    kf_node *head, *tail;
    uint32_t depth;            /* deepest item */
    uint32_t len;              /* else-if chains: links so far */
} kf_list;

typedef struct {
    kf_pass_ctx *cx;
    kf_lexer lx;
    kf_node *module;
    kf_list items;
    int prev_tk;               /* the token before the one being fed */
    kf_token prev;
    bool recovering;           /* after a syntax error, until a resync token */
    uint32_t tok_nesting;      /* brackets open before the token being fed */
    uint32_t err_nesting;      /* ... before the token of the last syntax error */
    kf_loc cur_loc;            /* the token being fed */
    bool stop;                 /* fatal: stop feeding tokens */
    bool deep_reported;
    void *engine;
} kf_parser;

static void parse_error(kf_parser *px, kf_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static kf_node *mk(kf_parser *px, kf_node_kind kind, kf_loc loc, kf_node *a, kf_node *b, kf_node *c);
static void too_deep(kf_parser *px, kf_loc loc);
static kf_node *mk_name(kf_parser *px, kf_node_kind kind, const kf_token *t, kf_node *a, kf_node *b, kf_node *c);
static kf_node *mk_binary(kf_parser *px, kf_op op, const kf_token *t, kf_node *a, kf_node *b);
static kf_node *mk_type(kf_parser *px, const kf_token *t);
static kf_node *mk_buftype(kf_parser *px, const kf_token *amp, const kf_token *elem, bool mut);
/* &[T] / &mut [T]: op = 1 when mut; `type` is the buffer type as a
 * convenience (sema may recompute it from the element TYPE node). */
static kf_node *mk_buftype(kf_parser *px, const kf_token *amp, const kf_token *elem, bool mut)
{
    kf_node *n = mk(px, KF_N_TYPE_BUF, amp->loc, mk_type(px, elem), NULL, NULL);
    if (!n) return NULL;
    n->op = mut;
    n->type = elem->v.type;
    n->type.kind = KF_TK_BUFFER;
    n->type.flags = mut ? KF_TF_MUT : 0;
    return n;
}

static kf_node *mk_for(kf_parser *px, kf_node *head, kf_node *step, kf_node *body, int unroll);
static kf_node *mk_tuple(kf_parser *px, kf_loc loc, kf_list items);
static kf_list list_one(kf_node *n);
static kf_list list_push(kf_list l, kf_node *n);
static kf_list if_extend(kf_parser *px, kf_list chain, kf_node *elif);
static kf_node *if_finish(kf_parser *px, kf_list chain, kf_node *els);
static void syntax_error(kf_parser *px, int tk, const kf_token *tok);
static void add_hint(kf_parser *px, int tk, const kf_token *tok, kf_buf *out);
}

/* Tokens hold nothing to free; naming px keeps the template warning-free. */
%token_destructor { (void)px; }
%syntax_error { syntax_error(px, yymajor, &TOKEN); }
%stack_overflow {
    parse_error(px, px->cur_loc, "expression or statement too deeply nested for the parser (more than %d pending symbols); split it up",
                YYSTACKDEPTH);
    px->stop = true;
}

/* Tokens the lexer returns that no rule uses (an unreadable input). */
%token ILLEGAL.

/* Precedence, lowest first (LANGUAGE.md section 5). */
%left OROR.
%left ANDAND.
%left PIPE.
%left CARET.
%left AMP.
%nonassoc EQEQ NE.
%nonassoc LT LE GT GE.
%left SHL SHR.
%left PLUS MINUS.
%left STAR SLASH PERCENT.
%left AS.
%right NOT TILDE.
%left LPAREN LBRACKET DOT.

/* ---- module ------------------------------------------------------------ */
module ::= items.

items ::= .
items ::= items item(I).                    { px->items = list_push(px->items, I); }

item(X) ::= CONST NAME(N) COLON TYPE(T) ASSIGN expr(E) SEMI. { X = mk_name(px, KF_N_CONST, &N, mk_type(px, &T), E, NULL); }
item(X) ::= FN NAME(N) params(P) block(B).                { X = mk_name(px, KF_N_FN, &N, P.head, NULL, B); }
item(X) ::= FN NAME(N) params(P) ARROW TYPE(T) block(B).   { X = mk_name(px, KF_N_FN, &N, P.head, mk_type(px, &T), B); }
item(X) ::= KERNEL NAME(N) params(P) block(B).             { X = mk_name(px, KF_N_KERNEL, &N, P.head, NULL, B); }
item(X) ::= attrs(A) KERNEL NAME(N) params(P) block(B).    { X = mk_name(px, KF_N_KERNEL, &N, P.head, NULL, B); if (X) X->d = A.head; }
item(X) ::= error.                          { X = NULL; }
item(X) ::= error SEMI.                     { X = NULL; }
item(X) ::= error block.                    { X = NULL; }

/* No empty rules where an item, parameter list, call or loop starts, so
 * that a syntax error there is detected before any default reduction and
 * the "expected ..." list names every alternative. */
%type attrs {kf_list}
attrs(X) ::= attr(A).                       { X = list_one(A); }
attrs(X) ::= attrs(L) attr(A).              { X = list_push(L, A); }
attr(X) ::= AT_SCHEDULE(K) LPAREN namedargs(L) RPAREN. {
    X = mk(px, KF_N_ATTR, K.loc, L.head, NULL, NULL);
    if (X) X->name = "schedule";
    if (X && L.depth >= X->aux) X->aux = L.depth + 1;
}

%type namedargs {kf_list}
namedargs(X) ::= namedarg(A).               { X = list_one(A); }
namedargs(X) ::= namedargs(L) COMMA namedarg(A). { X = list_push(L, A); }
namedarg(X) ::= NAME(N) ASSIGN expr(E).     { X = mk_name(px, KF_N_NAMEDARG, &N, E, NULL, NULL); }
namedarg(X) ::= SHARED(K) ASSIGN expr(E).   { X = mk(px, KF_N_NAMEDARG, K.loc, E, NULL, NULL); if (X) X->name = "shared"; }
namedarg(X) ::= NAME(N) ASSIGN LPAREN(P) expr(E) COMMA exprs(L) RPAREN. {
    X = mk_name(px, KF_N_NAMEDARG, &N, mk_tuple(px, P.loc, list_push(list_one(E), L.head)), NULL, NULL);
}

%type params {kf_list}
params(X) ::= LPAREN RPAREN.                { X = (kf_list){0}; }
params(X) ::= LPAREN plist(L) RPAREN.       { X = L; }
%type plist {kf_list}
plist(X) ::= param(P).                      { X = list_one(P); }
plist(X) ::= plist(L) COMMA param(P).       { X = list_push(L, P); }
param(X) ::= NAME(N) COLON ptype(T).        { X = mk_name(px, KF_N_PARAM, &N, T, NULL, NULL); }

ptype(X) ::= TYPE(T).                       { X = mk_type(px, &T); }
ptype(X) ::= buftype(B).                    { X = B; }
ptype(X) ::= SHARED dyntype(T).             { X = T; if (X) X->op = 1; }
buftype(X) ::= AMP(A) LBRACKET TYPE(T) RBRACKET.     { X = mk_buftype(px, &A, &T, false); }
buftype(X) ::= AMP(A) MUT LBRACKET TYPE(T) RBRACKET. { X = mk_buftype(px, &A, &T, true); }
arrtype(X) ::= TYPE(T) LBRACKET expr(N) RBRACKET. { X = mk(px, KF_N_TYPE_ARRAY, T.loc, mk_type(px, &T), N, NULL); }
/* T[]: the dynamic shared array, a `shared T[]` parameter, an `as shared T[]` view. */
dyntype(X) ::= TYPE(T) LBRACKET RBRACKET.   { X = mk(px, KF_N_TYPE_ARRAY, T.loc, mk_type(px, &T), NULL, NULL); }

/* ---- statements -------------------------------------------------------- */
block(X) ::= LBRACE(L) stmts(S) RBRACE.     { X = mk(px, KF_N_BLOCK, L.loc, S.head, NULL, NULL); if (X && S.depth >= X->aux) X->aux = S.depth + 1; }

%type stmts {kf_list}
stmts(X) ::= .                              { X = (kf_list){0}; }
stmts(X) ::= stmts(L) stmt(S).              { X = list_push(L, S); }

stmt(X) ::= LET NAME(N) ASSIGN expr(E) SEMI.                 { X = mk_name(px, KF_N_LET, &N, NULL, E, NULL); }
stmt(X) ::= LET NAME(N) COLON TYPE(T) ASSIGN expr(E) SEMI.   { X = mk_name(px, KF_N_LET, &N, mk_type(px, &T), E, NULL); }
stmt(X) ::= VAR NAME(N) ASSIGN expr(E) SEMI.                 { X = mk_name(px, KF_N_VAR, &N, NULL, E, NULL); }
stmt(X) ::= VAR NAME(N) COLON TYPE(T) SEMI.                  { X = mk_name(px, KF_N_VAR, &N, mk_type(px, &T), NULL, NULL); }
stmt(X) ::= VAR NAME(N) COLON TYPE(T) ASSIGN expr(E) SEMI.   { X = mk_name(px, KF_N_VAR, &N, mk_type(px, &T), E, NULL); }
stmt(X) ::= VAR NAME(N) COLON arrtype(T) SEMI.               { X = mk_name(px, KF_N_VAR, &N, T, NULL, NULL); }
stmt(X) ::= SHARED NAME(N) COLON arrtype(T) SEMI.            { X = mk_name(px, KF_N_SHARED, &N, T, NULL, NULL); }
stmt(X) ::= SHARED NAME(N) COLON dyntype(T) SEMI.            { X = mk_name(px, KF_N_SHARED, &N, T, NULL, NULL); }
stmt(X) ::= expr(L) assign_op(O) expr(R) SEMI. { X = mk(px, KF_N_ASSIGN, O.loc, L, R, NULL); if (X) X->op = (uint16_t)O.v.ival; }
stmt(X) ::= expr(E) SEMI.                   { X = mk(px, KF_N_EXPR, E ? E->loc : (kf_loc){0}, E, NULL, NULL); }
stmt(X) ::= if_chain(L).                    { X = if_finish(px, L, NULL); }
stmt(X) ::= if_chain(L) ELSE block(E).      { X = if_finish(px, L, E); }
stmt(X) ::= for_head(F) block(D).                          { X = mk_for(px, F, NULL, D, 0); }
stmt(X) ::= for_head(F) STEP expr(S) block(D).             { X = mk_for(px, F, S, D, 0); }
stmt(X) ::= AT_UNROLL for_head(F) block(D).                { X = mk_for(px, F, NULL, D, 1); }
stmt(X) ::= AT_UNROLL for_head(F) STEP expr(S) block(D).   { X = mk_for(px, F, S, D, 1); }
stmt(X) ::= WHILE(K) expr(C) block(B).      { X = mk(px, KF_N_WHILE, K.loc, C, B, NULL); }
stmt(X) ::= block(B).                       { X = B; }
stmt(X) ::= BREAK(K) SEMI.                  { X = mk(px, KF_N_BREAK, K.loc, NULL, NULL, NULL); }
stmt(X) ::= CONTINUE(K) SEMI.               { X = mk(px, KF_N_CONTINUE, K.loc, NULL, NULL, NULL); }
stmt(X) ::= RETURN(K) SEMI.                 { X = mk(px, KF_N_RETURN, K.loc, NULL, NULL, NULL); }
stmt(X) ::= RETURN(K) expr(E) SEMI.         { X = mk(px, KF_N_RETURN, K.loc, E, NULL, NULL); }
stmt(X) ::= error.                          { X = NULL; }
stmt(X) ::= error SEMI.                     { X = NULL; }

/* if / else if chains grow at the tail (IF.c = next IF) without deepening
 * the parser stack. */
%type if_chain {kf_list}
if_chain(X) ::= IF(K) expr(C) block(T).                      { X = list_one(mk(px, KF_N_IF, K.loc, C, T, NULL)); }
if_chain(X) ::= if_chain(L) ELSE IF(K) expr(C) block(T).     { X = if_extend(px, L, mk(px, KF_N_IF, K.loc, C, T, NULL)); }

/* A FOR node with its name and bounds; mk_for adds step and body. */
for_head(X) ::= FOR(K) NAME(N) IN expr(A) DOTDOT expr(B).  { X = mk(px, KF_N_FOR, K.loc, A, B, NULL); if (X) X->name = N.v.name; }

/* The operator token, its kf_op in v.ival. */
%type assign_op {kf_token}
assign_op(X) ::= ASSIGN(T).    { X = T; X.v.ival = KF_OP_ASSIGN; }
assign_op(X) ::= PLUSEQ(T).    { X = T; X.v.ival = KF_OP_ADD; }
assign_op(X) ::= MINUSEQ(T).   { X = T; X.v.ival = KF_OP_SUB; }
assign_op(X) ::= STAREQ(T).    { X = T; X.v.ival = KF_OP_MUL; }
assign_op(X) ::= SLASHEQ(T).   { X = T; X.v.ival = KF_OP_DIV; }
assign_op(X) ::= PERCENTEQ(T). { X = T; X.v.ival = KF_OP_REM; }
assign_op(X) ::= AMPEQ(T).     { X = T; X.v.ival = KF_OP_AND; }
assign_op(X) ::= PIPEEQ(T).    { X = T; X.v.ival = KF_OP_OR; }
assign_op(X) ::= CARETEQ(T).   { X = T; X.v.ival = KF_OP_XOR; }
assign_op(X) ::= SHLEQ(T).     { X = T; X.v.ival = KF_OP_SHL; }
assign_op(X) ::= SHREQ(T).     { X = T; X.v.ival = KF_OP_SHR; }

/* ---- expressions ------------------------------------------------------- */
expr(X) ::= expr(A) OROR(O) expr(B).      { X = mk_binary(px, KF_OP_LOR, &O, A, B); }
expr(X) ::= expr(A) ANDAND(O) expr(B).    { X = mk_binary(px, KF_OP_LAND, &O, A, B); }
expr(X) ::= expr(A) PIPE(O) expr(B).      { X = mk_binary(px, KF_OP_OR, &O, A, B); }
expr(X) ::= expr(A) CARET(O) expr(B).     { X = mk_binary(px, KF_OP_XOR, &O, A, B); }
expr(X) ::= expr(A) AMP(O) expr(B).       { X = mk_binary(px, KF_OP_AND, &O, A, B); }
expr(X) ::= expr(A) EQEQ(O) expr(B).      { X = mk_binary(px, KF_OP_EQ, &O, A, B); }
expr(X) ::= expr(A) NE(O) expr(B).        { X = mk_binary(px, KF_OP_NE, &O, A, B); }
expr(X) ::= expr(A) LT(O) expr(B).        { X = mk_binary(px, KF_OP_LT, &O, A, B); }
expr(X) ::= expr(A) LE(O) expr(B).        { X = mk_binary(px, KF_OP_LE, &O, A, B); }
expr(X) ::= expr(A) GT(O) expr(B).        { X = mk_binary(px, KF_OP_GT, &O, A, B); }
expr(X) ::= expr(A) GE(O) expr(B).        { X = mk_binary(px, KF_OP_GE, &O, A, B); }
expr(X) ::= expr(A) SHL(O) expr(B).       { X = mk_binary(px, KF_OP_SHL, &O, A, B); }
expr(X) ::= expr(A) SHR(O) expr(B).       { X = mk_binary(px, KF_OP_SHR, &O, A, B); }
expr(X) ::= expr(A) PLUS(O) expr(B).      { X = mk_binary(px, KF_OP_ADD, &O, A, B); }
expr(X) ::= expr(A) MINUS(O) expr(B).     { X = mk_binary(px, KF_OP_SUB, &O, A, B); }
expr(X) ::= expr(A) STAR(O) expr(B).      { X = mk_binary(px, KF_OP_MUL, &O, A, B); }
expr(X) ::= expr(A) SLASH(O) expr(B).     { X = mk_binary(px, KF_OP_DIV, &O, A, B); }
expr(X) ::= expr(A) PERCENT(O) expr(B).   { X = mk_binary(px, KF_OP_REM, &O, A, B); }
expr(X) ::= expr(A) AS(O) TYPE(T).        { X = mk(px, KF_N_CAST, O.loc, A, mk_type(px, &T), NULL); }
expr(X) ::= expr(A) AS(O) buftype(T).     { X = mk(px, KF_N_CAST, O.loc, A, T, NULL); }
expr(X) ::= expr(A) AS(O) SHARED dyntype(T). { X = mk(px, KF_N_CAST, O.loc, A, T, NULL); if (T) T->op = 1; }
expr(X) ::= MINUS(O) expr(A). [NOT]       { X = mk(px, KF_N_UNARY, O.loc, A, NULL, NULL); if (X) X->op = KF_OP_NEG; }
expr(X) ::= NOT(O) expr(A).               { X = mk(px, KF_N_UNARY, O.loc, A, NULL, NULL); if (X) X->op = KF_OP_NOT; }
expr(X) ::= TILDE(O) expr(A).             { X = mk(px, KF_N_UNARY, O.loc, A, NULL, NULL); if (X) X->op = KF_OP_BNOT; }
expr(X) ::= NAME(N) args(L). { X = mk(px, KF_N_CALL, N.loc, mk_name(px, KF_N_NAME, &N, NULL, NULL, NULL), L.head, NULL); if (X && L.depth >= X->aux) X->aux = L.depth + 1; }
expr(X) ::= TYPE(T) args(L). { X = mk(px, KF_N_CALL, T.loc, mk_type(px, &T), L.head, NULL); if (X && L.depth >= X->aux) X->aux = L.depth + 1; }
expr(X) ::= expr(A) LBRACKET(O) expr(I) RBRACKET. { X = mk(px, KF_N_INDEX, O.loc, A, I, NULL); }
expr(X) ::= expr(A) DOT NAME(N).          { X = mk_name(px, KF_N_MEMBER, &N, A, NULL, NULL); }
expr(X) ::= LPAREN expr(E) RPAREN.        { X = E; }
expr(X) ::= NAME(N).                      { X = mk_name(px, KF_N_NAME, &N, NULL, NULL, NULL); }
expr(X) ::= TYPE(T).                      { X = mk_type(px, &T); }
expr(X) ::= INT(T).                       { X = mk(px, KF_N_INT, T.loc, NULL, NULL, NULL); if (X) X->ival = T.v.ival; }
expr(X) ::= FLOAT(T).                     { X = mk(px, KF_N_FLOAT, T.loc, NULL, NULL, NULL); if (X) X->fval = T.v.fval; }
expr(X) ::= TRUE(T).                      { X = mk(px, KF_N_BOOL, T.loc, NULL, NULL, NULL); if (X) X->ival = 1; }
expr(X) ::= FALSE(T).                     { X = mk(px, KF_N_BOOL, T.loc, NULL, NULL, NULL); }

%type args {kf_list}
args(X) ::= LPAREN RPAREN.               { X = (kf_list){0}; }
args(X) ::= LPAREN exprs(L) RPAREN.       { X = L; }
%type exprs {kf_list}
exprs(X) ::= expr(E).                     { X = list_one(E); }
exprs(X) ::= exprs(L) COMMA expr(E).      { X = list_push(L, E); }

%code {
/* ---- builders ------------------------------------------------------------ */

static void parse_error(kf_parser *px, kf_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kf_diag_vadd(px->cx->diags, KF_DIAG_ERROR, loc, fmt, ap);
    va_end(ap);
}

static uint32_t depth_of(const kf_node *n) { return n ? n->aux : 0; }

/* Every node built records 1 + its deepest child in aux; past the limit the
 * parse reports once and stops, so later passes may recurse freely. */
static kf_node *mk(kf_parser *px, kf_node_kind kind, kf_loc loc, kf_node *a, kf_node *b, kf_node *c)
{
    kf_node *n = kf_ast_node(px->cx->arena, kind, loc, a, b, c);
    if (!n) {
        if (!px->stop) parse_error(px, loc, "out of memory while parsing");
        px->stop = true;
        return NULL;
    }
    uint32_t d = depth_of(a);
    if (depth_of(b) > d) d = depth_of(b);
    if (depth_of(c) > d) d = depth_of(c);
    n->aux = d + 1;
    if (n->aux > KF_PARSE_MAX_DEPTH) too_deep(px, loc);
    return n;
}

static kf_node *mk_name(kf_parser *px, kf_node_kind kind, const kf_token *t, kf_node *a, kf_node *b, kf_node *c)
{
    kf_node *n = mk(px, kind, t->loc, a, b, c);
    if (n) n->name = t->v.name;
    return n;
}

static kf_node *mk_binary(kf_parser *px, kf_op op, const kf_token *t, kf_node *a, kf_node *b)
{
    kf_node *n = mk(px, KF_N_BINARY, t->loc, a, b, NULL);
    if (n) n->op = (uint16_t)op;
    return n;
}

static kf_node *mk_type(kf_parser *px, const kf_token *t)
{
    kf_node *n = mk(px, KF_N_TYPE, t->loc, NULL, NULL, NULL);
    if (n) n->type = t->v.type;
    return n;
}

/* Completes a for_head FOR node with its step and body. */
static kf_node *mk_for(kf_parser *px, kf_node *head, kf_node *step, kf_node *body, int unroll)
{
    if (!head) return NULL;
    head->c = step;
    head->d = body;
    head->op = (uint16_t)unroll;
    if (depth_of(step) >= head->aux) head->aux = depth_of(step) + 1;
    if (depth_of(body) >= head->aux) head->aux = depth_of(body) + 1;
    if (head->aux > KF_PARSE_MAX_DEPTH) too_deep(px, head->loc);
    return head;
}

static kf_node *mk_tuple(kf_parser *px, kf_loc loc, kf_list items)
{
    uint32_t count = 0;
    for (kf_node *p = items.head; p; p = p->next) count++;
    if (count > 3) parse_error(px, loc, "a schedule tuple has at most 3 items (x, y, z), this one has %u", count);
    kf_node *n = mk(px, KF_N_TUPLE, loc, items.head, NULL, NULL);
    if (n && items.depth >= n->aux) n->aux = items.depth + 1;
    return n;
}

static kf_list list_one(kf_node *n)
{
    return (kf_list){n, n, depth_of(n), 0};
}

/* Appends in O(1); a NULL item (an error production) is skipped. `n` may
 * itself head a chain (the tail of a tuple), which is walked once. */
static kf_list list_push(kf_list l, kf_node *n)
{
    if (!n) return l;
    if (!l.head) l.head = n;
    else l.tail->next = n;
    for (l.tail = n; ; l.tail = l.tail->next) {
        if (depth_of(l.tail) > l.depth) l.depth = depth_of(l.tail);
        if (!l.tail->next) break;
    }
    return l;
}

static void too_deep(kf_parser *px, kf_loc loc)
{
    if (px->deep_reported) return;
    parse_error(px, loc, "expression or statement nested more than %d levels deep; split it up "
                "(with 'let' temporaries or shorter else-if chains)", KF_PARSE_MAX_DEPTH);
    px->deep_reported = px->stop = true;
}

/* Links `elif` as the else branch of the chain's last IF. The chain's depth
 * is its length plus its deepest condition or block; past the limit the
 * parse stops here, so the chain stays short enough to walk recursively. */
static kf_list if_extend(kf_parser *px, kf_list chain, kf_node *elif)
{
    if (!chain.head || !elif) return chain;
    chain.tail->c = elif;
    chain.tail = elif;
    chain.len++;
    if (elif->aux > chain.depth) chain.depth = elif->aux;
    if (chain.depth + chain.len > KF_PARSE_MAX_DEPTH) too_deep(px, elif->loc);
    return chain;
}

static kf_node *if_finish(kf_parser *px, kf_list chain, kf_node *els)
{
    if (!chain.head) return NULL;
    chain.tail->c = els;
    if (els && els->aux > chain.depth) chain.depth = els->aux;
    chain.head->aux = chain.depth + chain.len + 1;
    if (chain.head->aux > KF_PARSE_MAX_DEPTH) too_deep(px, chain.head->loc);
    return chain.head;
}

/* ---- syntax errors ---------------------------------------------------------- */

/* Would the engine shift terminal `tk` from its current state? Replays the
 * LALR reductions on a copy of the state stack only (no actions run). */
static bool would_accept(const yyParser *p, int tk)
{
    YYACTIONTYPE st[YYSTACKDEPTH + 2];
    int top = (int)(p->yytos - p->yystack);
    for (int i = 0; i <= top; i++) st[i] = p->yystack[i].stateno;
    YYACTIONTYPE act = st[top];
    for (int guard = 0; guard < 10000; guard++) {
        act = yy_find_shift_action((YYCODETYPE)tk, act);
        if (act >= YY_MIN_REDUCE) {
            unsigned rule = act - YY_MIN_REDUCE;
            top += yyRuleInfoNRhs[rule];
            if (top < 0 || top >= YYSTACKDEPTH) return false;
            act = yy_find_reduce_action(st[top], (YYCODETYPE)yyRuleInfoLhs[rule]);
            st[++top] = act;
        } else {
            return act <= YY_MAX_SHIFTREDUCE || act == YY_ACCEPT_ACTION;
        }
    }
    return false;
}

/* Token classes folded into one phrase when all their members fit. */
static const int expr_start[] = {TK_NAME, TK_INT, TK_FLOAT, TK_LPAREN, TK_MINUS, TK_NOT, TK_TILDE, TK_TRUE, TK_FALSE, TK_TYPE};
static const int binary_ops[] = {TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_PERCENT, TK_AS, TK_OROR, TK_ANDAND, TK_PIPE,
                                 TK_CARET, TK_AMP, TK_SHL, TK_SHR, TK_LBRACKET, TK_DOT};
static const int stmt_start[] = {TK_LET, TK_VAR, TK_SHARED, TK_IF, TK_FOR, TK_WHILE, TK_BREAK, TK_CONTINUE,
                                 TK_RETURN, TK_AT_UNROLL, TK_LBRACE};

#define COUNT(a) (sizeof(a) / sizeof(a[0]))

static bool fold_class(bool *ok, const int *cls, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!ok[cls[i]]) return false;
    for (size_t i = 0; i < n; i++) ok[cls[i]] = false;
    return true;
}

/* "';', ')' or an operator" from the set of acceptable terminals. */
static void expected_list(kf_parser *px, kf_buf *out)
{
    const yyParser *p = px->engine;
    bool ok[YYNTOKEN] = {0};
    for (int tk = 1; tk < YYNTOKEN; tk++) ok[tk] = tk != TK_ILLEGAL && tk != YYERRORSYMBOL && would_accept(p, tk);
    const char *phrases[YYNTOKEN + 4];
    size_t n = 0;
    bool stmt = fold_class(ok, stmt_start, COUNT(stmt_start));
    bool expr = fold_class(ok, expr_start, COUNT(expr_start));
    bool ops = fold_class(ok, binary_ops, COUNT(binary_ops));
    if (ok[TK_LT] && ok[TK_EQEQ]) {
        ok[TK_LT] = ok[TK_LE] = ok[TK_GT] = ok[TK_GE] = ok[TK_EQEQ] = ok[TK_NE] = false;
        ops = true;
    }
    if (ok[TK_ASSIGN] && ok[TK_PLUSEQ]) {
        for (int tk = 1; tk < YYNTOKEN; tk++)
            if (tk != TK_ASSIGN && ok[tk] && strchr(kf_lex_token_name(tk), '=') && tk != TK_EQEQ && tk != TK_NE &&
                tk != TK_LE && tk != TK_GE)
                ok[tk] = false;
        ok[TK_ASSIGN] = false;
        phrases[n++] = "an assignment";
    }
    for (int tk = 1; tk < YYNTOKEN && n < 6; tk++)
        if (ok[tk]) phrases[n++] = kf_lex_token_name(tk);
    if (stmt) phrases[n++] = "a statement";
    if (expr) phrases[n++] = "an expression";
    if (ops) phrases[n++] = "an operator";
    for (size_t i = 0; i < n; i++)
        kf_buf_printf(out, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", phrases[i]);
}

static bool ends_operand(int tk)
{
    return tk == TK_NAME || tk == TK_INT || tk == TK_FLOAT || tk == TK_TRUE || tk == TK_FALSE ||
           tk == TK_RPAREN || tk == TK_RBRACKET;
}

static bool token_is(const kf_token *t, const char *word)
{
    return t->len == strlen(word) && memcmp(t->text, word, t->len) == 0;
}

/* The kforge type for a C or CUDA spelling of a declaration's type
 * ("float x = 1.0;"), "" for auto, NULL if t is not one. */
static const char *c_type_word(const kf_token *t)
{
    static const char *const words[][2] = {
        {"float", "f32"},   {"double", "f64"}, {"int", "i32"},       {"signed", "i32"},  {"unsigned", "u32"},
        {"half", "f16"},    {"char", "i8"},    {"short", "i16"},     {"long", "i64"},    {"auto", ""},
        {"size_t", "u64"},  {"int32_t", "i32"}, {"uint32_t", "u32"}, {"int64_t", "i64"}, {"uint64_t", "u64"},
        {"int8_t", "i8"},   {"uint8_t", "u8"}, {"int16_t", "i16"},   {"uint16_t", "u16"}, {"uint", "u32"},
        {"usize", "u64"},   {"isize", "i64"},  {"__half", "f16"},    {"__nv_bfloat16", "bf16"}};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (token_is(t, words[i][0])) return words[i][1];
    return NULL;
}

static bool starts_operand(int tk) { return tk == TK_NAME || tk == TK_INT || tk == TK_FLOAT || tk == TK_LPAREN; }

/* Hints for a type written the C, CUDA or Rust way where kforge expects
 * one: in a parameter list ("float* x", "x: f32[]", "x: &[f32; 16]") or
 * after ':' or 'as' ("let x: float"). Returns false if none applies. */
static bool type_slip_hint(kf_parser *px, int tk, const kf_token *tok, const char *ct, kf_buf *out)
{
    int prev = px->prev_tk;
    const kf_token *ty = tk == TK_TYPE ? tok : prev == TK_TYPE ? &px->prev : NULL;
    int tl = ty ? (int)ty->len : 3;
    const char *tt = ty ? ty->text : "f32";
    const char *cw = tk == TK_NAME ? c_type_word(tok) : NULL;
    if (ct && *ct && would_accept(px->engine, TK_COLON))   /* "float* x", "int n" */
        kf_buf_printf(out, " (a parameter is 'name: type': 'x: &[%s]' for a buffer, 'n: %s' for a value)", ct, ct);
    else if (cw && *cw && would_accept(px->engine, TK_TYPE) && !would_accept(px->engine, TK_NAME))
        kf_buf_printf(out, " (kforge's name for '%.*s' is %s)", (int)tok->len, tok->text, cw);
    else if ((tk == TK_LBRACKET && ((prev == TK_TYPE && would_accept(px->engine, TK_COMMA)) ||
                                    would_accept(px->engine, TK_AMP))) ||
             (tk == TK_TYPE && (prev == TK_AMP || prev == TK_MUT) && would_accept(px->engine, TK_LBRACKET)))
        kf_buf_printf(out, " (a buffer parameter is '&[%.*s]', or '&mut [%.*s]' when the kernel writes it)", tl, tt, tl,
                      tt);
    else if (tk == TK_LBRACKET && prev == TK_TYPE && would_accept(px->engine, TK_ASSIGN))
        kf_buf_printf(out, " (a local array is 'var a: %.*s[N];', filled by assignments)", tl, tt);
    else if (tk == TK_SEMI && prev == TK_TYPE && would_accept(px->engine, TK_RBRACKET))
        kf_buf_printf(out, " (a buffer's length is not part of its type: write '&[%.*s]' and pass the length as a "
                      "parameter)", tl, tt);
    else if (tk == TK_ASSIGN && prev == TK_RBRACKET && would_accept(px->engine, TK_SEMI) &&
             !would_accept(px->engine, TK_PLUS))   /* var a: f32[4] = 0; */
        kf_buf_puts(out, " (an array declaration has no initialiser: declare it, then assign its elements)");
    else if (tk == TK_CONST && would_accept(px->engine, TK_NAME) && would_accept(px->engine, TK_RPAREN))
        kf_buf_puts(out, " (a parameter is 'name: type'; a buffer without 'mut', 'x: &[f32]', is read-only)");
    else if (tk == TK_MUT && would_accept(px->engine, TK_AMP))
        kf_buf_puts(out, " (a buffer the kernel writes is '&mut [f32]': 'mut' after the '&')");
    else
        return false;
    return true;
}

/* Hints for slips of a C or CUDA programmer, where the token sequence
 * says which one it is. Returns false if none applies. */
static bool c_slip_hint(kf_parser *px, int tk, const kf_token *tok, kf_buf *out)
{
    int prev = px->prev_tk;
    bool glued = prev && tok->loc.line == px->prev.loc.line && tok->loc.col == px->prev.loc.col + px->prev.len;
    const char *ct = prev == TK_NAME ? c_type_word(&px->prev) : NULL;   /* "float x": f32 */
    if ((tk == TK_PLUS || tk == TK_MINUS) && prev == tk && glued)
        kf_buf_printf(out, " (there is no %s operator; write 'i %s= 1')", tk == TK_PLUS ? "++" : "--",
                      tk == TK_PLUS ? "+" : "-");
    else if (tk == TK_LPAREN && prev == TK_FOR)
        kf_buf_puts(out, " (a for loop is 'for i in a .. b { }' or 'for i in a .. b step s { }', without parentheses)");
    else if (starts_operand(tk) && prev == TK_RPAREN && would_accept(px->engine, TK_LBRACE))
        kf_buf_puts(out, " (the body of an if, for or while needs braces: 'if cond { ... }')");
    else if (starts_operand(tk) && prev == TK_RPAREN)
        kf_buf_puts(out, " (there are no C casts: a conversion is written 'e as T', e.g. 'n as f32')");
    else if (type_slip_hint(px, tk, tok, ct, out))
        ;
    else if (tk == TK_NAME && (prev == TK_TYPE || ct) && !glued && tok->loc.line == px->prev.loc.line) {
        int tl = ct ? (int)strlen(ct) : (int)px->prev.len;
        const char *tt = ct ? ct : px->prev.text, *colon = tl ? ": " : "";
        kf_buf_printf(out, " (a declaration is 'let %s%s%.*s = ...;', or 'var %s%s%.*s = ...;' to assign it later)",
                      tok->v.name, colon, tl, tt, tok->v.name, colon, tl, tt);
    }
    else if (tk == TK_CONST && px->lx.nesting > 0)
        kf_buf_puts(out, " (a const is declared at module level, outside any fn or kernel; inside one, "
                    "'let N = 4;' with a constant value is a compile-time constant too)");
    else if (tk == TK_NAME && would_accept(px->engine, TK_KERNEL) && (token_is(tok, "__global__") || token_is(tok, "__device__") ||
                                            token_is(tok, "void") || token_is(tok, "template")))
        kf_buf_puts(out, " (a kernel is 'kernel name(x: &[f32], n: u32) { }' and a device function "
                    "'fn name(x: f32) -> f32 { }')");
    else if (tk == TK_STAR && would_accept(px->engine, TK_AMP))
        kf_buf_puts(out, " (a buffer parameter is '&[f32]', or '&mut [f32]' when the kernel writes it)");
    else
        return false;
    return true;
}

/* A hint for a few common causes, appended to the expected list. */
static void add_hint(kf_parser *px, int tk, const kf_token *tok, kf_buf *out)
{
    const char *spelling = kf_lex_token_name(tk);
    bool keyword = spelling[0] == '\'' && spelling[1] >= 'a' && spelling[1] <= 'z';
    if (c_slip_hint(px, tk, tok, out)) return;
    if (px->prev_tk != 0 && tok->loc.line > px->prev.loc.line && would_accept(px->engine, TK_SEMI)) {
        kf_buf_printf(out, " (is a ';' missing at the end of line %u?)", px->prev.loc.line);
    } else if (tk == TK_RBRACE && would_accept(px->engine, TK_SEMI)) {
        kf_buf_puts(out, " (is a ';' missing before the '}'?)");
    } else if (tk == TK_ASSIGN && would_accept(px->engine, TK_SEMI)) {   /* a = b = c; */
        kf_buf_puts(out, " (an assignment is a statement, not a value: assign one at a time, 'b = c; a = b;')");
    } else if (tk == TK_ASSIGN) {
        kf_buf_puts(out, " (to compare, use '==')");
    } else if ((keyword || tk == TK_TYPE) && would_accept(px->engine, TK_NAME)) {
        kf_buf_printf(out, " (%s is a keyword and cannot be a name)", tk == TK_TYPE ? "a type name" : spelling);
    } else if (tk == 0 && px->lx.nesting > 0 && px->lx.nesting <= KF_LEX_MAX_NESTING) {
        kf_loc at = px->lx.open_at[px->lx.nesting - 1];
        kf_buf_printf(out, " (the '%c' at line %u, column %u is not closed)", px->lx.open_ch[px->lx.nesting - 1],
                      at.line, at.col);
    }
}

static void syntax_error(kf_parser *px, int tk, const kf_token *tok)
{
    px->recovering = true;
    px->err_nesting = px->tok_nesting;
    if (tk == TK_ILLEGAL || px->stop) return;   /* the lexer has said why */
    if (px->cx->diags->items.len >= KF_DIAG_LIMIT) {
        parse_error(px, tok->loc, "syntax error");   /* counted, not kept */
        return;
    }
    char what[96];
    kf_lex_token_describe(tk, tok, what, sizeof what);
    bool cmp = tk == TK_LT || tk == TK_LE || tk == TK_GT || tk == TK_GE || tk == TK_EQEQ || tk == TK_NE;
    if (cmp && ends_operand(px->prev_tk)) {
        parse_error(px, tok->loc, "comparisons do not chain: %s cannot follow another comparison of the same "
                    "precedence; write 'a < b && b < c' or add parentheses", what);
        return;
    }
    kf_buf exp = {0};
    expected_list(px, &exp);
    add_hint(px, tk, tok, &exp);
    if (exp.oom || !exp.len) parse_error(px, tok->loc, "unexpected %s", what);
    else parse_error(px, tok->loc, "unexpected %s, expected %s", what, exp.data);
    kf_buf_free(&exp);
}

/* Clears the depth marks left in aux (the tree is at most
 * KF_PARSE_MAX_DEPTH + 1 deep here, so recursion is bounded). */
static void clear_aux(kf_node *n)
{
    for (; n; n = n->next) {
        n->aux = 0;
        clear_aux(n->a);
        clear_aux(n->b);
        clear_aux(n->c);
        clear_aux(n->d);
    }
}

/* ---- driver ------------------------------------------------------------------ */

/* After a syntax error the driver itself drops tokens until one where a
 * statement or item can start again: a ';', brace or keyword not nested
 * deeper than the error was (so the ';' in `[f32; 4]` does not count), or
 * the first token of a new line. Lemon's `error` rules then resynchronise on
 * it. This keeps the rest of a broken statement from being re-read as new
 * statements and reported again. */
static bool resyncs(const kf_parser *px, int tk, const kf_token *tok, uint32_t nesting)
{
    if (tk == 0) return true;
    if (nesting > px->err_nesting) return false;
    if (tok->loc.line > px->prev.loc.line) return true;
    switch (tk) {
    case TK_SEMI: case TK_LBRACE: case TK_RBRACE: case TK_LET: case TK_VAR: case TK_SHARED: case TK_IF:
    case TK_FOR: case TK_WHILE: case TK_BREAK: case TK_CONTINUE: case TK_RETURN: case TK_AT_UNROLL:
    case TK_KERNEL: case TK_FN: case TK_CONST: case TK_AT_SCHEDULE:
        return true;
    default:
        return false;
    }
}

kf_node *kf_parse(kf_pass_ctx *cx)
{
    kf_parser px = {.cx = cx};
    px.module = kf_ast_new(cx->arena, KF_N_MODULE, (kf_loc){cx->file, 1, 1});
    yyParser *engine = kf_arena_alloc(cx->arena, sizeof *engine);
    if (!px.module || !engine) {
        kf_diag_error(cx->diags, ((kf_loc){cx->file, 1, 1}), "out of memory while parsing");
        return NULL;
    }
    px.engine = engine;
    kf_lex_init(&px.lx, cx);
    kf_lemonInit(engine, &px);
    for (;;) {
        kf_token tok;
        uint32_t nesting = px.lx.nesting;
        int tk = kf_lex_next(&px.lx, &tok);
        if (px.lx.stop) px.stop = true;
        if (px.stop) break;
        if (!px.recovering || resyncs(&px, tk, &tok, nesting)) {
            bool resync = px.recovering;
            px.recovering = false;
            px.tok_nesting = nesting;
            px.cur_loc = tok.loc;
            kf_lemon(engine, tk, tok);
            /* A ';' or brace shifted by the error rules themselves ends the
             * recovery at once (`if x < { ... }` parses its block). */
            bool in_brackets = tk == TK_SEMI && nesting > 0 && nesting <= KF_LEX_MAX_NESTING &&
                               px.lx.open_ch[nesting - 1] != '{';   /* `&[f32; 16]`: not a statement's end */
            if (px.recovering && !resync && (tk == TK_SEMI || tk == TK_LBRACE || tk == TK_RBRACE) && !in_brackets &&
                engine->yytos > engine->yystack && engine->yytos->major == tk)
                px.recovering = false, resync = true;
            /* Lemon would stay silent for three more tokens; at a resync
             * point the next error is a real one. */
            if (resync && !px.recovering) engine->yyerrcnt = -1;
        }
        px.prev_tk = tk;
        px.prev = tok;
        if (tk == 0 || px.stop) break;
    }
    kf_lemonFinalize(engine);
    px.module->a = px.items.head;
    clear_aux(px.module);
    return px.module;
}
}

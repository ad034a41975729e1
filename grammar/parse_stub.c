/* Placeholder until grammar/lexer.re and grammar/parser.y land. */
#include "kforge.h"
kf_node *kf_parse(kf_pass_ctx *cx)
{
    kf_diag_error(cx->diags, ((kf_loc){cx->file, 1, 1}), "parser not built yet");
    return NULL;
}

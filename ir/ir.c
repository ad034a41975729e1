/* Core IR tables and structural linking (ir.h). The printer lives in
 * ir/print.c. */
#include "ir.h"

const char *const kf_ir_op_names[KF_IR_OP_COUNT] = {
#define X(e, n, na, d) [e] = n,
    KF_IR_OPS(X)
#undef X
};
const uint8_t kf_ir_op_nargs[KF_IR_OP_COUNT] = {
#define X(e, n, na, d) [e] = na,
    KF_IR_OPS(X)
#undef X
};
const char *const kf_ir_sreg_names[KF_SR_COUNT] = {
#define X(e, n, p) [e] = n,
    KF_IR_SREGS(X)
#undef X
};
const char *const kf_ir_sreg_ptx[KF_SR_COUNT] = {
#define X(e, n, p) [e] = p,
    KF_IR_SREGS(X)
#undef X
};

/* One open structure on the linking stack. */
typedef struct {
    uint32_t at;      /* index of IF or LOOP */
    uint32_t mid;     /* index of ELSE or LATCH, or UINT32_MAX */
} open_t;

bool kf_ir_link(kf_ir_kernel *k)
{
    KF_VEC(open_t) st = {0};
    KF_VEC(uint32_t) loops = {0};
    bool ok = true;
    for (uint32_t i = 0; i < k->nins && ok; i++) {
        kf_ir_ins *in = &k->ins[i];
        switch (in->op) {
        case KF_IR_IF:
        case KF_IR_LOOP:
            ok = KF_VEC_PUSH(&st, ((open_t){i, UINT32_MAX}));
            if (ok && in->op == KF_IR_LOOP) ok = KF_VEC_PUSH(&loops, i);
            break;
        case KF_IR_ELSE:
        case KF_IR_LATCH: {
            uint16_t want = in->op == KF_IR_ELSE ? KF_IR_IF : KF_IR_LOOP;
            if (!st.len || k->ins[st.data[st.len - 1].at].op != want || st.data[st.len - 1].mid != UINT32_MAX) {
                ok = false;
                break;
            }
            open_t *o = &st.data[st.len - 1];
            o->mid = i;
            if (in->op == KF_IR_ELSE) k->ins[o->at].imm = i;
            else in->imm = o->at;
            break;
        }
        case KF_IR_ENDIF:
        case KF_IR_ENDLOOP: {
            uint16_t want = in->op == KF_IR_ENDIF ? KF_IR_IF : KF_IR_LOOP;
            if (!st.len || k->ins[st.data[st.len - 1].at].op != want) {
                ok = false;
                break;
            }
            open_t o = st.data[--st.len];
            in->imm = o.at;
            if (in->op == KF_IR_ENDIF) {
                if (o.mid == UINT32_MAX) k->ins[o.at].imm = i;
                else k->ins[o.mid].imm = i;
            } else {
                k->ins[o.at].imm = i;
                loops.len--;
            }
            break;
        }
        case KF_IR_BREAK:
        case KF_IR_CONTINUE:
            if (!loops.len) ok = false;
            else in->imm = loops.data[loops.len - 1];
            break;
        default: break;
        }
    }
    ok = ok && st.len == 0;
    KF_VEC_FREE(&st);
    KF_VEC_FREE(&loops);
    return ok;
}

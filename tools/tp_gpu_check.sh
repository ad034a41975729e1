#!/usr/bin/env bash
# tools/tp_gpu_check.sh [BUILD]: tensor-parallel decode (issue 12) on a machine
# with several GPUs, in one call (run from the repo root, carrying BUILD):
#
#  1. nvidia-smi topo -m, the GPUs, NCCL (ldconfig);
#  2. the communicator tests on the real NCCL: test_runtime_comm (CPU) and
#     kforge-decode --check at the small shape, --tp 2 (and 4 with 4 GPUs), on
#     cuda and ptx, in sync, async and graph modes: every step against --tp 1
#     and the independent reference; q4k too (16 heads, FFN 1024: whole blocks
#     per rank), graph mode;
#  3. the Llama-3-70B width (hidden 8192, 64 heads, 8 KV heads, FFN 28672,
#     vocabulary 128256) with 8 layers (so --tp 1 fits one GPU), --check of
#     --tp 2 and 4 against --tp 1, graph mode, 3 steps;
#  4. --bench at the whole 70B shape (80 layers), f16, context 4096, --tp 2 and
#     --tp 4: kforge's all-reduce at 8 and 16 KB against NCCL's own (same run),
#     ms per step per mode against a GPU's bandwidth floor + all-reduce time,
#     the JSON of each; then tokens/s scaling TP 2 -> TP 4 (target >= 1.7);
#  5. the PyTorch peer (torch.distributed, NCCL) at the same shape and TPs,
#     if torch imports.
# Every step is bounded (TP_CHECK_STEP_TIMEOUT, default 300 s); TP_CHECK_SKIP
# ="small wide bench torch" skips steps by name; TP_CHECK_TPS (default: 2, and
# 4 when there are 4 GPUs) the TP sizes. Logs and JSON go to $OUT when set,
# else a temporary directory.
#   locally:  tools/gpu_check.sh prepare build
#   device:   run(kind="nvidia-h200-x4", command="tools/tp_gpu_check.sh build", carry=["build"])
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
case $build in /*) ;; *) build="$root/$build" ;; esac
export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KF_SOURCE_DIR="$root"
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
decode="$build/kforge-decode"
limit=${TP_CHECK_STEP_TIMEOUT:-300}
skip=" ${TP_CHECK_SKIP:-} "
status=0
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
tps=${TP_CHECK_TPS:-$( [ "$ngpu" -ge 4 ] && echo "2 4" || echo 2 )}
wide="--hidden 8192 --heads 64 --kv-heads 8 --head-dim 128 --ffn 28672 --vocab 128256"

step() { case $skip in *" $1 "*) echo "== $1: skipped (TP_CHECK_SKIP)"; return 1 ;; esac; echo "== $1: $2"; }
run() {   # run LINES LOG CMD...: bounded, logged, its last LINES shown; a failure marks the run
    local lines=$1 log=$2; shift 2
    timeout "$limit" "$@" > "$out/$log" 2>&1
    local rc=$?
    tail -n "$lines" "$out/$log"
    [ $rc -eq 0 ] || { echo "   -> exit $rc ($out/$log)"; status=1; }
}

echo "== machine: $ngpu GPUs; TP sizes: $tps"
nvidia-smi topo -m 2>&1 | head -12
ldconfig -p | grep -m1 'libnccl.so.2' || echo "   libnccl.so.2 not in the loader cache (set KF_LIBNCCL)"
[ "$ngpu" -ge 2 ] || { echo "   fewer than 2 GPUs: nothing to split over"; exit 2; }

if step small "--check at the small shape, cuda and ptx, every mode, against --tp 1 and the reference"; then
    run 4 test_runtime_comm.log "$build/tests/test_runtime_comm"
    for tp in $tps; do for be in cuda ptx; do for mode in sync async graph; do
        echo "-- --tp $tp --backend $be --mode $mode"
        run 1 "small_tp${tp}_${be}_${mode}.log" "$decode" --small --heads 8 --kv-heads 4 --tp "$tp" \
            --backend "$be" --mode "$mode" --steps 4 --check
    done; done; done
    for tp in $tps; do for be in cuda ptx; do   # q4k: each rank's query columns and FFN share whole blocks
        echo "-- --tp $tp --backend $be --weights q4k --mode graph"
        run 1 "small_q4k_tp${tp}_${be}.log" "$decode" --small --heads 16 --kv-heads 4 --ffn 1024 --weights q4k \
            --tp "$tp" --backend "$be" --mode graph --steps 4 --check
    done; done
fi

if step wide "--check at the 70B width (8 layers), graph mode, against --tp 1"; then
    for tp in $tps; do
        echo "-- --tp $tp"
        run 2 "wide_tp${tp}.log" "$decode" $wide --layers 8 --tp "$tp" --context 4096 --steps 3 --check
    done
fi

if step bench "--bench at the Llama-3-70B shape (80 layers), f16, context 4096"; then
    for tp in $tps; do
        echo "-- --tp $tp"
        run 20 "bench_tp${tp}.log" "$decode" $wide --layers 80 --tp "$tp" --context 4096 --bench \
            --warmup 3 --runs 20 --json "$out/bench_tp${tp}.json"
    done
    if [ -f "$out/bench_tp2.json" ] && [ -f "$out/bench_tp4.json" ]; then
        python3 - "$out/bench_tp2.json" "$out/bench_tp4.json" <<'PY' || status=1
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
g = lambda r: next(m for m in r["modes"] if m["mode"] == "graph")["tokens_per_s"]
s = g(b) / g(a)
print(f"tokens/s scaling TP 2 -> TP 4 (graph mode): {g(a):.1f} -> {g(b):.1f} = {s:.3f}x (target >= 1.7): "
      + ("met" if s >= 1.7 else "MISSED"))
sys.exit(0 if s >= 1.7 else 1)
PY
    fi
fi

if step torch "PyTorch peer (torch.distributed, NCCL) at the 70B shape"; then
    if python3 -c 'import torch; assert torch.cuda.device_count() >= 2' 2>/dev/null; then
        for tp in $tps; do
            run 3 "torch_tp${tp}.log" python3 tools/bench_torch.py --decode $wide --layers 80 --context 4096 \
                --steps 20 --tp "$tp" --json "$out/torch_tp${tp}.json"
        done
    else
        echo "   torch with CUDA not importable: skipped"
    fi
fi

echo "== tp_gpu_check: $([ $status -eq 0 ] && echo PASS || echo FAIL) (logs in $out)"
exit $status

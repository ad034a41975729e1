#!/usr/bin/env bash
# kforge-decode on the GPU in one call (issue 10), about 2-3 minutes on an H200:
#
#   tools/decode_gpu.sh [BUILD] [step|batch]   from the repo root on the GPU machine (carry BUILD)
#
# step (the default): the one-sequence step of issue 10,
#   1. --check at the small shape against the C reference: cuda and ptx, f16 and q4k
#   2. --bench --profile at the Llama-3-8B shape (context 4096): f16 with the
#      PyTorch peer (--torch), then q4k; each bench's table and targets, then
#      the step launch by launch (kernel and shape rows: us, share, bytes, x copy)
#   3. q4k --profile with the narrow GEMV build at 16 lanes per row, as the
#      plain build (-D q4k_narrow.Q8_LOG_BL=2; the step's default is 3: 32
#      lanes), to choose it from the GEMV rows
#   4. with DECODE_GPU_CROSS=1: --check=cross (cuda against ptx) at the
#      Llama-3-8B shape, 3 steps, f16 and q4k (about 1 minute more)
# batch: --batch (the step of B sequences on tc_gemv, issue 11 section 3),
#   meant to stay under 4 minutes (a run that would start past
#   DECODE_GPU_BUDGET seconds, default 200, is skipped and said so):
#   1. --check --batch 4 at the small shape against the C reference, the
#      sequences at contexts 40, 9, 33, 17: cuda and ptx, f16 and q4k
#   2. --check=cross --batch 8 at the Llama-3-8B shape (contexts 4096 ..
#      4089), 2 steps, f16 and q4k
#   3. --bench --batch 1, 4, 8, 16 at the Llama-3-8B shape, f16 (with the
#      PyTorch peer at the same batch, all its sequences at one position)
#      and q4k: the graph row (ms/step, tokens/s, x floor) of each
# DECODE_GPU_ARGS adds arguments to every run (a dry run of the script on the
# mock driver: DECODE_GPU_ARGS=--small KF_LIBCUDA=build/tests/libkf_mockcuda.so,
# where the checks fail: the mock computes nothing).
# Logs go to $OUT when set (the device tool's folder), else a temporary
# directory; the summary at the end repeats the lines that matter. Exit status:
# 0 when every check passed (a bench's missed target does not count: it is
# what the tables are for), 1 otherwise.
#
# From the device tool: run(command="tools/decode_gpu.sh build", carry=["build"])
#                   or run(command="tools/decode_gpu.sh build batch", carry=["build"])
set -u
build=${1:-build}
set_=${2:-step}
case $set_ in step|batch) ;; *) echo "decode_gpu: '$set_': expected step or batch" >&2; exit 2 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
case $build in /*) ;; *) build="$root/$build" ;; esac
decode="$build/kforge-decode"
[ -x "$decode" ] || { echo "decode_gpu: $decode missing: build first" >&2; exit 2; }
logs=${OUT:-$(mktemp -d /tmp/decode-gpu-XXXXXX)}
mkdir -p "$logs" || exit 2
export KFORGE_CACHE_DIR=${KFORGE_CACHE_DIR:-$(mktemp -d /tmp/kforge-cache-XXXXXX)}
export KF_SOURCE_DIR="$root"
fails=0
t0=$(date +%s)

# drun NAME ARGS...: one run, bounded, its log kept and its tail shown;
# in the batch set, skipped (status 0) once DECODE_GPU_BUDGET seconds are spent.
drun() {
    local name=$1 rc; shift
    if [ "$set_" = batch ] && [ $(( $(date +%s) - t0 )) -ge "${DECODE_GPU_BUDGET:-200}" ]; then
        echo "-- skipped (DECODE_GPU_BUDGET ${DECODE_GPU_BUDGET:-200}s spent): kforge-decode $*"
        echo "skipped: $*" >"$logs/decode_$name.log"
        return 0
    fi
    echo "-- kforge-decode $*"
    # shellcheck disable=SC2086
    timeout 240 "$decode" "$@" ${DECODE_GPU_ARGS:-} >"$logs/decode_$name.log" 2>&1
    rc=$?
    tail -n 3 "$logs/decode_$name.log"
    echo "   (exit $rc, $(( $(date +%s) - t0 ))s so far)"
    return $rc
}

# The batch set (see the top), then its summary: the check lines, and each
# bench's floor line and table rows.
batch_set() {
    local b w n
    for b in cuda ptx; do
        for w in f16 q4k; do
            drun "bcheck_${b}_$w" --small --backend "$b" --weights "$w" --batch 4 --context 40,9,33,17 --steps 3 \
                --check || fails=$((fails + 1))
        done
    done
    for w in f16 q4k; do drun "bcross_$w" --weights "$w" --batch 8 --steps 2 --check=cross || fails=$((fails + 1)); done
    for w in f16 q4k; do
        for n in 1 4 8 16; do
            # shellcheck disable=SC2046
            drun "bbench_${w}_b$n" --weights "$w" --batch "$n" --bench --runs 10 $([ "$w" = f16 ] && echo --torch) \
                --json "$logs/decode_bbench_${w}_b$n.json"
            [ $? -gt 1 ] && fails=$((fails + 1))
        done
    done
    echo
    echo "== decode_gpu batch summary (logs in $logs; $(( $(date +%s) - t0 ))s, $fails failed)"
    grep -h '^check .*failed$\|^skipped' "$logs"/decode_bcheck_*.log "$logs"/decode_bcross_*.log 2>/dev/null
    for w in f16 q4k; do
        for n in 1 4 8 16; do
            echo "-- $w, --batch $n"
            grep -hE '^(floor:|mode |graph |async |torch |skipped)' "$logs/decode_bbench_${w}_b$n.log" 2>/dev/null
        done
    done
}

nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,memory.used --format=csv,noheader 2>/dev/null
if [ "$set_" = batch ]; then
    batch_set
    rm -rf "$KFORGE_CACHE_DIR"
    [ $fails = 0 ]
    exit
fi
for b in cuda ptx; do
    for w in f16 q4k; do drun "check_${b}_$w" --small --backend "$b" --weights "$w" --steps 4 --check || fails=$((fails + 1)); done
done
drun bench_f16 --bench --torch --profile --json "$logs/decode_bench_f16.json"
[ $? -gt 1 ] && fails=$((fails + 1))
drun bench_q4k --weights q4k --bench --profile --json "$logs/decode_bench_q4k.json"
[ $? -gt 1 ] && fails=$((fails + 1))
for bl in 2; do drun "profile_q4k_bl$bl" --weights q4k --profile -D "q4k_narrow.Q8_LOG_BL=$bl" || fails=$((fails + 1)); done
if [ "${DECODE_GPU_CROSS:-0}" = 1 ]; then
    for w in f16 q4k; do drun "cross_$w" --weights "$w" --steps 3 --check=cross || fails=$((fails + 1)); done
fi

echo
echo "== decode_gpu summary (logs in $logs; $(( $(date +%s) - t0 ))s, $fails failed)"
grep -h '^check .*failed$' "$logs"/decode_check_*.log "$logs"/decode_cross_*.log 2>/dev/null
for w in f16 q4k; do
    echo; echo "-- --bench --profile ($w)"
    grep -vE '^(kforge-decode: warning|step [0-9]|decode-peer: (eager|graph) )' "$logs/decode_bench_$w.log" 2>/dev/null
done
for bl in 2; do
    echo; echo "-- q4k profile, q4k_narrow.Q8_LOG_BL=$bl: the narrow GEMV rows and the step"
    grep -E 'narrow|^step |^profile: the launches' "$logs/decode_profile_q4k_bl$bl.log" 2>/dev/null
done
rm -rf "$KFORGE_CACHE_DIR"
[ $fails = 0 ]

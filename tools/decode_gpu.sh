#!/usr/bin/env bash
# kforge-decode on the GPU in one call (issue 10), about 2-3 minutes on an H200:
#
#   tools/decode_gpu.sh [BUILD]      from the repo root on the GPU machine (carry BUILD)
#
#   1. --check at the small shape against the C reference: cuda and ptx, f16 and q4k
#   2. --bench --profile at the Llama-3-8B shape (context 4096): f16 with the
#      PyTorch peer (--torch), then q4k; each bench's table and targets, then
#      the step launch by launch (kernel and shape rows: us, share, bytes, x copy)
#   3. q4k --profile with the narrow GEMV build at 16 lanes per row, as the
#      plain build (-D q4k_narrow.Q8_LOG_BL=2; the step's default is 3: 32
#      lanes), to choose it from the GEMV rows
#   4. with DECODE_GPU_CROSS=1: --check=cross (cuda against ptx) at the
#      Llama-3-8B shape, 3 steps, f16 and q4k (about 1 minute more)
# DECODE_GPU_ARGS adds arguments to every run (a dry run of the script on the
# mock driver: DECODE_GPU_ARGS=--small KF_LIBCUDA=build/tests/libkf_mockcuda.so,
# where the checks fail: the mock computes nothing).
# Logs go to $OUT when set (the device tool's folder), else a temporary
# directory; the summary at the end repeats the lines that matter. Exit status:
# 0 when every check passed (a bench's missed target does not count: it is
# what the tables are for), 1 otherwise.
#
# From the device tool: run(command="tools/decode_gpu.sh build", carry=["build"])
set -u
build=${1:-build}
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

# drun NAME ARGS...: one run, bounded, its log kept and its tail shown.
drun() {
    local name=$1 rc; shift
    echo "-- kforge-decode $*"
    # shellcheck disable=SC2086
    timeout 240 "$decode" "$@" ${DECODE_GPU_ARGS:-} >"$logs/decode_$name.log" 2>&1
    rc=$?
    tail -n 3 "$logs/decode_$name.log"
    echo "   (exit $rc, $(( $(date +%s) - t0 ))s so far)"
    return $rc
}

nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,memory.used --format=csv,noheader 2>/dev/null
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

#!/usr/bin/env bash
# tools/fuzz.sh: build the libFuzzer harnesses (tests/fuzz) in build-fuzz/
# with clang, ASan and UBSan, and run each for a while on its committed
# seed corpus.
#
#   tools/fuzz.sh [-t SECONDS] [-j PARALLEL] [HARNESS...]
#
# -t: seconds per harness (default 60); -j: harnesses run at once (default
# 2); HARNESS: fuzz_compile fuzz_interp fuzz_npy fuzz_case fuzz_cache fuzz_ptxscan
# (default: all). Each run starts from tests/fuzz/corpus/<harness> (read
# only; fuzz_interp also reads fuzz_compile's seeds) and a fresh work
# corpus build-fuzz/fuzz-corpus/<harness>; a crash, sanitizer report, leak,
# timeout (an input slower than 10 s) or allocation over 2 GB fails the
# harness, its input lands in build-fuzz/fuzz-artifacts/ and the log tail
# is printed. One line per harness gives its executions; the last line is
# 'fuzz: N passed, N failed'. CC (default clang-14) picks the compiler.
# Without clang every harness is reported 'skipped: <reason>' (status 0).
set -uo pipefail
cd "$(dirname "$0")/.."

secs=60
par=2
while getopts "t:j:" opt; do
    case $opt in
    t) secs=$OPTARG ;;
    j) par=$OPTARG ;;
    *) echo "usage: tools/fuzz.sh [-t SECONDS] [-j PARALLEL] [HARNESS...]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
all=(fuzz_compile fuzz_interp fuzz_npy fuzz_case fuzz_cache fuzz_ptxscan)
harnesses=("$@")
((${#harnesses[@]})) || harnesses=("${all[@]}")

cc=${CC:-clang-14}
if ! command -v "$cc" >/dev/null 2>&1; then
    for h in "${harnesses[@]}"; do echo "$h: skipped: $cc not found (tools/setup.sh installs clang-14 and libclang-rt-14-dev)"; done
    echo "fuzz: 0 passed, 0 failed, ${#harnesses[@]} skipped"
    exit 0
fi

# Per-harness options: input size bound and dictionary.
opts_of() {
    case $1 in
    fuzz_compile) echo "-max_len=8192 -dict=tests/fuzz/kf.dict" ;;
    fuzz_interp) echo "-max_len=4096 -dict=tests/fuzz/kf.dict" ;;
    fuzz_npy | fuzz_case | fuzz_cache | fuzz_ptxscan) echo "-max_len=4096" ;;
    *) return 1 ;;
    esac
}

# Seed folders (read only: libFuzzer writes new inputs to the first folder
# it is given, which is always the work corpus).
seeds_of() {
    echo "tests/fuzz/corpus/$1"
    [[ $1 == fuzz_interp ]] && echo "tests/fuzz/corpus/fuzz_compile"
    return 0
}
for h in "${harnesses[@]}"; do
    opts_of "$h" >/dev/null || { echo "tools/fuzz.sh: unknown harness '$h' (expected ${all[*]})" >&2; exit 2; }
done

jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
((jobs > 8)) && jobs=8
if ! { cmake -S . -B build-fuzz -DCMAKE_C_COMPILER="$(command -v "$cc")" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKF_FUZZ=ON \
           -DKF_WERROR=ON >/dev/null &&
       cmake --build build-fuzz -j "$jobs" --target kf_fuzz; }; then
    echo "tools/fuzz.sh: building build-fuzz failed" >&2
    echo "fuzz: 0 passed, ${#harnesses[@]} failed"
    exit 1
fi

mkdir -p build-fuzz/fuzz-artifacts build-fuzz/fuzz-logs
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# run_one HARNESS: fuzzes it for $secs seconds; the log is build-fuzz/fuzz-logs/HARNESS.log.
run_one() {
    local h=$1 work=build-fuzz/fuzz-corpus/$1
    rm -rf "$work" && mkdir -p "$work"
    # shellcheck disable=SC2046
    build-fuzz/tests/fuzz/"$h" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix=build-fuzz/fuzz-artifacts/"$h"- $(opts_of "$h") "$work" $(seeds_of "$h") \
        >build-fuzz/fuzz-logs/"$h".log 2>&1
}

# report HARNESS STATUS: one line with the executions; the log tail on failure.
report() {
    local h=$1 rc=$2 log=build-fuzz/fuzz-logs/$1.log runs rate cov
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    if ((rc == 0)); then
        echo "$h: ok, ${runs:-?} executions in $secs s (${rate:-?}/s, ${cov:-cov: ?})"
    else
        echo "$h: FAILED (exit $rc) after ${runs:-?} executions; log build-fuzz/fuzz-logs/$h.log:"
        grep -E "^(==[0-9]+==ERROR|SUMMARY|.*runtime error:|.*Test unit written)" "$log" | head -10
        tail -40 "$log"
    fi
}

passed=0
failed=0
pids=()
names=()
collect() {   # waits for the oldest running harness
    local rc=0
    wait "${pids[0]}" || rc=$?
    report "${names[0]}" "$rc"
    ((rc == 0)) && passed=$((passed + 1)) || failed=$((failed + 1))
    pids=("${pids[@]:1}")
    names=("${names[@]:1}")
}
for h in "${harnesses[@]}"; do
    ((${#pids[@]} >= par)) && collect
    run_one "$h" &
    pids+=($!)
    names+=("$h")
done
while ((${#pids[@]})); do collect; done
echo "fuzz: $passed passed, $failed failed"
((failed == 0))

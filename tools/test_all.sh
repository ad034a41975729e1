#!/usr/bin/env bash
# tools/test_all.sh: the whole test suite, as CI runs it.
#
#  1. build/ (Release, -Werror, -DBUILD_SHARED_LIBS=ON): every ctest test
#     (unit, golden, ptxas, nvrtc, gpu, difftest: 500 random programs through
#     the interpreter, NVRTC and ptxas; the Python package's pytest over
#     libkforge.so; the install test with its find_package, pkg-config, C++
#     and add_subdirectory consumers; tests that need what the machine lacks
#     report themselves skipped with the reason);
#  2. build-asan/ (Debug, -DKF_SANITIZE=ON, the static libkforge.a): the unit
#     tests under AddressSanitizer + UndefinedBehaviorSanitizer (the install
#     test's consumers too);
#  3. build-fuzz/ (clang, libFuzzer + ASan + UBSan): each fuzz harness of
#     tests/fuzz for FUZZ_SECONDS (default 60), two at a time
#     (tools/fuzz.sh); each harness counts as one test. Without clang-14
#     the harnesses are listed as skipped.
# All always run; the exit status is non-zero if anything failed, and the
# last line is a ctest-style summary over all runs. JOBS as in setup.sh.
set -uo pipefail
cd "$(dirname "$0")/.."

jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
((jobs > 8)) && jobs=8
status=0
total=0
failed=0

# run_ctest DIR [ctest args...]: runs ctest, adds its counts to the totals.
run_ctest() {
    local dir=$1 log
    shift
    log=$(mktemp)
    ctest --test-dir "$dir" --output-on-failure -j "$jobs" "$@" 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    local line
    line=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$log" | tail -1)
    rm -f "$log"
    if [[ $line =~ ([0-9]+)\ tests?\ failed\ out\ of\ ([0-9]+) ]]; then
        failed=$((failed + BASH_REMATCH[1]))
        total=$((total + BASH_REMATCH[2]))
    else
        failed=$((failed + 1))
        total=$((total + 1))
    fi
    ((rc == 0)) || status=1
}

# build DIR [cmake args...]: configures and builds; a failure counts as one failed test.
build() {
    local dir=$1
    shift
    if ! { cmake -S . -B "$dir" "$@" >/dev/null && cmake --build "$dir" -j "$jobs"; }; then
        echo "test_all: building $dir failed" >&2
        status=1
        failed=$((failed + 1))
        total=$((total + 1))
        return 1
    fi
}

echo "== Release build (-Werror, shared libkforge.so): all tests"
export KF_REQUIRE_PYTHON=1   # the Python package's tests run here: no python3 with NumPy and pytest is a failure
build build -DCMAKE_BUILD_TYPE=Release -DKF_WERROR=ON -DBUILD_SHARED_LIBS=ON && run_ctest build
# ctest hides the output of skipped programs: show each case's reason by name.
for t in build/tests/test_gpu_*; do
    [[ -x $t ]] || continue
    "$t" 2>&1 | awk -v p="${t##*/}" '/^\[ RUN/{c=$NF} /^skipped: /{print p "/" c ": " $0}'
done

echo "== ASan+UBSan build (static libkforge.a): unit tests"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
build build-asan -DCMAKE_BUILD_TYPE=Debug -DKF_SANITIZE=ON -DKF_WERROR=ON && run_ctest build-asan -L unit

echo "== Fuzz build (clang, libFuzzer + ASan + UBSan): each harness ${FUZZ_SECONDS:-60} s"
fuzz_log=$(mktemp)
tools/fuzz.sh -t "${FUZZ_SECONDS:-60}" -j 2 2>&1 | tee "$fuzz_log"
((PIPESTATUS[0] == 0)) || status=1
if [[ $(tail -1 "$fuzz_log") =~ ^fuzz:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
    failed=$((failed + BASH_REMATCH[2]))
    total=$((total + BASH_REMATCH[1] + BASH_REMATCH[2]))
else
    failed=$((failed + 1))
    total=$((total + 1))
fi
rm -f "$fuzz_log"

passed=$((total - failed))
pct=0
((total > 0)) && pct=$((100 * passed / total))
echo "$pct% tests passed, $failed tests failed out of $total"
exit $status

#!/usr/bin/env bash
# The runtime API sequence fuzzer (kforge-apifuzz) on cpu, cuda and ptx,
# compared seed by seed (tools/gpu_check.sh runs it on the GPU machine):
#
#   tools/apifuzz/compare.sh BIN [N] [DIR]
#
# BIN is build/kforge-apifuzz; seeds 1..N (default 200) of 160 calls each
# run on every backend into DIR/BACKEND/SEED.txt (default a temporary
# folder); a seed's lines depend only on the seed, so each GPU backend's
# file must be byte-identical to the cpu's. First each backend's selftest
# (every kernel once against host results). Prints, per GPU backend, the
# seeds that match and the first differing line of the others; exit status
# 0 only when every selftest is exact, every seed matches, no process
# crashed and no call returned another status than kforge.h documents.
set -u
BIN=${1:?usage: compare.sh BIN [N] [DIR]}
N=${2:-200}
DIR=${3:-$(mktemp -d)}
status=0
mkdir -p "$DIR"
for b in cpu cuda ptx; do
    "$BIN" "$b" selftest >"$DIR/selftest-$b.txt" 2>&1
    rc=$?
    exact=$(grep -c ', 0 of' "$DIR/selftest-$b.txt")
    echo "selftest $b: rc $rc, $exact kernels exact"
    [ $rc = 0 ] || { status=1; grep -v ', 0 of' "$DIR/selftest-$b.txt" | head -10 | sed 's/^/  /'; }
done
for b in cpu cuda ptx; do
    mkdir -p "$DIR/$b"
    "$BIN" "$b" 1 "$N" -o "$DIR/$b" 2>"$DIR/$b/stderr.txt"
    rc=$?
    echo "$b: rc $rc, $(tail -1 "$DIR/$b/stderr.txt")"
    [ $rc = 0 ] || { status=1; grep -h '^EXPECT' "$DIR/$b/stderr.txt" | head -5 | sed 's/^/  /'; }
done
for b in cuda ptx; do
    same=0 differ=0 shown=0
    for s in $(seq 1 "$N"); do
        c=$DIR/cpu/$s.txt g=$DIR/$b/$s.txt
        if cmp -s "$c" "$g"; then same=$((same + 1)); continue; fi
        differ=$((differ + 1))
        line=$(cmp "$c" "$g" 2>/dev/null | sed -n 's/.*line \([0-9]*\).*/\1/p')
        [ -n "$line" ] || line=$(( $(wc -l <"$c") + 1 ))   # one file a prefix of the other
        if [ $shown -lt 10 ]; then
            echo "  seed $s, line $line: cpu '$(sed -n "${line}p" "$c" | cut -c1-160)', $b '$(sed -n "${line}p" "$g" | cut -c1-160)'"
            shown=$((shown + 1))
        fi
    done
    echo "$b against cpu: $same of $N seeds match, $differ differ"
    [ $differ = 0 ] || status=1
done
echo "apifuzz: $([ $status = 0 ] && echo ok || echo FAIL) (outputs in $DIR)"
exit $status

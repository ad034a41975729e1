#!/usr/bin/env bash
# check_env_docs.sh SOURCE_DIR: every environment variable the code reads is
# named in README.md's "Environment variables" section, so the section
# cannot fall behind. Read are: getenv("NAME") and kf_rt_dlopen("NAME", ...)
# in C (library, tools, tests), os.environ.get("NAME") / os.environ["NAME"]
# in Python, and ${NAME:-...} / ${NAME:+...} (a value from the caller) in
# the shell scripts of tools/ and tests/. Prints the missing names, or
# "env docs: ok (N variables)".
set -uo pipefail
cd "${1:-.}" || exit 2
section=$(awk '/^## Environment variables$/{on=1; next} /^## /{on=0} on' README.md)
[ -n "$section" ] || { echo "env docs: README.md has no '## Environment variables' section"; exit 1; }
names=$( {
    grep -rhoE '(getenv|kf_rt_dlopen)\("[A-Z][A-Z0-9_]*"' --include='*.c' --include='*.h' --include='*.y' --include='*.re' \
        grammar ir emit runtime tools tests | sed -E 's/.*\("//; s/"$//'
    grep -rhoE 'environ(\.get\(|\[)"[A-Z][A-Z0-9_]*"' --include='*.py' python tools | sed -E 's/.*"([A-Z0-9_]+)"/\1/'
    grep -rhE '\$\{[A-Z][A-Z0-9_]*:[-+]' --include='*.sh' tools tests | grep -vE '^[[:space:]]*#' |
        grep -oE '\$\{[A-Z][A-Z0-9_]*:[-+]' | sed -E 's/\$\{//; s/:.$//'
} | sort -u)
missing=0
n=0
for v in $names; do
    n=$((n + 1))
    grep -q "\`$v\b" <<<"$section" || { echo "env docs: $v is read but README.md's Environment variables does not name it"; missing=1; }
done
((missing)) && exit 1
echo "env docs: ok ($n variables)"

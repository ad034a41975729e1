#!/usr/bin/env bash
# run_pytest.sh LIBRARY SOURCE_DIR [PYTEST ARGS...]: the Python package's
# tests (python/tests) against the shared library LIBRARY, with the first
# python3 that has NumPy and pytest: $KF_PYTHON, python3 on PATH, then
# /usr/bin/python3 (Debian's, which tools/setup.sh gives python3-numpy and
# python3-pytest). Without one the run is skipped (exit 77) saying what to
# install, unless KF_REQUIRE_PYTHON=1 (tools/test_all.sh) makes it a failure.
set -uo pipefail
lib=$1 src=$2
shift 2
py=
for p in ${KF_PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy, pytest' >/dev/null 2>&1; then py=$p; break; fi
done
if [ -z "$py" ]; then
    echo "skipped: no python3 with numpy and pytest (apt-get install python3-numpy python3-pytest; tools/setup.sh does)"
    [ "${KF_REQUIRE_PYTHON:-0}" = 1 ] && exit 1
    exit 77
fi
export KFORGE_LIBRARY=$lib
export PYTHONPATH="$src/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
cd "$src/python" || exit 2
exec "$py" -m pytest -q -p no:cacheprovider -rs "$@" tests

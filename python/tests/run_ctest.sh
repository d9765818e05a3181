#!/bin/sh
# CTest's python_tests: build rbf._rbf in place against this build's
# librbf.a (RBF_BUILD), then run python/tests with Debian's pytest.  Prints
# SKIPPED and exits 77 when a Debian package it needs is missing
# (scripts/deps.sh installs them).
PY=/usr/bin/python3
if [ ! -x "$PY" ]; then echo "SKIPPED: $PY not found (Debian: python3)"; exit 77; fi
for m in pytest hypothesis numpy setuptools; do
  if ! "$PY" -c "import $m" 2>/dev/null; then
    echo "SKIPPED: $PY cannot import $m (Debian: python3-$m; scripts/deps.sh)"; exit 77
  fi
done
if ! "$PY" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
  echo "SKIPPED: Python.h not found (Debian: python3-dev; scripts/deps.sh)"; exit 77
fi
: "${RBF_SRC:?}" "${RBF_BUILD:?}"
cd "$RBF_SRC/python" || exit 1
if ! RBF_BUILD="$RBF_BUILD" "$PY" -W ignore setup.py -q build_ext --inplace; then
  echo "FAILED: the extension did not build (with the project's warnings as errors)"; exit 1
fi
exec env PYTHONPATH="$RBF_SRC/python" PYTHONDONTWRITEBYTECODE=1 "$PY" -m pytest -q -p no:cacheprovider tests

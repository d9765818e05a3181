#!/usr/bin/env bash
# Install the Debian packages rbf needs, if any are missing.
#   scripts/deps.sh          check, install what is missing (as root), or say how
#   scripts/deps.sh --list   print the package list
# Why each package is needed: README.md, "Dependencies".
set -euo pipefail

PKGS=(
  cmake make gcc pkg-config   # build
  libxxhash-dev               # XXH3: the keyed message hash (header-only use)
  libcmocka-dev               # unit-test framework
  libgsl-dev                  # Student t quantiles for confidence intervals
  libbloom-dev                # the peer library, for `rbf bench filter` only
  gnuplot-nox                 # figures of `make reproduce`
  wamerican                   # real text for the dedup tests
  valgrind                    # memcheck run of the test suite
  clang libclang-rt-14-dev    # libFuzzer harnesses and their sanitizers
  gawk                        # the awk baseline of the dedup benchmark
  python3                     # the dedup tests' checker (tests/cli/dedup_check.py)
  redis-server                # the server the Redis module (build/rbf-redis.so) is tested and benchmarked in
  python3-redis               # redis-py: the Redis module's tests (tests/redis/) and redis-py bf() compatibility
  python3-dev                 # Python.h: the Python extension (make python, python/)
  python3-setuptools          # builds the Python extension (python/setup.py)
  python3-pytest              # the Python package's tests (python/tests, CTest python_tests)
  python3-hypothesis          # their state machines against the C library
  python3-numpy               # numpy arrays in and out of the Python package, and its tests
  python3-venv python3-pip    # installing the Python package offline into a venv
  libhiredis-dev              # the Redis client of `rbf dedup --redis` (linked into the CLI only)
  libjansson-dev              # the JSON parser of `rbf dedup --json-field` (linked into the CLI only)
)

if [ "${1:-}" = "--list" ]; then printf '%s\n' "${PKGS[@]}"; exit 0; fi

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

cmd="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "rbf: missing Debian packages: ${missing[*]}" >&2
  echo "rbf: install them with:  sudo sh -c '$cmd'" >&2
  exit 1
fi
echo "rbf: installing missing Debian packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

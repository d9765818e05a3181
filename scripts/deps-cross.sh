#!/usr/bin/env bash
# Install the Debian packages `make test-arm64` / `make test-s390x` need:
# a cross compiler, the target's C library, the target's -dev packages
# (through Debian multiarch) and qemu-user to run the test programs.
#   scripts/deps-cross.sh ARCH          ARCH = arm64 | s390x
#   scripts/deps-cross.sh ARCH --list   print the package list
# Not part of scripts/deps.sh: only the cross-test targets need these.
set -euo pipefail

arch="${1:-}"
case "$arch" in
  arm64) triple=aarch64-linux-gnu ;;
  s390x) triple=s390x-linux-gnu ;;
  *) echo "usage: scripts/deps-cross.sh arm64|s390x [--list]" >&2; exit 2 ;;
esac

PKGS=(
  "gcc-$triple"                 # the cross compiler
  "libc6-dev-$arch-cross"       # the target's C library headers and startup files
  "libc6:$arch"                 # the target's C library the tests run with under qemu
  "libxxhash-dev:$arch"         # XXH3 headers (pkg-config file of the target)
  "libcmocka-dev:$arch"         # the unit-test framework, built for the target
  "libhiredis-dev:$arch"        # the CMake configuration needs them (rbf dedup
  "libjansson-dev:$arch"        #  --redis and --json-field in the CLI)
  "libgsl27:$arch"              # GSL's libraries, built for the target (libgsl-dev
  "libgslcblas0:$arch"          #  is not co-installable across architectures: the
  libgsl-dev                    #  host's headers serve, cmake/cross/gsl.pc.in says how)
  qemu-user                     # runs the target's test programs (qemu-aarch64, qemu-s390x)
  cmake make pkg-config         # build
)

if [ "${2:-}" = "--list" ]; then printf '%s\n' "${PKGS[@]}"; exit 0; fi

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "rbf: missing Debian packages: ${missing[*]}" >&2
  echo "rbf: install them (as root) with: dpkg --add-architecture $arch && apt-get update && apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "rbf: installing packages for the $arch cross tests: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
  dpkg --add-architecture "$arch"
fi
# another apt-get may hold the lock: wait for it rather than fail
for i in $(seq 1 60); do
  if apt-get update -qq >/dev/null 2>&1; then break; fi
  echo "rbf: apt-get update failed (dpkg locked?), retrying in 10 s" >&2; sleep 10
done
for i in $(seq 1 60); do
  if apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null; then exit 0; fi
  echo "rbf: apt-get install failed (dpkg locked?), retrying in 10 s" >&2; sleep 10
done
exit 1

#!/usr/bin/env bash
# Cross-compile rbf for another architecture and run its test programs
# under qemu-user: ARM64 (little-endian) and s390x (big-endian).
#   scripts/cross-test.sh arm64|s390x     (make test-arm64 / make test-s390x)
# Installs what it needs first (scripts/deps-cross.sh).  Builds in
# build-ARCH/ and runs the cmocka programs (tests/test_*.c) through CTest,
# which starts each under qemu (CMAKE_CROSSCOMPILING_EMULATOR).  Not run
# under emulation: the tests labelled emulation-long (minutes natively,
# hours under qemu), the shell tests of the CLI and the Redis module's tests
# (docs/performance.md, "Other architectures").  The rest run with
# RBF_TEST_SHRINK=4 (thinner loops, as under ASan; set it to 1 for the full
# length).
set -euo pipefail
arch="${1:-}"
case "$arch" in
  arm64) triple=aarch64-linux-gnu ;;
  s390x) triple=s390x-linux-gnu ;;
  *) echo "usage: scripts/cross-test.sh arm64|s390x" >&2; exit 2 ;;
esac
src="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_CROSS:-$src/build-$arch}"
jobs="${JOBS:-$(nproc 2>/dev/null || echo 2)}"

"$src/scripts/deps-cross.sh" "$arch"

# GSL: Debian's libgsl-dev cannot be installed for two architectures at
# once, so the target's libraries (libgsl27:ARCH) are named here with the
# host's headers, which are the same on every architecture.
mkdir -p "$build/pkgconfig" "$build/gsl-lib"
libdir="/usr/lib/$triple"
ln -sf "$libdir/libgsl.so.27" "$build/gsl-lib/libgsl.so"
ln -sf "$libdir/libgslcblas.so.0" "$build/gsl-lib/libgslcblas.so"
cat > "$build/pkgconfig/gsl.pc" <<PC
Name: GSL
Description: GNU Scientific Library ($arch, for the cross build)
Version: $(dpkg-query -W -f='${Version}' "libgsl27:$arch" | sed 's/+.*//')
Libs: -L$build/gsl-lib -lgsl -lgslcblas -lm
Cflags:
PC
export PKG_CONFIG_LIBDIR="$build/pkgconfig:$libdir/pkgconfig:/usr/share/pkgconfig"
unset PKG_CONFIG_PATH

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$src" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/cross/$triple.cmake" \
    -DBLOOM_LIB=BLOOM_LIB-NOTFOUND
else
  cmake "$build" >/dev/null # a test program added since: its target
fi
# the test programs and what they need (no CLI, benchmarks or Redis module)
targets=$(cd "$src/tests" && ls test_*.c | sed 's/\.c$//')
cmake --build "$build" -j "$jobs" --target $targets
cd "$build"
# thinner grids and streams under emulation, as under ASan and valgrind
# (RBF_TEST_SHRINK; the tests' own assertions unchanged)
RBF_TEST_SHRINK="${RBF_TEST_SHRINK:-4}" ctest --output-on-failure -j "$jobs" -R '^test_' -LE emulation-long

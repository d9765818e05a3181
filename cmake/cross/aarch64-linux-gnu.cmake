# Cross-compile for aarch64 Linux with Debian's gcc-aarch64-linux-gnu, the target's
# libraries installed through multiarch (scripts/deps-cross.sh arm64), and
# run the test programs under qemu-user (CTest prefixes them with the
# emulator).  Used by `make test-arm64` (scripts/cross-test.sh).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# The programs run with the target's C library as Debian multiarch installs
# it (libc6:arm64, /lib/ld-linux-aarch64.so.1): under Debian 12's
# qemu-aarch64 (7.2) the cross toolchain's own copy in /usr/aarch64-linux-gnu
# makes programs that fork or start threads crawl (test_robust_crash: over
# 10 minutes instead of 1 s); both are glibc 2.36, one ABI.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /)
# libraries of the target (multiarch: /usr/lib/aarch64-linux-gnu, searched first by
# CMAKE_LIBRARY_ARCHITECTURE); the host's programs (pkg-config)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /usr)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)

# Cross-compile for aarch64 Linux with Debian's gcc-aarch64-linux-gnu, the target's
# libraries installed through multiarch (scripts/deps-cross.sh arm64), and
# run the test programs under qemu-user (CTest prefixes them with the
# emulator).  Used by `make test-arm64` (scripts/cross-test.sh).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
# libraries of the target (multiarch: /usr/lib/aarch64-linux-gnu, searched first by
# CMAKE_LIBRARY_ARCHITECTURE); the host's programs (pkg-config)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /usr)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)

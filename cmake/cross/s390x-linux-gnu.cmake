# Cross-compile for s390x Linux with Debian's gcc-s390x-linux-gnu, the target's
# libraries installed through multiarch (scripts/deps-cross.sh s390x), and
# run the test programs under qemu-user (CTest prefixes them with the
# emulator).  Used by `make test-s390x` (scripts/cross-test.sh).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(CMAKE_C_COMPILER s390x-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE s390x-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-s390x -L /usr/s390x-linux-gnu)
# libraries of the target (multiarch: /usr/lib/s390x-linux-gnu, searched first by
# CMAKE_LIBRARY_ARCHITECTURE); the host's programs (pkg-config)
set(CMAKE_FIND_ROOT_PATH /usr/s390x-linux-gnu /usr)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)

# Cross-compile for s390x Linux with Debian's gcc-s390x-linux-gnu, the target's
# libraries installed through multiarch (scripts/deps-cross.sh s390x), and
# run the test programs under qemu-user (CTest prefixes them with the
# emulator).  Used by `make test-s390x` (scripts/cross-test.sh).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(CMAKE_C_COMPILER s390x-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE s390x-linux-gnu)
# The programs run with the target's C library as Debian multiarch installs
# it (libc6:s390x, /lib/ld64.so.1): under Debian 12's qemu-s390x (7.2) the
# cross toolchain's own copy in /usr/s390x-linux-gnu aborts even a
# hello-world ("stack smashing detected"); both are glibc 2.36, one ABI.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-s390x -L /)
# libraries of the target (multiarch: /usr/lib/s390x-linux-gnu, searched first by
# CMAKE_LIBRARY_ARCHITECTURE); the host's programs (pkg-config)
set(CMAKE_FIND_ROOT_PATH /usr/s390x-linux-gnu /usr)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)

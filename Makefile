# rbf: a thin front end to CMake/CTest.
#   make             build build/rbf, build/librbf.a, build/librbf.so, build/rbf-bench,
#                    build/rbf-redis.so (the Redis module, docs/redis.md)
#   make test        install missing Debian packages, build, run every test, then
#                    the whole suite again under ASan+UBSan, the concurrency
#                    tests under ThreadSanitizer, valgrind, then each fuzz
#                    harness on a fixed seed and number of inputs
#                    (docs/robustness.md); make fuzz: each harness for
#                    FUZZ_SECONDS from a random seed, to look for new findings
#   make reproduce   regenerate the paper's results into report/
#   make install     install headers, libraries, the CLI and rbf.pc (PREFIX=/usr/local)
#   make python      build the Python module (python/rbf/_rbf.abi3.so) in place against
#                    build/librbf.a: PYTHONPATH=python /usr/bin/python3 -c 'import rbf'
#   make test-arm64  cross-compile for ARM64 and run the test programs under
#                    qemu-aarch64 (build-arm64/); make test-s390x: the same for
#                    big-endian s390x (build-s390x/).  Neither is part of make
#                    test; each installs its own Debian packages
#                    (scripts/deps-cross.sh)
BUILD     ?= build
ASAN      ?= build-asan
TSAN      ?= build-tsan
PREFIX    ?= /usr/local
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=

.PHONY: python all deps configure test test-fast test-big test-asan test-tsan test-valgrind reproduce reproduce-full install clean fuzz bench test-arm64 test-s390x

all: configure
	cmake --build $(BUILD) -j $(JOBS)

deps:
	@scripts/deps.sh

configure: deps
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_ARGS)

test: all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) --no-print-directory test-asan
	$(MAKE) --no-print-directory test-tsan
	$(MAKE) --no-print-directory test-valgrind
	JOBS=$(JOBS) scripts/fuzz.sh

# valgrind memcheck of the suite, and each libFuzzer harness for FUZZ_SECONDS
# (docs/robustness.md)
FUZZ_SECONDS ?= 60
test-valgrind: all
	JOBS=$(JOBS) scripts/valgrind.sh $(BUILD)

fuzz: deps
	JOBS=$(JOBS) scripts/fuzz.sh $(FUZZ_SECONDS)

# The Python extension, in place (docs/python.md); Debian's python3, not
# another one first on PATH.
PYTHON ?= /usr/bin/python3
python: all
	cd python && RBF_BUILD=$(abspath $(BUILD)) $(PYTHON) setup.py -q build_ext --inplace

test-fast: all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The long model comparisons make test leaves out (minutes to half an hour):
# the 2^22-2^26 programs of label big and the larger points of
# test_model_nexact (docs/models.md)
test-big: all
	cd $(BUILD) && RBF_TEST_BIG=1 ctest --output-on-failure -j $(JOBS) -R 'test_model_(nexact|asym)'

# Under ASan+UBSan the long model grids and simulations run thinner
# (RBF_TEST_SHRINK, as under valgrind; the normal build runs them in full);
# the fault-injection test fails every allocation in turn, unthinned.
# The Redis module is built with the sanitizers too, and its tests
# (label redis) start Debian's redis-server with the sanitizer runtime
# preloaded; a sanitizer report in a server's output fails the test
# (docs/redis.md, "Tests").
ASAN_SHRINK ?= 4
test-asan: deps
	@test -f $(ASAN)/CMakeCache.txt || cmake -S . -B $(ASAN) -DRBF_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
	cmake --build $(ASAN) -j $(JOBS)
	cd $(ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 RBF_TEST_SHRINK=$(ASAN_SHRINK) ctest --output-on-failure -j $(JOBS) -LE no-asan

# The concurrency tests (many threads on one filter) under ThreadSanitizer.
test-tsan: deps
	@test -f $(TSAN)/CMakeCache.txt || cmake -S . -B $(TSAN) -DRBF_TSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(TSAN) -j $(JOBS) --target test_concurrent rbf_static
	cd $(TSAN) && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ctest --output-on-failure -L concurrency

# Other architectures: cross-compiled test programs run under qemu-user
# (scripts/cross-test.sh says which tests are left out under emulation).
test-arm64:
	JOBS=$(JOBS) BUILD_CROSS=$(CURDIR)/build-arm64 scripts/cross-test.sh arm64

test-s390x:
	JOBS=$(JOBS) BUILD_CROSS=$(CURDIR)/build-s390x scripts/cross-test.sh s390x

reproduce: all
	$(BUILD)/rbf reproduce --out report

reproduce-full: all
	$(BUILD)/rbf reproduce --full --out report

bench: all python
	$(BUILD)/rbf-bench all
	/usr/bin/python3 bench/redis_bench.py --module $(BUILD)/rbf-redis.so
	PYTHONPATH=python $(PYTHON) bench/python_bench.py

install: all
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(ASAN) $(TSAN) build-valgrind build-fuzz build-arm64 build-s390x

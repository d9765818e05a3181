"""The test harness itself (rrtest.py): a sanitizer report in a server's
output fails the test that started it (so the ASan+UBSan run cannot pass
over one), and when RBF_REDIS_PRELOAD is set (the sanitizer build) the
server really runs with that runtime loaded and the module is the
instrumented one."""
import os
import shutil
import sys

import rrtest
from rrtest import Harness, check


def report_in_stderr_fails_the_test():
    for line in ("==42==ERROR: AddressSanitizer: heap-use-after-free on address 0x1",
                 "rbf_redis.c:123:5: runtime error: signed integer overflow"):
        h = Harness()
        try:
            with h:
                s = h.server()
                with open(os.path.join(s.dir, "stderr.log"), "a") as f:
                    f.write(line + "\n")
        except AssertionError as e:
            check("sanitizer report" in str(e), "the harness failed with %r" % str(e))
            shutil.rmtree(h.tmp, ignore_errors=True)  # kept for the report: not needed here
            continue
        raise AssertionError("a sanitizer report in a server's stderr did not fail the test: %r" % line)


def preload_is_loaded():
    if not rrtest.PRELOAD:
        print("no RBF_REDIS_PRELOAD (not the sanitizer build): nothing to check there")
        return
    with Harness() as h:
        s = h.server()
        with open("/proc/%d/maps" % s.proc.pid) as f:
            maps = f.read()
        for lib in rrtest.PRELOAD.split(":"):
            check(os.path.basename(lib) in maps, "redis-server runs without %s loaded" % lib)
        with open(rrtest.MODULE, "rb") as f:
            check(b"__asan_report" in f.read(), "the module %s is not built with ASan" % rrtest.MODULE)
        check(s.client().execute_command("RBF.RESERVE", "k", "BITS", 1000, "HASHES", 2,
                                         "SIGMA", 100) == b"OK", "the sanitized module answers")
    print("redis-server ran with %s preloaded" % rrtest.PRELOAD)


def main():
    report_in_stderr_fails_the_test()
    print("a sanitizer report fails the test")
    preload_is_loaded()
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())

"""Build the rbf extension (rbf._rbf, an abi3 module for CPython >= 3.11)
against the librbf.a that `make` builds (build/ beside this folder, or the
folder named by the RBF_BUILD environment variable), so no installed librbf
is needed.

    make python                       # in place, for PYTHONPATH=python
    /usr/bin/python3 -m venv --system-site-packages V
    V/bin/pip install --no-index --no-build-isolation ./python
"""
import glob
import os
import sys

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.abspath(os.environ.get("RBF_BUILD") or os.path.join(ROOT, "build"))
LIBRBF = os.path.join(BUILD, "librbf.a")
# the rbf command's size reader (rbf.parse_size reads memory= as --memory)
LIBUTIL = os.path.join(BUILD, "librbfcliutil.a")
if not os.path.exists(LIBRBF) and not any(a in sys.argv for a in ("--help", "egg_info", "sdist")):
    sys.exit("rbf: %s not found: run `make` at the top of the rbf tree first "
             "(or set RBF_BUILD to the CMake build folder)" % LIBRBF)

# The project's warnings (CMakeLists.txt, RBF_WARNINGS), as errors.
WARNINGS = ["-Wall", "-Wextra", "-Wshadow", "-Wconversion", "-Wstrict-prototypes",
            "-Wmissing-prototypes", "-Wpointer-arith", "-Wformat=2", "-Wundef", "-Werror"]

ext = Extension(
    "rbf._rbf",
    sources=[os.path.relpath(os.path.join(HERE, "rbf", "_rbf.c"), HERE)],
    include_dirs=[os.path.join(ROOT, "include")],
    define_macros=[("Py_LIMITED_API", "0x030B0000")],
    py_limited_api=True,
    extra_compile_args=["-std=c11", "-O2"] + WARNINGS,
    extra_objects=[LIBUTIL, LIBRBF],
    # rebuilt when librbf.a or a public header is newer than the module
    depends=[LIBRBF, LIBUTIL] + sorted(glob.glob(os.path.join(ROOT, "include", "*.h"))),
    libraries=["gsl", "gslcblas", "m", "pthread"],
    # keep librbf's symbols inside the module
    extra_link_args=["-Wl,--exclude-libs,ALL"],
)

setup(ext_modules=[ext], options={"bdist_wheel": {"py_limited_api": "cp311"}})

#!/usr/bin/env bash
# no_paths.sh SRC -- no quoted #include with a directory in the library,
# util, reproduce, CLI, benchmark, fuzz or Redis sources: a module reaches
# headers only through its include path (tests/layering/CMakeLists.txt),
# so "../cli/cli.h" cannot sneak past the layering.  Exit 1 listing them.
set -u
src=${1:?usage: no_paths.sh SOURCE_DIR}
dirs=()
for d in src bench fuzz redis; do [ -d "$src/$d" ] && dirs+=("$src/$d"); done
bad=$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*/' --include='*.c' --include='*.h' "${dirs[@]}")
if [ -n "$bad" ]; then
  echo "includes with a path (use the module's include path instead):"
  echo "$bad"
  exit 1
fi
echo "no #include with a path in: ${dirs[*]}"

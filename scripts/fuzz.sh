#!/usr/bin/env bash
# Build the libFuzzer harnesses of fuzz/ with clang and run each for a bounded
# time; fail on any crash, leak, sanitizer report, timeout or out-of-memory.
#   scripts/fuzz.sh [SECONDS]     seconds per harness (default 15; make test)
# Environment: FUZZ_BUILD (default build-fuzz), JOBS.
# New corpus entries go to FUZZ_BUILD/fuzz/corpus-NAME (not committed); the
# seeds are fuzz/corpus/{load,parse,cli}.  A crashing input is saved as
# FUZZ_BUILD/fuzz/crash-NAME-* and replayed to show the report.
set -euo pipefail
cd "$(dirname "$0")/.."
T=${1:-15}
B=${FUZZ_BUILD:-build-fuzz}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

if ! command -v clang >/dev/null; then
  echo "fuzz.sh: clang is missing (Debian: clang libclang-rt-14-dev; see scripts/deps.sh)" >&2
  exit 1
fi
if [ ! -f "$B/CMakeCache.txt" ]; then
  CC=clang cmake -S . -B "$B" -DRBF_FUZZ=ON -DRBF_SANITIZE=ON -DRBF_WERROR=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link >/dev/null
fi
mkdir -p "$B/fuzz"
if ! cmake --build "$B" -j "$JOBS" --target fuzz_load fuzz_load_file fuzz_parse fuzz_cli \
     >"$B/fuzz/build.log" 2>&1; then
  cat "$B/fuzz/build.log" >&2
  exit 1
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for h in load:load load_file:load parse:parse cli:cli; do
  name=${h%%:*}
  seeds=fuzz/corpus/${h#*:}
  work=$B/fuzz/corpus-$name
  mkdir -p "$work"
  log=$B/fuzz/$name.log
  if "$B/fuzz/fuzz_$name" -max_total_time="$T" -timeout=10 -rss_limit_mb=2048 \
       -max_len=4096 -close_fd_mask=3 -print_final_stats=1 \
       -artifact_prefix="$B/fuzz/crash-$name-" "$work" "$seeds" >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    echo "fuzz_$name: ok, $execs executions in ${T}s, $cov, corpus $(ls "$work" | wc -l)"
  else
    status=1
    echo "fuzz_$name: FAILED (log: $log)" >&2
    tail -40 "$log" >&2
    for c in "$B/fuzz/crash-$name-"*; do
      [ -f "$c" ] || continue
      echo "--- replaying $c" >&2
      "$B/fuzz/fuzz_$name" "$c" 2>&1 | tail -40 >&2 || true
    done
  fi
done
exit $status

#!/usr/bin/env bash
# Build the libFuzzer harnesses of fuzz/ with clang and run each; fail on any
# crash, leak, sanitizer report, timeout (an input running 60 s) or
# out-of-memory.
#   scripts/fuzz.sh               make test's run: a fixed seed and a fixed
#                                 number of inputs per harness, so every run
#                                 tries the same inputs however busy the
#                                 machine (no time cap: a slow machine takes
#                                 longer; a hanging input still fails at 60 s)
#   scripts/fuzz.sh SECONDS       make fuzz's run: SECONDS per harness from a
#                                 random seed, to look for new findings
# Environment: FUZZ_BUILD (default build-fuzz), JOBS, FUZZ_SEED (a seed for
# the timed run).
# The timed run's new corpus entries go to FUZZ_BUILD/fuzz/corpus-NAME (not
# committed; they grow from run to run); the fixed run starts from the seeds,
# fuzz/corpus/{load,parse,cli}, every time.  A crashing input is saved as
# FUZZ_BUILD/fuzz/crash-NAME-* and replayed to show the report.
set -euo pipefail
cd "$(dirname "$0")/.."
T=${1:-}
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
# harness:seed corpus:inputs of make test's run (each about 10 s on an idle
# core of the 2-core machine of docs/robustness.md)
for h in load:load:2000000 load_file:load:40000 parse:parse:4000000 cli:cli:100000; do
  name=${h%%:*}
  rest=${h#*:}
  seeds=fuzz/corpus/${rest%%:*}
  if [ -n "$T" ]; then
    bound=(-max_total_time="$T" -seed="${FUZZ_SEED:-0}")
    what="in ${T}s"
    work=$B/fuzz/corpus-$name # grows from run to run
  else
    bound=(-runs="${rest#*:}" -seed=1)
    what="(seed 1)"
    work=$B/fuzz/fixed-$name # starts from the seeds alone every time
    rm -rf "$work"
  fi
  mkdir -p "$work"
  log=$B/fuzz/$name.log
  if "$B/fuzz/fuzz_$name" "${bound[@]}" -timeout=60 -rss_limit_mb=2048 \
       -max_len=4096 -close_fd_mask=3 -print_final_stats=1 \
       -artifact_prefix="$B/fuzz/crash-$name-" "$work" "$seeds" >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
    echo "fuzz_$name: ok, $execs executions $what, $cov, corpus $(ls "$work" | wc -l)"
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

#!/usr/bin/env bash
# The long runs that CI only samples: the [.stress] soak (tests/cochan/concurrency.cpp: 1P/8C
# and 8P/8C rounds with random stop requests, receiver clones and drops, and close()
# mid-stream) under ThreadSanitizer, then the libFuzzer target against its reference model.
# Prints the figures that docs/reliability.md records; logs stay under build/soak/.
# Usage: scripts/soak.sh [stress seconds] [fuzz seconds]   (default: 600 each)
set -euo pipefail
cd "$(dirname "$0")/.."
stress_seconds=${1:-600}
fuzz_seconds=${2:-600}
bash scripts/install-deps.sh

out=build/soak
mkdir -p "$out"
common=(-G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCOCHAN_BUILD_BENCHMARKS=OFF
        -DCOCHAN_BUILD_EXAMPLES=OFF -DCOCHAN_INSTALL=OFF)
cmake -S . -B "$out/tsan" "${common[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCOCHAN_SANITIZE=thread
cmake --build "$out/tsan" -j2 --target cochan_tests
cmake -S . -B "$out/fuzz" "${common[@]}" -DCMAKE_BUILD_TYPE=Release -DCOCHAN_FUZZ=ON
cmake --build "$out/fuzz" -j2 --target fuzz_channel

echo "=== soak: [.stress] under ThreadSanitizer for ${stress_seconds} s"
# Run from the build dir so a TSan report names our files; --warn NoTests: a tag that matches
# nothing fails. The test prints its figures (and its seed) as a Catch2 warning.
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" COCHAN_STRESS_SECONDS=$stress_seconds \
    "$out/tsan/tests/cochan_tests" "[.stress]" --warn NoTests 2>&1 | tee "$out/stress.log"

echo "=== soak: fuzz_channel for ${fuzz_seconds} s"
cmake -DFUZZER="$out/fuzz/tests/fuzz/fuzz_channel" -DCORPUS=tests/fuzz/corpus \
    -DWORK="$out/fuzz_work" -DSECONDS="$fuzz_seconds" -P tests/fuzz/run_fuzz.cmake 2>&1 |
    tee "$out/fuzz.log"

echo
echo "=== soak figures ($(date -u +%F), $(git rev-parse --short HEAD))"
sed -n '/chaos: seed/,/^$/p' "$out/stress.log"
grep -E 'stat::number_of_executed_units|stat::peak_rss_mb|corpus grew' "$out/fuzz.log" || true

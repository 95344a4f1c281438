#!/usr/bin/env bash
# Builds and runs the work_queue example. Extra arguments go to the example.
# Usage: scripts/example.sh [example args...]
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

bash scripts/install-deps.sh build-essential cmake ninja-build

# Tests and benchmarks off: the example needs nothing but a compiler.
cmake -S . -B build/example -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=g++ \
    -DCOCHAN_BUILD_TESTS=OFF -DCOCHAN_BUILD_BENCHMARKS=OFF -DCOCHAN_INSTALL=OFF
cmake --build build/example --target work_queue
exec build/example/examples/work_queue "$@"

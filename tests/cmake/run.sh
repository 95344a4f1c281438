#!/usr/bin/env bash
# Proves cochan can be consumed three ways: find_package after install, add_subdirectory,
# and FetchContent. Prints one line per consumer; exits nonzero if any fails.
# Usage: tests/cmake/run.sh [cochan source dir] [C++ compiler]
# shellcheck disable=SC2317  # the functions below are called through run()
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "${1:-$here/../..}" && pwd)
cxx=${2:-c++}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

common=(-DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release)
if command -v ninja >/dev/null; then common+=(-G Ninja); fi

# run <name> <command...>: quiet on success, the log on failure.
failed=0
run() {
    local name=$1; shift
    if "$@" >"$work/$name.log" 2>&1; then
        echo "$name: ok"
    else
        echo "$name: FAILED"; cat "$work/$name.log"; failed=1
    fi
}

install_cochan() {
    cmake -S "$src" -B "$work/install-build" "${common[@]}" -DCOCHAN_BUILD_TESTS=OFF \
        -DCOCHAN_BUILD_EXAMPLES=OFF -DCOCHAN_BUILD_BENCHMARKS=OFF &&
    cmake --install "$work/install-build" --prefix "$work/prefix" &&
    # Both Asio adapters are installed, with the implementation they share.
    for h in asio.hpp boost_asio.hpp detail/asio_adapter.hpp; do
        test -f "$work/prefix/include/cochan/$h" || { echo "not installed: cochan/$h"; exit 1; }
    done
}

# FetchContent clones a git repository holding the work tree as it is now (tracked and
# untracked files, less the ignored ones): what would be committed, not the last commit.
fetch_content() {
    local git=(git --git-dir="$work/snapshot/.git" -c user.name=cochan -c user.email=cochan@localhost)
    git init -q "$work/snapshot" &&
    "${git[@]}" --work-tree="$src" add -A &&
    "${git[@]}" commit -qm snapshot &&
    consumer fetch_content -DCOCHAN_GIT_REPOSITORY="$work/snapshot" \
        -DCOCHAN_GIT_TAG="$("${git[@]}" rev-parse HEAD)"
}

consumer() {
    local name=$1; shift
    cmake -S "$here/$name" -B "$work/$name" "${common[@]}" "$@" &&
    cmake --build "$work/$name" &&
    "$work/$name/consumer"
}

run install install_cochan
if ((failed)); then exit 1; fi
run find_package consumer find_package -DCMAKE_PREFIX_PATH="$work/prefix"
run add_subdirectory consumer add_subdirectory -DCOCHAN_SOURCE_DIR="$src"
run fetch_content fetch_content
exit "$failed"

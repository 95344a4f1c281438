#!/usr/bin/env bash
# Proves cochan can be consumed five ways: find_package after install, add_subdirectory,
# FetchContent, pkg-config after install (a build without CMake), and find_package from the
# package `cpack -G TGZ` makes, unpacked (the .deb beside it is checked for its files when
# dpkg-deb is there). Prints one line per consumer; exits nonzero if any fails.
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
    local name=$1 start=$SECONDS; shift
    if "$@" >"$work/$name.log" 2>&1; then
        echo "$name: ok ($((SECONDS - start)) s)"
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

# consumer <project> [cmake args...]: configures, builds and runs tests/cmake/<project>.
consumer() { consumer_in "$1" "$@"; }
# consumer_in <build dir name> <project> [cmake args...]
consumer_in() {
    local dir=$work/$1 name=$2; shift 2
    cmake -S "$here/$name" -B "$dir" "${common[@]}" "$@" &&
    cmake --build "$dir" &&
    "$dir/consumer"
}

# found_in <build dir> <prefix>: find_package took cochan from <prefix>, not from elsewhere on
# the machine (say a cochan installed in /usr/local).
found_in() {
    grep -Fqx "cochan_DIR:PATH=$2/share/cmake/cochan" "$1/CMakeCache.txt" ||
        { echo "cochan was not found in $2:"; grep '^cochan_DIR' "$1/CMakeCache.txt"; return 1; }
}

find_package_consumer() {
    consumer find_package -DCMAKE_PREFIX_PATH="$work/prefix" &&
    found_in "$work/find_package" "$work/prefix"
}

# A build without CMake: the compiler flags from the installed prefix's cochan.pc alone.
pkg_config() {
    local includedir flags
    export PKG_CONFIG_PATH=$work/prefix/share/pkgconfig
    includedir=$(pkg-config --variable=includedir cochan) || return 1
    if [[ $(realpath "$includedir") != $(realpath "$work/prefix/include") ]]; then
        echo "cochan.pc names $includedir, not $work/prefix/include"; return 1
    fi
    read -ra flags < <(pkg-config --cflags --libs cochan) &&
    echo "flags: ${flags[*]}" &&
    "$cxx" -std=c++20 -O2 "${flags[@]}" -o "$work/pkg_config" "$here/main.cpp" &&
    "$work/pkg_config"
}

# The binary package: `cpack` from the install build, the .tar.gz unpacked into a fresh
# directory, the find_package project built against it.
cpack_tgz() {
    local generators=TGZ tarballs unpacked debs listing
    if command -v dpkg-deb >/dev/null; then generators="TGZ;DEB"; fi
    cpack -G "$generators" --config "$work/install-build/CPackConfig.cmake" -B "$work/package" &&
    tarballs=("$work"/package/cochan-*.tar.gz) &&
    mkdir "$work/unpacked" && tar -xzf "${tarballs[0]}" -C "$work/unpacked" &&
    unpacked=("$work"/unpacked/cochan-*) &&
    consumer_in cpack find_package -DCMAKE_PREFIX_PATH="${unpacked[0]}" &&
    found_in "$work/cpack" "${unpacked[0]}" || return 1
    if [[ $generators == *DEB ]]; then
        debs=("$work"/package/*.deb)
        listing=$(dpkg-deb -c "${debs[0]}") || return 1
        for f in include/cochan/spmc.hpp share/cmake/cochan/cochanConfig.cmake \
                 share/pkgconfig/cochan.pc; do
            grep -q " \./usr/$f\$" <<<"$listing" ||
                { echo "not in ${debs[0]}: /usr/$f"; return 1; }
        done
    fi
}

run install install_cochan
if ((failed)); then exit 1; fi
run find_package find_package_consumer
run add_subdirectory consumer add_subdirectory -DCOCHAN_SOURCE_DIR="$src"
run fetch_content fetch_content
run pkg_config pkg_config
run cpack cpack_tgz
exit "$failed"

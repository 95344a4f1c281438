#!/usr/bin/env bash
# Installs, from Debian's packages, whatever the checks (scripts/check.sh) and the long runs
# (scripts/soak.sh) need and the machine lacks; a warm machine installs nothing. With arguments,
# just those packages (scripts/example.sh needs only a compiler). --bench-peers: only the
# toolchains and crates of the benchmarks' non-C++ peers (benchmarks/peers/), which
# benchmarks/run.sh installs for itself; CI (scripts/check.sh) never installs them.
# Without --yes, and outside CI (CI=true), it changes nothing but install what is missing: an
# install that would remove a package stops (apt-get --no-remove), and so does one that needs
# Boost 1.81 while another Boost's development packages are installed (they must go first):
# the script lists what would be removed, says how to proceed and exits with status 1 before
# changing anything. With --yes or in CI it removes them and installs.
# Usage: scripts/install-deps.sh [--yes] [--bench-peers | package...]
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

yes=0
if [[ ${CI:-} == true ]]; then yes=1; fi
if [[ ${1:-} == --yes ]]; then yes=1; shift; fi

# Compilers and tools: g++, clang 14 (the default clang, with its sanitizer and libFuzzer
# runtimes), clang 19 with LLVM's libc++ 19 (the UBSan stage: clang 14's -fsanitize=function
# cannot compile coroutines; libc++ 19 has no std::stop_token without -fexperimental-library),
# clang-format and clang-tidy 14, python3 (the link check, the benchmark report).
# Test dependencies: Catch2 2, standalone Asio, Boost 1.81 (Boost.Asio, header-only).
# Benchmark peers: Google Benchmark, Boost.Fiber 1.81, moodycamel. The lock's model: Spin.
# pkgconf (pkg-config): the packaging test builds a program with `pkg-config --cflags cochan`.
# Windows (the mingw stage): MinGW-w64 g++ with posix threads, and Wine to run what it builds.
packages=(build-essential cmake ninja-build git python3
          clang libclang-rt-14-dev clang-19 libclang-rt-19-dev libc++-19-dev libc++abi-19-dev
          g++-mingw-w64-x86-64-posix wine64
          clang-format clang-tidy
          catch2 libasio-dev libboost1.81-dev libbenchmark-dev libboost-fiber1.81-dev
          libconcurrentqueue-dev spin pkgconf)
# The benchmarks' Rust and Go peers, built offline: Debian's cargo/rustc and the crates they use
# from Debian's registry (/usr/share/cargo/registry), and Debian's Go (standard library only).
bench_peer_packages=(cargo librust-tokio-dev librust-async-channel-dev librust-flume-dev
                     librust-libc-dev golang-go)
if [[ ${1:-} == --bench-peers ]]; then packages=("${bench_peer_packages[@]}")
elif (($#)); then packages=("$@"); fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
    sudo=(); if (($(id -u) != 0)); then sudo=(sudo); fi
    # Boost 1.81 replaces Debian's default Boost 1.74, which earlier versions of this script
    # installed (libboost-fiber-dev). Each libboostX-dev conflicts with every other (all ship
    # /usr/include/boost), so every Boost development package not of 1.81 (1.74's, and the
    # libboost-fiber-dev metapackage that pulls them in) is removed first, by name: nothing of
    # 1.74's headers stays, and apt is not left to pick a side. Runtime libraries stay (other
    # software may link them).
    if [[ " ${missing[*]} " == *" libboost1.81-dev "* ]]; then
        mapfile -t old_boost < <(dpkg-query -W -f='${Package} ${Status}\n' \
            'libboost*-dev' 2>/dev/null | awk '/ install ok installed$/ && $1 !~ /1\.81-dev$/ {print $1}')
        if ((${#old_boost[@]})) && ((!yes)); then
            # What apt would remove with them (packages that depend on them), simulated.
            mapfile -t removals < <(apt-get -s remove "${old_boost[@]}" 2>/dev/null |
                awk '/^Remv / {print $2}')
            if ((${#removals[@]} == 0)); then removals=("${old_boost[@]}"); fi
            echo "install-deps.sh: libboost1.81-dev is missing, and installing it means removing" \
                 "these packages first (every libboostX-dev ships /usr/include/boost):" >&2
            printf '  %s\n' "${removals[@]}" >&2
            echo "Nothing was changed. Remove them yourself, or let this script remove them" \
                 "and install what is missing:" >&2
            echo "  scripts/install-deps.sh --yes" >&2
            echo "then run your command again." >&2
            exit 1
        fi
        if ((${#old_boost[@]})); then "${sudo[@]}" apt-get remove -y "${old_boost[@]}"; fi
    fi
    # Outside CI and without --yes, an install that would remove a package stops instead.
    no_remove=(); if ((!yes)); then no_remove=(--no-remove); fi
    "${sudo[@]}" apt-get update
    "${sudo[@]}" apt-get install -y --no-install-recommends "${no_remove[@]}" "${missing[@]}"
fi

#!/usr/bin/env bash
# Every check CI runs, each stage in its own build dir under build/check/.
# Usage: scripts/check.sh [format|links|model|tidy|release|asan|tsan|clang|ubsan|mingw]   (no argument:
# all, in that order). Between them the stages build the whole suite with g++ and with clang++, each in
# C++20 and in C++23. CMakePresets.json has each build stage as a preset of the same name
# (`cmake --workflow --preset asan`, in build/preset/asan/); CI runs this script, not the presets.
set -euo pipefail
cd "$(dirname "$0")/.."
only=${1:-all}
case $only in
    all|format|links|model|tidy|release|asan|tsan|clang|ubsan|mingw) ;;
    *) echo "usage: $0 [format|links|model|tidy|release|asan|tsan|clang|ubsan|mingw]" >&2; exit 2 ;;
esac
export DEBIAN_FRONTEND=noninteractive

# --yes (remove Boost development packages other than 1.81's when they are in the way) only in
# CI, which sets CI=true; elsewhere install-deps.sh removes nothing: it stops and says what it
# would remove and how to let it.
if [[ ${CI:-} == true ]]; then bash scripts/install-deps.sh --yes; else bash scripts/install-deps.sh; fi

# stage <name> <compiler> <build type> <ctest -j> [cmake args...]
# The configure, build and test presets of the same name in CMakePresets.json repeat each stage's
# compiler, build type, cmake arguments, sanitizer options and ctest -j: change both together.
# Sanitizer options are set for the whole stage, build included: catch_discover_tests runs
# the test binary right after linking it.
summary=()
current=""
ctest_extra=() # more ctest options, for one stage
stage() {
    local name=$1 cxx=$2 type=$3 jobs=$4; shift 4
    local dir=build/check/$name start=$SECONDS
    current=$name
    echo "=== $name: $cxx $type $*"
    cmake -S . -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE="$type" "$@"
    cmake --build "$dir" -j2
    # --timeout: a deadlocked channel fails its test instead of hanging CI.
    ctest --test-dir "$dir" --output-on-failure -j"$jobs" --timeout 300 "${ctest_extra[@]}"
    summary+=("$name: passed in $((SECONDS - start))s")
}

finish() {
    local rc=$? failed=0 line
    echo
    for line in "${summary[@]}"; do echo "$line"; done
    if ((rc != 0)) && [[ -n $current ]]; then echo "$current: FAILED"; failed=1; fi
    echo "stages: ${#summary[@]} passed, $failed failed"
    exit "$rc"
}
trap finish EXIT

# check <name> <command...>: a stage that builds nothing, timed like the others.
check() {
    local name=$1 start=$SECONDS; shift
    current=$name
    echo "=== $name: $*"
    "$@"
    summary+=("$name: passed in $((SECONDS - start))s")
}
# Every tracked C++ source must be as clang-format 14 writes it (.clang-format).
format_sources() {
    git ls-files '*.hpp' '*.cpp' ':!tests/cmake/' | xargs clang-format --dry-run -Werror
}
stage_format() { check format format_sources; }
# Every relative link in the Markdown files resolves, anchors included, and none leaves the
# repository (scripts/check-links.py); and no tracked file cites an issue of this project or a
# document that is not in the repository, rules included: docs/contract.md holds them
# (scripts/check-citations.py). Both run, so one run lists every finding of either.
links_and_citations() {
    local rc=0
    python3 scripts/check-links.py || rc=1
    python3 scripts/check-citations.py || rc=1
    return "$rc"
}
stage_links() { check links links_and_citations; }
# The channel lock's model (tests/model/channel_lock.pml) through Spin: mutual exclusion in
# every interleaving with a late release store, and the bounded sleep its lost wake-up needs
# (scripts/check-model.sh).
stage_model() { check model bash scripts/check-model.sh; }
# clang-tidy 14 with .clang-tidy (and tests/.clang-tidy, examples/.clang-tidy) over every
# translation unit of ours: tests, examples, benchmarks and the one-header checks. It needs only
# a configured clang build (compile_commands.json), nothing built. The tests/asio sources are
# checked once, as the standalone-Asio flavour: the Boost.Asio one is the same sources (clang-tidy
# would check each file once per compile command); cochan/boost_asio.hpp is still checked, through
# its one-header check and the Boost examples. No precompiled headers: nothing is built, and the
# compile commands would name a .pch file that does not exist.
stage_tidy() {
    local dir=build/check/tidy start=$SECONDS
    current=tidy
    echo "=== tidy: clang-tidy-14"
    cmake -S . -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
        -DCOCHAN_FUZZ=ON -DCOCHAN_BOOST_ASIO_TESTS=OFF -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON \
        >/dev/null
    run-clang-tidy-14 -p "$dir" -j2 -quiet \
        "^$PWD/(tests/(cochan|asio|explore|fuzz|death|lock)|examples|benchmarks|$dir/tests/headers)/"
    summary+=("tidy: passed in $((SECONDS - start))s")
}
# The Asio tests are built against both flavours, standalone Asio and Boost.Asio, in the asan
# (g++) and tsan (clang 14) stages: both run under ASan+UBSan and under TSan, and compile with
# g++ and clang++. The other stages build the standalone flavour only
# (-DCOCHAN_BOOST_ASIO_TESTS=OFF): the Boost one is the same sources.
stage_release() {
    stage release g++ Release 2 -DCOCHAN_TEST_CONSUMERS=ON -DCOCHAN_BOOST_ASIO_TESTS=OFF
}
# The sanitizer stages build with line tables only (-g1, CMake's default being -g): enough for
# a sanitizer's stack trace to name file and line, at 10-20% less compile time. The ASan stages
# (asan, ubsan) link the executables without PIE (-no-pie): each test case is a process of its
# own (catch_discover_tests), and starting a sanitized PIE test executable spends most of its
# 0.25 s applying about 1.5 million relative relocations; without PIE it takes 0.15 s, which
# over some 400 test processes per stage is about 40 s of CPU. (The tsan stage keeps the
# default, PIE: not measured there.) They leave out
# the compile-only checks (one-header checks, compile-fail tests: -DCOCHAN_COMPILE_CHECKS=OFF),
# which the release (g++) and clang (clang 14) stages run, since no sanitizer adds to them.
stage_asan() {
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        stage asan g++ Debug 2 -DCOCHAN_CXX_STANDARD=23 -DCOCHAN_SANITIZE=address,undefined \
            -DCOCHAN_BUILD_BENCHMARKS=OFF -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCOCHAN_COMPILE_CHECKS=OFF \
            -DCMAKE_EXE_LINKER_FLAGS=-no-pie
}
# Benchmarks are built (and smoke-run, no timings) in the release and clang stages only: the
# sanitizer stages would only slow them down, and the library's own tests cover that ground.
# clang with g++'s libstdc++ (Debian's default). -j1: TSan slows code 5-15x and the stress
# tests are bounded in time, so a second test on the other core would starve them. No explorer:
# it runs every actor on one thread, so TSan has nothing to see in it.
stage_tsan() {
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
        stage tsan clang++ RelWithDebInfo 1 -DCOCHAN_SANITIZE=thread -DCOCHAN_STRESS_TESTS=ON \
            -DCOCHAN_BUILD_BENCHMARKS=OFF "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
            -DCOCHAN_COMPILE_CHECKS=OFF -DCOCHAN_EXPLORER=OFF
}
# The clang stage also builds the libFuzzer target and fuzzes for 60 s (tests/fuzz/).
stage_clang() {
    stage clang clang++ Release 2 -DCOCHAN_CXX_STANDARD=23 -DCOCHAN_FUZZ=ON \
        -DCOCHAN_BOOST_ASIO_TESTS=OFF
}
# clang 19 with LLVM's libc++ 19 (-stdlib=libc++, without -fexperimental-library, so no
# std::stop_token or std::jthread: the headers, the tests and the default token fall back to
# cochan::stop_token, cochan/stop_token.hpp), with ASan and all of UBSan, -fsanitize=function
# included: clang 14 cannot compile that check on coroutines in templates (llvm-project#49689),
# so g++'s UBSan (asan stage) is the only other UBSan run over the coroutine tests. Catch2 2 and
# standalone Asio are header-only, so they build against libc++; the benchmarks (Google
# Benchmark is a library built against libstdc++) are off, and so are the examples (they use
# std::jthread). The explorer and the Boost.Asio build of the Asio tests run under ASan+UBSan
# in the asan stage already, so this one leaves them out.
stage_ubsan() {
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        stage ubsan clang++-19 Debug 2 -DCMAKE_CXX_FLAGS=-stdlib=libc++ \
            -DCOCHAN_SANITIZE=address,undefined -DCOCHAN_BUILD_BENCHMARKS=OFF \
            -DCOCHAN_BUILD_EXAMPLES=OFF -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCOCHAN_COMPILE_CHECKS=OFF \
            -DCOCHAN_EXPLORER=OFF -DCOCHAN_BOOST_ASIO_TESTS=OFF -DCMAKE_EXE_LINKER_FLAGS=-no-pie
}
# Windows: MinGW-w64 g++ 12 (posix threads), cross-compiled (cmake/toolchains/mingw-w64.cmake,
# linked -static) and run under Wine, Release, C++20: the tests, the death tests, the examples
# that build there (not priority_lanes: POSIX signals) and the Asio tests (Asio's Windows
# backend). The channel lock sleeps there on its condition-variable table and the default stop
# token is cochan's (libstdc++'s atomic wait, which std::stop_callback also uses, can miss a
# wake-up without a futex: detail/config.hpp). No benchmarks (Google Benchmark and Boost.Fiber
# are Linux builds), no compile checks (the Linux stages run them) and no explorer (one thread:
# nothing in it depends on the platform). A persistent wineserver serves every test; a test
# that fails is run once more (--repeat until-pass:2), since Wine now and then fails to start
# a process under load (no output, exit at once): a test that fails twice fails the stage.
stage_mingw() {
    local prefix=$PWD/build/check/mingw/wine
    mkdir -p "$prefix"
    export WINEDEBUG=-all WINEPREFIX=$prefix
    /usr/lib/wine/wineserver -p          # persistent, before anything else starts one
    /usr/lib/wine/wine64 wineboot --init # the prefix, made once before tests run in parallel
    ctest_extra=(--repeat until-pass:2)
    stage mingw x86_64-w64-mingw32-g++-posix Release 2 \
        --toolchain cmake/toolchains/mingw-w64.cmake -DCOCHAN_BUILD_BENCHMARKS=OFF \
        -DCOCHAN_COMPILE_CHECKS=OFF -DCOCHAN_EXPLORER=OFF -DCOCHAN_BOOST_ASIO_TESTS=OFF
    ctest_extra=()
    /usr/lib/wine/wineserver -k || true
}

if [[ $only == all ]]; then
    stage_format; stage_links; stage_model; stage_tidy; stage_release; stage_asan; stage_tsan; stage_clang; stage_ubsan; stage_mingw
else
    "stage_$only"
fi
current=""

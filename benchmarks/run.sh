#!/usr/bin/env bash
# Builds the benchmarks in Release, runs every case in R serial rounds and writes the results
# table into benchmarks/README.md (between the results markers). See benchmarks/README.md.
# The non-C++ peers (benchmarks/peers/: Rust async-channel and flume on Tokio, Go channels) are
# installed from Debian (scripts/install-deps.sh --bench-peers), built offline into
# build/bench-peers/ and run in every round beside the C++ binaries; without their toolchain
# their rows are skipped, with a message.
#
# usage: benchmarks/run.sh [--quick] [--rounds R] [--repetitions N] [--min-time S]
#                          [--filter REGEX] [--no-readme] [--no-peers]
#   --quick        smoke: 1 round, 1 repetition, tiny min time (cochan_workdist: N / 20 items);
#                  proves everything builds, runs and passes its checksums; writes no README
#                  and asserts no timings
#   --rounds       serial rounds (default 3; env ROUNDS)
#   --repetitions  repetitions per case and round (default 5; env REPETITIONS)
#   --min-time     Google Benchmark's minimum time per repetition, in seconds (default 0.05;
#                  env MIN_TIME)
#   --filter       only the cases matching REGEX (then the README is left alone)
#   --no-readme    print the tables only
#   --no-peers     the C++ binaries only: no install, build or run of the Rust and Go peers
# env CXX picks the compiler (default g++; others build in build/bench-<compiler>/).
# Results stay in <build dir>/results/<time>/.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-3} reps=${REPETITIONS:-5} min_time=${MIN_TIME:-0.05}
filter="" readme=1 quick=0 peers=1
while (($#)); do
    case $1 in
        --quick) quick=1 rounds=1 reps=1 min_time=0.001 readme=0 ;;
        --rounds) rounds=$2; shift ;;
        --repetitions) reps=$2; shift ;;
        --min-time) min_time=$2; shift ;;
        --filter) filter=$2 readme=0; shift ;;
        --no-readme) readme=0 ;;
        --no-peers) peers=0 ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

cxx=${CXX:-g++}
build=build/bench # one build directory per compiler: CMake cannot switch one in place
[[ $cxx != g++ ]] && build=build/bench-$(basename "$cxx")
# A build directory configured first with another compiler path (say /usr/bin/c++ by hand):
# CMake would wipe its cache and configure again without the -D options given here, building
# the benchmarks unoptimized. Start such a directory afresh, and check the build type after.
cache=$build/CMakeCache.txt
if [[ -f $cache ]] && ! grep -qx "CMAKE_CXX_COMPILER:[A-Z]*=$(command -v "$cxx")" "$cache"; then
    rm -rf "$cache" "$build/CMakeFiles"
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$(command -v "$cxx")" \
    -DCOCHAN_BUILD_BENCHMARKS=ON -DCOCHAN_BUILD_TESTS=OFF -DCOCHAN_BUILD_EXAMPLES=OFF \
    -DCOCHAN_INSTALL=OFF >/dev/null
grep -qx 'CMAKE_BUILD_TYPE:STRING=Release' "$cache" ||
    { echo "run.sh: $build is not a Release build; remove it and run again" >&2; exit 1; }
# The revision the binaries are built from, taken now: edits made while the rounds run must not
# be credited to them (report.py prints it from the results directory).
revision="$(git rev-parse --short HEAD 2>/dev/null || echo '?')"
[[ -z $(git status --porcelain -- include benchmarks 2>/dev/null) ]] ||
    revision+=" with uncommitted changes under include/ or benchmarks/"
cmake --build "$build" -j2 --target ecosystem_bench micro_bench cochan_workdist

# The Rust and Go peers: one build for every compiler's run (they do not depend on it). A
# missing toolchain or crate only skips their rows (build.sh says which); a compile error stops.
peers_dir=build/bench-peers
bins=("$build/benchmarks/ecosystem_bench" "$build/benchmarks/micro_bench"
      "$build/benchmarks/cochan_workdist")
if ((peers)); then
    bash scripts/install-deps.sh --bench-peers ||
        echo "run.sh: could not install the Rust/Go peers' packages; their rows may be skipped" >&2
    bash benchmarks/peers/build.sh "$peers_dir"
    for p in rust go; do
        if [[ -x $peers_dir/bin/${p}_peers ]]; then bins+=("$peers_dir/bin/${p}_peers")
        else echo "run.sh: no ${p}_peers binary: the $p rows are left out of this run" >&2; fi
    done
fi

out=$build/results/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
echo "$revision" >"$out/revision.txt"
if ((peers)) && [[ -f $peers_dir/versions.txt ]]; then
    cp "$peers_dir/versions.txt" "$out/peers-versions.txt" # for report.py's machine lines
fi
args=(--benchmark_repetitions="$reps" --benchmark_report_aggregates_only=false
      --benchmark_format=json --benchmark_min_time="$min_time")
[[ -n $filter ]] && args+=(--benchmark_filter="$filter")

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
start=$SECONDS
for ((r = 1; r <= rounds; r++)); do
    for path in "${bins[@]}"; do
        bin=$(basename "$path") # ecosystem_bench -> round<R>-ecosystem.json, rust_peers -> -rust
        bin=${bin%_bench} bin=${bin%_peers} bin=${bin#cochan_}
        echo "round $r/$rounds: $(basename "$path") ($((SECONDS - start)) s so far)" >&2
        # The work-distribution binary's smoke size: N / 20 items per case.
        extra=(); ((quick)) && [[ $bin == workdist ]] && extra=(--workdist_quick)
        # A failed count/checksum check makes the binary exit non-zero, which stops the run.
        "$path" "${extra[@]}" "${args[@]}" >"$out/round$r-$bin.json"
        # A filter that matches none of a binary's cases leaves its output empty.
        [[ -s $out/round$r-$bin.json ]] || rm "$out/round$r-$bin.json"
    done
done
echo "all rounds done in $((SECONDS - start)) s; results in $out" >&2

load_end=$(cut -d' ' -f1-3 /proc/loadavg)
settings="$rounds round(s) x $reps repetition(s), min time ${min_time} s per repetition;"
settings+=" $((SECONDS - start)) s; load average $load_start before, $load_end after"
report=(python3 benchmarks/report.py "$out" --settings "$settings" --compiler "$cxx")
if ((readme)); then report+=(--readme benchmarks/README.md); fi
if ((quick)); then
    "${report[@]}" >/dev/null
    echo "quick run: every case built, ran and passed its checksum checks (timings not judged)"
else
    "${report[@]}"
fi

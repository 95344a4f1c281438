// cochan_explore's command line: runs the scenarios of scenarios.cpp. See explorer.hpp for
// what a run checks.
//
//   cochan_explore                       every scenario: DFS to its depth bound, then random runs
//   cochan_explore --list                the scenarios and what each exercises
//   cochan_explore --only NAME           the scenarios whose name contains NAME
//   cochan_explore --depth D --random N  other bounds for every scenario (--seed S: first seed)
//   cochan_explore --replay 'NAME:CHOICES'   one run, printing every step (also through the
//                                        COCHAN_EXPLORE_REPLAY environment variable)
#include "explore/explorer.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace cochan_explore;

namespace {

[[noreturn]] void usage() {
    std::fprintf(stderr, "usage: cochan_explore [--list] [--only NAME] [--depth D] [--random N] "
                         "[--seed S] [--replay 'NAME:CHOICES']\n");
    std::exit(2);
}

int replay(const std::vector<scenario>& scenarios, const std::string& spec) {
    const auto colon = spec.find(':');
    const std::string name = spec.substr(0, colon);
    for (const auto& sc : scenarios) {
        if (sc.name != name) continue;
        schedule s;
        if (colon != std::string::npos) s.prefix = parse_choices(spec.substr(colon + 1));
        // Line by line: a crash (ASan) must not swallow the trace printed so far.
        std::setvbuf(stdout, nullptr, _IOLBF, 0);
        std::printf("replaying %s (%s)\n", sc.name.c_str(), sc.what.c_str());
        const std::string failure = run_once(sc, s, true);
        std::printf("choices: %s\n", format_choices(s.taken).c_str());
        if (failure.empty()) {
            std::printf("passed\n");
            return 0;
        }
        std::printf("FAILED: %s\n", failure.c_str());
        return 1;
    }
    std::fprintf(stderr, "no scenario named %s (see --list)\n", name.c_str());
    return 2;
}

} // namespace

// ASan's defaults quarantine 256 MiB of freed memory and fill every new block: with a fresh
// channel and four coroutine frames per run, that triples the run time. A 16 MiB quarantine
// still catches a use after free within a run (a run frees a few KiB). ASAN_OPTIONS overrides.
// NOLINTNEXTLINE(bugprone-reserved-identifier): the name ASan's runtime looks up
extern "C" const char* __asan_default_options() {
    return "quarantine_size_mb=16:max_malloc_fill_size=256";
}

int main(int argc, char** argv) {
    install_crash_handlers();
    const auto scenarios = all_scenarios();
    std::string only;
    std::string replay_spec;
    if (const char* r = std::getenv("COCHAN_EXPLORE_REPLAY")) replay_spec = r;
    long depth = -1;
    long randoms = -1;
    std::uint64_t seed = 20240601;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) usage();
            return argv[++i];
        };
        if (arg == "--list") {
            for (const auto& sc : scenarios) {
                std::printf("%-30s %s\n", sc.name.c_str(), sc.what.c_str());
            }
            return 0;
        } else if (arg == "--only") {
            only = next();
        } else if (arg == "--replay") {
            replay_spec = next();
        } else if (arg == "--depth") {
            depth = std::stol(next());
        } else if (arg == "--random") {
            randoms = std::stol(next());
        } else if (arg == "--seed") {
            seed = std::stoull(next());
        } else {
            usage();
        }
    }
    if (!replay_spec.empty()) return replay(scenarios, replay_spec);

    std::printf("cochan_explore: every schedule up to each scenario's depth bound, then seeded "
                "random schedules (first seed %llu)\n",
                static_cast<unsigned long long>(seed));
    std::size_t total_dfs = 0;
    std::size_t total_random = 0;
    std::size_t failures = 0;
    std::size_t matched = 0;
    double seconds = 0;
    for (const auto& sc : scenarios) {
        if (!only.empty() && sc.name.find(only) == std::string::npos) continue;
        ++matched;
        const std::size_t d = depth >= 0 ? static_cast<std::size_t>(depth) : sc.depth;
        const std::size_t n = randoms >= 0 ? static_cast<std::size_t>(randoms) : sc.randoms;
        const auto r = explore(sc, d, n, seed);
        const std::string bound =
            r.exhaustive ? std::string("exhaustive") : "depth " + std::to_string(d);
        std::printf("  %-30s %8zu DFS (%-10s) + %5zu random, longest %3zu steps, %6.2f s%s\n",
                    sc.name.c_str(), r.dfs_runs, bound.c_str(), r.random_runs, r.longest, r.seconds,
                    r.failures != 0 ? "  FAILED" : "");
        std::fflush(stdout);
        total_dfs += r.dfs_runs;
        total_random += r.random_runs;
        failures += r.failures;
        seconds += r.seconds;
    }
    if (matched == 0) {
        std::fprintf(stderr, "no scenario matches %s\n", only.c_str());
        return 2;
    }
    std::printf("cochan_explore: %zu interleavings explored (%zu DFS + %zu random) in %zu "
                "scenarios, %.1f s: %s\n",
                total_dfs + total_random, total_dfs, total_random, matched, seconds,
                failures == 0 ? "all passed" : "FAILURES");
    return failures == 0 ? 0 : 1;
}

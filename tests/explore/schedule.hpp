// Choice sequences and what is done with them: the schedule of one run (a prefix replayed,
// then option 0 or a seeded random option), the replay string format ("0.1.0*5.2"), the log a
// run reports to (its first failure, the notes a replay prints, its clock), the enumeration of
// every sequence up to a depth bound followed by random ones, and the crash handlers that print
// the replay command of a run that dies. Knows nothing of channels or coroutines: a run is a
// function of its schedule here.
#pragma once

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#if defined(_WIN32)
#include <io.h> // _write
#else
#include <unistd.h> // write
#endif

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define COCHAN_EXPLORE_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define COCHAN_EXPLORE_SANITIZER 1
#endif
#ifdef COCHAN_EXPLORE_SANITIZER
#include <sanitizer/common_interface_defs.h>
#endif

namespace cochan_explore {

// ---- choice sequences -------------------------------------------------------------------------

/// The choices of one run: a prefix replayed first, then option 0 (DFS) or a random option.
struct schedule {
    std::vector<std::uint8_t> prefix;
    std::optional<std::mt19937_64> rng;
    std::vector<std::uint8_t> taken;   // the option chosen at each step
    std::vector<std::uint8_t> options; // among how many
    bool prefix_mismatch = false;      // a replayed choice did not exist (wrong scenario?)

    std::size_t pick(std::size_t n) {
        std::size_t c = 0;
        const std::size_t i = taken.size();
        if (i < prefix.size()) {
            c = prefix[i];
            if (c >= n) {
                prefix_mismatch = true;
                c = 0;
            }
        } else if (rng) {
            c = static_cast<std::size_t>((*rng)() % n);
        }
        taken.push_back(static_cast<std::uint8_t>(c));
        options.push_back(static_cast<std::uint8_t>(n));
        return c;
    }
};

/// "0.1.0*5.2": choices separated by dots, a run of k equal choices written c*k.
inline std::string format_choices(const std::vector<std::uint8_t>& c) {
    std::string s;
    for (std::size_t i = 0; i < c.size();) {
        std::size_t j = i;
        while (j < c.size() && c[j] == c[i]) ++j;
        if (!s.empty()) s += '.';
        s += std::to_string(c[i]);
        if (j - i > 1) s += '*' + std::to_string(j - i);
        i = j;
    }
    return s;
}

inline std::vector<std::uint8_t> parse_choices(const std::string& s) {
    std::vector<std::uint8_t> c;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, '.')) {
        if (item.empty()) continue;
        const auto star = item.find('*');
        const int value = std::stoi(item.substr(0, star));
        const int count = star == std::string::npos ? 1 : std::stoi(item.substr(star + 1));
        if (value < 0 || value > 255 || count < 1)
            throw std::invalid_argument("bad choice " + item);
        c.insert(c.end(), static_cast<std::size_t>(count), static_cast<std::uint8_t>(value));
    }
    return c;
}

// ---- what a run reports ---------------------------------------------------------------------

/// What every part of a run reports to: its first failure, the notes a verbose run (a replay)
/// prints, and the run's clock: every step, notification, event and immediate take gets the
/// next tick, so the checks can order them.
class run_log {
  public:
    explicit run_log(bool verbose) noexcept : verbose_(verbose) {}

    bool verbose() const noexcept { return verbose_; }
    void note(const std::string& what) const {
        if (verbose_) std::printf("      %s\n", what.c_str());
    }
    void fail(const std::string& what) {
        if (failure_.empty()) failure_ = what;
        if (verbose_) std::printf("  !!! %s\n", what.c_str());
    }
    bool ok() const noexcept { return failure_.empty(); }
    const std::string& failure() const noexcept { return failure_; }

    std::uint64_t tick() noexcept { return clock_++; }

  private:
    bool verbose_;
    std::string failure_;
    std::uint64_t clock_ = 0;
};

// ---- crash reporting --------------------------------------------------------------------------

// What a crash handler prints: the scenario and the choices so far. Written by the explorer
// before each step; read only by the handlers.
struct crash_context {
    const char* scenario = nullptr;
    const std::vector<std::uint8_t>* taken = nullptr;
};
inline crash_context g_crash;

inline void write_raw(const char* s) {
#if defined(_WIN32)
    (void)!::_write(2, s, static_cast<unsigned>(std::strlen(s)));
#else
    (void)!::write(2, s, std::strlen(s));
#endif
}

/// Prints the replay command of the run in progress. Async-signal-safe enough for a dying
/// process: no allocation, only write(2) (_write on Windows).
inline void print_crash_trace() noexcept {
    if (g_crash.scenario == nullptr || g_crash.taken == nullptr) return;
    write_raw("\ncochan_explore: the run crashed; replay it with:\n  cochan_explore --replay '");
    write_raw(g_crash.scenario);
    write_raw(":");
    const auto& c = *g_crash.taken;
    char buf[8];
    for (std::size_t i = 0; i < c.size(); ++i) {
        int n = 0;
        unsigned v = c[i];
        char digits[4];
        do {
            digits[n++] = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v != 0);
        int k = 0;
        if (i != 0) buf[k++] = '.';
        while (n > 0) buf[k++] = digits[--n];
        buf[k] = '\0';
        write_raw(buf);
    }
    write_raw("'\n");
}

inline void on_fatal_signal(int sig) {
    print_crash_trace();
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

inline void install_crash_handlers() {
#ifdef COCHAN_EXPLORE_SANITIZER
    __sanitizer_set_death_callback([] { print_crash_trace(); });
#endif
    std::signal(SIGABRT, on_fatal_signal); // COCHAN_ASSERT, std::terminate
    std::signal(SIGSEGV, on_fatal_signal); // without a sanitizer; ASan installs its own
#ifdef SIGBUS                              // not on Windows
    std::signal(SIGBUS, on_fatal_signal);
#endif
}

// ---- enumeration ------------------------------------------------------------------------------

/// One run under a schedule's choices: returns its failure (empty if none). `verbose` prints
/// every step.
using run_fn = std::function<std::string(schedule&, bool verbose)>;

struct explore_result {
    std::size_t dfs_runs = 0;
    std::size_t random_runs = 0;
    bool exhaustive = true; // no DFS run went beyond the depth bound
    std::size_t longest = 0;
    std::size_t failures = 0;
    double seconds = 0;
};

/// Prints a failed run, its replay command, and the run again with every step.
inline void report_failure(const std::string& name, const run_fn& run, const schedule& s,
                           const std::string& failure, const char* how) {
    std::printf("\nFAILED %s (%s): %s\n", name.c_str(), how, failure.c_str());
    const std::string trace = name + ":" + format_choices(s.taken);
    std::printf("  replay: cochan_explore --replay '%s'\n", trace.c_str());
    std::printf("  (or COCHAN_EXPLORE_REPLAY='%s' cochan_explore)\n  trace:\n", trace.c_str());
    schedule again;
    again.prefix = s.taken;
    run(again, true);
    std::fflush(stdout);
}

/// Every choice sequence up to `depth` (then option 0), then `randoms` random schedules.
inline explore_result explore_schedules(const std::string& name, const run_fn& run,
                                        std::size_t depth, std::size_t randoms, std::uint64_t seed,
                                        std::size_t max_failures = 1) {
    explore_result res;
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::uint8_t> prefix;
    for (;;) {
        schedule s;
        s.prefix = prefix;
        const std::string failure = run(s, false);
        ++res.dfs_runs;
        res.longest = std::max(res.longest, s.taken.size());
        if (s.taken.size() > depth) res.exhaustive = false;
        if (!failure.empty()) {
            report_failure(name, run, s, failure, "DFS");
            if (++res.failures >= max_failures) break;
        }
        // The next sequence: bump the deepest choice within the bound that has an untried
        // alternative, and drop everything after it.
        std::size_t i = std::min(depth, s.taken.size());
        bool more = false;
        while (i > 0) {
            --i;
            if (s.taken[i] + 1 < s.options[i]) {
                prefix.assign(s.taken.begin(), s.taken.begin() + static_cast<std::ptrdiff_t>(i));
                prefix.push_back(static_cast<std::uint8_t>(s.taken[i] + 1));
                more = true;
                break;
            }
        }
        if (!more) break;
    }
    // Beyond the bound: random schedules. Pointless when the DFS covered every schedule.
    for (std::size_t k = 0; k < randoms && !res.exhaustive && res.failures < max_failures; ++k) {
        schedule s;
        s.rng.emplace(seed + k);
        const std::string failure = run(s, false);
        ++res.random_runs;
        res.longest = std::max(res.longest, s.taken.size());
        if (!failure.empty()) {
            report_failure(name, run, s, failure,
                           ("random, seed " + std::to_string(seed + k)).c_str());
            ++res.failures;
        }
    }
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return res;
}

} // namespace cochan_explore

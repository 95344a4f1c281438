// The scenarios cochan_explore runs, and its command line. See explorer.hpp for what a run
// checks.
//
//   cochan_explore                       every scenario: DFS to its depth bound, then random runs
//   cochan_explore --list                the scenarios and what each exercises
//   cochan_explore --only NAME           the scenarios whose name contains NAME
//   cochan_explore --depth D --random N  other bounds for every scenario (--seed S: first seed)
//   cochan_explore --replay 'NAME:CHOICES'   one run, printing every step (also through the
//                                        COCHAN_EXPLORE_REPLAY environment variable)
#include "explore/explorer.hpp"

#include "support/channels.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace cochan_explore;

namespace {

template <template <class> class Kind>
scenario make(std::string name, std::string what, channel_spec spec, std::size_t depth,
              std::size_t randoms) {
    scenario s;
    s.name = std::move(name);
    s.what = std::move(what);
    s.setup = [spec](run_state& run) { build<Kind<payload>>(run, spec); };
    s.depth = depth;
    s.randoms = randoms;
    return s;
}

producer_script producer(int values) {
    producer_script p;
    p.values = values;
    return p;
}
producer_script with_token(producer_script p) {
    p.token = true;
    return p;
}
producer_script trying(producer_script p) {
    p.try_first = true;
    return p;
}
producer_script closing_after(producer_script p, int k) {
    p.close_after = k;
    return p;
}
producer_script closing_at_end(producer_script p) {
    p.close_at_end = true;
    return p;
}
consumer_script consumer() {
    return {};
}
consumer_script with_token(consumer_script c) {
    c.token = true;
    return c;
}
consumer_script trying(consumer_script c) {
    c.try_first = true;
    return c;
}
consumer_script leaving_after(consumer_script c, int k) {
    c.leave_after = k;
    return c;
}
// Default (inline) resumption: no resume_on; woken inside the completing operation.
producer_script resuming_inline(producer_script p) {
    p.inline_resume = true;
    return p;
}
consumer_script resuming_inline(consumer_script c) {
    c.inline_resume = true;
    return c;
}
// Waits at a gate first: the "kick" event wakes it inline, so it runs inside the trampoline.
producer_script gated(producer_script p) {
    p.gate = true;
    return p;
}
consumer_script gated(consumer_script c) {
    c.gate = true;
    return c;
}
consumer_script destroying_on_disconnect(consumer_script c, int actor) {
    c.destroy_on_disconnect = actor;
    return c;
}

// No depth bound: the DFS enumerates every schedule of the scenario.
constexpr std::size_t all = 1000;

// Actors are numbered producers first, then consumers: with one producer, C0 is actor 1.
// Depth bounds: a scenario is exhaustive (`all`) when it has at most ~130k schedules; the
// larger ones are bounded so the default run stays within CI's budget (a Debug+ASan build
// runs ~45k schedules a second) and get random schedules beyond the bound. Events allowed
// at hook points (`at::...` masks) add choices only to the scenarios that ask for them.
std::vector<scenario> all_scenarios() {
    using namespace cochan_test;
    std::vector<scenario> v;
    channel_spec s;

    // ---- SPMC, bounded ------------------------------------------------------------------------
    s = {};
    s.capacity = 1;
    s.producers = {closing_at_end(producer(3))};
    s.consumers = {consumer()};
    v.push_back(make<spmc_bounded>(
        "spmc_b1_1p1c", "a sender and a receiver waiting in turn on one slot", s, all, 0));

    s = {};
    s.capacity = 1;
    s.producers = {producer(3)};
    s.consumers = {with_token(consumer()), consumer()};
    s.stops = {1};
    v.push_back(make<spmc_bounded>("spmc_b1_1p2c_stop_rx",
                                   "two competing receivers, one stopped at any step", s, all, 0));

    s = {};
    s.capacity = 1;
    s.producers = {with_token(producer(3))};
    s.consumers = {consumer()};
    s.stops = {0};
    v.push_back(make<spmc_bounded>("spmc_b1_stop_tx",
                                   "a waiting send stopped at any step, then retried", s, all, 0));

    s = {};
    s.capacity = 2;
    s.producers = {trying(closing_at_end(producer(4)))};
    s.consumers = {trying(consumer()), consumer()};
    v.push_back(make<spmc_bounded>(
        "spmc_b2_try", "try_send/try_recv against waiting operations (no barging)", s, all, 0));

    s = {};
    s.capacity = 2;
    s.producers = {closing_after(producer(4), 2)};
    s.consumers = {consumer(), trying(consumer())};
    v.push_back(make<spmc_bounded>(
        "spmc_b2_close_mid",
        "close() mid-stream: receivers drain, then disconnected; a later send fails", s, all, 0));

    s = {};
    s.capacity = 3;
    s.producers = {producer(6)};
    s.consumers = {leaving_after(consumer(), 1), leaving_after(consumer(), 2)};
    v.push_back(make<spmc_bounded>(
        "spmc_b3_receivers_leave",
        "every receiver leaves early: buffered values destroyed, a waiting send fails", s, all, 0));

    s = {};
    s.capacity = 1;
    s.producers = {producer(3)};
    s.consumers = {consumer(), consumer()};
    s.destroys = {1};
    v.push_back(make<spmc_bounded>(
        "spmc_b1_destroy_rx",
        "a receiver's coroutine destroyed while waiting or granted: its value passes on", s, all,
        0));

    s = {};
    s.capacity = 1;
    s.producers = {producer(3)};
    s.consumers = {consumer()};
    s.spare_receivers = 1;
    s.destroys = {0};
    v.push_back(make<spmc_bounded>(
        "spmc_b1_destroy_tx",
        "the sender's coroutine destroyed while waiting, a receiver clone dropped", s, all, 0));

    // ---- SPMC, unbounded ----------------------------------------------------------------------
    s = {};
    s.producers = {producer(3)};
    s.consumers = {with_token(consumer()), trying(consumer())};
    s.stops = {1};
    s.spare_receivers = 1;
    v.push_back(make<spmc_unbounded>(
        "spmc_unb_stop_rx", "unbounded: competing receivers, a stop, a receiver clone dropped", s,
        9, 5000));

    s = {};
    s.producers = {closing_at_end(producer(3))};
    s.consumers = {consumer(), consumer()};
    s.destroys = {2};
    v.push_back(make<spmc_unbounded>("spmc_unb_destroy_rx",
                                     "unbounded: a granted receiver destroyed hands its value on",
                                     s, all, 0));

    // ---- MPMC, bounded ------------------------------------------------------------------------
    s = {};
    s.capacity = 1;
    s.producers = {producer(2), producer(2)};
    s.consumers = {consumer()};
    v.push_back(
        make<mpmc_bounded>("mpmc_b1_2p1c", "two waiting senders served in FIFO order", s, all, 0));

    s = {};
    s.capacity = 1;
    s.producers = {with_token(producer(2)), producer(2)};
    s.consumers = {consumer()};
    s.stops = {0};
    v.push_back(make<mpmc_bounded>("mpmc_b1_stop_tx", "a stopped waiting sender passes its turn", s,
                                   all, 0));

    s = {};
    s.capacity = 2;
    s.producers = {producer(2), trying(producer(2))};
    s.consumers = {consumer(), trying(consumer())};
    v.push_back(make<mpmc_bounded>(
        "mpmc_b2_2p2c", "two senders, two receivers, waiting and try operations", s, 10, 5000));

    s = {};
    s.capacity = 1;
    s.producers = {producer(3), producer(2)};
    s.consumers = {leaving_after(consumer(), 1)};
    s.spare_receivers = 1;
    v.push_back(make<mpmc_bounded>(
        "mpmc_b1_last_rx_drop",
        "the last receiver dropped at any step: waiting senders fail, the buffer is destroyed", s,
        all, 0));

    s = {};
    s.capacity = 2;
    s.producers = {producer(2)};
    s.consumers = {consumer(), with_token(consumer())};
    s.spare_senders = 1;
    s.close_spares = true;
    s.stops = {2};
    v.push_back(make<mpmc_bounded>(
        "mpmc_b2_spare_close",
        "a sender clone closed at any step: receivers wait for it, then disconnect", s, all, 0));

    s = {};
    s.capacity = 1;
    s.producers = {producer(2), producer(2)};
    s.consumers = {consumer()};
    s.destroys = {0};
    v.push_back(make<mpmc_bounded>("mpmc_b1_destroy_tx",
                                   "a waiting sender destroyed: unlinked from the FIFO of senders",
                                   s, all, 0));

    s = {};
    s.capacity = 3;
    s.producers = {producer(3), closing_at_end(producer(3))};
    s.consumers = {with_token(consumer())};
    s.stops = {2};
    v.push_back(make<mpmc_bounded>("mpmc_b3_stop_rx", "capacity 3, two senders, a stopped receiver",
                                   s, 9, 5000));

    s = {};
    s.capacity = 2;
    s.producers = {producer(2), producer(1)};
    s.consumers = {with_token(consumer()), consumer()};
    s.stops = {2};
    s.destroys = {3};
    v.push_back(make<mpmc_bounded>("mpmc_b2_destroy_and_stop",
                                   "a granted receiver destroyed while another is stopped", s, 9,
                                   5000));

    // ---- MPMC, unbounded ----------------------------------------------------------------------
    s = {};
    s.producers = {producer(2), producer(2)};
    s.consumers = {with_token(consumer()), consumer()};
    s.stops = {2};
    s.spare_senders = 1;
    v.push_back(make<mpmc_unbounded>(
        "mpmc_unb_2p2c", "unbounded: two senders, two receivers, a stop, a sender clone dropped", s,
        7, 5000));

    s = {};
    s.producers = {producer(3), closing_after(producer(2), 1)};
    s.consumers = {leaving_after(consumer(), 1), trying(leaving_after(consumer(), 2))};
    s.spare_receivers = 1;
    v.push_back(make<mpmc_unbounded>(
        "mpmc_unb_leave", "unbounded: receivers leave early, the last clone dropped at any step", s,
        all, 0));

    // ---- hook points and inline resumption ----------------------------------------------------
    s = {};
    s.capacity = 1;
    s.producers = {producer(2)};
    s.consumers = {consumer()};
    s.spare_senders = 1;
    s.harness_sends = 1;
    s.harness_send_at = at::release_grant;
    v.push_back(make<mpmc_bounded>(
        "mpmc_b1_barging",
        "a try_send in release_grant's lock-free gap must not barge past a waiting send", s, all,
        0));

    s = {};
    s.producers = {gated(closing_at_end(producer(2)))};
    s.consumers = {resuming_inline(consumer()), resuming_inline(consumer())};
    s.destroys = {1, 2};
    s.destroy_at = at::step | at::trampoline_queued;
    v.push_back(make<spmc_unbounded>(
        "spmc_unb_trampoline_destroy",
        "inline: a sender woken through its gate grants to receivers that queue on the "
        "trampoline; each destroyed there or between steps",
        s, all, 0));

    s = {};
    s.capacity = 1;
    s.producers = {resuming_inline(producer(3))};
    s.consumers = {gated(resuming_inline(consumer()))};
    s.destroys = {0};
    s.destroy_at = at::step | at::trampoline_queued;
    v.push_back(make<spmc_bounded>(
        "spmc_b1_trampoline_destroy_tx",
        "inline: a send admitted and queued on the trampoline, destroyed there or between steps", s,
        all, 0));

    s = {};
    s.producers = {gated(closing_at_end(producer(2)))};
    s.consumers = {resuming_inline(consumer()), resuming_inline(with_token(consumer()))};
    s.stops = {2};
    s.stop_at = at::trampoline_queued;
    s.destroys = {2};
    s.destroy_at = at::step | at::trampoline_queued;
    v.push_back(make<spmc_unbounded>(
        "spmc_unb_trampoline_stop",
        "inline: a stop requested inside the trampoline queues the receive, then it is destroyed",
        s, all, 0));

    s = {};
    s.producers = {producer(1)};
    s.consumers = {destroying_on_disconnect(resuming_inline(consumer()), 2),
                   resuming_inline(consumer()), resuming_inline(consumer())};
    s.destroys = {3};
    s.destroy_at = at::step | at::trampoline_queued;
    v.push_back(make<spmc_unbounded>(
        "spmc_unb_batch_destroy",
        "inline: a disconnection wakes a batch; the first woken destroys another, an event a third",
        s, all, 0));

    s = {};
    s.capacity = 1;
    s.producers = {with_token(producer(2))};
    s.consumers = {resuming_inline(with_token(consumer()))};
    s.stops = {0, 1};
    s.stop_at = at::step | at::before_link;
    v.push_back(make<spmc_bounded>(
        "spmc_b1_stop_before_link",
        "stops landing before a send or receive links: cancelled at once, the value handed back", s,
        all, 0));

    s = {};
    s.capacity = 1;
    s.producers = {resuming_inline(producer(2)), resuming_inline(producer(2))};
    s.consumers = {resuming_inline(consumer())};
    v.push_back(make<mpmc_bounded>(
        "mpmc_b1_inline",
        "inline everywhere: admitted senders and granted receivers resume inside "
        "the operations that complete them",
        s, all, 0));

    s = {};
    s.capacity = 1;
    s.producers = {resuming_inline(producer(2)), resuming_inline(with_token(producer(1)))};
    s.consumers = {resuming_inline(consumer())};
    s.spare_senders = 1;
    s.harness_sends = 1;
    s.harness_send_at = at::step | at::hooks;
    s.stops = {1};
    s.stop_at = at::step | at::hooks;
    s.destroys = {2};
    s.destroy_at = at::step | at::trampoline_queued;
    v.push_back(make<mpmc_bounded>(
        "mpmc_b1_inline_hooks",
        "inline: a try_send and a stop at every hook point, the receiver destroyed while queued", s,
        10, 5000));

    s = {};
    s.capacity = 2;
    s.producers = {resuming_inline(with_token(producer(3)))};
    s.consumers = {resuming_inline(consumer()), with_token(consumer())};
    s.spare_receivers = 1;
    s.harness_recvs = 1;
    s.harness_recv_at = at::hooks;
    s.stops = {0, 2};
    s.stop_at = at::step | at::hooks;
    s.destroys = {1};
    s.destroy_at = at::step | at::trampoline_queued | at::release_grant;
    v.push_back(make<spmc_bounded>(
        "spmc_b2_inline_mixed",
        "inline and resume_on receivers; a try_recv, stops and a destruction at the hook points", s,
        9, 5000));

    return v;
}

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

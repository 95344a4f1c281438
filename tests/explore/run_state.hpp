// One run of one scenario, tying the pieces together: its log, actors, ledger and events, the
// loop that makes each step a choice (run a ready actor, or fire an event) and checks the
// invariants between steps and at the end, the choice at each hook point, and the functions
// through which payloads, coroutine frames, spied notifications and the library's hook points
// reach the run in progress. Also what a scenario is, and how one is run and explored.
#pragma once

#include "explore/hooks.hpp" // first: it defines COCHAN_DETAIL_INTERLEAVE

#include "explore/actors.hpp"
#include "explore/ledger.hpp"
#include "explore/schedule.hpp"
#include "support/counted.hpp"

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace cochan_explore {

class run_state;
// The run in progress. Payload constructors and coroutine frames report to it; one run at a
// time, on one thread.
inline run_state* g_run = nullptr;

/// One run of one scenario. Set-up (build.hpp) adds the actors, the events and the channel's
/// observers; the actors' scripts (scripts.hpp) report to `actors` and `values`.
class run_state {
  public:
    run_state(schedule& s, bool verbose)
        : log(verbose), actors(log), values(log, actors), schedule_(s) {
        counted::reset();
        actors.value_name = [this](int id) { return values.value_name(id); };
        g_run = this;
        g_at_hook = [](hook_point p) { g_run->at_hook(p); };
    }
    run_state(const run_state&) = delete;
    run_state& operator=(const run_state&) = delete;
    ~run_state() {
        cleanup(); // the hook points still report to this run meanwhile
        g_at_hook = nullptr;
        g_run = nullptr;
    }

    run_log log;
    actor_table actors;
    ledger values;

    // ---- set-up ---------------------------------------------------------------------------

    /// Channel `ch` as the checks see it: bounded or not, its capacity (0 and bounded: a
    /// rendezvous), its buffered size, and how to let go of the reference the harness holds
    /// for those queries.
    void observe_channel(int ch, bool bounded, std::size_t capacity,
                         std::function<std::size_t()> size, std::function<void()> release) {
        values.observe_channel(ch, bounded, capacity, std::move(size));
        cleanups_.push_back(std::move(release));
    }

    /// How many events have fired so far in this run.
    std::uint64_t events_fired() const noexcept { return fired_; }

    /// An event the explorer may fire once, while `enabled()`: between two steps (at::step)
    /// and/or at the hook points in `where`.
    void add_event(std::string label, std::function<bool()> enabled, std::function<void()> fire,
                   where_mask where = at::step) {
        events_.add(std::move(label), std::move(enabled), std::move(fire), where);
    }

    /// Something to undo after the run (an endpoint the harness holds), in reverse order.
    void on_cleanup(std::function<void()> f) { cleanups_.push_back(std::move(f)); }

    // ---- the run ----------------------------------------------------------------------------

    /// Runs the scenario to the end under `schedule_`'s choices; then checks the end state.
    void execute(const char* scenario_name) {
        g_crash.scenario = scenario_name;
        g_crash.taken = &schedule_.taken;
        constexpr std::size_t max_steps = 4000;
        executing_ = true;
        for (std::size_t step = 0; log.ok(); ++step) {
            values.check_step();
            if (!log.ok()) break;
            const std::vector<event*>& enabled = events_.enabled_at_step();
            const std::size_t ready = actors.ready_count();
            const std::size_t n = ready + enabled.size();
            if (n == 0) break;
            if (step == max_steps) {
                log.fail("no end after " + std::to_string(max_steps) + " steps (livelock?)");
                break;
            }
            const std::size_t c = schedule_.pick(n);
            if (c < ready) {
                actor_info& a = actors.take_ready(c);
                if (log.verbose()) {
                    std::printf("  #%zu [%zu/%zu] run %s%s\n", step, c, n, a.name.c_str(),
                                (" (after " + actors.doing(a) + ")").c_str());
                }
                actors.resume(a);
                if (log.verbose() && a.state == actor_state::in_op)
                    log.note(a.name + ": waits in " + actors.doing(a));
            } else {
                event& e = *enabled[c - ready];
                if (log.verbose())
                    std::printf("  #%zu [%zu/%zu] event: %s\n", step, c, n, e.label.c_str());
                fire(e);
            }
        }
        executing_ = false;
        if (schedule_.prefix_mismatch) log.fail("the replayed choices do not fit this scenario");
        if (log.ok()) values.check_end();
        cleanup();
        if (log.ok() && counted::live() != 0) {
            log.fail(std::to_string(counted::live()) + " value object(s) leaked after the run");
        }
        g_crash = {};
    }

    /// At each COCHAN_DETAIL_INTERLEAVE point: the bookkeeping of inline resumption, then (in
    /// a run) a choice: continue, or first fire one of the events allowed here.
    void at_hook(hook_point p) {
        actor_info* linker = actors.before_hook_choice(p);
        if (executing_ && log.ok()) {
            events_.choose_at(p, schedule_, log.verbose(), [this](event& e) { fire(e); });
        }
        actors.after_hook_choice(linker);
    }

  private:
    void fire(event& e) {
        e.fired = true;
        ++fired_;
        actors.foreign_run();
        log.tick();
        e.fire();
    }

    /// Destroys what is left (only after a failure: a clean run leaves nothing), then lets go
    /// of the harness's endpoints and of the channel.
    void cleanup() {
        executing_ = false;
        actors.destroy_all();
        while (!cleanups_.empty()) {
            auto f = std::move(cleanups_.back());
            cleanups_.pop_back();
            f();
        }
    }

    schedule& schedule_;
    bool executing_ = false;  // in execute()'s loop: hook points are choices
    std::uint64_t fired_ = 0; // events fired
    event_table events_;
    std::vector<std::function<void()>> cleanups_;
};

// ---- what reaches the run in progress ---------------------------------------------------------

inline void actor_table::spy_notify(waiter_base* w) noexcept {
    if (g_run == nullptr) {
        write_raw("cochan_explore: an inline waiter was notified after its run\n");
        std::abort();
    }
    g_run->actors.inline_notify(w);
}

inline void* actor_task::promise_type::operator new(std::size_t n) {
    void* p = ::operator new(n);
    if (g_run != nullptr) g_run->actors.frame_allocated(p, n);
    return p;
}

inline cochan::scheduler_ref actor_task::promise_type::cochan_scheduler() const noexcept {
    if (!scheduled || g_run == nullptr) return {};
    return g_run->actors;
}

inline void actor_task::promise_type::final_awaiter::await_suspend(
    std::coroutine_handle<promise_type> h) const noexcept {
    if (g_run != nullptr) {
        g_run->actors.finished(h);
    } else {
        h.destroy();
    }
}

inline payload::payload(int id, int value) : c_(value), id_(id) {
    g_run->values.value_created(id, this);
}
inline payload::payload(payload&& other) noexcept
    : c_(std::move(other.c_)), id_(std::exchange(other.id_, -1)) {
    if (id_ >= 0) g_run->values.value_moved(id_, &other, this);
}
inline payload::~payload() {
    if (id_ >= 0) g_run->values.value_destroyed(id_);
}
inline int payload::settle() noexcept {
    if (id_ >= 0) g_run->values.value_settled(id_);
    return std::exchange(id_, -1);
}

// ---- scenarios --------------------------------------------------------------------------------

/// What a run does: its channel, its actors and its events. Built fresh for every run.
struct scenario {
    std::string name;
    std::string what;                      // one line: what it exercises
    std::function<void(run_state&)> setup; // creates the channel, actors and events
    std::size_t depth = 0;                 // DFS bound
    std::size_t randoms = 0;               // random schedules after the DFS
};

/// Every scenario cochan_explore runs, in order (scenarios.cpp).
std::vector<scenario> all_scenarios();

/// Runs one schedule; returns its failure (empty if none). `verbose` prints every step.
inline std::string run_once(const scenario& sc, schedule& s, bool verbose) {
    run_state run(s, verbose);
    sc.setup(run);
    run.execute(sc.name.c_str());
    return run.log.failure();
}

/// Every choice sequence of `sc` up to `depth` (then option 0), then `randoms` random ones.
inline explore_result explore(const scenario& sc, std::size_t depth, std::size_t randoms,
                              std::uint64_t seed) {
    return explore_schedules(
        sc.name, [&sc](schedule& s, bool verbose) { return run_once(sc, s, verbose); }, depth,
        randoms, seed);
}

} // namespace cochan_explore

// cochan SPMC and MPMC on the two coroutine runtimes.
//
// current: the producer and consumers are coroutines posted to the benchmark thread's event
//          loop, which resumes each inside a cochan::resumption_scope (as cochan's guide asks of
//          an event loop); a woken coroutine resumes with cochan's default, on the completing
//          thread through its trampoline, once the task that woke it suspends or returns (so a
//          producer fills the buffer and consumers drain it in runs). The loop's queue is only
//          used to start the tasks.
//          `cochan_spmc_posted` is the same with `.resume_on(loop)`: a woken coroutine is
//          queued to the loop instead.
// mt2/mt4: the same coroutines on a pool of W threads, each job resumed inside a scope. The
//          `cochan_spmc` / `cochan_mpmc` rows use the default resumption: a woken consumer runs
//          on the worker that woke it, after the waker suspends (Tokio's LIFO slot does much the
//          same); `cochan_spmc_posted` uses `.resume_on(pool)` on every operation, so a woken
//          consumer is queued to the pool and any worker may run it.
// plain:   `cochan_spmc_plain`: the loop or pool resumes each task with no scope (what a
//          runtime that knows nothing of cochan does), default resumption.
// runtime: `cochan_spmc_runtime` (mt2/mt4): cochan::thread_pool (cochan/runtime.hpp) with its
//          defaults, default resumption.
#include "ecosystem.hpp"

#include "../common/channels.hpp"
#include "../common/cochan_tasks.hpp"

#include <cochan/runtime.hpp>

#include <coroutine>
#include <cstdint>
#include <utility>
#include <vector>

namespace bench::eco {
namespace {

/// Which of the four channels: SPMC/MPMC, bounded (capacity 64) or unbounded.
template <bool Multi, bool Bounded> struct channel {
    static constexpr bool multi = Multi;
    static constexpr bool bounded = Bounded;
    static auto make() { return make_channel<Multi, Bounded>(); }
};

/// `current`: tasks are started through the loop's queue, then resume each other inline.
struct current_runtime {
    explicit current_runtime(unsigned, bool scoped = true) : loop(scoped) {}
    void post(std::coroutine_handle<> h) { loop.post(h); }
    resume_inline poster() { return {}; }
    void run(completion& done) {
        loop.run_all();
        if (!done.done()) fatal("cochan current: the loop ran dry with tasks still waiting");
    }
    event_loop loop; // resumes each task inside a cochan::resumption_scope if `scoped`
};

/// `current` with `.resume_on(loop)`: wake-ups go through the loop's queue too.
struct current_posted_runtime : current_runtime {
    using current_runtime::current_runtime;
    auto poster() { return loop.executor(); }
};

/// `mt`: tasks are posted to the pool; wake-ups use the default resumption, on the waker's
/// worker inside its scope.
struct pool_runtime {
    explicit pool_runtime(unsigned workers) : pool(workers, mt_pool_options) {}
    void post(std::coroutine_handle<> h) { pool.post(h); }
    resume_inline poster() { return {}; }
    void run(completion& done) { done.wait("cochan mt"); }
    cochan_test::thread_pool pool;
};

/// `mt` with `.resume_on(pool)`: every wake-up goes back through the pool.
struct pool_posted_runtime : pool_runtime {
    using pool_runtime::pool_runtime;
    auto poster() { return pool.executor(); }
};

/// `plain`: what a runtime that knows nothing of cochan does. `current`: the benchmark thread's
/// loop resumes each task with no scope; `mt`: a pool of one locked FIFO whose idle workers
/// sleep at once, no scope (cochan_test::thread_pool without options). Default resumption.
struct current_plain_runtime : current_runtime {
    explicit current_plain_runtime(unsigned w) : current_runtime(w, false) {}
};
struct pool_plain_runtime {
    explicit pool_plain_runtime(unsigned workers)
        : pool(workers, {.spin_rounds = 0, .resumption_scope = false}) {}
    void post(std::coroutine_handle<> h) { pool.post(h); }
    resume_inline poster() { return {}; }
    void run(completion& done) { done.wait("cochan plain mt"); }
    cochan_test::thread_pool pool;
};

/// `runtime`: cochan's own pool (cochan/runtime.hpp) with its defaults; tasks handed to
/// `schedule`, default resumption: its workers resume each task in `resumption_scope(pool)`,
/// so a woken coroutine goes back to the pool (the waking worker's queue, which an idle worker
/// takes from), as a `cochan::job`'s does through its promise.
struct cochan_pool_runtime {
    explicit cochan_pool_runtime(unsigned workers) : pool(workers) {}
    void post(std::coroutine_handle<> h) { pool.schedule(h); }
    resume_inline poster() { return {}; }
    void run(completion& done) { done.wait("cochan runtime"); }
    cochan::thread_pool pool;
};

template <class Channel, class Runtime> class cochan_case {
  public:
    cochan_case(queue_kind, topology t, unsigned workers) : topo_(t), rt_(workers) {}

    void prepare(tallies& t) {
        handles_.clear();
        done_.reset(topo_.producers + topo_.consumers);
        auto [tx, rx] = Channel::make();
        // Consumers first, so they are waiting when the producer starts (as in every peer).
        for (unsigned c = 0; c < topo_.consumers; ++c)
            handles_.push_back(consumer(rx, t[c], rt_.poster(), done_).handle());
        if constexpr (Channel::multi) {
            for (unsigned p = 0; p < topo_.producers; ++p) {
                handles_.push_back(producer<Channel::bounded>(tx, topo_.first(p), topo_.last(p),
                                                              rt_.poster(), done_)
                                       .handle());
            }
        } else {
            // SPMC: the one producer takes the move-only sender.
            if (topo_.producers != 1) fatal("cochan SPMC: one producer only");
            handles_.push_back(producer<Channel::bounded>(std::move(tx), topo_.first(0),
                                                          topo_.last(0), rt_.poster(), done_)
                                   .handle());
        }
        // tx and rx (this function's copies) are dropped here, before the timed region.
    }

    void run() {
        for (std::coroutine_handle<> h : handles_) rt_.post(h);
        rt_.run(done_);
    }

  private:
    topology topo_;
    Runtime rt_;
    completion done_;
    std::vector<std::coroutine_handle<>> handles_;
};

template <bool Multi, bool Bounded, class Runtime>
void add_case(queue_kind q, const runtime& rt, const char* impl, topology t) {
    add<cochan_case<channel<Multi, Bounded>, Runtime>>(q, rt, impl, t);
}

template <class Runtime> void add_runtime(queue_kind q, const runtime& rt) {
    const bool b = q == queue_kind::bounded;
    for (const topology& t : topologies()) {
        if (t.producers == 1) {
            if (b)
                add_case<false, true, Runtime>(q, rt, "cochan_spmc", t);
            else
                add_case<false, false, Runtime>(q, rt, "cochan_spmc", t);
        }
        if (b)
            add_case<true, true, Runtime>(q, rt, "cochan_mpmc", t);
        else
            add_case<true, false, Runtime>(q, rt, "cochan_mpmc", t);
    }
}

/// One SPMC case of `impl` (a one-producer topology) on `Runtime`.
template <class Runtime>
void add_spmc(queue_kind q, const runtime& rt, const char* impl, topology t) {
    if (q == queue_kind::bounded)
        add_case<false, true, Runtime>(q, rt, impl, t);
    else
        add_case<false, false, Runtime>(q, rt, impl, t);
}

} // namespace

void register_cochan() {
    for (queue_kind q : queue_kinds) {
        for (const runtime& rt : coroutine_runtimes) {
            if (rt.workers == 0)
                add_runtime<current_runtime>(q, rt);
            else
                add_runtime<pool_runtime>(q, rt);
        }
        for (const runtime& rt : coroutine_runtimes) {
            for (const topology& t : topologies()) {
                if (t.producers != 1) continue;
                if (rt.workers == 0) {
                    add_spmc<current_posted_runtime>(q, rt, "cochan_spmc_posted", t);
                    add_spmc<current_plain_runtime>(q, rt, "cochan_spmc_plain", t);
                } else {
                    add_spmc<pool_posted_runtime>(q, rt, "cochan_spmc_posted", t);
                    add_spmc<pool_plain_runtime>(q, rt, "cochan_spmc_plain", t);
                    add_spmc<cochan_pool_runtime>(q, rt, "cochan_spmc_runtime", t);
                }
            }
        }
    }
}

} // namespace bench::eco

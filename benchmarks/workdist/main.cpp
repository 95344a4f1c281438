// cochan_workdist: competing consumers doing real work (benchmarks/README.md, "Work
// distribution"). One producer sends the values 1..N into a channel; C consumers each receive
// and burn W µs of CPU per value; the setups run that on P threads. Each sample is preceded by
// its control (workdist/work.hpp): the same N x W µs on P OS threads with no channel.
//
// Cases: workdist/<bounded|unbounded>/p<P>/<setup>/c<C>/w<W>. Counters beside the harness's
// consumer_threads and cpu_per_wall: ideal_ms (N x W / P), control_ms (the control's mean wall
// time) and vs_control (control wall / case wall over the repetition).
//
// --workdist_quick (before Google Benchmark's flags): N / 20, for smoke runs.
#include "work.hpp"

#include "../common/channels.hpp"
#include "../common/cochan_tasks.hpp"
#include "../common/fibers.hpp"
#include "../common/os_queues.hpp"

#include <cochan/runtime.hpp>

#include <boost/fiber/algo/work_stealing.hpp>

#include <algorithm>
#include <cmath>
#include <coroutine>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace bench::wd {
namespace {

/// Calibrated at start-up (main).
double iterations_per_us = 0;
/// Items per case are divided by this (20 with --workdist_quick).
std::uint64_t scale_down = 1;

struct params {
    queue_kind queue;
    unsigned workers;   // P
    unsigned consumers; // C
    unsigned work_us;   // W
    std::uint64_t items() const {
        // 20, 50 or 100 ms of work at P = 1 (and as much again for the control): many items where
        // the channel matters, fewer where the work does.
        const std::uint64_t n = work_us <= 1 ? 20000 : work_us <= 10 ? 5000 : 1000;
        return n / scale_down;
    }
    busy_work work() const {
        return {static_cast<std::uint64_t>(std::llround(iterations_per_us * work_us))};
    }
    bool bounded() const { return queue == queue_kind::bounded; }
};

/// One setup running one case: `prepare` untimed, `run` timed (benchmarks/common/harness.hpp).
class runner {
  public:
    virtual ~runner() = default;
    virtual void prepare(tallies& t) = 0;
    virtual void run() = 0;
};

// ---- cochan on a plain thread pool -------------------------------------------------------------

/// How the cochan setups resume coroutines.
enum class cochan_mode {
    plain,     // the pool resumes each handle, nothing else: what a new user writes
    scope,     // the pool resumes each handle inside cochan::resume_in_scope
    resume_on, // the plain pool, and `.resume_on(pool)` on every send and receive
};

/// The pool: cochan_test::thread_pool with its defaults (one locked FIFO of coroutine handles, P
/// threads that pop and resume, idle ones sleep on a condition variable at once), with
/// cochan::resume_in_scope around each resume in `scope` mode. No spinning: the benchmarks'
/// spinning pool (harness.hpp, mt_pool_options) is not what a user writes.
template <bool Bounded, cochan_mode Mode> class cochan_runner final : public runner {
  public:
    explicit cochan_runner(const params& p)
        : p_(p),
          pool_(p.workers, {.spin_rounds = 0, .resumption_scope = Mode == cochan_mode::scope}) {}

    void prepare(tallies& t) override {
        handles_.clear();
        done_.reset(p_.consumers + 1);
        auto [tx, rx] = make_channel<false, Bounded>();
        for (unsigned c = 0; c < p_.consumers; ++c)
            handles_.push_back(consumer(rx, t[c], poster(), done_, p_.work()).handle());
        handles_.push_back(
            producer<Bounded>(std::move(tx), 0, p_.items(), poster(), done_).handle());
    }

    void run() override {
        for (std::coroutine_handle<> h : handles_) pool_.post(h);
        done_.wait("workdist cochan");
    }

  private:
    auto poster() {
        if constexpr (Mode == cochan_mode::resume_on)
            return pool_.executor();
        else
            return resume_inline{};
    }

    params p_;
    completion done_;
    std::vector<std::coroutine_handle<>> handles_;
    cochan_test::thread_pool pool_; // last: drained and joined first
};

/// cochan's own pool (include/cochan/runtime.hpp), with its defaults: the same tasks, handed to
/// `cochan::thread_pool::schedule`, default resumption. Its workers resume every task inside
/// `resumption_scope(pool)`, so a woken consumer goes back to the pool (the waking worker's own
/// queue, where an idle worker takes it), as a `cochan::job`'s would through its promise.
template <bool Bounded> class cochan_runtime_runner final : public runner {
  public:
    explicit cochan_runtime_runner(const params& p) : p_(p), pool_(p.workers) {}

    void prepare(tallies& t) override {
        handles_.clear();
        done_.reset(p_.consumers + 1);
        auto [tx, rx] = make_channel<false, Bounded>();
        for (unsigned c = 0; c < p_.consumers; ++c)
            handles_.push_back(consumer(rx, t[c], resume_inline{}, done_, p_.work()).handle());
        handles_.push_back(
            producer<Bounded>(std::move(tx), 0, p_.items(), resume_inline{}, done_).handle());
    }

    void run() override {
        for (std::coroutine_handle<> h : handles_) pool_.schedule(h);
        done_.wait("workdist cochan runtime");
    }

  private:
    params p_;
    completion done_;
    std::vector<std::coroutine_handle<>> handles_;
    cochan::thread_pool pool_; // last: joined first
};

std::unique_ptr<runner> cochan_runtime(const params& p) {
    if (p.bounded()) return std::make_unique<cochan_runtime_runner<true>>(p);
    return std::make_unique<cochan_runtime_runner<false>>(p);
}

template <cochan_mode Mode> std::unique_ptr<runner> cochan_on_pool(const params& p) {
    if (p.bounded()) return std::make_unique<cochan_runner<true, Mode>>(p);
    return std::make_unique<cochan_runner<false, Mode>>(p);
}

// ---- Boost.Fiber -------------------------------------------------------------------------------

void use_work_stealing(unsigned workers) {
    boost::fibers::use_scheduling_algorithm<boost::fibers::algo::work_stealing>(workers, true);
}

/// Boost's work_stealing keeps a process-wide registry sized by its first group (a static
/// barrier and call_once in its constructor): one group per process, so one pool of
/// hardware_concurrency threads, made on first use and kept until main() destroys it (at exit,
/// the main thread's fiber context would already be gone).
std::unique_ptr<fibers::fiber_pool> work_stealing;

fibers::fiber_pool& work_stealing_pool(unsigned workers) {
    if (!work_stealing)
        work_stealing = std::make_unique<fibers::fiber_pool>(workers, use_work_stealing);
    return *work_stealing;
}

/// The producer and C consumers as fibers on P threads: `buffered_channel` of capacity 64 (63
/// in flight) or, unbounded, the next power of two above N (sends never wait).
class fiber_runner final : public runner {
  public:
    fiber_runner(const params& p, std::unique_ptr<fibers::fiber_pool> own, fibers::fiber_pool& pool)
        : p_(p), pool_(&pool), own_(std::move(own)) {}

    void prepare(tallies& t) override {
        std::size_t capacity = 64;
        if (!p_.bounded()) {
            while (capacity <= p_.items()) capacity *= 2;
        }
        ch_ = std::make_unique<fibers::channel>(capacity);
        producers_left_.store(1, std::memory_order_relaxed);
        gate_ = std::make_unique<fibers::gate>();
        done_.reset(p_.consumers + 1);
        std::vector<std::function<void()>> bodies;
        for (unsigned c = 0; c < p_.consumers; ++c)
            bodies.emplace_back([this, &t, c] { fibers::consume(*ch_, t[c], p_.work()); });
        bodies.emplace_back([this] { fibers::produce(*ch_, 0, p_.items(), producers_left_); });
        pool_->launch_gated(std::move(bodies), *gate_, done_);
    }

    void run() override {
        gate_->open();
        done_.wait("workdist boost.fiber");
    }

  private:
    params p_;
    std::unique_ptr<fibers::channel> ch_;
    std::atomic<unsigned> producers_left_{0};
    std::unique_ptr<fibers::gate> gate_;
    completion done_;
    fibers::fiber_pool* pool_;
    std::unique_ptr<fibers::fiber_pool> own_; // last: joined first
};

std::unique_ptr<runner> fiber_shared_work(const params& p) {
    auto own = std::make_unique<fibers::fiber_pool>(p.workers, fibers::use_shared_work);
    fibers::fiber_pool& pool = *own;
    return std::make_unique<fiber_runner>(p, std::move(own), pool);
}

std::unique_ptr<runner> fiber_work_stealing(const params& p) {
    return std::make_unique<fiber_runner>(p, nullptr, work_stealing_pool(p.workers));
}

// ---- OS threads: one producer thread and C consumer threads ------------------------------------

/// What a user of an OS-thread queue writes: one thread per consumer (C + 1 threads, made once
/// per case), scheduled by the OS on every core whatever P.
template <class Queue> class threads_runner final : public runner {
  public:
    explicit threads_runner(const params& p) : p_(p), gang_(p.consumers + 1) {
        gang_.set_role([this](unsigned i) {
            if (i == 0)
                produce();
            else
                consume(i - 1);
        });
    }

    void prepare(tallies& t) override {
        q_.emplace(p_);
        tallies_ = &t;
    }

    void run() override { gang_.run("workdist os threads"); }

  private:
    void produce() {
        for (std::uint64_t v = 1; v <= p_.items(); ++v) q_->push(v);
        q_->close();
    }

    void consume(unsigned c) {
        tally& t = (*tallies_)[c];
        const busy_work work = p_.work();
        for (std::optional<std::uint64_t> v = q_->pop(c); v; v = q_->pop(c)) {
            t.add(*v);
            work(*v);
        }
    }

    params p_;
    std::optional<Queue> q_;
    tallies* tallies_ = nullptr;
    thread_gang gang_; // last: joined before the members its threads use are destroyed
};

/// moodycamel's BlockingConcurrentQueue (bounded: with its semaphore of 64 slots); the close
/// is one end marker per consumer (one producer: FIFO, so every value is taken first).
class moodycamel_closable {
  public:
    explicit moodycamel_closable(const params& p)
        : q_(p.bounded(), 1, p.consumers), consumers_(p.consumers) {}
    void push(std::uint64_t v) { q_.push(0, v); }
    void close() {
        for (unsigned c = 0; c < consumers_; ++c) q_.push(0, end_marker);
    }
    std::optional<std::uint64_t> pop(unsigned c) {
        const std::uint64_t v = q_.pop(c);
        if (v == end_marker) return std::nullopt;
        return v;
    }

  private:
    moodycamel_queue q_;
    unsigned consumers_;
};

/// std::mutex + std::condition_variable + std::deque (bounded: capacity 64).
class locked_closable {
  public:
    explicit locked_closable(const params& p) : q_(p.bounded() ? bounded_capacity : SIZE_MAX) {}
    void push(std::uint64_t v) { q_.push(v); }
    void close() { q_.close(); }
    std::optional<std::uint64_t> pop(unsigned) {
        std::uint64_t v = 0;
        if (!q_.pop(v)) return std::nullopt;
        return v;
    }

  private:
    locked_queue q_;
};

template <class Queue> std::unique_ptr<runner> on_threads(const params& p) {
    return std::make_unique<threads_runner<Queue>>(p);
}

// ---- The setups --------------------------------------------------------------------------------

/// On which P rows a setup runs.
enum class rows {
    every_p,   // P = 1 and P = hardware_concurrency
    hw_only,   // P = hardware_concurrency only
    os_threads // its own C + 1 OS threads, listed on the P = hardware_concurrency row
};

struct setup {
    const char* name;
    rows on;
    std::unique_ptr<runner> (*make)(const params&);
};

/// One line per setup (benchmarks/README.md, "Work distribution", says which is what).
const setup setups[] = {
    {"cochan_plain", rows::every_p, cochan_on_pool<cochan_mode::plain>},
    {"cochan_scope", rows::every_p, cochan_on_pool<cochan_mode::scope>},
    {"cochan_resume_on", rows::every_p, cochan_on_pool<cochan_mode::resume_on>},
    {"cochan_runtime", rows::every_p, cochan_runtime},
    {"fiber_shared_work", rows::every_p, fiber_shared_work},
    {"fiber_work_stealing", rows::hw_only, fiber_work_stealing},
    {"moodycamel", rows::os_threads, on_threads<moodycamel_closable>},
    {"mutex_deque", rows::os_threads, on_threads<locked_closable>},
};

/// A setup's runner with the control before each sample, and the case's counters.
class measured_case {
  public:
    measured_case(const setup& s, const params& p)
        : p_(p), control_(p.workers), runner_(s.make(p)) {}

    void prepare(tallies& t) {
        control_total_ += control_.run(p_.items(), p_.work());
        ++samples_;
        runner_->prepare(t);
    }
    void run() { runner_->run(); }

    void add_counters(benchmark::State& state, double wall_total) {
        const auto n = static_cast<double>(p_.items());
        state.counters["ideal_ms"] = n * p_.work_us / p_.workers / 1000.0;
        state.counters["control_ms"] = control_total_ / static_cast<double>(samples_) * 1000.0;
        state.counters["vs_control"] = wall_total > 0 ? control_total_ / wall_total : 0.0;
        state.counters["items"] = n;
    }

  private:
    params p_;
    control control_;
    double control_total_ = 0;
    std::int64_t samples_ = 0;
    std::unique_ptr<runner> runner_;
};

void register_all() {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    std::vector<unsigned> workers{1};
    if (hw > 1) workers.push_back(hw);
    for (unsigned w : {1u, 10u, 100u}) {
        for (unsigned p : workers) {
            for (queue_kind q : {queue_kind::bounded, queue_kind::unbounded}) {
                for (unsigned c : {2u, 8u}) {
                    for (const setup& s : setups) {
                        if (s.on != rows::every_p && p != hw) continue;
                        const params prm{q, p, c, w};
                        const std::string name = std::string("workdist/") + bench::name(q) + "/p" +
                                                 std::to_string(p) + "/" + s.name + "/c" +
                                                 std::to_string(c) + "/w" + std::to_string(w);
                        benchmark::RegisterBenchmark(name.c_str(),
                                                     [&s, prm](benchmark::State& state) {
                                                         measured_case mc(s, prm);
                                                         measure(state, mc, prm.consumers,
                                                                 prm.items());
                                                     })
                            ->UseManualTime()
                            ->Unit(benchmark::kMillisecond);
                    }
                }
            }
        }
    }
}

} // namespace
} // namespace bench::wd

int main(int argc, char** argv) {
    // Our one flag, taken out before Google Benchmark sees the arguments.
    int kept = 1;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--workdist_quick") == 0)
            bench::wd::scale_down = 20;
        else
            argv[kept++] = argv[i];
    }
    argc = kept;
    bench::wd::iterations_per_us = bench::wd::calibrate_iterations_per_us();
    benchmark::AddCustomContext("workdist_iterations_per_us",
                                std::to_string(bench::wd::iterations_per_us));
    bench::wd::register_all();
    const int status = bench::run_main(argc, argv);
    bench::wd::work_stealing.reset();
    return status;
}

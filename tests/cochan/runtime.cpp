// The scheduler a woken coroutine goes to (its promise's, or the waking thread's scope's), and
// the shipped runtime: cochan::thread_pool and cochan::job (include/cochan/runtime.hpp).
#include <cochan/cochan.hpp>
#include <cochan/runtime.hpp>

#include "support/counted.hpp"
#include "support/task.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <coroutine>
#include <cstdint>
#include <deque>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

// A scheduler that only records: the test decides when (and whether) a handed coroutine runs.
struct recording_scheduler {
    std::deque<std::coroutine_handle<>> handed;
    void schedule(std::coroutine_handle<> h) { handed.push_back(h); }
    void run_all() {
        while (!handed.empty()) {
            auto h = handed.front();
            handed.pop_front();
            h.resume();
        }
    }
};

// An eager coroutine whose promise names a scheduler: what a runtime's task type does to be
// resumed on its own executor.
struct scheduled_task {
    struct promise_type {
        recording_scheduler* scheduler = nullptr;
        bool* finished = nullptr;
        template <class... Args>
        explicit promise_type(recording_scheduler& s, bool& done, Args&&...) noexcept
            : scheduler(&s), finished(&done) {}
        template <class Lambda, class... Args> // a lambda coroutine: its closure comes first
        promise_type(Lambda&, recording_scheduler& s, bool& done, Args&&...) noexcept
            : scheduler(&s), finished(&done) {}
        scheduled_task get_return_object() noexcept { return {}; }
        static std::suspend_never initial_suspend() noexcept { return {}; }
        static std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() const noexcept { *finished = true; }
        static void unhandled_exception() { throw; }
        cochan::scheduler_ref cochan_scheduler() const noexcept { return *scheduler; }
    };
};
static_assert(cochan::scheduling_promise<scheduled_task::promise_type>);
static_assert(!cochan::scheduling_promise<cochan_test::task<>::promise_type>);

template <class Rx>
scheduled_task receive_one(recording_scheduler&, bool&, Rx rx, std::optional<int>& got,
                           bool& woke) {
    auto r = co_await rx.recv();
    woke = true;
    if (r) got = *r;
}

} // namespace

TEST_CASE("a coroutine whose promise names a scheduler is handed to it, not resumed inline",
          "[runtime][scheduler][where-resumed]") {
    recording_scheduler s;
    bool done = false;
    bool woke = false;
    std::optional<int> got;
    auto [tx, rx] = cochan::spmc::bounded<int>(2);
    receive_one(s, done, rx, got, woke); // waits: nothing is buffered
    REQUIRE_FALSE(done);
    REQUIRE(tx.try_send(7));
    // Granted the value, but handed to its scheduler: it has not run on this thread.
    CHECK_FALSE(woke);
    REQUIRE(s.handed.size() == 1);
    s.run_all();
    CHECK(woke);
    CHECK(done);
    CHECK(got == 7);
}

TEST_CASE("every way a waiting operation is woken goes to the promise's scheduler",
          "[runtime][scheduler][where-resumed]") {
    recording_scheduler s;
    bool done = false;
    bool woke = false;
    std::optional<int> got;

    SECTION("a disconnection") {
        auto [tx, rx] = cochan::spmc::bounded<int>(2);
        receive_one(s, done, rx, got, woke);
        { auto gone = std::move(tx); }
        CHECK_FALSE(woke);
        REQUIRE(s.handed.size() == 1);
    }
    SECTION("a send admitted when a slot frees") {
        auto [tx, rx] = cochan::mpmc::bounded<int>(1);
        REQUIRE(tx.try_send(1));
        auto sender = [](recording_scheduler&, bool&, auto tx, bool& woke) -> scheduled_task {
            auto r = co_await tx.send(2);
            woke = r.has_value();
        };
        sender(s, done, tx, woke);
        REQUIRE_FALSE(done);
        REQUIRE(rx.try_recv() == 1); // frees the slot: the waiting send is admitted
        CHECK_FALSE(woke);
        REQUIRE(s.handed.size() == 1);
    }
    SECTION("a select") {
        auto [tx1, rx1] = cochan::spmc::bounded<int>(1);
        auto [tx2, rx2] = cochan::spmc::bounded<int>(1);
        auto selecting = [](recording_scheduler&, bool&, auto a, auto b,
                            bool& woke) -> scheduled_task {
            auto r = co_await cochan::select(a, b);
            woke = r.has_value();
        };
        selecting(s, done, rx1, rx2, woke);
        REQUIRE(tx2.try_send(5));
        CHECK_FALSE(woke);
        REQUIRE(s.handed.size() == 1);
    }
    SECTION("a recv_many") {
        auto [tx, rx] = cochan::spmc::unbounded<int>();
        auto batch = [](recording_scheduler&, bool&, auto rx, bool& woke) -> scheduled_task {
            std::vector<int> out;
            auto r = co_await rx.recv_many(out, 8);
            woke = r.has_value();
        };
        batch(s, done, rx, woke);
        REQUIRE(tx.send(3));
        CHECK_FALSE(woke);
        REQUIRE(s.handed.size() == 1);
    }
    SECTION("a one-shot receive") {
        auto [tx, rx] = cochan::oneshot<int>();
        auto once = [](recording_scheduler&, bool&, auto rx, bool& woke) -> scheduled_task {
            auto r = co_await rx.recv();
            woke = r.has_value();
        };
        once(s, done, std::move(rx), woke);
        REQUIRE(tx.send(4));
        CHECK_FALSE(woke);
        REQUIRE(s.handed.size() == 1);
    }
    SECTION("a stop request") {
        auto [tx, rx] = cochan::spmc::bounded<int>(1);
        cochan::default_stop_source stop;
        auto stoppable = [](recording_scheduler&, bool&, auto rx, cochan::default_stop_token t,
                            bool& woke) -> scheduled_task {
            auto r = co_await rx.recv(t);
            woke = !r.has_value();
        };
        stoppable(s, done, rx, stop.get_token(), woke);
        stop.request_stop();
        CHECK_FALSE(woke);
        REQUIRE(s.handed.size() == 1);
    }
    s.run_all();
    CHECK(woke);
    CHECK(done);
}

TEST_CASE("resume_on overrides the promise's scheduler", "[runtime][scheduler][where-resumed]") {
    recording_scheduler s;
    std::vector<std::coroutine_handle<>> posted;
    bool done = false;
    auto [tx, rx] = cochan::spmc::bounded<int>(1);
    auto waiting = [](recording_scheduler&, bool&, auto rx, auto post) -> scheduled_task {
        (void)co_await rx.recv().resume_on(post);
    };
    waiting(s, done, rx, [&posted](std::coroutine_handle<> h) { posted.push_back(h); });
    REQUIRE(tx.try_send(1));
    CHECK(s.handed.empty());
    REQUIRE(posted.size() == 1);
    posted.front().resume();
    CHECK(done);
}

TEST_CASE("a coroutine with no scheduler of its own goes to the waking thread's scope's",
          "[runtime][scheduler][scope][where-resumed]") {
    recording_scheduler s;
    auto [tx, rx] = cochan::spmc::bounded<int>(2);
    auto receive = [](auto rx, bool& woke) -> cochan_test::task<> {
        (void)co_await rx.recv();
        woke = true;
    };
    bool woke = false;
    bool second = false;
    auto consumer = receive(rx, woke);
    auto other = receive(rx, second);
    {
        cochan::resumption_scope scope(s);
        REQUIRE(tx.try_send(1));
        CHECK_FALSE(woke);
        REQUIRE(s.handed.size() == 1);
        {
            cochan::resumption_scope inner; // a plain scope keeps the outer one's scheduler
            REQUIRE(tx.try_send(2));
            CHECK_FALSE(second);
            REQUIRE(s.handed.size() == 2);
        }
    }
    // The scope handed them on: ending it ran neither on this thread.
    CHECK_FALSE(woke);
    CHECK_FALSE(second);
    s.run_all();
    CHECK(consumer.done());
    CHECK(other.done());
}

TEST_CASE("outside any scope a coroutine with no scheduler still resumes inline",
          "[runtime][scheduler][where-resumed]") {
    auto [tx, rx] = cochan::spmc::bounded<int>(2);
    bool woke = false;
    auto consumer = [](auto rx, bool& woke) -> cochan_test::task<> {
        (void)co_await rx.recv();
        woke = true;
    }(rx, woke);
    REQUIRE(tx.try_send(1));
    CHECK(woke);
    CHECK(consumer.done());
}

namespace {

cochan::job note_thread(std::atomic<std::thread::id>& where) {
    where = std::this_thread::get_id();
    co_return;
}

cochan::job ack_each(cochan::spmc::bounded_receiver<int> rx,
                     cochan::mpmc::unbounded_sender<std::thread::id> ack) {
    while (auto v = co_await rx.recv()) {
        (void)ack.send(std::this_thread::get_id());
    }
}

// Sends one value, then blocks its worker until a consumer acknowledged it: the consumer it
// woke must have run on another worker.
cochan::job send_then_block(cochan::spmc::bounded_sender<int> tx,
                            cochan::mpmc::unbounded_receiver<std::thread::id> ack,
                            std::thread::id& mine, std::thread::id& theirs, bool& acked) {
    mine = std::this_thread::get_id();
    (void)co_await tx.send(1);
    auto r = ack.blocking_recv_for(std::chrono::seconds(60));
    acked = r.has_value();
    if (acked) theirs = *r;
}

} // namespace

TEST_CASE("a job spawned on a pool runs on one of its workers", "[runtime][pool]") {
    std::atomic<std::thread::id> where{};
    {
        cochan::thread_pool pool(2);
        REQUIRE(pool.size() == 2);
        pool.spawn(note_thread(where));
        pool.join();
    }
    CHECK(where.load() != std::thread::id{});
    CHECK(where.load() != std::this_thread::get_id());
}

TEST_CASE("a consumer a busy worker wakes runs on another worker",
          "[runtime][pool][where-resumed]") {
    // With the previous default (resumed inside the producer worker's scope) the consumer could
    // only run once the producer's worker is free, which waits for the consumer: no ack.
    cochan::thread_pool pool(2);
    auto [tx, rx] = cochan::spmc::bounded<int>(4);
    auto [ack_tx, ack_rx] = cochan::mpmc::unbounded<std::thread::id>();
    pool.spawn(ack_each(rx, ack_tx));
    std::thread::id mine;
    std::thread::id theirs;
    bool acked = false;
    pool.spawn(send_then_block(std::move(tx), ack_rx, mine, theirs, acked));
    pool.join();
    REQUIRE(acked);
    CHECK(theirs != mine);
}

namespace {

cochan::job produce(cochan::spmc::bounded_sender<std::uint64_t> tx, std::uint64_t n) {
    for (std::uint64_t i = 1; i <= n; ++i) {
        auto r = co_await tx.send(i);
        if (!r) throw std::logic_error("a send failed while receivers were alive");
    }
}

cochan::job consume(cochan::spmc::bounded_receiver<std::uint64_t> rx,
                    std::atomic<std::uint64_t>& sum, std::atomic<std::uint64_t>& count,
                    std::mutex& m, std::set<std::thread::id>& threads) {
    std::uint64_t local_sum = 0;
    std::uint64_t local_count = 0;
    while (auto v = co_await rx.recv()) {
        local_sum += *v;
        ++local_count;
        std::lock_guard lock(m);
        threads.insert(std::this_thread::get_id());
    }
    sum += local_sum;
    count += local_count;
}

} // namespace

TEST_CASE("a pool delivers every value exactly once to competing jobs",
          "[runtime][pool][exactly-once]") {
    constexpr std::uint64_t n = 20000;
    const std::size_t capacity = GENERATE(std::size_t{1}, std::size_t{64});
    const std::size_t workers = GENERATE(std::size_t{1}, std::size_t{2}, std::size_t{4});
    std::atomic<std::uint64_t> sum{0};
    std::atomic<std::uint64_t> count{0};
    std::mutex m;
    std::set<std::thread::id> threads;
    {
        cochan::thread_pool pool(workers);
        auto [tx, rx] = cochan::spmc::bounded<std::uint64_t>(capacity);
        for (int c = 0; c < 8; ++c) pool.spawn(consume(rx, sum, count, m, threads));
        pool.spawn(produce(std::move(tx), n));
        { auto gone = std::move(rx); }
        pool.join();
    }
    CHECK(count == n);
    CHECK(sum == n * (n + 1) / 2);
    CHECK(threads.size() <= workers);
}

namespace {

cochan::job fail_after(cochan::spmc::bounded_receiver<int> rx) {
    (void)co_await rx.recv();
    throw std::runtime_error("job failed");
}

cochan::job spawn_children(cochan::thread_pool& pool, std::atomic<int>& ran, int depth) {
    ++ran;
    if (depth > 0) {
        pool.spawn(spawn_children(pool, ran, depth - 1));
        pool.spawn(spawn_children(pool, ran, depth - 1));
    }
    co_return;
}

cochan::job holds(cochan_test::counted_handler, bool& ran) {
    ran = true;
    co_return;
}

} // namespace

TEST_CASE("join rethrows the first exception a job exited with, once", "[runtime][pool]") {
    cochan::thread_pool pool(2);
    auto [tx, rx] = cochan::spmc::bounded<int>(1);
    pool.spawn(fail_after(rx));
    REQUIRE(tx.blocking_send(1));
    CHECK_THROWS_WITH(pool.join(), "job failed");
    CHECK_NOTHROW(pool.join());
}

TEST_CASE("join waits for the jobs that jobs spawn", "[runtime][pool]") {
    std::atomic<int> ran{0};
    cochan::thread_pool pool(2);
    pool.spawn(spawn_children(pool, ran, 6));
    pool.join();
    CHECK(ran == 127); // 2^7 - 1 jobs
}

TEST_CASE("a job never spawned never runs and frees its frame", "[runtime][pool]") {
    cochan_test::handler_counts counts; // the job's parameter, alive while its frame is
    bool ran = false;
    {
        auto j = holds(cochan_test::counted_handler(&counts), ran);
        CHECK(counts.alive == 1);
    }
    CHECK_FALSE(ran);
    CHECK(counts.alive == 0);
    cochan::thread_pool pool(1);
    pool.spawn(holds(cochan_test::counted_handler(&counts), ran));
    pool.join(); // returns once the frame, and the parameter it holds, is gone
    CHECK(ran);
    CHECK(counts.alive == 0);
}

TEST_CASE("co_await pool.schedule() continues on a worker", "[runtime][pool]") {
    cochan::thread_pool pool(1);
    std::atomic<std::thread::id> where{};
    cochan_test::completion_latch done(1);
    auto hop = [](cochan::thread_pool& pool, std::atomic<std::thread::id>& where,
                  cochan_test::completion_latch& done) -> cochan_test::detached {
        co_await pool.schedule();
        where = std::this_thread::get_id();
        done.count_down();
    };
    hop(pool, where, done);
    done.wait();
    CHECK(where.load() != std::this_thread::get_id());
}

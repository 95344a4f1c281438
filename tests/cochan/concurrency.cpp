// Threads: competing consumers on a thread pool deliver every value exactly once, in order per
// producer; the stress variant adds random stop requests and endpoint drops.
#include <cochan/cochan.hpp>

#include "support/counted.hpp"
#include "support/task.hpp"
#include "support/thread_pool.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace cochan_test;
using namespace std::chrono_literals;

namespace {

constexpr auto deadline = 60s; // a deadlock fails the test instead of hanging it

template <class Rx>
detached consume(thread_pool& pool, Rx rx, std::vector<std::uint64_t>& got,
                 completion_latch& done) {
    co_await pool.schedule();
    for (;;) {
        auto r = co_await rx.recv().resume_on(pool.executor());
        if (!r) break;
        got.push_back(*r);
    }
    done.count_down();
}

template <class Tx>
detached produce(thread_pool& pool, Tx tx, std::uint64_t first, std::uint64_t count,
                 std::atomic<int>& failures, completion_latch& done) {
    co_await pool.schedule();
    for (std::uint64_t i = first; i < first + count; ++i) {
        if constexpr (requires { tx.capacity(); }) {
            auto r = co_await tx.send(i).resume_on(pool.executor());
            if (!r) ++failures;
        } else {
            if (!tx.send(i)) ++failures;
        }
    }
    tx.close();
    done.count_down();
}

// Every consumer saw each producer's values in increasing order, and together they saw each
// value exactly once.
void check_delivery(const std::vector<std::vector<std::uint64_t>>& got, std::uint64_t producers,
                    std::uint64_t per_producer) {
    std::vector<std::uint64_t> all;
    for (const auto& seq : got) {
        std::vector<std::uint64_t> last(producers, 0);
        std::vector<bool> seen(producers, false);
        for (auto v : seq) {
            const auto p = v / per_producer;
            REQUIRE(p < producers);
            if (seen[p]) REQUIRE(v > last[p]);
            seen[p] = true;
            last[p] = v;
        }
        all.insert(all.end(), seq.begin(), seq.end());
    }
    std::sort(all.begin(), all.end());
    REQUIRE(all.size() == producers * per_producer);
    for (std::uint64_t i = 0; i < all.size(); ++i) REQUIRE(all[i] == i);
}

template <class Channel>
void run(Channel channel, std::uint64_t producers, std::uint64_t consumers,
         std::uint64_t per_producer) {
    thread_pool pool(4);
    completion_latch done(producers + consumers);
    std::atomic<int> failures{0};
    std::vector<std::vector<std::uint64_t>> got(consumers);
    {
        auto [tx, rx] = std::move(channel);
        for (std::uint64_t c = 0; c < consumers; ++c) consume(pool, rx, got[c], done);
        if constexpr (std::is_copy_constructible_v<decltype(tx)>) {
            for (std::uint64_t p = 0; p < producers; ++p) {
                produce(pool, tx, p * per_producer, per_producer, failures, done);
            }
        } else {
            produce(pool, std::move(tx), 0, per_producer, failures, done);
        }
    }
    REQUIRE(done.wait_for(deadline));
    CHECK(failures == 0);
    check_delivery(got, producers, per_producer);
}

} // namespace

TEST_CASE("SPMC 1P/8C on a thread pool delivers every value exactly once",
          "[threads][exactly-once][fifo][thread-safety]") {
    constexpr std::uint64_t n = 4096;
    SECTION("bounded(1)") {
        run(cochan::spmc::bounded<std::uint64_t>(1), 1, 8, n);
    }
    SECTION("bounded(64)") {
        run(cochan::spmc::bounded<std::uint64_t>(64), 1, 8, n);
    }
    SECTION("unbounded") {
        run(cochan::spmc::unbounded<std::uint64_t>(), 1, 8, n);
    }
}

TEST_CASE("MPMC 8P/8C on a thread pool delivers every value exactly once",
          "[threads][mpmc][exactly-once][fifo][thread-safety]") {
    constexpr std::uint64_t n = 512;
    SECTION("bounded(1)") {
        run(cochan::mpmc::bounded<std::uint64_t>(1), 8, 8, n);
    }
    SECTION("bounded(32)") {
        run(cochan::mpmc::bounded<std::uint64_t>(32), 8, 8, n);
    }
    SECTION("unbounded") {
        run(cochan::mpmc::unbounded<std::uint64_t>(), 8, 8, n);
    }
}

// ---- stress: random stop requests, receiver clones and drops, early close ------------------

namespace {

// The payload is `tracked` (support/counted.hpp): its `ledger` says where each value ended.

// Stop sources offered by operations; a chaos thread requests stops on random ones.
class chaos {
  public:
    cochan::default_stop_token maybe_offer(std::mt19937& rng) {
        if (rng() % 4 != 0) return {};
        cochan::default_stop_source s;
        if (rng() % 32 == 0) {
            // Already stopped: the operation is cancelled before it starts. This also makes
            // sure every run cancels something, however the striker thread is scheduled.
            s.request_stop();
            return s.get_token();
        }
        std::lock_guard lock(mutex_);
        if (sources_.size() > 64) sources_.erase(sources_.begin());
        sources_.push_back(s);
        return s.get_token();
    }
    void strike(std::mt19937& rng) {
        cochan::default_stop_source s;
        {
            std::lock_guard lock(mutex_);
            if (sources_.empty()) return;
            const auto i = rng() % sources_.size();
            s = sources_[i];
            sources_.erase(sources_.begin() + static_cast<std::ptrdiff_t>(i));
        }
        s.request_stop(); // outside our lock: it runs the channel's stop callback
    }

  private:
    std::mutex mutex_;
    std::vector<cochan::default_stop_source> sources_;
};

// What the chaos did, so the test can show it exercised what it claims to.
struct chaos_stats {
    std::atomic<long> cancelled_recvs{0}, cancelled_sends{0}, returned{0}, dropped{0}, received{0};
    std::atomic<long> operations{0}, clones{0}, early_drops{0}, early_closes{0};
};

struct round_env {
    chaos_stats& stats;
    thread_pool& pool;
    ledger& book;
    chaos& monkey;
    completion_latch& done; // consumers may start clones, so it can grow
    std::uint32_t seed;
};

template <class Rx> detached stress_consume(round_env& env, Rx rx, std::uint32_t seed, int depth) {
    std::mt19937 rng(seed);
    co_await env.pool.schedule();
    for (;;) {
        if (rng() % 512 == 0) { // leave early: drops this receiver clone
            ++env.stats.early_drops;
            break;
        }
        if (depth < 2 && rng() % 256 == 0) {
            ++env.stats.clones;
            env.done.count_up();
            stress_consume(env, rx, static_cast<std::uint32_t>(rng()), depth + 1); // a clone joins
        }
        auto token = env.monkey.maybe_offer(rng);
        // Not `c ? co_await a : co_await b`: g++ 12 mishandles co_await inside ?: operands.
        std::optional<cochan::recv_result<tracked>> r;
        ++env.stats.operations;
        if (rng() % 2) {
            r.emplace(co_await rx.recv(token).resume_on(env.pool.executor()));
        } else {
            r.emplace(co_await rx.recv(token));
        }
        if (*r) {
            (*r)->settle(&ledger::received);
            ++env.stats.received;
        } else if (r->error() == cochan::recv_errc::cancelled) {
            ++env.stats.cancelled_recvs;
        } else if (r->error() == cochan::recv_errc::disconnected) {
            break;
        }
    }
    { auto gone = std::move(rx); } // drop the endpoint before reporting
    env.done.count_down();
}

template <class Tx>
detached stress_produce(round_env& env, Tx tx, std::uint64_t first, std::uint64_t count,
                        std::uint32_t seed) {
    std::mt19937 rng(seed);
    co_await env.pool.schedule();
    for (std::uint64_t i = first; i < first + count; ++i) {
        if (rng() % 2048 == 0) { // close early
            ++env.stats.early_closes;
            break;
        }
        std::optional<tracked> v;
        v.emplace(env.book, i);
        for (;;) {
            ++env.stats.operations;
            if constexpr (requires { tx.capacity(); }) {
                auto token = env.monkey.maybe_offer(rng);
                std::optional<cochan::send_result<tracked>> r;
                if (rng() % 2) {
                    r.emplace(
                        co_await tx.send(std::move(*v), token).resume_on(env.pool.executor()));
                } else {
                    r.emplace(co_await tx.send(std::move(*v), token));
                }
                if (*r) break;
                if (r->error().reason == cochan::send_errc::cancelled) {
                    ++env.stats.cancelled_sends;
                    v.emplace(std::move(r->error().value)); // retry the same value
                    continue;
                }
                r->error().value.settle(&ledger::returned);
                ++env.stats.returned;
                goto out;
            } else {
                auto r = tx.send(std::move(*v));
                if (r) break;
                r.error().value.settle(&ledger::returned);
                ++env.stats.returned;
                goto out;
            }
        }
    }
out:
    tx.close();
    env.done.count_down();
}

template <class Make>
void stress_round(Make make, bool multi, std::mt19937& rng, thread_pool& pool, chaos& monkey,
                  chaos_stats& stats) {
    // Half the rounds take the largest shapes of the ecosystem workload (docs/contract.md,
    // "Benchmark method"), 1P/8C (SPMC) and 8P/8C (MPMC); the others a random shape up to that
    // size.
    const bool full = rng() % 2 == 0;
    const std::uint64_t producers = !multi ? 1 : full ? 8 : 1 + rng() % 8;
    const std::uint64_t consumers = full ? 8 : 1 + rng() % 8;
    const std::uint64_t per_producer = 64 + rng() % 512;
    ledger book(producers * per_producer);
    completion_latch done(producers + consumers);
    round_env env{stats, pool, book, monkey, done, static_cast<std::uint32_t>(rng())};
    {
        auto [tx, rx] = make();
        for (std::uint64_t c = 0; c < consumers; ++c) {
            stress_consume(env, rx, static_cast<std::uint32_t>(rng()), 0);
        }
        if constexpr (std::is_copy_constructible_v<decltype(tx)>) {
            for (std::uint64_t p = 0; p < producers; ++p) {
                stress_produce(env, tx, p * per_producer, per_producer,
                               static_cast<std::uint32_t>(rng()));
            }
        } else {
            stress_produce(env, std::move(tx), 0, per_producer, static_cast<std::uint32_t>(rng()));
        }
    }
    // Each coroutine drops its endpoint before counting down, so every value has met its fate.
    REQUIRE(done.wait_for(deadline));
    for (std::size_t id = 0; id < book.created.size(); ++id) {
        const int created = book.created[id];
        if (created == 0) continue; // never made (its producer closed early)
        const int fates = book.received[id] + book.returned[id] + book.dropped[id];
        stats.dropped += book.dropped[id];
        if (created != 1 || fates != 1) {
            FAIL("value " << id << ": created " << created << ", received " << book.received[id]
                          << ", returned " << book.returned[id] << ", dropped "
                          << book.dropped[id]);
        }
    }
}

void stress(std::chrono::seconds budget, int max_rounds) {
    thread_pool pool(4);
    chaos monkey;
    chaos_stats stats;
    std::atomic<bool> stop{false};
    std::thread striker([&] {
        std::mt19937 rng(12345);
        while (!stop.load()) {
            monkey.strike(rng);
            std::this_thread::yield();
        }
    });
    struct joiner { // also when a REQUIRE throws: a joinable thread would terminate
        std::atomic<bool>& stop;
        std::thread& t;
        ~joiner() {
            stop = true;
            t.join();
        }
    } join_striker{stop, striker};
    // COCHAN_STRESS_SEED replays the shapes and choices of a failed run (thread timing is
    // not replayed: a failure may need several tries).
    auto seed = static_cast<std::uint32_t>(std::random_device{}());
    if (const char* s = std::getenv("COCHAN_STRESS_SEED")) {
        seed = static_cast<std::uint32_t>(std::strtoul(s, nullptr, 10));
    }
    INFO("seed " << seed << " (replay the shapes with COCHAN_STRESS_SEED=" << seed << ")");
    std::mt19937 rng(seed);
    const auto end = std::chrono::steady_clock::now() + budget;
    int rounds = 0;
    while (rounds < max_rounds && std::chrono::steady_clock::now() < end) {
        switch (rng() % 4) {
        case 0:
            stress_round([&] { return cochan::spmc::bounded<tracked>(1 + rng() % 4); }, false, rng,
                         pool, monkey, stats);
            break;
        case 1:
            stress_round([] { return cochan::spmc::unbounded<tracked>(); }, false, rng, pool,
                         monkey, stats);
            break;
        case 2:
            stress_round([&] { return cochan::mpmc::bounded<tracked>(1 + rng() % 4); }, true, rng,
                         pool, monkey, stats);
            break;
        default:
            stress_round([] { return cochan::mpmc::unbounded<tracked>(); }, true, rng, pool, monkey,
                         stats);
            break;
        }
        ++rounds;
    }
    WARN("chaos: seed " << seed << ", " << rounds << " rounds, " << stats.operations
                        << " operations, " << stats.received << " values received, "
                        << stats.cancelled_recvs << " receives and " << stats.cancelled_sends
                        << " sends cancelled, " << stats.returned << " sends refused, "
                        << stats.dropped << " values destroyed by their channel, " << stats.clones
                        << " receiver clones, " << stats.early_drops << " early drops, "
                        << stats.early_closes << " early closes");
    CHECK(rounds > 0);
    CHECK(stats.received > 0);
    // Over many rounds the chaos must have cancelled operations, or it tested nothing.
    if (rounds >= 20) CHECK(stats.cancelled_recvs + stats.cancelled_sends > 0);
}

} // namespace

TEST_CASE("chaos: stop requests, clones, drops and early close lose and duplicate nothing",
          "[threads][exactly-once][thread-safety][cancellation-hand-off]") {
    stress(std::chrono::seconds(10), 200);
}

TEST_CASE("stress: the chaos test for a minute", "[.stress]") {
    long seconds = 45;
    if (const char* s = std::getenv("COCHAN_STRESS_SECONDS")) seconds = std::strtol(s, nullptr, 10);
    stress(std::chrono::seconds(seconds), 1'000'000);
}

// cochan's own stop tokens (cochan/stop_token.hpp), tested on every platform (they are always
// defined, and the default token where the standard library has no <stop_token>): a callback
// runs exactly once, inline when registered after the stop, never after its destructor
// returned, and that destructor waits for a run in progress on another thread; stop requests
// racing with registrations and deregistrations. Then every operation that takes a token,
// with cochan::stop_token and with a token type of the test's own.
#include <cochan/stop_token.hpp>

#include <cochan/cochan.hpp>

#include "support/task.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

using namespace cochan_test;

namespace {

/// Counts its runs.
struct count {
    std::atomic<int>* runs;
    void operator()() const noexcept { runs->fetch_add(1, std::memory_order_relaxed); }
};

/// A token of the test's own: a wrapper whose callback type wraps cochan::stop_callback, to
/// show that the operations take any type of the stoppable-token shape.
struct wrapped_token {
    cochan::stop_token inner;
    bool stop_requested() const noexcept { return inner.stop_requested(); }
    bool stop_possible() const noexcept { return inner.stop_possible(); }
    template <class F> struct callback_type {
        cochan::stop_callback<F> cb;
        template <class C>
        callback_type(const wrapped_token& t, C&& f) : cb(t.inner, std::forward<C>(f)) {}
    };
};

} // namespace

#if COCHAN_HAS_STD_STOP_TOKEN
static_assert(cochan::stoppable_token<std::stop_token>);
static_assert(std::is_same_v<cochan::default_stop_token, std::stop_token>);
#else
static_assert(std::is_same_v<cochan::default_stop_token, cochan::stop_token>);
#endif
static_assert(cochan::stoppable_token<cochan::stop_token>);
static_assert(cochan::stoppable_token<wrapped_token>);
static_assert(!cochan::stoppable_token<int>);
static_assert(!cochan::stoppable_token<cochan::stop_source>);

TEST_CASE("cochan::stop_source and stop_token: requests, copies, possibility", "[stop-token]") {
    cochan::stop_token none;
    CHECK_FALSE(none.stop_possible());
    CHECK_FALSE(none.stop_requested());
    cochan::stop_source no_state(cochan::nostopstate);
    CHECK_FALSE(no_state.stop_possible());
    CHECK_FALSE(no_state.request_stop());
    CHECK(no_state.get_token() == none);

    cochan::stop_source src;
    cochan::stop_token tok = src.get_token();
    CHECK(tok.stop_possible());
    CHECK_FALSE(tok.stop_requested());
    cochan::stop_source copy = src;
    CHECK(copy == src);
    CHECK(copy.get_token() == tok);
    CHECK(copy.request_stop());
    CHECK_FALSE(src.request_stop()); // the first request wins, from any copy
    CHECK(tok.stop_requested());
    CHECK(src.stop_requested());

    // Once every source is gone, a token that was never stopped can never be.
    cochan::stop_token orphan;
    {
        cochan::stop_source a;
        orphan = cochan::stop_source(a).get_token(); // a copy, gone before `a`
    }
    CHECK_FALSE(orphan.stop_possible());
    std::atomic<int> runs{0};
    { cochan::stop_callback cb(orphan, count{&runs}); }
    CHECK(runs == 0);
    // A stopped one stays possible (and stopped).
    { cochan::stop_source gone = std::move(src); }
    copy = cochan::stop_source(cochan::nostopstate);
    CHECK(tok.stop_requested());
    CHECK(tok.stop_possible());
}

TEST_CASE("cochan::stop_callback: runs once on request_stop, inline if registered after it, "
          "never once destroyed",
          "[stop-token]") {
    cochan::stop_source src;
    std::atomic<int> a{0}, b{0}, gone{0};
    cochan::stop_callback<count> cb_a(src.get_token(), count{&a});
    std::optional<cochan::stop_callback<count>> cb_gone;
    cb_gone.emplace(src.get_token(), count{&gone});
    cochan::stop_callback<count> cb_b(src.get_token(), count{&b});
    cb_gone.reset(); // deregistered before the stop: never runs
    CHECK(src.request_stop());
    CHECK(a == 1);
    CHECK(b == 1);
    CHECK(gone == 0);
    CHECK_FALSE(src.request_stop());
    CHECK(a == 1); // exactly once

    std::atomic<int> late{0};
    const auto here = std::this_thread::get_id();
    std::thread::id ran_on;
    {
        cochan::stop_callback cb(src.get_token(), [&]() noexcept {
            ran_on = std::this_thread::get_id();
            late.fetch_add(1);
        });
        CHECK(late == 1); // inline, in the constructor
    }
    CHECK(late == 1);
    CHECK(ran_on == here);
}

TEST_CASE("cochan::stop_callback: a callback may destroy itself, or the last source, while it "
          "runs",
          "[stop-token]") {
    auto src = std::make_unique<cochan::stop_source>();
    std::atomic<int> runs{0};
    std::optional<cochan::stop_callback<std::function<void()>>> self;
    self.emplace(src->get_token(), [&] {
        runs.fetch_add(1);
        self.reset(); // does not wait for itself
    });
    std::unique_ptr<cochan::stop_source> owner;
    cochan::stop_callback kill(src->get_token(), [&]() noexcept { owner.reset(); });
    cochan::stop_source* raw = src.get();
    owner = std::move(src);
    CHECK(raw->request_stop()); // the callbacks destroy the source it was called on
    CHECK(runs == 1);
    CHECK_FALSE(self.has_value());
    CHECK(owner == nullptr);
}

TEST_CASE("cochan::stop_callback: the destructor waits for a run in progress on another thread",
          "[stop-token][thread-safety]") {
    for (int round = 0; round < 20; ++round) {
        cochan::stop_source src;
        std::atomic<bool> started{false}, finished{false};
        auto cb =
            std::make_unique<cochan::stop_callback<std::function<void()>>>(src.get_token(), [&] {
                started.store(true);
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
                finished.store(true);
            });
        std::thread requester([&] { src.request_stop(); });
        while (!started.load()) std::this_thread::yield();
        cb.reset(); // must not return while the callback runs on `requester`
        CHECK(finished.load());
        requester.join();
    }
}

TEST_CASE("cochan::stop_token: a request from another thread while callbacks register and "
          "deregister runs each exactly once, or never once deregistered",
          "[stop-token][thread-safety]") {
    constexpr int rounds = 300;
    for (int round = 0; round < rounds; ++round) {
        cochan::stop_source src;
        std::atomic<bool> go{false};
        bool first = false;
        std::thread requester([&] {
            while (!go.load()) std::this_thread::yield();
            for (int i = 0; i < round % 7; ++i) std::this_thread::yield();
            first = src.request_stop(); // no Catch2 assertion off the test's thread
        });
        constexpr int n = 16;
        std::vector<std::atomic<int>> kept(n), dropped(n);
        std::vector<int> seen_at_drop(n);
        std::vector<std::unique_ptr<cochan::stop_callback<count>>> keep;
        go.store(true);
        for (int i = 0; i < n; ++i) {
            keep.push_back(
                std::make_unique<cochan::stop_callback<count>>(src.get_token(), count{&kept[i]}));
            { cochan::stop_callback<count> brief(src.get_token(), count{&dropped[i]}); }
            seen_at_drop[i] = dropped[i].load(); // final: nothing runs it after its destructor
        }
        requester.join();
        CHECK(first);
        for (int i = 0; i < n; ++i) {
            CHECK(kept[i] == 1); // registered before the stop (run by it) or after (inline)
            CHECK(dropped[i] <= 1);
            CHECK(dropped[i] == seen_at_drop[i]);
        }
    }
}

TEST_CASE("cochan::stop_token: concurrent requests run every callback once",
          "[stop-token][thread-safety]") {
    for (int round = 0; round < 100; ++round) {
        cochan::stop_source src;
        std::vector<std::atomic<int>> runs(8);
        std::vector<std::unique_ptr<cochan::stop_callback<count>>> cbs;
        cbs.reserve(runs.size());
        for (auto& r : runs) {
            cbs.push_back(
                std::make_unique<cochan::stop_callback<count>>(src.get_token(), count{&r}));
        }
        std::atomic<int> firsts{0};
        std::vector<std::thread> threads;
        threads.reserve(3);
        for (int t = 0; t < 3; ++t) {
            threads.emplace_back([&, copy = src]() mutable {
                if (copy.request_stop()) firsts.fetch_add(1);
            });
        }
        for (auto& t : threads) t.join();
        CHECK(firsts == 1);
        for (auto& r : runs) CHECK(r == 1);
    }
}

// ---- channel operations with cochan::stop_token and with a token of the test's own ----------

namespace {

template <class Rx, class Token> task<int> recv_with(Rx& rx, Token token) {
    auto r = co_await rx.recv(std::move(token));
    co_return r ? *r : -static_cast<int>(r.error());
}
template <class Tx, class Token> task<int> send_with(Tx& tx, int v, Token token) {
    auto r = co_await tx.send(v, std::move(token));
    co_return r ? 0 : -static_cast<int>(r.error().reason);
}
template <class Rx, class Token> task<int> recv_many_with(Rx& rx, Token token) {
    std::vector<int> out;
    auto r = co_await rx.recv_many(out, 4, std::move(token));
    co_return r ? static_cast<int>(*r) : -static_cast<int>(r.error());
}
template <class Token, class A, class B> task<int> select_with(Token token, A& a, B& b) {
    auto r = co_await cochan::select(std::move(token), a, b);
    co_return r ? static_cast<int>(r->index()) : -static_cast<int>(r.error());
}

template <class Token> Token token_of(cochan::stop_source& src) {
    if constexpr (std::is_same_v<Token, wrapped_token>) {
        return wrapped_token{src.get_token()};
    } else {
        return src.get_token();
    }
}

constexpr int cancelled = -static_cast<int>(cochan::recv_errc::cancelled);
constexpr int send_cancelled = -static_cast<int>(cochan::send_errc::cancelled);

} // namespace

TEMPLATE_TEST_CASE("every operation that takes a token takes cochan::stop_token and a token of "
                   "its own shape",
                   "[stop-token][cancellation-hand-off]", cochan::stop_token, wrapped_token) {
    using Token = TestType;
    auto [tx, rx] = cochan::mpmc::bounded<int>(1);
    auto [tx2, rx2] = cochan::spmc::unbounded<int>();

    // Waiting, then granted a value; waiting, then stopped.
    cochan::stop_source src;
    auto r = recv_with(rx, token_of<Token>(src));
    REQUIRE(tx.try_send(1));
    CHECK(r.result() == 1);
    auto m = recv_many_with(rx, token_of<Token>(src));
    auto s = select_with(token_of<Token>(src), rx, rx2);
    CHECK_FALSE(m.done());
    CHECK_FALSE(s.done());
    src.request_stop();
    CHECK(m.result() == cancelled);
    CHECK(s.result() == cancelled);

    cochan::stop_source src2;
    REQUIRE(tx.try_send(2));
    auto w = send_with(tx, 3, token_of<Token>(src2)); // waits: the channel is full
    CHECK_FALSE(w.done());
    src2.request_stop();
    CHECK(w.result() == send_cancelled);

    // Already stopped: cancelled without touching the channel.
    CHECK(recv_with(rx, token_of<Token>(src)).result() == cancelled);
    CHECK(recv_many_with(rx, token_of<Token>(src)).result() == cancelled);
    CHECK(select_with(token_of<Token>(src), rx, rx2).result() == cancelled);
    CHECK(send_with(tx, 4, token_of<Token>(src)).result() == send_cancelled);
    CHECK(rx.blocking_recv(token_of<Token>(src)).error() == cochan::recv_errc::cancelled);
    CHECK(tx.blocking_send(5, token_of<Token>(src)).error().reason == cochan::send_errc::cancelled);
    CHECK(*rx.try_recv() == 2);

    // A blocking receive cancelled from another thread.
    cochan::stop_source later;
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        later.request_stop();
    });
    CHECK(rx.blocking_recv(token_of<Token>(later)).error() == cochan::recv_errc::cancelled);
    stopper.join();

    // A one-shot.
    auto [otx, orx] = cochan::oneshot<int>();
    cochan::stop_source once;
    auto o = recv_with(orx, token_of<Token>(once));
    once.request_stop();
    CHECK(o.result() == cancelled);
    CHECK(orx.blocking_recv(token_of<Token>(once)).error() == cochan::recv_errc::cancelled);
    (void)otx;
    (void)tx2;
}

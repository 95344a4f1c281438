// graceful_shutdown: how work stops without losing any of it. Three scenes on one thread, each
// printed step by step:
//
//   1. Close and drain: a producer sends four values and close()s its sender; two consumers
//      still receive all four, then each sees `disconnected`.
//   2. Stop tokens: a stop request cancels a waiting receive (`recv_errc::cancelled`) and the
//      value it would have taken goes to the next consumer in line. A stop request that comes
//      after a value was granted changes nothing: the value is delivered.
//   3. The last receiver leaves while a sender waits on a full channel: the sender gets
//      `disconnected` and its value back; the channel destroys the value it still buffered.
//
// Every value is accounted for: sent == received + handed back + destroyed with the channel
// (only scene 3's buffered value, which nobody was left to receive). Exits 0 only when every
// expected outcome happened.
//
//   usage: graceful_shutdown
#include <cochan/spmc.hpp>

#include <coroutine>
#include <cstdio>
#include <deque>
#include <exception>
#include <memory>
#include <optional>
#include <stop_token>
#include <utility>

namespace {

// Fire-and-forget coroutine: starts running when called and frees itself when it finishes.
struct detached {
    struct promise_type {
        detached get_return_object() noexcept { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { std::terminate(); }
    };
};

// A single-threaded run queue. With `.resume_on(loop.poster())` a woken coroutine is queued
// here instead of running at once inside the call that woke it; loop.run() then resumes the
// queued coroutines in order. That keeps every scene below in a fixed, readable order.
class run_queue {
  public:
    auto poster() {
        return [this](std::coroutine_handle<> h) { ready_.push_back(h); };
    }
    // `co_await loop.yield()`: go to the back of the queue and let the others run.
    auto yield() {
        struct awaiter {
            run_queue* loop;
            bool await_ready() const noexcept { return false; }
            void await_suspend(std::coroutine_handle<> h) const { loop->ready_.push_back(h); }
            void await_resume() const noexcept {}
        };
        return awaiter{this};
    }
    void run() { // returns when nothing is runnable: every coroutine finished or waits
        while (!ready_.empty()) {
            const auto h = ready_.front();
            ready_.pop_front();
            h.resume();
        }
    }

  private:
    std::deque<std::coroutine_handle<>> ready_;
};

// Where every value went (`sent`: every value given to a send), and which expected outcomes
// did not happen.
struct ledger {
    int sent = 0, received = 0, handed_back = 0, destroyed_by_channel = 0, failures = 0;
    void expect(bool ok, const char* what) {
        std::printf("   %s %s\n", ok ? "ok:" : "FAILED:", what);
        failures += ok ? 0 : 1;
    }
};

// ---- 1. Close and drain -----------------------------------------------------------------------

struct consumer_state {
    int received = 0;
    std::optional<cochan::recv_errc> ended_with; // why its last receive produced no value
};

// [example-begin]
// The producer sends, then close()s: nothing more can be sent, but what is buffered stays.
detached producer(cochan::spmc::bounded_sender<int>& tx, int n, ledger& book) {
    for (int v = 1; v <= n; ++v) {
        ++book.sent;
        auto r = co_await tx.send(v); // capacity 4: never waits here
        if (!r) {                     // a failed send hands the value back in r.error().value
            ++book.handed_back;
            break;
        }
    }
    tx.close(); // receivers still get what is buffered, then `disconnected`
    std::printf("   producer: sent %d, close()d; %zu still buffered\n", n, tx.size());
}

// A consumer: values keep coming after close() until the buffer is drained; then recv()
// reports `disconnected` (usually written `while (auto v = co_await rx.recv())`).
detached consumer(cochan::spmc::bounded_receiver<int> rx, const char* name, run_queue& loop,
                  consumer_state& me) {
    for (;;) {
        auto v = co_await rx.recv().resume_on(loop.poster());
        if (!v) {
            me.ended_with = v.error();
            std::printf("   %s: done (%s)\n", name, cochan::to_string(v.error()));
            co_return;
        }
        ++me.received;
        std::printf("   %s: got %d\n", name, *v);
        co_await loop.yield(); // take turns, as consumers on different threads would
    }
}
// [example-end]

void close_and_drain(ledger& book) {
    std::puts("1. close and drain");
    run_queue loop;
    auto ch = cochan::spmc::bounded<int>(4);
    consumer_state a, b;
    consumer(ch.second, "a", loop, a); // both wait: nothing is buffered yet
    consumer(ch.second, "b", loop, b);
    producer(ch.first, 4, book); // 1 goes to a, 2 to b (queued on the loop), 3 and 4 buffered
    loop.run();
    book.received += a.received + b.received;
    book.expect(a.received + b.received == 4, "the consumers drained all 4 values after close()");
    const auto disconnected = cochan::recv_errc::disconnected;
    book.expect(a.ended_with == disconnected && b.ended_with == disconnected,
                "then each saw `disconnected`");
}

// ---- 2. Stop tokens ---------------------------------------------------------------------------

// Waits for one value; a stop request on `token` cancels the wait.
detached receive_one(cochan::spmc::bounded_receiver<int> rx, std::stop_token token, run_queue& loop,
                     std::optional<cochan::recv_result<int>>& out) {
    out.emplace(co_await rx.recv(std::move(token)).resume_on(loop.poster()));
}

void stop_tokens(ledger& book) {
    std::puts("2. stop tokens");
    run_queue loop;
    auto ch = cochan::spmc::bounded<int>(2);
    auto& tx = ch.first;
    auto& rx = ch.second;

    std::stop_source stop_c;
    std::optional<cochan::recv_result<int>> c, d;
    receive_one(rx, stop_c.get_token(), loop, c); // c waits first: the next value is c's
    receive_one(rx, {}, loop, d);                 // d waits behind c
    std::puts("   c and d wait (c first in line); request_stop() on c's token, then send 10");
    // Unlinks c's receive: it completes as `cancelled`. c resumes through the loop here; with
    // the default resumption it would run inside request_stop(), on the calling thread.
    stop_c.request_stop();
    ++book.sent;
    if (!tx.try_send(10)) ++book.handed_back; // not here: it goes to d, the oldest waiting
    loop.run();
    book.expect(c && !*c && c->error() == cochan::recv_errc::cancelled, "c: recv_errc::cancelled");
    book.expect(d && *d && **d == 10, "d: got 10, the value c would have taken");
    book.received += (d && *d) ? 1 : 0;

    std::stop_source stop_e;
    std::optional<cochan::recv_result<int>> e;
    receive_one(rx, stop_e.get_token(), loop, e);
    std::puts("   e waits; send 11 (granted to e, which has not run yet), then request_stop()");
    ++book.sent;
    if (!tx.try_send(11)) ++book.handed_back; // not here: 11 is e's now, no longer buffered
    stop_e.request_stop();                    // too late: a granted receive completes normally
    loop.run();
    book.expect(e && *e && **e == 11, "e: got 11 despite the stop request");
    book.received += (e && *e) ? 1 : 0;
}

// ---- 3. The last receiver leaves while a sender waits -----------------------------------------

using parcel = std::shared_ptr<int>; // shared_ptr so that a weak_ptr can watch its destruction

detached send_one(cochan::spmc::bounded_sender<parcel>& tx, parcel p,
                  std::optional<cochan::send_result<parcel>>& out) {
    auto r = co_await tx.send(std::move(p)); // the channel is full: waits
    // Default resumption: this runs inside the destructor of the last receiver, on its thread.
    std::printf("   sender: woke (%s)\n", r ? "sent" : cochan::to_string(r.error().reason));
    out.emplace(std::move(r));
}

void last_receiver_leaves(ledger& book) {
    std::puts("3. the last receiver leaves while a sender waits");
    auto ch = cochan::spmc::bounded<parcel>(1);
    auto& tx = ch.first;

    parcel first = std::make_shared<int>(1);
    const std::weak_ptr<int> first_alive = first;
    ++book.sent;
    if (!tx.try_send(std::move(first))) ++book.handed_back; // not here: it fills the channel
    parcel second = std::make_shared<int>(2);
    std::optional<cochan::send_result<parcel>> out;
    ++book.sent;
    send_one(tx, std::move(second), out);
    std::puts("   the sender waits on the full channel; dropping the last receiver");
    { auto last = std::move(ch.second); } // the receiver is destroyed at this brace

    const bool back = out && !*out && out->error().reason == cochan::send_errc::disconnected &&
                      out->error().value && *out->error().value == 2;
    book.expect(back, "sender: `disconnected`, and its value 2 handed back");
    book.handed_back += back ? 1 : 0;
    book.expect(first_alive.expired(), "the buffered value 1 was destroyed by the channel");
    book.destroyed_by_channel += first_alive.expired() ? 1 : 0;
}

} // namespace

int main() {
    ledger book;
    close_and_drain(book);
    stop_tokens(book);
    last_receiver_leaves(book);

    std::printf("values: %d sent = %d received + %d handed back + %d destroyed by the channel\n",
                book.sent, book.received, book.handed_back, book.destroyed_by_channel);
    const int accounted = book.received + book.handed_back + book.destroyed_by_channel;
    book.expect(book.sent == 8 && accounted == book.sent, "every value accounted for, once");
    std::printf("check: %s\n", book.failures == 0 ? "ok" : "FAILED");
    return book.failures == 0 ? 0 : 1;
}

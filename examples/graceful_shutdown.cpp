// graceful_shutdown: how work stops without losing any of it. Three scenes on one thread, each
// printed step by step and checking where every one of its values went (exit 0 if all did):
//   1. close and drain: what is buffered is still received after close(), then `disconnected`;
//   2. stop tokens: a stop cancels a waiting receive, whose value goes to the next in line; a
//      stop after the value was granted changes nothing;
//   3. the last receiver leaves while a sender waits: it gets `disconnected` and its value back.
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

// A single-threaded run queue: `.resume_on(loop.poster())` queues a woken coroutine here instead
// of resuming it inside the call that woke it; run() resumes them in a fixed, readable order.
struct run_queue {
    std::deque<std::coroutine_handle<>> ready;
    auto poster() {
        return [this](std::coroutine_handle<> h) { ready.push_back(h); };
    }
    void run() { // returns when nothing is runnable: every coroutine finished or waits
        for (; !ready.empty(); ready.pop_front()) ready.front().resume(); // popped once it ran
    }
};

int failures = 0;
void expect(bool ok, const char* what) {
    std::printf("   %s %s\n", ok ? "ok:" : "FAILED:", what);
    failures += ok ? 0 : 1;
}

struct consumer_state {
    int received = 0, last = 0;                  // how many values, and the last one
    std::optional<cochan::recv_errc> ended_with; // why its last recv() produced no value
};

// [example-begin]
// A consumer of `max` values at most. Values keep coming after close() until the buffer is drained,
// then recv() reports `disconnected`; a stop request on `token` cancels a waiting recv().
detached consumer(cochan::spmc::bounded_receiver<int> rx, const char* name, run_queue& loop,
                  consumer_state& me, std::stop_token token = {}, int max = 100) {
    while (me.received < max) {
        auto v = co_await rx.recv(token).resume_on(loop.poster());
        if (!v) {
            me.ended_with = v.error();
            std::printf("   %s: done (%s)\n", name, cochan::to_string(v.error()));
            co_return;
        }
        ++me.received;
        me.last = *v;
        std::printf("   %s: got %d\n", name, *v);
    }
}
// [example-end]

void close_and_drain() {
    std::puts("1. close and drain");
    run_queue loop;
    auto [tx, rx] = cochan::spmc::bounded<int>(4);
    consumer_state a, b;
    consumer(rx, "a", loop, a); // both wait: nothing is buffered yet
    consumer(rx, "b", loop, b);
    int sent = 0; // 1 goes to a, 2 to b (both queued on the loop), 3 and 4 are buffered
    for (int v = 1; v <= 4; ++v) sent += tx.try_send(v) ? 1 : 0;
    tx.close(); // nothing more can be sent, but what is buffered stays
    std::printf("   producer: sent %d, close()d; %zu still buffered\n", sent, tx.size());
    loop.run();
    expect(sent == 4 && a.received + b.received == 4, "the consumers drained all 4 after close()");
    expect(a.ended_with == b.ended_with && b.ended_with == cochan::recv_errc::disconnected,
           "then each saw `disconnected`");
}

void stop_tokens() {
    std::puts("2. stop tokens");
    run_queue loop;
    auto [tx, rx] = cochan::spmc::bounded<int>(2);
    std::stop_source stop_c, stop_e;
    consumer_state c, d, e;
    consumer(rx, "c", loop, c, stop_c.get_token(), 1); // c waits first: the next value is c's
    consumer(rx, "d", loop, d, {}, 1);                 // d waits behind c
    std::puts("   c and d wait (c first in line); request_stop() on c's token, then send 10");
    // Unlinks c's receive: it completes as `cancelled`. c resumes through the loop here; with
    // the default resumption it would run inside request_stop(), on the calling thread.
    stop_c.request_stop();
    expect(tx.try_send(10).has_value(), "10 sent: it goes to d, the oldest waiting");
    loop.run();
    expect(c.ended_with == cochan::recv_errc::cancelled, "c: recv_errc::cancelled");
    expect(d.received == 1 && d.last == 10, "d: got 10, the value c would have taken");

    consumer(rx, "e", loop, e, stop_e.get_token(), 1);
    std::puts("   e waits; send 11 (granted to e, which has not run yet), then request_stop()");
    expect(tx.try_send(11).has_value(), "11 sent: it is e's now, no longer buffered");
    stop_e.request_stop(); // too late: a granted receive completes normally
    loop.run();
    expect(e.received == 1 && e.last == 11 && rx.empty(), "e: got 11 despite the stop request");
}

using parcel = std::shared_ptr<int>; // shared_ptr so that a weak_ptr can watch its destruction

detached send_one(cochan::spmc::bounded_sender<parcel>& tx, parcel p,
                  std::optional<cochan::send_result<parcel>>& out) {
    auto r = co_await tx.send(std::move(p)); // the channel is full: waits
    // Default resumption: this runs inside the destructor of the last receiver, on its thread.
    std::printf("   sender: woke (%s)\n", r ? "sent" : cochan::to_string(r.error().reason));
    out.emplace(std::move(r));
}

void last_receiver_leaves() {
    std::puts("3. the last receiver leaves while a sender waits");
    auto ch = cochan::spmc::bounded<parcel>(1);
    parcel first = std::make_shared<int>(1);
    const std::weak_ptr<int> first_alive = first;
    expect(ch.first.try_send(std::move(first)).has_value(), "1 sent: it fills the channel");
    std::optional<cochan::send_result<parcel>> out;
    send_one(ch.first, std::make_shared<int>(2), out);
    std::puts("   the sender waits on the full channel; dropping the last receiver");
    { auto last = std::move(ch.second); } // the receiver is destroyed at this brace
    expect(out && !*out && out->error().reason == cochan::send_errc::disconnected &&
               out->error().value && *out->error().value == 2,
           "sender: `disconnected`, and its value 2 handed back");
    expect(first_alive.expired(), "the buffered value 1 was destroyed by the channel");
}

} // namespace

int main() {
    close_and_drain();
    stop_tokens();
    last_receiver_leaves();
    std::printf("check: %s\n", failures == 0 ? "ok (every value accounted for)" : "FAILED");
    return failures == 0 ? 0 : 1;
}

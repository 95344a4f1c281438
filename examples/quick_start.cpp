// quick_start: the README's example. One producer coroutine, two competing consumers, all on
// the main thread: the default resumption runs a woken coroutine on the thread that woke it.
#include <coroutine>
#include <cstdio>
#include <exception>
#include <utility>

// Any fire-and-forget coroutine type will do; cochan works with every coroutine type.
struct detached {
    struct promise_type {
        detached get_return_object() noexcept { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { std::terminate(); }
    };
};

// [readme-begin]
#include <cochan/spmc.hpp>

detached producer(cochan::spmc::bounded_sender<int> tx) {
    for (int job = 1; job <= 6; ++job) {
        auto sent = co_await tx.send(job); // waits while the channel is full
        if (!sent) break;                  // every receiver is gone: sent.error().value is job
    }
} // tx is destroyed here: consumers drain what is left, then see `disconnected`

detached consumer(cochan::spmc::bounded_receiver<int> rx, const char* name) {
    while (auto job = co_await rx.recv()) // each job reaches exactly one consumer
        std::printf("%s got job %d\n", name, *job);
}

int main() {
    auto [tx, rx] = cochan::spmc::bounded<int>(2); // one producer, competing consumers
    consumer(rx, "alice");
    consumer(rx, "bob");
    producer(std::move(tx));
}
// [readme-end]

// Two overlapping sends on one SPMC sender (a send still waiting, then a try_send) assert in
// debug builds: an SPMC channel has exactly one producer.
#include <cochan/spmc.hpp>

#include <coroutine>
#include <cstdio>
#include <exception>

struct fire {
    struct promise_type {
        fire get_return_object() noexcept { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { std::terminate(); }
    };
};

fire send_and_wait(cochan::spmc::bounded_sender<int>& tx) {
    auto r = co_await tx.send(2); // the channel is full: waits
    (void)r;
}

int main() {
    auto [tx, rx] = cochan::spmc::bounded<int>(1);
    if (!tx.try_send(1)) return 0;
    send_and_wait(tx);
    std::fputs("reached misuse\n", stderr);
    auto r = tx.try_send(3); // overlaps the waiting send: must hit COCHAN_ASSERT and abort
    (void)r;
    (void)rx;
    return 0;
}

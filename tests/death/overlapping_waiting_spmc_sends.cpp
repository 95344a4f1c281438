// Two sends waiting at once on one SPMC sender: the second would overwrite the first in the
// channel's one sender slot, losing the first send and its value. Caught in every build.
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

fire send_and_wait(cochan::spmc::bounded_sender<int>& tx, int v) {
    auto r = co_await tx.send(v); // the channel is full: waits
    (void)r;
}

int main() {
    auto [tx, rx] = cochan::spmc::bounded<int>(1);
    if (!tx.try_send(1)) return 0;
    send_and_wait(tx, 2);
    std::fputs("reached misuse\n", stderr);
    send_and_wait(tx, 3); // a second waiting send: must fail a COCHAN_CHECK and abort
    (void)rx;
    return 0;
}

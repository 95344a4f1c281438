// Two receives waiting at once on one one-shot receiver: the second would overwrite the first
// in the one-shot's one waiter slot, stranding the first receive. Caught in every build.
#include <cochan/oneshot.hpp>

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

fire receive(cochan::oneshot_receiver<int>& rx) {
    auto r = co_await rx.recv(); // nothing sent yet: waits
    (void)r;
}

int main() {
    auto [tx, rx] = cochan::oneshot<int>();
    receive(rx);
    std::fputs("reached misuse\n", stderr);
    receive(rx); // a second waiting receive: must fail a COCHAN_CHECK and abort
    (void)tx;
    return 0;
}

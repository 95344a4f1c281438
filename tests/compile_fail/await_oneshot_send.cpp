// A one-shot send never waits: it returns its result directly and is not awaitable.
// expect: a result is not awaitable
#include <cochan/oneshot.hpp>

#include <coroutine>
#include <exception>
#include <utility>

struct fire {
    struct promise_type {
        fire get_return_object() noexcept { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { std::terminate(); }
    };
};

fire reply(cochan::oneshot_sender<int>& tx) {
#ifdef COCHAN_COMPILE_FAIL_CONTROL
    auto r = tx.send(1);
#else
    auto r = co_await tx.send(1);
#endif
    (void)r;
    co_return;
}

int main() {
    auto [tx, rx] = cochan::oneshot<int>();
    reply(tx);
    (void)rx;
}

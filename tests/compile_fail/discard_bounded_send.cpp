// A bounded send is an awaitable: calling it without co_await does nothing, so discarding it
// must be diagnosed ([[nodiscard]]) and fail under -Werror.
// expect: nodiscard|ignoring return value|unused-result
#include <cochan/spmc.hpp>

#include <utility>

int main() {
    auto [tx, rx] = cochan::spmc::bounded<int>(1);
#ifdef COCHAN_COMPILE_FAIL_CONTROL
    auto op = tx.send(1);
    (void)op;
#else
    tx.send(1);
#endif
    (void)rx;
}

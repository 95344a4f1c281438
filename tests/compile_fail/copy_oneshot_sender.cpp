// A one-shot sender is move-only: one value, one sender. Copying it must not compile.
// expect: one value, one sender: move it, never copy
#include <cochan/oneshot.hpp>

#include <utility>

int main() {
    auto [tx, rx] = cochan::oneshot<int>();
#ifdef COCHAN_COMPILE_FAIL_CONTROL
    auto tx2 = std::move(tx);
#else
    auto tx2 = tx;
#endif
    (void)tx2;
    (void)rx;
}

// A one-shot receiver is move-only: one value, one receiver. Copying it must not compile.
// expect: one value, one receiver: move it
#include <cochan/oneshot.hpp>

#include <utility>

int main() {
    auto [tx, rx] = cochan::oneshot<int>();
#ifdef COCHAN_COMPILE_FAIL_CONTROL
    auto rx2 = std::move(rx);
#else
    auto rx2 = rx;
#endif
    (void)rx2;
    (void)tx;
}

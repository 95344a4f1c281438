// select takes receivers: a sender in the list must not compile, and the message names the
// concept it misses.
// expect: channel_receiver
#include <cochan/select.hpp>

#include <cochan/cochan.hpp>

int main() {
    auto [tx0, rx0] = cochan::spmc::unbounded<int>();
    auto [tx1, rx1] = cochan::mpmc::unbounded<int>();
#ifdef COCHAN_COMPILE_FAIL_CONTROL
    auto r = cochan::select(rx0, rx1); // awaited in a coroutine; built here only
#else
    auto r = cochan::select(rx0, tx1);
#endif
    (void)r;
    (void)tx0;
}

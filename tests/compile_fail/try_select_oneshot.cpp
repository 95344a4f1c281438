// try_select takes channel receivers: a one-shot receiver in the list must not compile (it
// does not model cochan::channel_receiver), and the message names the concept it misses.
// expect: channel_receiver
#include <cochan/select.hpp>

#include <cochan/cochan.hpp>

int main() {
    auto [tx0, rx0] = cochan::mpmc::unbounded<int>();
    auto [tx1, rx1] = cochan::spmc::bounded<int>(1);
    auto [otx, orx] = cochan::oneshot<int>();
#ifdef COCHAN_COMPILE_FAIL_CONTROL
    auto r = cochan::try_select(rx0, rx1);
#else
    auto r = cochan::try_select(rx0, orx);
#endif
    (void)r;
    (void)tx0;
    (void)tx1;
    (void)otx;
}

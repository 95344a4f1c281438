// A select over one receiver is a plain receive: it must not compile, and the message says so.
// expect: two or more receivers
#include <cochan/select.hpp>

#include <cochan/cochan.hpp>

int main() {
    auto [tx0, rx0] = cochan::spmc::unbounded<int>();
    auto [tx1, rx1] = cochan::mpmc::unbounded<int>();
#ifdef COCHAN_COMPILE_FAIL_CONTROL
    auto r = cochan::try_select(rx0, rx1);
#else
    auto r = cochan::try_select(rx0);
#endif
    (void)r;
    (void)tx0;
    (void)tx1;
}

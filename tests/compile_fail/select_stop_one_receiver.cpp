// A select over one receiver is a plain receive, with a stop token too: it must not compile,
// and the message says so (select_one_receiver.cpp: try_select).
// expect: two or more receivers
#include <cochan/select.hpp>

#include <cochan/cochan.hpp>

int main() {
    auto [tx0, rx0] = cochan::spmc::unbounded<int>();
    auto [tx1, rx1] = cochan::mpmc::unbounded<int>();
    cochan::default_stop_source stop;
#ifdef COCHAN_COMPILE_FAIL_CONTROL
    auto r = cochan::select(stop.get_token(), rx0, rx1); // awaited in a coroutine; built here only
#else
    auto r = cochan::select(stop.get_token(), rx0);
#endif
    (void)r;
    (void)tx0;
    (void)tx1;
}

// An unbounded sender has no try_send: its send never waits, so there is nothing to try.
// expect: unbounded: send\(v\) never waits
#include <cochan/spmc.hpp>

int main() {
    auto [tx, rx] = cochan::spmc::unbounded<int>();
#ifdef COCHAN_COMPILE_FAIL_CONTROL
    auto r = tx.send(1);
#else
    auto r = tx.try_send(1);
#endif
    (void)r;
    (void)rx;
}

// An unbounded channel has no capacity() to ask for.
// expect: unbounded: it has no capacity
#include <cochan/spmc.hpp>

int main() {
    auto [tx, rx] = cochan::spmc::unbounded<int>();
#ifdef COCHAN_COMPILE_FAIL_CONTROL
    auto n = rx.size();
#else
    auto n = rx.capacity();
#endif
    (void)n;
    (void)tx;
}

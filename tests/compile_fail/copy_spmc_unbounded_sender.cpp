// The unbounded SPMC sender is move-only as well.
// expect: the one producer: move it, never copy
#include <cochan/spmc.hpp>

#include <utility>

int main() {
    auto [tx, rx] = cochan::spmc::unbounded<int>();
#ifdef COCHAN_COMPILE_FAIL_CONTROL
    auto tx2 = std::move(tx);
#else
    auto tx2 = tx;
#endif
    (void)tx2;
    (void)rx;
}

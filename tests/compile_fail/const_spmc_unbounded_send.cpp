// send through a const unbounded SPMC sender must not compile.
// expect: SPMC: sends need a non-const sender
#include <cochan/spmc.hpp>

#include <utility>

int main() {
    auto [tx, rx] = cochan::spmc::unbounded<int>();
#ifdef COCHAN_COMPILE_FAIL_CONTROL
    auto& sender = tx;
#else
    const auto& sender = tx;
#endif
    auto r = sender.send(1);
    (void)r;
    (void)rx;
}

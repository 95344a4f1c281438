// send through a const unbounded SPMC sender must not compile.
// expect: constraints|no matching|discards qualifiers|not viable
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

// An awaitable send through a const SPMC sender must not compile.
// expect: SPMC: sends need a non-const sender
#include <cochan/spmc.hpp>

#include <utility>

int main() {
    auto [tx, rx] = cochan::spmc::bounded<int>(1);
#ifdef COCHAN_COMPILE_FAIL_CONTROL
    auto& sender = tx;
#else
    const auto& sender = tx;
#endif
    auto op = sender.send(1);
    (void)op;
    (void)rx;
}

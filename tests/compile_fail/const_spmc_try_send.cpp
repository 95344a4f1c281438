// try_send through a const SPMC sender must not compile: sending needs the exclusive producer.
// expect: SPMC: non-const sender only
#include <cochan/spmc.hpp>

#include <utility>

int main() {
    auto [tx, rx] = cochan::spmc::bounded<int>(1);
#ifdef COCHAN_COMPILE_FAIL_CONTROL
    auto& sender = tx;
#else
    const auto& sender = tx;
#endif
    auto r = sender.try_send(1);
    (void)r;
    (void)rx;
}

// recv_many appends with push_back(T&&): a container without it must not compile, and the
// message says why.
// expect: no push_back
#include <cochan/spmc.hpp>

#include <array>
#include <vector>

int main() {
    auto [tx, rx] = cochan::spmc::unbounded<int>();
#ifdef COCHAN_COMPILE_FAIL_CONTROL
    std::vector<int> out;
#else
    std::array<int, 4> out{};
#endif
    auto r = rx.try_recv_many(out, 4);
    (void)r;
    (void)tx;
}

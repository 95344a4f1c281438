// try_recv_many(out, 0) asks for a batch of nothing: a precondition violation, caught in every
// build.
#include <cochan/spmc.hpp>

#include <cstdio>
#include <vector>

int main() {
    auto [tx, rx] = cochan::spmc::unbounded<int>();
    (void)tx.send(1);
    std::vector<int> out;
    std::fputs("reached misuse\n", stderr);
    auto r = rx.try_recv_many(out, 0); // must fail a COCHAN_CHECK and abort
    (void)r;
    return 0;
}

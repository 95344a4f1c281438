// Sending through a moved-from sender asserts in debug builds.
#include <cochan/mpmc.hpp>

#include <cstdio>
#include <utility>

int main() {
    auto [tx, rx] = cochan::mpmc::unbounded<int>();
    auto tx2 = std::move(tx);
    std::fputs("reached misuse\n", stderr);
    auto r = tx.send(1); // NOLINT(bugprone-use-after-move): must hit COCHAN_ASSERT and abort
    (void)r;
    (void)rx;
    return 0;
}

// Sending through a moved-from one-shot sender aborts in every build.
#include <cochan/oneshot.hpp>

#include <cstdio>
#include <utility>

int main() {
    auto [tx, rx] = cochan::oneshot<int>();
    auto tx2 = std::move(tx);
    std::fputs("reached misuse\n", stderr);
    auto r = tx.send(1); // NOLINT(bugprone-use-after-move): must hit COCHAN_CHECK and abort
    (void)r;
    (void)rx;
    return 0;
}

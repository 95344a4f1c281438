// Receiving through a moved-from one-shot receiver aborts in every build.
#include <cochan/oneshot.hpp>

#include <cstdio>
#include <utility>

int main() {
    auto [tx, rx] = cochan::oneshot<int>();
    auto rx2 = std::move(rx);
    std::fputs("reached misuse\n", stderr);
    auto r = rx.try_recv(); // NOLINT(bugprone-use-after-move): must hit COCHAN_CHECK and abort
    (void)r;
    (void)tx;
    return 0;
}

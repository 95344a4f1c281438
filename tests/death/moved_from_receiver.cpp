// Receiving through a moved-from receiver asserts in debug builds.
#include <cochan/spmc.hpp>

#include <cstdio>
#include <utility>

int main() {
    auto [tx, rx] = cochan::spmc::bounded<int>(1);
    auto rx2 = std::move(rx);
    std::fputs("reached misuse\n", stderr);
    auto r = rx.try_recv(); // NOLINT(bugprone-use-after-move): must hit COCHAN_ASSERT and abort
    (void)r;
    (void)tx;
    return 0;
}

// Shared by the consumers of tests/cmake/run.sh: a program any user of the installed or embedded
// library could write. Returns nonzero on the first wrong result.
#include <cochan/spmc.hpp>

#include <cstdio>

int main() {
    auto [tx, rx] = cochan::spmc::bounded<int>(4);
    for (int i = 1; i <= 3; ++i) {
        auto sent = tx.try_send(i);
        if (!sent) {
            std::fprintf(stderr, "try_send(%d) failed\n", i);
            return 1;
        }
    }
    for (int i = 1; i <= 3; ++i) {
        auto received = rx.try_recv();
        if (!received || *received != i) {
            std::fprintf(stderr, "try_recv() did not return %d\n", i);
            return 1;
        }
    }
    auto empty = rx.try_recv();
    if (empty || empty.error() != cochan::recv_errc::empty) {
        std::fprintf(stderr, "try_recv() on an empty channel did not report recv_errc::empty\n");
        return 1;
    }
    std::puts("ok");
    return 0;
}

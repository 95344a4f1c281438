// async_select takes channel receivers: a one-shot receiver in the list must not compile (it
// does not model cochan::channel_receiver; async_recv takes it alone), and the message names
// the concept it misses. Needs standalone Asio (tests/compile_fail/CMakeLists.txt).
// expect: channel_receiver
#include <cochan/asio.hpp>

#include <asio/io_context.hpp>

int main() {
    asio::io_context io;
    auto [tx0, rx0] = cochan::mpmc::unbounded<int>();
    auto [otx, orx] = cochan::oneshot<int>();
    auto [tx1, rx1] = cochan::spmc::bounded<int>(1);
    auto on_io = [&io](auto&&...) { io.stop(); };
#ifdef COCHAN_COMPILE_FAIL_CONTROL
    cochan::asio::async_select(on_io, rx0, rx1);
#else
    cochan::asio::async_select(on_io, rx0, orx);
#endif
    (void)tx0;
    (void)otx;
    (void)tx1;
    (void)orx;
}

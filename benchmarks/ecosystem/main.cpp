// ecosystem_bench: the ecosystem workload (docs/contract.md, "Benchmark method") for cochan and
// its C++ peers in one binary. See benchmarks/README.md for the method.
#include "ecosystem.hpp"

int main(int argc, char** argv) {
    using namespace bench::eco;
    register_limit();
    register_cochan();
    register_asio();
    register_boost_asio();
    register_boost_fiber();
    register_os_threads();
    register_recv_many();
    register_select();
    register_rendezvous();
    return bench::run_main(argc, argv);
}

// The Boost.Asio 1.81 flavour of asio.cpp: Boost's experimental channels, and cochan through
// `cochan::boost_asio` (see asio.cpp).
#define COCHAN_BENCH_BOOST_ASIO 1
#include "asio.cpp" // NOLINT(bugprone-suspicious-include): one source, two flavours

// One test source, two Asio flavours. tests/CMakeLists.txt compiles every tests/asio/*.cpp
// twice: as is, against standalone Asio and `cochan::asio` (cochan/asio.hpp), and with
// COCHAN_TEST_BOOST_ASIO=1, against Boost.Asio and `cochan::boost_asio`
// (cochan/boost_asio.hpp). Each test file includes its adapter header first (alone, which
// proves it self-contained), then this header, and then spells the library `asio::` and the
// adapter `adapter::`, and the two tokens that moved out of `experimental` between Asio 1.22
// and Boost 1.81's Asio 1.26 (whose experimental aliases are deprecated) `cochan_test::`.
#pragma once

#if COCHAN_TEST_BOOST_ASIO
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/system/system_error.hpp>

namespace asio = ::boost::asio;
namespace adapter = ::cochan::boost_asio;
namespace cochan_test {
using system_error = ::boost::system::system_error;
using ::boost::asio::as_tuple;
using ::boost::asio::deferred;
} // namespace cochan_test
#else
#include <asio/bind_allocator.hpp>
#include <asio/bind_cancellation_slot.hpp>
#include <asio/bind_executor.hpp>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/experimental/deferred.hpp>
#include <asio/io_context.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>

#include <system_error>

namespace adapter = ::cochan::asio;
namespace cochan_test {
using system_error = std::system_error;
using ::asio::experimental::as_tuple;
using ::asio::experimental::deferred;
} // namespace cochan_test
#endif

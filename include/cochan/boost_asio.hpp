// cochan: the optional Asio adapter for Boost.Asio (Boost 1.81 or later; header-only, nothing
// to link). Include it after Boost.Asio is available; the rest of cochan does not need it. It
// is the adapter of <cochan/asio.hpp>, the same implementation (cochan/detail/asio_adapter.hpp)
// with the same semantics, in `cochan::boost_asio`:
//
//     auto r = co_await cochan::boost_asio::async_recv(rx, boost::asio::use_awaitable);
//     auto s = co_await cochan::boost_asio::async_send(tx, job, boost::asio::use_awaitable);
//     auto [ec, v] = co_await cochan::boost_asio::async_recv_ec(rx, as_tuple(use_awaitable));
//     auto [ec, unsent] = co_await cochan::boost_asio::async_send_ec(tx, job, as_tuple(...));
//
// The `_ec` operations complete with `boost::system::error_code`, which holds cochan's
// `recv_errc` / `send_errc` codes (their `std::error_category`, wrapped as Boost.System does
// since 1.77), and `co_await rx.recv().resume_on(executor)` accepts a Boost.Asio executor.
// Both adapters compile together in one translation unit.
#pragma once

#include <cochan/cochan.hpp>

#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/defer.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/execution/executor.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/is_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/system_executor.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
// as_tuple(use_awaitable) completes inline too: as_tuple is in the library itself from Asio
// 1.24 (Boost 1.80), in `experimental` before.
#if __has_include(<boost/asio/as_tuple.hpp>)
#include <boost/asio/as_tuple.hpp>
#define COCHAN_ASIO_AS_TUPLE ::boost::asio::as_tuple_t
#elif __has_include(<boost/asio/experimental/as_tuple.hpp>)
#include <boost/asio/experimental/as_tuple.hpp>
#define COCHAN_ASIO_AS_TUPLE ::boost::asio::experimental::as_tuple_t
#endif
#include <boost/system/error_code.hpp>
#include <boost/system/is_error_code_enum.hpp>
#include <boost/version.hpp>

#include <type_traits>

static_assert(BOOST_VERSION >= 108100, "cochan/boost_asio.hpp needs Boost 1.81 or later");

/// cochan's error enums are Boost.System error code enums too: `boost::system::error_code ec =
/// cochan::recv_errc::cancelled;` holds the code in cochan's `std::error_category` (Boost.System
/// wraps standard categories), so it compares equal to the enum, to the `std::error_code` of
/// the same value, and to the portable condition (`std::errc::operation_canceled`), and its
/// `message()` is cochan's. `make_error_code` is the standard one (cochan/result.hpp).
template <> struct boost::system::is_error_code_enum<cochan::send_errc> : std::true_type {};
template <> struct boost::system::is_error_code_enum<cochan::recv_errc> : std::true_type {};

namespace cochan::boost_asio {
/// The error code of `async_recv_ec` / `async_send_ec`: Boost.Asio's,
/// `boost::system::error_code`, so `use_awaitable` throws `boost::system::system_error`.
using error_code = boost::system::error_code;
} // namespace cochan::boost_asio

#define COCHAN_ASIO_ADAPTER boost_asio
// `use_awaitable` operations complete inline when they can (where Asio has coroutines).
#if defined(BOOST_ASIO_HAS_CO_AWAIT)
#define COCHAN_ASIO_AWAITABLE 1
#else
#define COCHAN_ASIO_AWAITABLE 0
#endif
#define COCHAN_ASIO_LIBRARY ::boost::asio
#include <cochan/detail/asio_adapter.hpp> // IWYU pragma: export
#undef COCHAN_ASIO_AWAITABLE
#undef COCHAN_ASIO_AS_TUPLE
#undef COCHAN_ASIO_ADAPTER
#undef COCHAN_ASIO_LIBRARY

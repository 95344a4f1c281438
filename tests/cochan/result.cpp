// The result types: shaped like std::expected, errors as values, the unsent value handed back.
#include <cochan/result.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

TEST_CASE("recv_result holds a value or an error", "[result]") {
    cochan::recv_result<std::string> ok(std::in_place, "job");
    REQUIRE(ok.has_value());
    REQUIRE(static_cast<bool>(ok));
    CHECK(*ok == "job");
    CHECK(ok->size() == 3);
    CHECK(ok.value() == "job");
    CHECK_THROWS_AS(ok.error(), cochan::bad_result_access);

    cochan::recv_result<std::string> err(std::in_place_index<1>, cochan::recv_errc::empty);
    CHECK_FALSE(err.has_value());
    CHECK_FALSE(static_cast<bool>(err));
    CHECK(err.error() == cochan::recv_errc::empty);
    CHECK_THROWS_AS(err.value(), cochan::bad_result_access);

    std::string moved = *std::move(ok);
    CHECK(moved == "job");
}

TEST_CASE("send_result hands a move-only value back", "[result]") {
    cochan::send_result<std::unique_ptr<int>> ok(std::in_place);
    CHECK(ok.has_value());
    CHECK_NOTHROW(ok.value());
    CHECK_THROWS_AS(ok.error(), cochan::bad_result_access);

    cochan::send_result<std::unique_ptr<int>> failed(
        std::in_place_index<1>, cochan::send_error<std::unique_ptr<int>>{cochan::send_errc::full,
                                                                         std::make_unique<int>(7)});
    REQUIRE_FALSE(failed);
    CHECK(failed.error().reason == cochan::send_errc::full);
    std::unique_ptr<int> back = std::move(failed).error().value;
    REQUIRE(back);
    CHECK(*back == 7);
    // NOLINTNEXTLINE(bugprone-use-after-move): value() on a moved-from failure must still throw
    CHECK_THROWS_AS(failed.value(), cochan::bad_result_access);
}

TEST_CASE("error codes describe themselves", "[result]") {
    CHECK(std::string(cochan::to_string(cochan::send_errc::disconnected)).find("disconnected") !=
          std::string::npos);
    CHECK(std::string(cochan::to_string(cochan::send_errc::full)).find("full") !=
          std::string::npos);
    CHECK(std::string(cochan::to_string(cochan::recv_errc::empty)).find("empty") !=
          std::string::npos);
    CHECK(std::string(cochan::to_string(cochan::recv_errc::cancelled)).find("cancel") !=
          std::string::npos);
}

TEST_CASE("the error enums are std::error_code enums with their own categories", "[result]") {
    STATIC_REQUIRE(std::is_error_code_enum_v<cochan::send_errc>);
    STATIC_REQUIRE(std::is_error_code_enum_v<cochan::recv_errc>);
    for (auto e : {cochan::recv_errc::disconnected, cochan::recv_errc::empty,
                   cochan::recv_errc::cancelled, cochan::recv_errc::timed_out}) {
        std::error_code ec = e; // through cochan::make_error_code, found by ADL
        CHECK(ec);              // no reason is 0, the value that means success
        CHECK(ec == e);
        CHECK(ec == cochan::make_error_code(e));
        CHECK(&ec.category() == &cochan::recv_category());
        CHECK(std::string(ec.category().name()) == "cochan.recv");
        CHECK(ec.message() == cochan::to_string(e));
    }
    for (auto e : {cochan::send_errc::disconnected, cochan::send_errc::full,
                   cochan::send_errc::cancelled, cochan::send_errc::timed_out}) {
        std::error_code ec = e;
        CHECK(ec);
        CHECK(ec == e);
        CHECK(&ec.category() == &cochan::send_category());
        CHECK(std::string(ec.category().name()) == "cochan.send");
        CHECK(ec.message() == cochan::to_string(e));
    }
    // The two categories are distinct: the same value in each is a different code.
    CHECK(std::error_code(cochan::send_errc::cancelled) !=
          std::error_code(cochan::recv_errc::cancelled));
    CHECK(std::error_code(cochan::send_errc::cancelled) != cochan::recv_errc::cancelled);
}

TEST_CASE("cochan error codes match the portable conditions", "[result]") {
    // A cancelled operation compares equal to operation_canceled, as a cancelled Asio one does.
    CHECK(std::error_code(cochan::recv_errc::cancelled) == std::errc::operation_canceled);
    CHECK(std::error_code(cochan::send_errc::cancelled) == std::errc::operation_canceled);
    CHECK(std::error_code(cochan::recv_errc::timed_out) == std::errc::timed_out);
    CHECK(std::error_code(cochan::send_errc::timed_out) == std::errc::timed_out);
    CHECK(std::error_code(cochan::recv_errc::empty) == std::errc::resource_unavailable_try_again);
    CHECK(std::error_code(cochan::send_errc::full) == std::errc::resource_unavailable_try_again);
    // disconnected has no portable equivalent: it matches none of them.
    std::error_code gone = cochan::recv_errc::disconnected;
    CHECK(gone != std::errc::operation_canceled);
    CHECK(gone != std::errc::resource_unavailable_try_again);
    CHECK(gone.default_error_condition().category() == cochan::recv_category());
    CHECK(std::error_code(cochan::recv_errc::empty) != std::errc::operation_canceled);
}

TEST_CASE("results are nodiscard-typed value types", "[result]") {
    STATIC_REQUIRE(std::is_nothrow_move_constructible_v<cochan::recv_result<int>>);
    STATIC_REQUIRE(std::is_copy_constructible_v<cochan::recv_result<int>>);
    STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<cochan::send_result<std::unique_ptr<int>>>);
    STATIC_REQUIRE(std::is_move_constructible_v<cochan::recv_result<std::unique_ptr<int>>>);
    STATIC_REQUIRE(std::is_move_assignable_v<cochan::send_result<std::unique_ptr<int>>>);
}

// A regression guard, not a contract users need: a trivially copyable 16-byte result is copied
// into the coroutine frame by g++ through a store-forwarding stall on every co_await
// (include/cochan/result.hpp, result_destructor_note). Dropping the user-provided destructor
// fails here.
TEST_CASE("results are never trivially copyable (g++ builds a co_await's result in place)",
          "[result]") {
    STATIC_REQUIRE_FALSE(std::is_trivially_copyable_v<cochan::recv_result<std::uint64_t>>);
    STATIC_REQUIRE_FALSE(std::is_trivially_copyable_v<cochan::send_result<int>>);
}

// The user-provided destructor must not cost the nothrow moves a vector of results relies on
// (std::move_if_noexcept): a move is noexcept exactly when the payload's is.
namespace {
struct throwing_move {
    throwing_move() = default;
    throwing_move(throwing_move&&) noexcept(false) {}
    throwing_move& operator=(throwing_move&&) noexcept(false) { return *this; }
};
} // namespace

TEST_CASE("a result moves without throwing when its payload does", "[result]") {
    STATIC_REQUIRE(std::is_nothrow_move_constructible_v<cochan::recv_result<std::string>>);
    STATIC_REQUIRE(std::is_nothrow_move_assignable_v<cochan::recv_result<std::string>>);
    STATIC_REQUIRE(std::is_nothrow_move_constructible_v<cochan::send_result<std::string>>);
    STATIC_REQUIRE(std::is_nothrow_move_constructible_v<cochan::result<void, std::string>>);
    STATIC_REQUIRE(std::is_nothrow_move_assignable_v<cochan::result<void, std::string>>);
    STATIC_REQUIRE_FALSE(std::is_nothrow_move_constructible_v<cochan::recv_result<throwing_move>>);
    STATIC_REQUIRE_FALSE(std::is_nothrow_move_constructible_v<cochan::send_result<throwing_move>>);
}

// The result types: shaped like std::expected, errors as values, the unsent value handed back.
#include <cochan/result.hpp>

#include <catch2/catch.hpp>

#include <memory>
#include <string>
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

TEST_CASE("results are nodiscard-typed value types", "[result]") {
    STATIC_REQUIRE(std::is_nothrow_move_constructible_v<cochan::recv_result<int>>);
    STATIC_REQUIRE(std::is_copy_constructible_v<cochan::recv_result<int>>);
    STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<cochan::send_result<std::unique_ptr<int>>>);
}

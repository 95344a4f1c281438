// Channel kinds for templated tests, and a few helpers that read the same for every kind.
#pragma once

#include <cochan/cochan.hpp>

#include <cstddef>
#include <utility>

namespace cochan_test {

// Each kind names a factory and whether sends can wait. `capacity` is the bound a bounded
// kind is built with (the contract tests use 2, as the asyncband suite does).
template <class T> struct spmc_bounded {
    static constexpr bool bounded = true;
    static constexpr bool multi = false;
    static auto make(std::size_t capacity = 2) { return cochan::spmc::bounded<T>(capacity); }
};
template <class T> struct spmc_unbounded {
    static constexpr bool bounded = false;
    static constexpr bool multi = false;
    static auto make(std::size_t = 0) { return cochan::spmc::unbounded<T>(); }
};
template <class T> struct mpmc_bounded {
    static constexpr bool bounded = true;
    static constexpr bool multi = true;
    static auto make(std::size_t capacity = 2) { return cochan::mpmc::bounded<T>(capacity); }
};
template <class T> struct mpmc_unbounded {
    static constexpr bool bounded = false;
    static constexpr bool multi = true;
    static auto make(std::size_t = 0) { return cochan::mpmc::unbounded<T>(); }
};

// Rendezvous channels (capacity 0): bounded endpoints; `make` ignores the capacity it is given.
template <class T> struct spmc_rendezvous {
    static constexpr bool bounded = true;
    static constexpr bool multi = false;
    static auto make(std::size_t = 0) { return cochan::spmc::rendezvous<T>(); }
};
template <class T> struct mpmc_rendezvous {
    static constexpr bool bounded = true;
    static constexpr bool multi = true;
    static auto make(std::size_t = 0) { return cochan::mpmc::rendezvous<T>(); }
};

// Sends without waiting: `try_send` on a bounded channel, `send` on an unbounded one.
template <class Sender, class V> auto push(Sender& tx, V&& v) {
    if constexpr (requires { tx.capacity(); }) {
        return tx.try_send(std::forward<V>(v));
    } else {
        return tx.send(std::forward<V>(v));
    }
}

} // namespace cochan_test

// The four kinds, for TEMPLATE_TEST_CASE(..., COCHAN_ALL_KINDS(int)).
#define COCHAN_ALL_KINDS(T)                                                                        \
    (cochan_test::spmc_bounded<T>), (cochan_test::spmc_unbounded<T>),                              \
        (cochan_test::mpmc_bounded<T>), (cochan_test::mpmc_unbounded<T>)

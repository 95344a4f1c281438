// The four cochan channel kinds by two flags, for the benchmarks that run each of them.
#pragma once

#include "harness.hpp"

#include <cochan/mpmc.hpp>
#include <cochan/spmc.hpp>

#include <cstddef>
#include <cstdint>

namespace bench {

/// `{tx, rx}` of a cochan channel of std::uint64_t: MPMC or SPMC, bounded (`capacity`) or
/// unbounded.
template <bool Multi, bool Bounded> auto make_channel(std::size_t capacity = bounded_capacity) {
    if constexpr (Multi && Bounded)
        return cochan::mpmc::bounded<std::uint64_t>(capacity);
    else if constexpr (Multi)
        return cochan::mpmc::unbounded<std::uint64_t>();
    else if constexpr (Bounded)
        return cochan::spmc::bounded<std::uint64_t>(capacity);
    else
        return cochan::spmc::unbounded<std::uint64_t>();
}

template <bool Multi, bool Bounded>
using sender_t = typename decltype(make_channel<Multi, Bounded>())::first_type;
template <bool Multi, bool Bounded>
using receiver_t = typename decltype(make_channel<Multi, Bounded>())::second_type;

/// Whether the headers provide cochan's blocking API (`blocking_send` / `blocking_recv`); the
/// cases that use it are registered only then.
template <class Rx>
concept has_blocking_api = requires(const Rx& rx) {
    rx.blocking_recv();
};

} // namespace bench

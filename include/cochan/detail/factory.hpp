// cochan: construction of a channel's shared queue and its first pair of endpoints.
#pragma once

#include <cochan/detail/competing_queue.hpp>
#include <cochan/detail/endpoints.hpp>
#include <cochan/detail/ring.hpp>
#include <cochan/detail/segmented_queue.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace cochan::detail {

template <class T, class Producers> using bounded_queue = competing_queue<T, ring<T>, Producers>;
template <class T, class Producers>
using unbounded_queue = competing_queue<T, segmented_queue<T>, Producers>;

template <class Queue>
std::pair<basic_sender<Queue>, basic_receiver<Queue>> make_channel(Queue* q) noexcept {
    return {basic_sender<Queue>(adopt_t{}, q), basic_receiver<Queue>(adopt_t{}, q)};
}

/// `kind` names the factory in the exception's message, e.g. "cochan::spmc::bounded".
template <class T, class Producers> auto make_bounded(std::size_t capacity, const char* kind) {
    if (capacity == 0) {
        throw std::invalid_argument(std::string(kind) +
                                    ": capacity must be greater than 0 (there is no rendezvous "
                                    "channel; use a capacity of 1 or more)");
    }
    if (capacity > ring<T>::max_capacity()) {
        throw std::length_error(std::string(kind) + ": capacity " + std::to_string(capacity) +
                                " is larger than the largest ring of this type (" +
                                std::to_string(ring<T>::max_capacity()) + " values)");
    }
    return make_channel(new bounded_queue<T, Producers>(capacity));
}

template <class T, class Producers> auto make_unbounded() {
    return make_channel(new unbounded_queue<T, Producers>());
}

} // namespace cochan::detail

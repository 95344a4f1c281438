// cochan: endpoints that remember where their woken coroutines resume.
//
//     auto rx = cochan::resume_on(pool.executor(), std::move(plain_rx));
//     while (auto job = co_await rx.recv()) run(*job); // as recv().resume_on(pool.executor())
//
#pragma once

#include <cochan/concepts.hpp>

#include <type_traits>
#include <utility>

namespace cochan {

/// A channel endpoint (`Endpoint`: any sender or receiver type, one-shot ends included) that
/// carries a resumption target, so every awaitable it returns resumes through `target` as if
/// `.resume_on(target)` had been written on each call. It *is* an `Endpoint` (it derives from
/// it): every other member, `select`, `make_op_source` and the Asio adapter take it as the
/// endpoint it wraps. Operations that do not wait (`try_*`, an unbounded `send`, `close`, the
/// queries) and the blocking calls are the endpoint's own.
///
/// Copying and moving copy or move the endpoint (with its rules: an SPMC sender is move-only)
/// and the target. Thread safety: as `Endpoint`; the target is only copied, on every awaitable.
template <class Endpoint, resume_target Target> class executor_bound : public Endpoint {
  public:
    executor_bound(Target target, Endpoint endpoint)
        : Endpoint(std::move(endpoint)), target_(std::move(target)) {}

    /// Where this endpoint's awaitables resume.
    const Target& target() const noexcept { return target_; }
    /// The endpoint without the target (a copy, or the endpoint itself for a move-only one).
    Endpoint& endpoint() & noexcept { return *this; }
    const Endpoint& endpoint() const& noexcept { return *this; }
    Endpoint&& endpoint() && noexcept { return std::move(*this); }

    /// `Endpoint::recv(args...)`, resuming through the target.
    template <class... Args> auto recv(Args&&... args) const requires requires(const Endpoint& e) {
        e.recv(std::forward<Args>(args)...);
    }
    { return on_target(Endpoint::recv(std::forward<Args>(args)...)); }
    /// One-shot receivers receive through non-const members.
    template <class... Args>
    auto recv(Args&&... args) requires(
        !requires(const Endpoint& e) { e.recv(std::forward<Args>(args)...); } &&
        requires(Endpoint & e) { e.recv(std::forward<Args>(args)...); }) {
        return on_target(Endpoint::recv(std::forward<Args>(args)...));
    }

    /// `Endpoint::recv_many(out, max[, token])`, resuming through the target.
    template <class... Args>
    auto recv_many(Args&&... args) const requires requires(const Endpoint& e) {
        e.recv_many(std::forward<Args>(args)...);
    }
    { return on_target(Endpoint::recv_many(std::forward<Args>(args)...)); }

    /// `Endpoint::send(v[, token])`: a bounded send resumes through the target; an unbounded
    /// or one-shot send (never waits) returns its result as it is. Const where the endpoint's
    /// is (MPMC), non-const otherwise (SPMC).
    template <class... Args> auto send(Args&&... args) const requires requires(const Endpoint& e) {
        e.send(std::forward<Args>(args)...);
    }
    { return on_target(Endpoint::send(std::forward<Args>(args)...)); }
    template <class... Args>
    auto send(Args&&... args) requires(
        !requires(const Endpoint& e) { e.send(std::forward<Args>(args)...); } &&
        requires(Endpoint & e) { e.send(std::forward<Args>(args)...); }) {
        return on_target(Endpoint::send(std::forward<Args>(args)...));
    }

  private:
    /// An awaitable gets `.resume_on(target_)`; a result (the operation never waits) is
    /// returned as it is.
    /// `r` is a prvalue argument, so even a non-movable awaitable is built in place here.
    template <class R> auto on_target(R r) const {
        if constexpr (requires { std::move(r).resume_on(target_); }) {
            return std::move(r).resume_on(target_);
        } else {
            return r;
        }
    }

    Target target_;
};

/// Binds `endpoint` to `target` (a `poster`, or an executor `poster_traits` adapts, such as an
/// Asio executor with `<cochan/asio.hpp>`): the returned endpoint's awaitables resume through
/// it, as if `.resume_on(target)` were written on each. Takes the endpoint by value (move a
/// move-only one in).
template <resume_target Target, class Endpoint>
executor_bound<Endpoint, std::decay_t<Target>> resume_on(Target&& target, Endpoint endpoint) {
    return {std::forward<Target>(target), std::move(endpoint)};
}

/// `resume_on(target, endpoint)`'s former name, kept so that code written against it still
/// compiles. Not Asio's `bind_executor`, which binds a completion handler, not an endpoint.
template <resume_target Target, class Endpoint>
executor_bound<Endpoint, std::decay_t<Target>> bind_executor(Target&& target, Endpoint endpoint) {
    return resume_on(std::forward<Target>(target), std::move(endpoint));
}

} // namespace cochan

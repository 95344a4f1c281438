// cochan: select, one value from whichever of several channels has one first.
//
//     auto r = co_await cochan::select(urgent_rx, normal_rx);  // recv_result<std::variant<A, B>>
//     if (r && r->index() == 0) handle(std::get<0>(*r));
//
#pragma once

#include <cochan/concepts.hpp>
#include <cochan/detail/config.hpp>
#include <cochan/detail/endpoints.hpp>
#include <cochan/detail/op_state.hpp>
#include <cochan/detail/operations.hpp>
#include <cochan/detail/select_branches.hpp>
#include <cochan/detail/select_claim.hpp>
#include <cochan/detail/trampoline.hpp>
#include <cochan/detail/waiter.hpp>
#include <cochan/result.hpp>
#include <cochan/stop_token.hpp>

#include <coroutine>
#include <cstddef>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

namespace cochan {

namespace detail {

/// The queue behind a channel receiver type (deduced through its `basic_receiver` base).
template <class Queue> Queue* receiver_queue_of(const basic_receiver<Queue>&); // never defined
template <class R>
using receiver_queue_t =
    std::remove_pointer_t<decltype(detail::receiver_queue_of(std::declval<const R&>()))>;

/// `co_await cochan::select(rx...)`. Awaited in place: neither copyable nor movable. Thread
/// safety: one awaitable is awaited by one coroutine.
///
/// Life:
/// - await_ready tries the receivers in index order, as `try_select` does (try_all: the value
///   moves once, from its channel into `now_`): a select that finds a value completes there,
///   with no claim, no reference and no waiter.
/// - await_suspend (nothing was there) takes a counted reference to every channel, so a branch
///   can be unlinked whatever happens to the receivers meanwhile, then makes one receive
///   operation state per channel and links them in index order. A branch that finds a value
///   takes it (winning the claim, detail/select_claim.hpp) and linking stops; a branch whose
///   channel has ended is counted and skipped; once anyone has decided the claim, linking
///   stops. The coroutine suspends unless this thread decided; the decision's one notification
///   resumes it (never from inside await_suspend: see select_claim's `armed_`).
/// - await_resume unlinks every other branch, each under its own channel's lock, and moves the
///   winner's value out.
///
/// `Token` is a `stoppable_token` (`select(token, rx...)`) or `no_stop_token` (`select(rx...)`):
/// a select made without a token holds none and registers no stop callback.
template <class Resume, class Token, class... Queues> class [[nodiscard]] select_awaitable {
    static constexpr std::size_t branches = sizeof...(Queues);
    static constexpr bool stoppable = !std::is_same_v<Token, no_stop_token>;
    using receivers = std::tuple<const basic_receiver<Queues>*...>;

  public:
    using value_type = std::variant<typename Queues::value_type...>;
    using result_type = recv_result<value_type>;

    select_awaitable(Token token, Resume resume, receivers rx)
        : rx_(std::move(rx)), claim_(static_cast<int>(branches), &wake, this),
          token_(std::move(token)), resume_(std::move(resume)) {}
    select_awaitable(const select_awaitable&) = delete;
    select_awaitable& operator=(const select_awaitable&) = delete;

    /// Destroyed while waiting (its coroutine was destroyed), or after await_suspend threw:
    /// the claim is decided first, so no channel grants a branch any more; then every branch
    /// unlinks (member destruction), and a winner whose value was never delivered gives it back.
    ~select_awaitable() {
        if (completed_now_) now_.~result_type();
        if (!branches_) return; // never linked: nothing to undo
        stop_cb_.reset();
        claim_.decide(select_claim::cancelled);
        trampoline::withdraw(&node_);
    }

    /// The same select, but the woken coroutine is resumed by `post(handle)` instead of inline
    /// on the completing thread (as `recv().resume_on(post)`). Call before awaiting.
    template <resume_target Post>
    select_awaitable<resume_via_t<Post>, Token, Queues...> resume_on(Post&& post) && {
        return {std::move(token_), resume_via_t<Post>{make_poster(std::forward<Post>(post))}, rx_};
    }

    /// Takes the first value there is, lowest index first; true if it did, or if every channel
    /// has ended, or if the token is already stopped (then `cancelled`, even with a value).
    /// The value moves once, from its channel into `now_` (try_all).
    bool await_ready() {
        if (token_.stop_requested()) {
            ::new (static_cast<void*>(std::addressof(now_)))
                result_type(std::in_place_index<1>, recv_errc::cancelled);
        } else {
            ::new (static_cast<void*>(std::addressof(now_))) result_type(try_all<result_type>(rx_));
            if (!now_ && now_.error() == recv_errc::empty) {
                now_.~result_type();
                return false;
            }
        }
        completed_now_ = true;
        return true;
    }

    /// Links the branches. true: suspended; another thread may resume (and destroy) this
    /// coroutine at once, so nothing here touches *this after the claim's `suspend()`.
    template <class Promise> bool await_suspend(std::coroutine_handle<Promise> h) {
        resume_.adopt(h);
        node_.handle_ = h;
        std::apply([this](const auto*... rx) { link_all(make_op_source(*rx).queue...); }, rx_);
        if constexpr (stoppable) {
            if (token_.stop_possible()) stop_cb_.emplace(token_, canceller{this});
        }
        if (branches_->link(claim_)) return false; // decided by this thread: nothing will notify
        // Every branch linked or skipped, the owner's unit of `armed_` not yet taken: a channel
        // or the stop callback may decide the select here (another thread); suspend() then
        // sees that the notification came first, and the coroutine goes on without suspending.
        COCHAN_DETAIL_INTERLEAVE(select_linked);
        return claim_.suspend();
    }

    /// The value or the error. Exception safety: if a `T`'s move out of a value taken at once
    /// throws, the value goes back to its channel (as a receive's, detail/operations.hpp) and
    /// the exception propagates.
    result_type await_resume() {
        if (completed_now_) {
            if constexpr (std::is_nothrow_move_constructible_v<result_type>) {
                return std::move(now_);
            } else {
                try {
                    return std::move(now_);
                } catch (...) {
                    give_back_now();
                    throw;
                }
            }
        }
        stop_cb_.reset(); // waits for a stop callback running on another thread
        const int decision = claim_.decision();
        branches_->abandon_all_but(decision);
        return branches_->result(decision);
    }

  private:
    /// Takes the references and makes the branches' states (not linked yet).
    void link_all(queue_ref<Queues>... queues) {
        branches_.emplace(queues.get()...);
        queues_.emplace(std::move(queues)...);
    }

    /// The value taken at once, whose move out threw (it is still in `now_`), back to its
    /// channel: to the next waiting receiver, else the head of the buffer when there is room,
    /// as the receive's give-back does. If the value's move throws again, it is destroyed.
    void give_back_now() noexcept {
        [this]<std::size_t... I>(std::index_sequence<I...>) {
            ((now_->index() == I ? give_back_now<I>() : void()), ...);
        }
        (std::index_sequence_for<Queues...>{});
    }
    template <std::size_t I> void give_back_now() noexcept {
        std::optional<std::variant_alternative_t<I, value_type>> back;
        try {
            back.emplace(std::move(std::get<I>(*now_)));
        } catch (...) {
            return; // moved neither way: the value stays in `now_`, destroyed with it
        }
        queue_of(*std::get<I>(rx_))->give_back(back, false); // its permit was freed
    }

    /// The select's notification: resume the owner (select_claim calls it once).
    static void wake(void* p) noexcept {
        auto& self = *static_cast<select_awaitable*>(p);
        struct holds_its_queues { // the select's references keep every queue alive
            void keep_queue() noexcept {}
        } state;
        self.resume_(&self.node_, state);
    }

    struct canceller {
        select_awaitable* self;
        void operator()() const noexcept { self->claim_.cancel(); }
    };

    receivers rx_; // the caller's receivers, alive until the co_await ends
    union {
        result_type now_; // completed in await_ready (completed_now_), built in place
    };
    bool completed_now_ = false;
    std::optional<std::tuple<queue_ref<Queues>...>> queues_; // taken to link; destroyed last
    select_claim claim_; // outlives the branches, which may still be linked until destroyed
    waiter_base node_;   // the select's own node: its handle, and its place on the trampoline
    std::optional<select_branches<Queues...>> branches_; // made to link
    /// Without a token: no callback to register or to wait for.
    struct no_callback {
        static void reset() noexcept {}
    };
    [[no_unique_address]] Token token_; // a stoppable_token, or no_stop_token
    [[no_unique_address]] std::conditional_t<
        stoppable, std::optional<stop_callback_for_t<state_token_t<Token>, canceller>>, no_callback>
        stop_cb_;
    [[no_unique_address]] Resume resume_;
};

/// try_select's pass, from receiver J on: the first channel (lowest index) with a value gives
/// it, moved once, from where it waited into the result (built in place: every step returns its
/// prvalue as it is); else `disconnected` if every channel has ended (`ended`: those before J
/// have), else `empty`. Each channel's lock is released before the next channel is tried.
/// Exception safety: strong (if `T`'s move throws, the value stays in its channel).
template <class Result, std::size_t J = 0, class... Queues>
Result try_all(const std::tuple<const basic_receiver<Queues>*...>& rx, bool ended = true) {
    if constexpr (J == sizeof...(Queues)) {
        return Result(std::in_place_index<1>, ended ? recv_errc::disconnected : recv_errc::empty);
    } else {
        using T = typename std::tuple_element_t<J, std::tuple<Queues...>>::value_type;
        return queue_of(*std::get<J>(rx))
            ->try_recv_as(
                [](T&& v) { return Result(std::in_place, std::in_place_index<J>, std::move(v)); },
                [&rx, ended](recv_errc none) {
                    return try_all<Result, J + 1>(rx, ended && none == recv_errc::disconnected);
                });
    }
}

template <class Token, class... Rx>
using select_awaitable_for = select_awaitable<resume_default, Token, receiver_queue_t<Rx>...>;

template <class... Rx>
using select_result_for = recv_result<std::variant<typename Rx::value_type...>>;

template <class... Rx> auto select_receivers(const Rx&... rx) {
    return std::tuple<const basic_receiver<receiver_queue_t<Rx>>*...>(&rx...);
}

} // namespace detail

/// A channel receiver (`spmc::` or `mpmc::` bounded, unbounded or rendezvous receivers): what
/// `select` and `try_select` take.
template <class R>
concept channel_receiver = requires(const R& rx) {
    detail::receiver_queue_of(rx);
};

/// `co_await cochan::select(rx_0, rx_1, ...)`: the first value any of the receivers' channels
/// has, as `recv_result<std::variant<T_0, T_1, ...>>` whose `index()` names the receiver it
/// came from (repeated types allowed: use `std::get<I>`). Biased: when several channels have a
/// value, the lowest index wins (priority lanes). A channel that is disconnected and drained
/// is skipped; when all are, the result is `disconnected`. Exactly one value is taken: the
/// select waits with one waiter in each channel's FIFO (in its turn, like any receive), and a
/// channel can hand a value to a waiter only by deciding the select for it, so no value is ever
/// granted to a branch that cannot take it.
///
/// Resumes: by default on the thread that completed it (the sender whose value it took, the
/// thread whose disconnection ended the last branch, or the one that requested the stop), after
/// the channel's lock is released, through the per-thread trampoline; with `.resume_on(post)`,
/// wherever `post(handle)` resumes it. A select that finds a value does not suspend.
/// Thread safety: the receivers are only read; any of them may be used by other threads at the
/// same time. Exception safety: if `T`'s move throws while the select takes a value, the
/// exception propagates from the `co_await` and the value stays in its channel.
template <channel_receiver... Rx>
requires(sizeof...(Rx) >= 2) auto select(const Rx&... rx) {
    return detail::select_awaitable_for<detail::no_stop_token, Rx...>(
        {}, {}, detail::select_receivers(rx...));
}

/// As `select(rx...)`, and a stop request on `token` while it waits completes it with
/// `cancelled` unless a channel decided it first; no value is lost either way. A token already
/// stopped cancels it even if a value is there (use `try_select` first to take what is there).
template <stoppable_token Token = default_stop_token, channel_receiver... Rx>
requires(sizeof...(Rx) >= 2) auto select(Token token, const Rx&... rx) {
    return detail::select_awaitable_for<Token, Rx...>(std::move(token), {},
                                                      detail::select_receivers(rx...));
}

/// A select over one receiver is a plain receive: deleted, and the compiler quotes the reason.
template <channel_receiver Rx>
void select(const Rx&) = delete; // select needs two or more receivers: use rx.recv()
template <stoppable_token Token, channel_receiver Rx>
void select(Token, const Rx&) = delete; // select needs two or more receivers
template <channel_receiver Rx>
void try_select(const Rx&) = delete; // try_select needs two or more receivers: use rx.try_recv()

/// Never waits: the first receiver (lowest index) whose channel has a value gives it;
/// `empty` when none has one, `disconnected` when every channel is disconnected and drained.
/// Exception safety: strong: the value moves once, from its channel into the result; if that
/// throws, the value stays where it was (the head of its channel, or with its waiting
/// rendezvous sender).
template <channel_receiver... Rx>
requires(sizeof...(Rx) >= 2) auto try_select(const Rx&... rx) {
    return detail::try_all<detail::select_result_for<Rx...>>(detail::select_receivers(rx...));
}

} // namespace cochan

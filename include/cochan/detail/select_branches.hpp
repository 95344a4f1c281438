// cochan: the branches of one select, one receive operation state per channel, shared by the
// coroutine select (cochan/select.hpp) and the Asio one (detail/asio_adapter.hpp).
#pragma once

#include <cochan/detail/config.hpp>
#include <cochan/detail/op_state.hpp>
#include <cochan/detail/select_claim.hpp>
#include <cochan/result.hpp>

#include <cstddef>
#include <tuple>
#include <utility>
#include <variant>

namespace cochan::detail {

/// A select's receive states, branch `I` on `Queues...[I]`, all joined to one `select_claim`
/// (which must outlive them: they may stay linked until they are destroyed). The owner links
/// them once, waits for the claim's one notification, then unlinks every branch but the winner
/// and takes the winner's value (or gives it back). Owner only: one thread at a time, except
/// that the channels complete linked branches under their own locks (select_claim.hpp).
template <class... Queues> class select_branches {
    static constexpr std::size_t count = sizeof...(Queues);

  public:
    using value_type = std::variant<typename Queues::value_type...>;
    using result_type = recv_result<value_type>;

    explicit select_branches(Queues*... queues) : states_(queues...) {}
    select_branches(const select_branches&) = delete;
    select_branches& operator=(const select_branches&) = delete;
    ~select_branches() = default; // each state unlinks itself and gives back a value it holds

    /// Before link(): every branch's delivery is deferred (recv_op_state::defer_delivery): a
    /// value taken at once keeps its permit, so giving it back after a late cancellation always
    /// finds room.
    void defer_delivery() noexcept {
        std::apply([](auto&... state) { (state.defer_delivery(), ...); }, states_);
    }

    /// Links branch 0, 1, ... in its channel. A branch that finds a value takes it (winning the
    /// claim) and linking stops; a branch whose channel has ended is counted and skipped; once
    /// anyone has decided the claim, linking stops. True when this thread decided the claim (it
    /// took a value, or every channel had ended), so no notification will come. If a move of a
    /// value throws, the claim is `abandoned` and the exception propagates (the value stays in
    /// its channel).
    bool link(select_claim& claim) { return link<0>(claim); }

    /// Unlinks every branch but `winner` (a branch index, or a negative decision for none),
    /// each under its own channel's lock. Until then a branch may still be linked, and its
    /// channel skips it (a grant there loses the claim and passes the value on).
    void abandon_all_but(int winner) noexcept {
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (abandon_unless<I>(winner), ...);
        }
        (std::make_index_sequence<count>{});
    }

    /// The select's result for `decision` (select_claim::decision()): the winner's value,
    /// moved once into the result's variant at its index, or `disconnected` / `cancelled` for a
    /// negative decision. If the move throws, the value stays in the state (its destruction
    /// gives it back).
    result_type result(int decision) {
        if (decision >= 0) return take<0>(decision);
        return result_type(std::in_place_index<1>, decision == select_claim::disconnected
                                                       ? recv_errc::disconnected
                                                       : recv_errc::cancelled);
    }

    /// The winner's value will not be delivered (its delivery was cancelled): back to its
    /// channel, the next waiting receiver else the head of the buffer.
    void give_back(int winner) noexcept {
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ((static_cast<int>(I) == winner ? std::get<I>(states_).give_back() : void()), ...);
        }
        (std::make_index_sequence<count>{});
    }

  private:
    template <std::size_t I> bool link(select_claim& claim) {
        if constexpr (I == count) {
            return claim.branch_ended(); // the owner's own unit of `live_`
        } else {
            auto& state = std::get<I>(states_);
            state.join_select(claim, static_cast<int>(I));
            if (state.start(&select_claim::notify_branch, {})) return link<I + 1>(claim); // linked
            switch (state.outcome_) {
            case outcome::disconnected:
                claim.branch_ended(); // never the last: the owner still holds its unit
                return link<I + 1>(claim);
            case outcome::cancelled: return false; // decided elsewhere; that one notifies
            default: return true;                  // took a value: decided by this thread
            }
        }
    }

    template <std::size_t I> void abandon_unless(int winner) noexcept {
        if (static_cast<int>(I) == winner) return;
        // Decided, branches before this one unlinked, this one maybe still linked: another
        // thread may send to its channel here.
        COCHAN_DETAIL_INTERLEAVE(select_unlink);
        std::get<I>(states_).abandon();
    }

    template <std::size_t I> result_type take(int winner) {
        if constexpr (I + 1 < count) {
            if (winner != static_cast<int>(I)) return take<I + 1>(winner);
        }
        return std::get<I>(states_).template result<result_type>(std::in_place_index<I>);
    }

    std::tuple<recv_op_state<Queues>...> states_;
};

} // namespace cochan::detail

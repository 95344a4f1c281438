// priority_lanes: one worker serves a control channel and two job lanes with cochan::select.
// The select is biased to the lowest index, so control messages go first, then urgent jobs,
// then normal ones. A signal (SIGINT, SIGTERM) stops the worker through a stop_token: the
// waiting select completes `cancelled` without losing a value, and the worker drains what is
// left with try_select before it exits. To end on its own, the program signals itself once
// the producers are done.
#include <cochan/cochan.hpp>

#include <csignal>
#include <cstdio>
#include <exception>
#include <pthread.h>
#include <semaphore>
#include <stop_token>
#include <string>
#include <thread>
#include <unistd.h>
#include <variant>

struct job {
    int id = 0;
};
enum class command { report };

struct detached {
    struct promise_type {
        detached get_return_object() noexcept { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { std::terminate(); }
    };
};

struct tally {
    int urgent = 0, normal = 0, reports = 0;
};

// Handles one value of the select's variant: index 0 control, 1 urgent, 2 normal.
void handle(const std::variant<command, job, job>& v, tally& t) {
    switch (v.index()) {
    case 0: ++t.reports; break;
    case 1: ++t.urgent; break;
    default: ++t.normal; break;
    }
}

// [readme-begin] priority_lanes
detached worker(cochan::mpmc::unbounded_receiver<command> control,
                cochan::mpmc::bounded_receiver<job> urgent,
                cochan::mpmc::bounded_receiver<job> normal, std::stop_token stop, tally& t,
                std::binary_semaphore& finished) {
    for (;;) {
        auto r = co_await cochan::select(stop, control, urgent, normal);
        if (!r) break; // cancelled by the signal, or every lane disconnected and drained
        handle(*r, t);
    }
    // Stopped: take what is still queued, most important first, without waiting.
    while (auto r = cochan::try_select(control, urgent, normal)) handle(*r, t);
    finished.release();
}
// [readme-end] priority_lanes

int main() {
    // Signals go to one thread that waits for them and turns the first into a stop request.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr); // inherited by every thread made below
    std::stop_source stop;
    std::thread signal_waiter([&] {
        int sig = 0;
        sigwait(&signals, &sig);
        std::printf("signal %d: stopping\n", sig);
        stop.request_stop(); // the waiting select completes `cancelled` on this thread
    });

    auto [ctl_tx, ctl_rx] = cochan::mpmc::unbounded<command>();
    auto [urgent_tx, urgent_rx] = cochan::mpmc::bounded<job>(16);
    auto [normal_tx, normal_rx] = cochan::mpmc::bounded<job>(16);
    tally t;
    std::binary_semaphore finished(0);
    worker(ctl_rx, urgent_rx, normal_rx, stop.get_token(), t, finished);

    constexpr int jobs = 2000;
    std::thread urgent_producer([tx = urgent_tx] {
        for (int i = 0; i < jobs / 10; ++i) (void)tx.blocking_send(job{i});
    });
    std::thread normal_producer([tx = normal_tx] {
        for (int i = 0; i < jobs; ++i) (void)tx.blocking_send(job{i});
    });
    for (int i = 0; i < 5; ++i) (void)ctl_tx.send(command::report);
    urgent_producer.join();
    normal_producer.join();
    kill(getpid(), SIGTERM); // as an operator would: the worker stops and drains
    signal_waiter.join();
    finished.acquire();
    std::printf("handled %d reports, %d urgent and %d normal jobs\n", t.reports, t.urgent,
                t.normal);
    // Every value sent was handled exactly once, before or after the stop.
    return t.reports == 5 && t.urgent == jobs / 10 && t.normal == jobs ? 0 : 1;
}

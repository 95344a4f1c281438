// batch_consumer: a writer that handles log lines in batches. A producer thread sends lines one
// by one; the consumer coroutine takes up to 64 at a time with recv_many (one lock section and
// one wake-up per batch, not per line) and "flushes" each batch. A receiver can also end the
// stream itself with rx.close(): here the consumer closes it after enough lines, and the
// producer's next send gets its line back with `disconnected`.
#include <cochan/spmc.hpp>

#include <atomic>
#include <condition_variable>
#include <coroutine>
#include <cstdio>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

// A minimal single-threaded event loop that cochan resumes coroutines on (resume_on).
class loop {
  public:
    void post(std::coroutine_handle<> h) {
        std::lock_guard lock(mutex_);
        queue_.push_back(h);
        cv_.notify_one();
    }
    void run_until(const std::atomic<bool>& done) {
        while (!done) {
            std::unique_lock lock(mutex_);
            cv_.wait(lock, [&] { return !queue_.empty() || done; });
            if (queue_.empty()) return;
            auto h = queue_.front();
            queue_.pop_front();
            lock.unlock();
            h.resume();
        }
    }
    auto poster() {
        return [this](std::coroutine_handle<> h) { post(h); };
    }

  private:
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<std::coroutine_handle<>> queue_;
};

struct detached {
    struct promise_type {
        detached get_return_object() noexcept { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { std::terminate(); }
    };
};

detached writer(cochan::spmc::bounded_receiver<std::string> rx, loop& on, std::size_t enough,
                std::atomic<bool>& done) {
    std::vector<std::string> batch;
    batch.reserve(64);
    std::size_t written = 0;
    std::size_t batches = 0;
    for (;;) {
        batch.clear();
        auto n = co_await rx.recv_many(batch, 64).resume_on(on.poster());
        if (!n) break; // disconnected: the producer is done (or we closed it) and all is drained
        ++batches;
        written += *n; // a real writer would write the batch to a file or socket here
        if (written >= enough) rx.close(); // enough: close the channel for sending; drain the rest
    }
    std::printf("wrote %zu lines in %zu batches\n", written, batches);
    done = true;
    on.post(std::noop_coroutine()); // wake the loop so it sees `done`
}

int main() {
    constexpr std::size_t enough = 5000;
    auto [tx, rx] = cochan::spmc::bounded<std::string>(256);
    loop on;
    std::atomic<bool> done{false};
    writer(std::move(rx), on, enough, done);

    std::thread producer([tx = std::move(tx)]() mutable {
        for (int i = 0;; ++i) {
            auto sent = tx.blocking_send("line " + std::to_string(i));
            if (!sent) { // the writer closed the channel: our line came back
                std::printf("writer closed the channel; line \"%s\" came back unsent\n",
                            sent.error().value.c_str());
                return;
            }
        }
    });
    on.run_until(done);
    producer.join();
}

// The channel lock (detail/lock.hpp) on its own, with each way of sleeping it has (the futex
// of Linux, std::atomic::wait, the mutex table of platforms without a sound atomic wait), all
// run here on Linux: mutual exclusion under contention, a sleeping waiter woken by the release,
// and the one wake-up the futex lock's plain-store release can miss, which must cost a bounded
// sleep, never a hang.
//
// Its own executable: it defines COCHAN_DETAIL_LOCK_GAP, a hook inside channel_lock::unlock(),
// for every cochan header it includes (the other test executables keep the default no-op).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace lock_test {
/// Runs in the gap of every release that found the lock unmarked; set by a test.
inline void (*gap_hook)() = nullptr;
inline void at_gap() {
    if (gap_hook != nullptr) gap_hook();
}
} // namespace lock_test

#define COCHAN_DETAIL_LOCK_GAP() ::lock_test::at_gap()

#include <catch2/catch.hpp>
#include <cochan/detail/lock.hpp>

using cochan::detail::basic_channel_lock;
using cochan::detail::channel_lock;
using cochan::detail::lock_section;
using cochan::detail::table_sleep;
#if defined(__linux__)
using cochan::detail::futex_sleep;
#endif
#if COCHAN_DETAIL_HAS_ATOMIC_SLEEP
using cochan::detail::atomic_sleep;
#endif

/// Every sleep this platform can build, for TEMPLATE_LIST_TEST_CASE.
using sleeps = std::tuple<table_sleep
#if COCHAN_DETAIL_HAS_ATOMIC_SLEEP
                          ,
                          atomic_sleep
#endif
#if defined(__linux__)
                          ,
                          futex_sleep
#endif
                          >;

TEMPLATE_LIST_TEST_CASE("channel_lock: four threads on two cores never hold it together", "",
                        sleeps) {
    // More threads than cores: holders are preempted inside the section, so waiters exhaust
    // their spin and sleep, and releases take every path (store, exchange, wake-up). A broken
    // exclusion shows as a torn pair or a lost increment (and as a race under TSan); a lost
    // wake-up where sleeps have no limit, as a hang that ctest's timeout turns into a failure.
    basic_channel_lock<TestType> lock;
    std::uint64_t a = 0; // guarded by lock
    std::uint64_t b = 0; // guarded by lock; always equal to a outside the section
    std::atomic<bool> torn{false};
    constexpr int threads = 4;
    constexpr int rounds = 100'000;
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&] {
            for (int i = 0; i < rounds; ++i) {
                lock.lock();
                if (a != b) torn.store(true, std::memory_order_relaxed);
                ++a;
                if (i % 64 == 0) std::this_thread::yield(); // invite preemption while held
                ++b;
                lock.unlock();
            }
        });
    }
    for (auto& t : pool) t.join();
    CHECK_FALSE(torn.load());
    CHECK(a == std::uint64_t{threads} * rounds);
    CHECK(b == a);
}

TEST_CASE("channel_lock: lock_section releases at the end of its scope or at unlock()") {
    channel_lock lock;
    {
        lock_section section(lock);
        std::thread other([&] {
            // Taken only once the section below released it: a section that never released
            // would hang here (ctest's timeout fails the test).
            lock_section second(lock);
        });
        section.unlock();
        other.join();
    }
    lock_section again(lock); // the scope's end released nothing twice
}

#if defined(__linux__)
namespace {

/// The scheduler's view of a thread of this process: true while it sleeps in a futex wait.
bool asleep_on_futex(long tid) {
    const std::string task = "/proc/self/task/" + std::to_string(tid);
    std::ifstream stat(task + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')'); // the name may hold spaces; the state follows it
    if (close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'S') {
        return false;
    }
    std::ifstream wchan(task + "/wchan");
    std::string where;
    std::getline(wchan, where);
    // Kernels that hide wchan print "0": then a sleeping state is the best evidence there is.
    return where == "0" || where.find("futex") != std::string::npos;
}

/// Waits until the thread `tid` is asleep in the kernel (a futex: the lock's own sleep, and the
/// condition variable and std::atomic::wait of libstdc++ on Linux, all sleep there).
void wait_until_asleep(const std::atomic<long>& tid) {
    long id = 0;
    while ((id = tid.load()) == 0) std::this_thread::yield();
    while (!asleep_on_futex(id)) std::this_thread::yield();
}

/// Fails the process unless `done` becomes true within 30 s: a hang detector, not a timing
/// check (the waits it guards take microseconds).
std::thread watchdog(const std::atomic<bool>& done, const char* diagnosis) {
    return std::thread([&done, diagnosis] {
        for (int i = 0; i < 30'000 && !done.load(); ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        if (!done.load()) {
            std::fputs(diagnosis, stderr);
            std::_Exit(1);
        }
    });
}

std::atomic<long> waiter_tid{0};
std::atomic<int> gaps{0};
channel_lock* gap_lock = nullptr; // the lock the test releases
std::thread waiter;               // started inside the gap
std::atomic<bool> acquired{false};

/// The first release's gap, entered after it read "1, nobody sleeping": only now does the
/// waiter start, so its mark cannot come before that read. It marks the lock and falls asleep
/// on it; then this returns and the release stores 0 without a wake-up.
void start_waiter_in_gap() {
    if (gaps.fetch_add(1) != 0) return;
    waiter = std::thread([] {
        waiter_tid.store(static_cast<long>(::syscall(SYS_gettid)));
        gap_lock->lock();
        acquired.store(true);
        gap_lock->unlock();
    });
    wait_until_asleep(waiter_tid);
}

} // namespace

TEMPLATE_LIST_TEST_CASE("channel_lock: a waiter asleep on a held lock is woken by its release", "",
                        sleeps) {
    // The waiter exhausts its spin and sleeps (it is seen asleep in the kernel) before the
    // holder releases: only the release's wake-up (or, for the futex, the sleep's time limit)
    // can let it in. A release that woke nobody would leave it asleep for good where sleeps
    // have no limit: the watchdog fails the test.
    basic_channel_lock<TestType> lock;
    std::atomic<long> tid{0};
    std::atomic<bool> taken{false};
    lock.lock();
    std::thread waiter([&] {
        tid.store(static_cast<long>(::syscall(SYS_gettid)));
        lock.lock();
        taken.store(true);
        lock.unlock();
    });
    wait_until_asleep(tid);
    CHECK_FALSE(taken.load());
    std::thread guard = watchdog(taken, "the waiter was never woken by the lock's release\n");
    lock.unlock();
    waiter.join();
    guard.join();
    CHECK(taken.load());
}

TEST_CASE("channel_lock: a waiter asleep before an unmarked release still takes the lock") {
    // The lost wake-up of detail/lock.hpp, made deterministic: this thread holds the lock and
    // is inside unlock(), past reading "1, nobody sleeping", when the waiter marks 2 and falls
    // asleep; the release then stores 0 and wakes nobody. The waiter's sleep is bounded, so it
    // looks again and takes the lock. A lock whose sleep were unbounded would leave it asleep
    // for good: the watchdog below then fails the test (a hang detector, not a timing check).
    channel_lock lock;
    gap_lock = &lock;
    lock.lock();
    lock_test::gap_hook = start_waiter_in_gap;
    lock.unlock(); // the gap hook runs inside, and starts the waiter
    lock_test::gap_hook = nullptr;
    REQUIRE(gaps.load() == 1);
    std::thread guard =
        watchdog(acquired, "the waiter was never woken: the lock's lost wake-up is not bounded\n");
    waiter.join();
    guard.join();
    CHECK(acquired.load());
}
#endif

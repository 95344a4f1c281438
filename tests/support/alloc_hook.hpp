// An allocation that fails at the k-th call, for fault-injection tests: every test executable
// that includes this header links support/alloc_hook.cpp, which replaces the global operator
// new and delete (every form) and arms the failure per thread.
#pragma once

// clang's TSan and MSan runtimes link their own operator new/delete as strong symbols (a
// replacement would be defined twice), so those builds go without the hook and its tests. g++'s
// sanitizers, and clang's ASan and UBSan, accept the replacement.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define COCHAN_TEST_NO_ALLOC_HOOK 1
#endif
#endif

#ifndef COCHAN_TEST_NO_ALLOC_HOOK
namespace cochan_test {

// Armed with k, the (k + 1)-th allocation on this thread throws std::bad_alloc; -1: never.
// Per thread, so a thread of another test (all are joined before their test ends) or of the
// runtime can never consume the budget.
extern thread_local long fail_alloc_after;

} // namespace cochan_test
#endif

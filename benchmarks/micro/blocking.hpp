// micro_bench: the blocking calls, in their own translation unit (blocking.cpp): their code
// calls the queue's try_send too, and in main.cpp's unit that led g++ to stop inlining it into
// the try_pair loop (docs/decisions.md, D-024).
#pragma once

namespace micro {
/// Registers micro/blocking_buffered/<none,token>, micro/blocking_pingpong/<kind> and
/// micro/mutex_cv_pingpong (see main.cpp's list).
void register_blocking();
} // namespace micro

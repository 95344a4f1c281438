# Runs fuzz_channel on a fresh copy of the seed corpus for SECONDS seconds (the checked-in corpus
# is never written to). Fails on any crash, sanitizer report or model mismatch: libFuzzer then
# exits non-zero and saves the input under WORK/artifacts/.
# Usage: cmake -DFUZZER=... -DCORPUS=... -DWORK=... -DSECONDS=... -P run_fuzz.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/artifacts)
file(GLOB seeds ${CORPUS}/*)
file(COPY ${seeds} DESTINATION ${WORK}/corpus)
list(LENGTH seeds seed_count)
message(STATUS "fuzz_channel: ${seed_count} seed input(s), ${SECONDS} s")
# -max_len=512: up to 255 operations per input, enough to cross segment boundaries and fill
# every waiter list. -len_control=0: long inputs from the start (within a minute libFuzzer would
# not grow past ~130 bytes; long inputs reach more states, at a third of the executions per
# second). -timeout: a hang is a failure.
execute_process(
    COMMAND ${FUZZER} -max_total_time=${SECONDS} -max_len=512 -len_control=0 -timeout=10
            -print_final_stats=1 -artifact_prefix=${WORK}/artifacts/ ${WORK}/corpus
    RESULT_VARIABLE rc)
file(GLOB grown ${WORK}/corpus/*)
list(LENGTH grown corpus_count)
message(STATUS "fuzz_channel: corpus grew from ${seed_count} to ${corpus_count} input(s)")
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "fuzz_channel failed (exit ${rc}). The input is in ${WORK}/artifacts/; "
                        "replay it with: COCHAN_FUZZ_VERBOSE=1 fuzz_channel_replay <file>")
endif()

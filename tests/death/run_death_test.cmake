# cmake -DPROGRAM=<death test> [-DEMULATOR=<runner>] -P run_death_test.cmake
# Passes only if the program got to its misuse, failed a COCHAN_ASSERT there, and did not
# exit normally (on POSIX: SIGABRT; on Windows, std::abort's exit status 3). EMULATOR runs a
# cross-compiled program (Wine, for the MinGW-w64 build).
execute_process(COMMAND ${EMULATOR} ${PROGRAM}
    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("exit: ${result}\nstdout:\n${out}\nstderr:\n${err}")
if(result STREQUAL "0")
    message(FATAL_ERROR "death test exited normally: the misuse was not caught")
endif()
if(NOT "${out}${err}" MATCHES "reached misuse")
    message(FATAL_ERROR "death test failed before it reached the misuse")
endif()
if(NOT err MATCHES "cochan assertion failed")
    message(FATAL_ERROR "death test did not fail through COCHAN_ASSERT")
endif()

# Cross-compiles for 64-bit Windows with Debian's MinGW-w64 g++ (posix threads:
# g++-mingw-w64-x86-64-posix) and runs what it builds under Wine (wine64), so the tests run
# through ctest as on Linux. CI's mingw stage (scripts/check.sh) uses it:
#   cmake -S . -B build/mingw -G Ninja --toolchain cmake/toolchains/mingw-w64.cmake
# Catch2 and standalone Asio are header-only, so their Debian packages serve this build too:
# their headers and Catch2's CMake files are made visible under <build>/mingw-deps (links and a
# copy), since adding the host's /usr/include to a Windows build would bring in glibc's headers.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
# Static: the executables then run under Wine without the MinGW runtime DLLs on its path.
set(CMAKE_EXE_LINKER_FLAGS_INIT -static)

find_program(COCHAN_WINE NAMES wine64 wine PATHS /usr/lib/wine NO_CMAKE_FIND_ROOT_PATH)
if(COCHAN_WINE)
    set(CMAKE_CROSSCOMPILING_EMULATOR ${COCHAN_WINE})
endif()

set(cochan_mingw_deps ${CMAKE_BINARY_DIR}/mingw-deps)
if(NOT EXISTS ${cochan_mingw_deps}/lib/cmake/Catch2 AND EXISTS /usr/lib/cmake/Catch2)
    file(MAKE_DIRECTORY ${cochan_mingw_deps}/include ${cochan_mingw_deps}/lib/cmake)
    foreach(entry catch2 asio asio.hpp)
        if(EXISTS /usr/include/${entry})
            file(CREATE_LINK /usr/include/${entry} ${cochan_mingw_deps}/include/${entry} SYMBOLIC)
        endif()
    endforeach()
    # A copy, not a link: Catch2's targets file finds its include directory relative to itself.
    # Without Catch2WithMain's Linux library (the tests have their own main).
    file(COPY /usr/lib/cmake/Catch2 DESTINATION ${cochan_mingw_deps}/lib/cmake
         PATTERN "Catch2Targets-*.cmake" EXCLUDE)
endif()

set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32 ${cochan_mingw_deps})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

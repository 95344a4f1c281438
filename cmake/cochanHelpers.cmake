# Settings for cochan's own test, example and benchmark targets. All PRIVATE: nothing here
# reaches the cochan target or its consumers.
function(cochan_target_defaults target)
    # Strict ISO C++ so the tests catch reliance on GNU extensions.
    set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF
        CXX_STANDARD ${COCHAN_CXX_STANDARD} CXX_STANDARD_REQUIRED ON)
    if(MSVC)
        target_compile_options(${target} PRIVATE /W4 /WX /permissive-)
    else()
        target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror)
    endif()
    if(COCHAN_SANITIZE)
        # -fno-sanitize-recover: a UBSan finding must fail the test, not just print.
        set(flags -fsanitize=${COCHAN_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
        target_compile_options(${target} PRIVATE ${flags})
        target_link_options(${target} PRIVATE ${flags})
    endif()
endfunction()

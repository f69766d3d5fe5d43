# Sanitizer builds (docs/testing.md).
#
#   cmake -S . -B build-asan -DH5LOOM_SANITIZE=address,undefined
#
# H5LOOM_SANITIZE is a comma-separated list handed to -fsanitize= (GCC and
# Clang). Every target defined after this file is included - the library, the
# command, the examples and every test program - is compiled and linked with
# it, plus -fno-omit-frame-pointer (readable stacks) and, when `undefined` is in
# the list, -fno-sanitize-recover=undefined (a UBSan finding aborts the test
# instead of printing a line nobody reads). The Python extension is not
# affected: the interpreter is not instrumented, so `make test-asan` does not
# run the Python tests.
#
# H5LOOM_FUZZ=ON (Clang only) adds libFuzzer's coverage instrumentation
# (-fsanitize=fuzzer-no-link) to everything and builds tests/fuzz.
set(H5LOOM_SANITIZE "" CACHE STRING "Sanitizers for every target, e.g. address,undefined (empty: none)")
option(H5LOOM_FUZZ "Build the libFuzzer targets in tests/fuzz (Clang; implies coverage instrumentation of the library)" OFF)

if(H5LOOM_SANITIZE)
  string(REPLACE " " "" _h5loom_san "${H5LOOM_SANITIZE}")
  set(_h5loom_san_flags -fsanitize=${_h5loom_san} -fno-omit-frame-pointer)
  if(_h5loom_san MATCHES "(^|,)undefined(,|$)")
    list(APPEND _h5loom_san_flags -fno-sanitize-recover=undefined)
  endif()
  add_compile_options(${_h5loom_san_flags})
  add_link_options(-fsanitize=${_h5loom_san})
  if(CMAKE_C_COMPILER_ID STREQUAL "Clang")
    # The C programs (C API tests) link the C++ library: Clang links the C++
    # part of the sanitizer runtimes (UBSan's vptr checks) into C links only
    # when asked, and that part needs the C++ standard library after it.
    add_link_options(-fsanitize-link-c++-runtime)
    string(APPEND CMAKE_C_STANDARD_LIBRARIES " -lstdc++")
  endif()
  message(STATUS "h5loom: sanitizers ${_h5loom_san} (${_h5loom_san_flags})")
endif()

if(H5LOOM_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "H5LOOM_FUZZ needs Clang (libFuzzer): configure with CC=clang CXX=clang++")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
  message(STATUS "h5loom: libFuzzer coverage instrumentation on")
endif()

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
  # Open findings in code that others own (src/; issue 13), each turned off for
  # its one file and check only, so that the rest of the suite runs under the
  # sanitizers meanwhile. -DH5LOOM_SANITIZE_KNOWN=ON builds without these
  # exemptions. Remove an entry when its fix lands; docs/testing.md lists them.
  option(H5LOOM_SANITIZE_KNOWN "Build without the exemptions for known open sanitizer findings" OFF)
  if(_h5loom_san MATCHES "(^|,)undefined(,|$)" AND NOT H5LOOM_SANITIZE_KNOWN)
    # LogEngine::read_selection: memset(out, 0, 0) with out == nullptr when a
    # 0-element selection is read into an empty vector (conformance
    # dataset.ZeroSizedDataset on every log configuration).
    set_source_files_properties(src/engines/log/log_engine.cpp PROPERTIES COMPILE_OPTIONS -fno-sanitize=nonnull-attribute)
    # The C API takes enums (loom_datatype, ...) from C callers, who may pass any
    # int; its range checks are right, but loading an out-of-range value through
    # the C++ enum type is already UB ((loom_datatype)42 in tests/capi). Fixed
    # when the entry points read the value as an int.
    set_source_files_properties(src/capi/capi.cpp PROPERTIES COMPILE_OPTIONS -fno-sanitize=enum)
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

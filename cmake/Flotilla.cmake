# One helper for libraries and one for tests, so that each folder's
# CMakeLists.txt reads as a list of its parts.

find_package(Threads REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(Boost 1.81.0 EXACT REQUIRED CONFIG COMPONENTS json url system)
find_package(absl REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(CLI11 REQUIRED)
find_package(spdlog REQUIRED)
find_package(GTest REQUIRED)

set(FLOTILLA_WARNINGS -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)

add_compile_definitions(BOOST_ASIO_NO_DEPRECATED BOOST_BEAST_USE_STD_STRING_VIEW)
if(FLOTILLA_FUZZ)
  # Every library instrumented for libFuzzer's coverage, under ASan and UBSan.
  # UBSan's `function` check is left out: clang 14 cannot emit it for
  # coroutines ("Cannot represent a difference across sections", in every
  # file with co_await); the check is of calls through a function pointer
  # of the wrong type, which GCC's sanitizer build does not have either.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=function
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
if(FLOTILLA_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
if(FLOTILLA_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()

# Unity builds: a target's sources under src/ are compiled in batches, each
# batch one file of #includes. Every translation unit parses the same Boost,
# abseil and standard headers and instantiates and optimizes the same inline
# code; batching does that once per batch (docs/benchmarks.md, "Build time").
# The batches name the sources relative to src/, which is on every target's
# include path, so that ccache hits in a checkout at another path (CI clones
# afresh). Helpers private to a .cc file must therefore have names unique in
# their library. -DFLOTILLA_UNITY=OFF compiles file by file.
option(FLOTILLA_UNITY "Compile each target's sources in batches" ON)
set(FLOTILLA_UNITY_BATCH 8 CACHE STRING "Sources per unity batch")

# flotilla_unity(OUT_VAR TARGET_NAME sources...): OUT_VAR is the sources to
# compile: the batches, plus the sources that cannot be batched (outside
# src/, e.g. generated ones).
function(flotilla_unity out_var target)
  if(NOT FLOTILLA_UNITY)
    set(${out_var} ${ARGN} PARENT_SCOPE)
    return()
  endif()
  set(batched "")
  set(rest "")
  foreach(src IN LISTS ARGN)
    get_filename_component(abs ${src} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR}/src ${abs})
    if(rel MATCHES "^\\.\\." OR NOT abs MATCHES "\\.cc$")
      list(APPEND rest ${src})
    else()
      list(APPEND batched ${rel})
    endif()
  endforeach()
  list(LENGTH batched n)
  if(n LESS 2)
    set(${out_var} ${ARGN} PARENT_SCOPE)
    return()
  endif()
  set(out ${rest})
  set(index 0)
  set(content "")
  set(count 0)
  foreach(rel IN LISTS batched)
    string(APPEND content "#include \"${rel}\"\n")
    math(EXPR count "${count} + 1")
    if(count EQUAL FLOTILLA_UNITY_BATCH)
      set(file ${CMAKE_CURRENT_BINARY_DIR}/unity/${target}_${index}.cc)
      file(CONFIGURE OUTPUT ${file} CONTENT "${content}" @ONLY)
      list(APPEND out ${file})
      math(EXPR index "${index} + 1")
      set(content "")
      set(count 0)
    endif()
  endforeach()
  if(count GREATER 0)
    set(file ${CMAKE_CURRENT_BINARY_DIR}/unity/${target}_${index}.cc)
    file(CONFIGURE OUTPUT ${file} CONTENT "${content}" @ONLY)
    list(APPEND out ${file})
  endif()
  set(${out_var} ${out} PARENT_SCOPE)
endfunction()

# flotilla_library(NAME SOURCES a.cc b.cc DEPS other_lib ...)
# Declares static library flotilla_NAME with src/ on its include path.
function(flotilla_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  flotilla_unity(sources flotilla_${name} ${ARG_SOURCES})
  add_library(flotilla_${name} STATIC ${sources})
  target_include_directories(flotilla_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_BINARY_DIR}/src)
  target_compile_options(flotilla_${name} PRIVATE ${FLOTILLA_WARNINGS})
  target_link_libraries(flotilla_${name} PUBLIC ${ARG_DEPS})
endfunction()

# flotilla_federated_kind(LIBRARY REGISTER Function)
# Declares that library LIBRARY (flotilla_federation_hpa) defines
# `void flotilla::federation::Function(KindRegistry&)`, which adds the kind it
# federates (federation/common/federated_kind.h). flotilla_federated_kinds()
# collects every one declared before it, in order.
function(flotilla_federated_kind library)
  cmake_parse_arguments(ARG "" "REGISTER" "" ${ARGN})
  set_property(GLOBAL APPEND PROPERTY FLOTILLA_FEDERATED_KIND_LIBRARIES ${library})
  set_property(GLOBAL APPEND PROPERTY FLOTILLA_FEDERATED_KIND_FUNCTIONS ${ARG_REGISTER})
endfunction()

# flotilla_federated_kinds(OUT_SOURCE OUT_LIBRARIES)
# Writes a source defining RegisterBuiltInKinds(KindRegistry&), which calls
# every declared kind's function in order, and names the libraries they are in.
function(flotilla_federated_kinds out_source out_libraries)
  get_property(libraries GLOBAL PROPERTY FLOTILLA_FEDERATED_KIND_LIBRARIES)
  get_property(functions GLOBAL PROPERTY FLOTILLA_FEDERATED_KIND_FUNCTIONS)
  set(text "// Generated by flotilla_federated_kinds (cmake/Flotilla.cmake); do not edit.\n")
  string(APPEND text "#include \"federation/common/federated_kind.h\"\n\n")
  string(APPEND text "namespace flotilla::federation {\n\n")
  foreach(f IN LISTS functions)
    string(APPEND text "void ${f}(KindRegistry& kinds);\n")
  endforeach()
  string(APPEND text "\nvoid RegisterBuiltInKinds(KindRegistry& kinds) {\n")
  foreach(f IN LISTS functions)
    string(APPEND text "  ${f}(kinds);\n")
  endforeach()
  string(APPEND text "}\n\n}  // namespace flotilla::federation\n")
  set(file ${CMAKE_CURRENT_BINARY_DIR}/builtin_kinds.cc)
  file(CONFIGURE OUTPUT ${file} CONTENT "${text}" @ONLY)
  set(${out_source} ${file} PARENT_SCOPE)
  set(${out_libraries} ${libraries} PARENT_SCOPE)
endfunction()

# flotilla_test(NAME SOURCES a_test.cc DEPS lib ... [LABELS unit|component|e2e])
# Declares a GoogleTest binary NAME_test registered with CTest under its labels
# (default "unit"). Tests run from a fresh temp dir per test via TEST_TMPDIR.
function(flotilla_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  flotilla_unity(sources ${name}_test ${ARG_SOURCES})
  add_executable(${name}_test ${sources})
  target_include_directories(${name}_test PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(${name}_test PRIVATE ${FLOTILLA_WARNINGS})
  target_link_libraries(${name}_test PRIVATE ${ARG_DEPS} GTest::gmock GTest::gtest_main)
  add_test(NAME ${name} COMMAND ${name}_test)
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT 600
    ENVIRONMENT "FLOTILLA_BINARY=$<TARGET_FILE:flotilla>;FLOTILLA_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()

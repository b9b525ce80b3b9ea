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
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
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

# flotilla_library(NAME SOURCES a.cc b.cc DEPS other_lib ...)
# Declares static library flotilla_NAME with src/ on its include path.
function(flotilla_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(flotilla_${name} STATIC ${ARG_SOURCES})
  target_include_directories(flotilla_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_BINARY_DIR}/src)
  target_compile_options(flotilla_${name} PRIVATE ${FLOTILLA_WARNINGS})
  target_link_libraries(flotilla_${name} PUBLIC ${ARG_DEPS})
endfunction()

# flotilla_test(NAME SOURCES a_test.cc DEPS lib ... [LABELS unit|component|e2e])
# Declares a GoogleTest binary NAME_test registered with CTest under its labels
# (default "unit"). Tests run from a fresh temp dir per test via TEST_TMPDIR.
function(flotilla_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  add_executable(${name}_test ${ARG_SOURCES})
  target_compile_options(${name}_test PRIVATE ${FLOTILLA_WARNINGS})
  target_link_libraries(${name}_test PRIVATE ${ARG_DEPS} GTest::gmock GTest::gtest_main)
  add_test(NAME ${name} COMMAND ${name}_test)
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT 600
    ENVIRONMENT "FLOTILLA_BINARY=$<TARGET_FILE:flotilla>;FLOTILLA_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()

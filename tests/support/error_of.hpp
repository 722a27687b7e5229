// The message of the irrun::Error a call throws, its exit code checked (tests of the library's
// error paths: file_io_test.cpp, golden_test.cpp).
#pragma once

#include <string>

#include <catch2/catch.hpp>

#include "irrun/error.hpp"

namespace irrun::testing {

template <class F>
std::string error_of(F&& f, irrun::ExitCode code) {
  try {
    f();
  } catch (const irrun::Error& e) {
    CHECK(e.code() == code);
    return e.what();
  }
  FAIL("no irrun::Error thrown");
  return {};
}

}  // namespace irrun::testing

// The message of the InputError a piece of code throws, for tests that check what bad input is
// told: "(no InputError)" when it throws none.
#pragma once

#include "common/error.h"

#include <functional>
#include <string>

namespace ltc::test_support {

inline std::string input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

}  // namespace ltc::test_support

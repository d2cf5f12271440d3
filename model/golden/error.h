// The one error type for bad input anywhere in ltc: the message names the parameter, file or line
// and the valid range. The CLI maps it to exit code 2 (SPEC §9).
#pragma once

#include <stdexcept>
#include <string>

namespace ltc {

class InputError : public std::invalid_argument {
 public:
  explicit InputError(const std::string& what) : std::invalid_argument(what) {}
};

}  // namespace ltc

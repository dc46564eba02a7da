// c10/util/Exception.h (stand-in): c10::Error and TORCH_CHECK, which every
// kernel of ATen uses to refuse bad input with a message naming it.
#pragma once

#include <c10/macros/Macros.h>
#include <c10/util/StringUtil.h>

#include <stdexcept>
#include <string>

namespace c10 {

class C10_API Error : public std::runtime_error {
 public:
  Error(const char* file, int line, const std::string& msg);
  const std::string& what_without_backtrace() const { return msg_; }

 private:
  std::string msg_;
};

[[noreturn]] C10_API void torchCheckFail(const char* func, const char* file, int line,
                                         const std::string& msg);

}  // namespace c10

#define TORCH_CHECK(cond, ...)                                                      \
  if (C10_UNLIKELY(!(cond))) {                                                      \
    ::c10::torchCheckFail(__func__, __FILE__, __LINE__,                             \
                          ::c10::str("Expected " #cond " to be true. ", __VA_ARGS__)); \
  }

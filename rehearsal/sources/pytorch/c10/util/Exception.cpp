#include <c10/util/Exception.h>

namespace c10 {

Error::Error(const char* file, int line, const std::string& msg)
    : std::runtime_error(str(msg, " (", file, ":", line, ")")), msg_(msg) {}

void torchCheckFail(const char* func, const char* file, int line, const std::string& msg) {
  throw Error(file, line, str(func, ": ", msg));
}

}  // namespace c10

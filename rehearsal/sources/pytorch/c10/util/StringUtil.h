// c10/util/StringUtil.h (stand-in): c10::str, the variadic ostream formatter
// behind every TORCH_CHECK message.
#pragma once

#include <c10/macros/Macros.h>

#include <sstream>
#include <string>
#include <vector>

namespace c10 {

namespace detail {
inline void _str(std::ostream&) {}
template <typename T, typename... Args>
void _str(std::ostream& ss, const T& t, const Args&... args) {
  ss << t;
  _str(ss, args...);
}
}  // namespace detail

template <typename... Args>
std::string str(const Args&... args) {
  std::ostringstream ss;
  detail::_str(ss, args...);
  return ss.str();
}

C10_API std::vector<std::string> split(const std::string& s, char sep);
C10_API std::string join(const std::vector<std::string>& parts, const std::string& sep);

}  // namespace c10

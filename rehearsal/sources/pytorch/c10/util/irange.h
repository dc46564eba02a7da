// c10/util/irange.h (stand-in): for (const auto i : c10::irange(n)).
#pragma once

#include <cstdint>
#include <iterator>
#include <type_traits>

namespace c10 {

template <typename I>
struct integer_range {
  struct iterator {
    using iterator_category = std::forward_iterator_tag;
    using value_type = I;
    using difference_type = std::ptrdiff_t;
    using pointer = const I*;
    using reference = I;
    I value;
    I operator*() const { return value; }
    iterator& operator++() {
      ++value;
      return *this;
    }
    bool operator!=(const iterator& other) const { return value != other.value; }
    bool operator==(const iterator& other) const { return value == other.value; }
  };
  I begin_, end_;
  iterator begin() const { return {begin_}; }
  iterator end() const { return {end_}; }
};

template <typename I, typename = std::enable_if_t<std::is_integral_v<I>>>
integer_range<I> irange(I end) {
  return {I(0), end < I(0) ? I(0) : end};
}

template <typename I, typename J>
integer_range<std::common_type_t<I, J>> irange(I begin, J end) {
  using T = std::common_type_t<I, J>;
  return {T(begin), T(end) < T(begin) ? T(begin) : T(end)};
}

}  // namespace c10

#pragma once
// DelayLine: the one delay-line type of the packet engine. A FIFO of timed items (time, two 32-bit words) in
// a power-of-two ring buffer. The engine uses it for every line where things travel with a delay:
// - a cable's wire (time the packet reaches the peer, packet),
// - a cable's credit return line (time the credits reach the transmitter, VL, credits; PFC frames too),
// - a switch output's `incoming` list (time the packet reaches the switch, packet, input port),
// - the completion line (time of the completion, message, delivered/acked).
// No allocation once it has grown to its working size (std::deque allocates and frees 512-byte blocks as it
// slides, and costs more per push and pop). Pure: no Simulation; tests/models/components_test.cpp.
#include "sim/time.hpp"

#include <cstdint>
#include <memory>

namespace ibn::pkt {

struct LineItem {
  Time t;
  std::uint32_t a = 0;
  std::uint32_t b = 0;
};

class DelayLine {
 public:
  bool empty() const { return count_ == 0; }
  std::uint32_t size() const { return count_; }
  const LineItem& front() const { return buf_[head_]; }
  /// The first item's time, Time::max() when empty: kept in the line itself, so that asking whether
  /// anything is due (the common "no") reads no item.
  Time front_t() const { return front_t_; }
  /// The i-th item from the front (i < size()).
  const LineItem& at(std::uint32_t i) const { return buf_[(head_ + i) & mask_]; }
  void pop_front() {
    head_ = (head_ + 1) & mask_;
    --count_;
    front_t_ = count_ != 0 ? buf_[head_].t : Time::max();
  }
  /// Allocates room for `n` items (rounded up to a power of two) while empty.
  void reserve(std::uint32_t n) {
    while (capacity() < n) grow();
  }
  /// Appends at the back (the caller knows `x.t` is not before the last item's time).
  [[gnu::always_inline]] void push_back(const LineItem& x) {
    if (count_ == capacity()) [[unlikely]]
      grow();
    buf_[(head_ + count_) & mask_] = x;
    if (count_ == 0) front_t_ = x.t;
    last_t_ = x.t;
    ++count_;
  }
  /// Inserts keeping the items ordered by time, after those with the same time (usually at the back).
  [[gnu::always_inline]] void insert_sorted(const LineItem& x) {
    if (count_ != 0 && last_t_ > x.t) [[unlikely]] {
      insert_inside(x);
      return;
    }
    push_back(x);
  }

 private:
  [[gnu::noinline]] void insert_inside(const LineItem& x) {
    if (count_ == capacity()) grow();
    std::uint32_t i = count_;
    while (i > 0 && buf_[(head_ + i - 1) & mask_].t > x.t) {
      buf_[(head_ + i) & mask_] = buf_[(head_ + i - 1) & mask_];
      --i;
    }
    buf_[(head_ + i) & mask_] = x;
    ++count_;
    front_t_ = buf_[head_].t; // (last_t_ is unchanged: x went before the last item)
  }
  std::uint32_t capacity() const { return cap_; }
  [[gnu::noinline]] void grow() {
    const std::uint32_t cap = cap_ == 0 ? 8 : cap_ * 2;
    auto n = std::make_unique<LineItem[]>(cap);
    for (std::uint32_t i = 0; i < count_; ++i) n[i] = buf_[(head_ + i) & mask_];
    buf_ = std::move(n);
    head_ = 0;
    mask_ = cap - 1;
    cap_ = cap;
  }
  std::unique_ptr<LineItem[]> buf_;
  std::uint32_t head_ = 0;
  std::uint32_t count_ = 0;
  std::uint32_t mask_ = 0;
  std::uint32_t cap_ = 0; // mask_ + 1 once allocated
  Time front_t_ = Time::max();
  Time last_t_; // time of the last item (when not empty)
};

} // namespace ibn::pkt

#pragma once
// sim::Time — simulated time as an integer number of picoseconds.
//
// Invariants: never a double inside an engine; 2^63 ps is about 106 days of simulated time.
// Conversions to double exist only for output (to_us(), to_s()) and at the SimGrid boundary.
#include <compare>
#include <cstdint>
#include <limits>

namespace ibn {

class Time {
public:
  constexpr Time() = default;
  static constexpr Time ps(std::int64_t v) { return Time(v); }
  static constexpr Time ns(std::int64_t v) { return Time(v * 1000); }
  static constexpr Time us(std::int64_t v) { return Time(v * 1000000); }
  static constexpr Time ms(std::int64_t v) { return Time(v * 1000000000); }
  /// Rounds to the nearest picosecond.
  static constexpr Time from_ns(double v) { return Time(round_half_away(v * 1e3)); }
  static constexpr Time from_us(double v) { return Time(round_half_away(v * 1e6)); }
  static constexpr Time from_s(double v) { return Time(round_half_away(v * 1e12)); }
  static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }
  static constexpr Time zero() { return Time(0); }

  constexpr std::int64_t count_ps() const { return ps_; }
  constexpr double to_ns() const { return static_cast<double>(ps_) * 1e-3; }
  constexpr double to_us() const { return static_cast<double>(ps_) * 1e-6; }
  constexpr double to_s() const { return static_cast<double>(ps_) * 1e-12; }

  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Time o) const { return Time(ps_ + o.ps_); }
  constexpr Time operator-(Time o) const { return Time(ps_ - o.ps_); }
  constexpr Time& operator+=(Time o) { ps_ += o.ps_; return *this; }
  constexpr Time& operator-=(Time o) { ps_ -= o.ps_; return *this; }
  constexpr Time operator*(std::int64_t k) const { return Time(ps_ * k); }

private:
  constexpr explicit Time(std::int64_t v) : ps_(v) {}
  static constexpr std::int64_t round_half_away(double x) {
    return static_cast<std::int64_t>(x < 0 ? x - 0.5 : x + 0.5);
  }
  std::int64_t ps_ = 0;
};

/// Exact serialization time of `bytes` at `rate_bps`, rounded up to a whole picosecond:
/// ceil(bytes * 8 * 1e12 / rate_bps), computed with a 128-bit intermediate.
constexpr Time serialization_time(std::uint64_t bytes, std::uint64_t rate_bps) {
  const unsigned __int128 num = static_cast<unsigned __int128>(bytes) * 8u * 1000000000000ull;
  const unsigned __int128 q = (num + rate_bps - 1) / rate_bps;
  return Time::ps(static_cast<std::int64_t>(q));
}

} // namespace ibn

// sim::Time and serialization_time: exact integer picoseconds for every InfiniBand rate.
#include "sim/time.hpp"

#include <doctest/doctest.h>

#include <cstdint>

using ibn::serialization_time;
using ibn::Time;

namespace {
// Per-lane data rates (encoding removed), as in topology/link_speed.cpp and model-reference.md §1.1.
constexpr std::uint64_t kSDR = 2'000'000'000, kDDR = 4'000'000'000, kQDR = 8'000'000'000,
                        kFDR10 = 10'000'000'000, kFDR = 13'636'363'636, kEDR = 25'000'000'000,
                        kHDR = 50'000'000'000, kNDR = 100'000'000'000, kXDR = 200'000'000'000;
std::int64_t ser_ps(std::uint64_t bytes, std::uint64_t bps) {
  return serialization_time(bytes, bps).count_ps();
}
} // namespace

TEST_CASE("Time: unit factories and arithmetic are exact integers") {
  CHECK(Time::ns(1).count_ps() == 1'000);
  CHECK(Time::us(3).count_ps() == 3'000'000);
  CHECK(Time::ms(2).count_ps() == 2'000'000'000);
  CHECK(Time::from_ns(1.2344).count_ps() == 1'234); // rounds to the nearest picosecond
  CHECK(Time::from_ns(1.2346).count_ps() == 1'235);
  CHECK(Time::from_us(-1.5).count_ps() == -1'500'000);
  CHECK((Time::ns(5) - Time::ps(1)).count_ps() == 4'999);
  CHECK((Time::ns(5) * 3).count_ps() == 15'000);
  CHECK(Time::ns(1) < Time::ps(1'001));
}

// serialization_time(bytes, rate) = ceil(bytes * 8 * 10^12 / rate_bps) ps, with a 128-bit intermediate.
// The expected values below are that formula worked out by hand (exact when rate divides 8e12*bytes).
TEST_CASE("serialization_time: 4096 B payload and 4096+26 B IB packet at every generation, 1x and 4x") {
  struct Row {
    const char* gen;
    std::uint64_t lane_bps;
    std::int64_t ps_4096_1x, ps_4122_1x, ps_4096_4x, ps_4122_4x;
  };
  const Row rows[] = {
      // 4096*8e12/2e9 = 16,384,000; 4122*8e12/2e9 = 16,488,000; 4x: divide by 4 (exact)
      {"SDR", kSDR, 16'384'000, 16'488'000, 4'096'000, 4'122'000},
      {"DDR", kDDR, 8'192'000, 8'244'000, 2'048'000, 2'061'000},
      {"QDR", kQDR, 4'096'000, 4'122'000, 1'024'000, 1'030'500},
      {"FDR10", kFDR10, 3'276'800, 3'297'600, 819'200, 824'400},
      // FDR 1x: 32768e12 / 13,636,363,636 = 2,402,986.88...  -> 2,402,987
      //         32976e12 / 13,636,363,636 = 2,418,240.0007... -> 2,418,241 (rounded up)
      // FDR 4x: 32768e12 / 54,545,454,544 = 600,746.72...    -> 600,747
      //         32976e12 / 54,545,454,544 = 604,560.0002...   -> 604,561
      {"FDR", kFDR, 2'402'987, 2'418'241, 600'747, 604'561},
      {"EDR", kEDR, 1'310'720, 1'319'040, 327'680, 329'760},
      {"HDR", kHDR, 655'360, 659'520, 163'840, 164'880},
      {"NDR", kNDR, 327'680, 329'760, 81'920, 82'440}, // NDR 4x = 400 Gb/s: 4096 B -> 81,920 ps
      {"XDR", kXDR, 163'840, 164'880, 40'960, 41'220},
  };
  for (const Row& r : rows) {
    CAPTURE(r.gen);
    CHECK(ser_ps(4096, r.lane_bps) == r.ps_4096_1x);
    CHECK(ser_ps(4096 + 26, r.lane_bps) == r.ps_4122_1x);
    CHECK(ser_ps(4096, 4 * r.lane_bps) == r.ps_4096_4x);
    CHECK(ser_ps(4096 + 26, 4 * r.lane_bps) == r.ps_4122_4x);
  }
}

TEST_CASE("serialization_time: rounding is a ceiling, applied once") {
  // 1 byte at 3 b/s: 8e12/3 = 2,666,666,666,666.67 ps -> ...667
  CHECK(ser_ps(1, 3) == 2'666'666'666'667);
  CHECK(ser_ps(0, kNDR) == 0);
  // The exact remainder matters: the ceiling for one 4122 B FDR packet is 1 ps above the true value, and
  // 1000 packets computed at once are within 1 ps of 1000 x the true time (2,418,240,000.7 ps).
  CHECK(ser_ps(4122 * 1000, kFDR) == 2'418'240'001);
}

TEST_CASE("serialization_time: no overflow for 2^40 bytes at 1 Gb/s or at FDR 4x") {
  // 2^40 * 8 * 1e12 = 8.8e27 does not fit in 64 bits; the 128-bit intermediate handles it.
  // 2^40 B * 8 b/B / 1e9 b/s = 8796.093022208 s = 8,796,093,022,208,000 ps.
  CHECK(ser_ps(std::uint64_t{1} << 40, 1'000'000'000) == 8'796'093'022'208'000);
  // ceil(2^40 * 8e12 / 54,545,454,544) = 161,261,705,411,447
  CHECK(ser_ps(std::uint64_t{1} << 40, 4 * kFDR) == 161'261'705'411'447);
}

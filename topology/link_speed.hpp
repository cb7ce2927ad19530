#pragma once
// InfiniBand link generations and widths, and the *data* rate they carry (encoding and FEC removed,
// model-reference.md §1.1): per lane SDR 2, DDR 4, QDR 8, FDR10 10, FDR 13.636, EDR 25, HDR 50,
// NDR 100, XDR 200 Gb/s. A link's rate = lane rate x width (1x, 2x, 4x, 8x, 12x).
#include <cstdint>
#include <string>
#include <string_view>

namespace ibn::topo {

enum class Generation : std::uint8_t { SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR };

/// Data rate of one lane in bits per second.
std::uint64_t lane_rate_bps(Generation g);
std::string to_string(Generation g);
/// "NDR" -> Generation::NDR; case-insensitive; throws InputError naming `what`.
Generation parse_generation(std::string_view text, const std::string& what);

struct LinkSpeed {
  Generation gen = Generation::NDR;
  int width = 4; ///< lanes: 1, 2, 4, 8 or 12

  std::uint64_t rate_bps() const { return lane_rate_bps(gen) * static_cast<std::uint64_t>(width); }
  double rate_gbps() const { return static_cast<double>(rate_bps()) * 1e-9; }
  /// ibnetdiscover spelling: "4xNDR".
  std::string to_string() const;
  bool operator==(const LinkSpeed&) const = default;
};

/// Accepts "NDR" (4x), "4xNDR", "4x NDR", "NDR200" (2x NDR), "HDR100" (2x HDR), "2xNDR".
LinkSpeed parse_link_speed(std::string_view text, const std::string& what);

} // namespace ibn::topo

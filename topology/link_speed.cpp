#include "topology/link_speed.hpp"

#include "sim/error.hpp"
#include "sim/units.hpp"

#include <array>
#include <cctype>

namespace ibn::topo {
namespace {
struct GenInfo {
  Generation gen;
  const char* name;
  std::uint64_t lane_bps;
};
// FDR: 14.0625 Gb/s x 64/66 = 13.636363... Gb/s per lane (truncated to whole bits per second).
constexpr std::array<GenInfo, 9> kGens{{{Generation::SDR, "SDR", 2'000'000'000ull},
                                        {Generation::DDR, "DDR", 4'000'000'000ull},
                                        {Generation::QDR, "QDR", 8'000'000'000ull},
                                        {Generation::FDR10, "FDR10", 10'000'000'000ull},
                                        {Generation::FDR, "FDR", 13'636'363'636ull},
                                        {Generation::EDR, "EDR", 25'000'000'000ull},
                                        {Generation::HDR, "HDR", 50'000'000'000ull},
                                        {Generation::NDR, "NDR", 100'000'000'000ull},
                                        {Generation::XDR, "XDR", 200'000'000'000ull}}};

std::string upper(std::string_view s) {
  std::string r;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c))) r += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r;
}
} // namespace

std::uint64_t lane_rate_bps(Generation g) { return kGens[static_cast<std::size_t>(g)].lane_bps; }
std::string to_string(Generation g) { return kGens[static_cast<std::size_t>(g)].name; }

Generation parse_generation(std::string_view text, const std::string& what) {
  const std::string u = upper(text);
  for (const auto& gi : kGens)
    if (u == gi.name) return gi.gen;
  throw InputError(what + ": unknown link generation '" + std::string(text) +
                   "' (expected SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR or XDR)");
}

std::string LinkSpeed::to_string() const { return std::to_string(width) + "x" + topo::to_string(gen); }

LinkSpeed parse_link_speed(std::string_view text, const std::string& what) {
  std::string u = upper(text);
  // A plain rate ("200Gbps", "200Gb/s") picks the 4x link of that rate, else 2x, 1x, 8x, 12x.
  if (!u.empty() && std::isdigit(static_cast<unsigned char>(u[0])) && u.find('X') == std::string::npos) {
    const std::uint64_t bps = parse_plain_rate_bps(text, what);
    for (int w : {4, 2, 1, 8, 12})
      for (const auto& gi : kGens)
        if (gi.lane_bps * static_cast<std::uint64_t>(w) == bps) return LinkSpeed{gi.gen, w};
    throw InputError(what + ": no InfiniBand link runs at '" + std::string(text) +
                     "' (data rates: EDR 100, HDR 200, NDR 400, XDR 800 Gb/s at 4x; 2x and 1x halve them)");
  }
  LinkSpeed s;
  int width = 4;
  const auto x = u.find('X');
  if (x != std::string::npos && x > 0 && std::isdigit(static_cast<unsigned char>(u[0]))) {
    const std::string w = u.substr(0, x);
    if (w.size() > 2 || w.find_first_not_of("0123456789") != std::string::npos)
      throw InputError(what + ": cannot read the link width '" + w + "x' in '" + std::string(text) +
                       "' (expected 1x, 2x, 4x, 8x or 12x)");
    width = std::stoi(w);
    u = u.substr(x + 1);
  }
  // Half-width product names: NDR200 = 2x NDR, HDR100 = 2x HDR, XDR400 = 2x XDR.
  if (u == "NDR200" || u == "HDR100" || u == "XDR400") {
    u.resize(3);
    width = 2;
  }
  s.gen = parse_generation(u, what);
  if (width != 1 && width != 2 && width != 4 && width != 8 && width != 12)
    throw InputError(what + ": link width must be 1x, 2x, 4x, 8x or 12x, got '" + std::string(text) + "'");
  s.width = width;
  return s;
}

} // namespace ibn::topo

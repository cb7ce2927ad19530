#include "scenarios/nccl_cost.hpp"

#include "sim/error.hpp"

#include <algorithm>
#include <cctype>

namespace ibn::scen {

namespace {

// NCCL's tuning constants, read from src/graph/tuning.cc of NVIDIA/nccl at the named tags
// (docs/collectives.md lists which value comes from which tag). [tree, ring][LL, LL128, Simple]; caps
// [Ampere, Hopper]. Releases before Hopper existed (2.8, 2.12) give Hopper the Ampere values. The last field
// of each entry: the Simple rows of NVLS, NVLS_TREE and CollNet Direct (baseLat, hwLat[NVLINK], hwLat[NET])
// and CollNet Direct's arity term, read from the same files (none before 2.18 here).
constexpr NcclCostTable kTables[] = {
    // v2.8.4-1: 2.8 .. 2.11.
    {"2.8.4",
     20804,
     {{4.4, 4.4, 0}, {3.6, 10.0, 8.4}},
     {{0.52, 1.25, 28}, {0.47, 1.9, 3.4}},
     {{5.0, 8.5, 28}, {2.7, 4.0, 9.6}},
     {87.7, 87.7},
     {39.0, 20.4},
     {22.5, 19.0},
     {16.9, 16.9},
     {{24.0, 22.5, 16.0}, {24.0, 22.5, 16.0}},
     {{16.9, 16.9, 16.9}, {16.9, 16.9, 16.9}},
     0.25,
     0.7,
     true,
     false,
     false,
     {false, 0, 0, 0, 0, 0, 0, false, 0, 0, 0, 0}},
    // v2.12.12-1: 2.12 .. 2.17 (the per-step constants did not change until 2.18).
    {"2.12.12",
     21212,
     {{4.4, 4.4, 0}, {3.6, 10.0, 8.4}},
     {{0.52, 1.25, 28}, {0.47, 1.9, 3.4}},
     {{5.0, 8.5, 28}, {2.7, 4.0, 9.6}},
     {87.7, 87.7},
     {39.0, 20.4},
     {22.5, 19.0},
     {20.0, 20.0},
     {{24.0, 23.6, 17.8}, {24.0, 23.6, 17.8}},
     {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}},
     0.25,
     0.7,
     false,
     false,
     false,
     {false, 0, 0, 0, 0, 0, 0, false, 0, 0, 0, 0}},
    // v2.18.3-1: 2.18.
    {"2.18.3",
     21803,
     {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}},
     {{0.6, 1.25, 4}, {0.6, 1.9, 3.4}},
     {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}},
     {87.7, 87.7},
     {39.0, 20.4},
     {22.5, 19.0},
     {20.0, 36.7},
     {{24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}},
     {{20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}},
     0.25,
     0.7,
     false,
     true,
     false,
     {true, 23.0, 0, 18, 23.0, 0, 19, true, 0, 8.0, 10.7, 0.5}},
    // v2.19.3-1: 2.19 .. 2.20 (the reference of the tuning model, 2.20.3).
    {"2.19.3",
     21903,
     {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}},
     {{0.6, 1.25, 28}, {0.6, 1.9, 3.4}},
     {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}},
     {87.7, 87.7},
     {39.0, 20.4},
     {22.5, 19.0},
     {20.0, 36.7},
     {{24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}},
     {{20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}},
     0.25,
     0.7,
     false,
     true,
     false,
     {true, 0, 23, 18, 0, 23, 14, false, 0, 3.7, 31, 0.4}},
    // v2.21.5-1: 2.21 .. 2.22 (ring LL at half the bandwidth, Hopper llMaxBw 141 on one node).
    {"2.21.5",
     22105,
     {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}},
     {{0.6, 1.25, 28}, {0.6, 1.9, 3.4}},
     {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}},
     {87.7, 141.0},
     {39.0, 20.4},
     {22.5, 19.0},
     {20.0, 36.7},
     {{24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}},
     {{20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}},
     0.5,
     0.7,
     false,
     true,
     false,
     {true, 0, 25, 18, 0, 25, 14, false, 0, 3.7, 31, 0.4}},
    // v2.23.4-1: 2.23 .. 2.27 (tree Simple costs changed; the same constants in 2.25.1, 2.26.2, 2.27.7).
    {"2.23.4",
     22304,
     {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}},
     {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}},
     {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}},
     {87.7, 141.0},
     {39.0, 20.4},
     {22.5, 19.0},
     {20.0, 36.7},
     {{24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}},
     {{20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}},
     0.5,
     0.92,
     true,
     true,
     true,
     {true, 0, 25, 18, 0, 25, 14, false, 0, 3.7, 31, 0.4}},
};

constexpr std::size_t kReference = 3; // 2.19.3: the tuning model's reference (2.20.3)

int proto_index(const std::string& p) {
  if (p == "ll") return kNcclLL;
  if (p == "ll128") return kNcclLL128;
  return kNcclSimple;
}

std::uint32_t log2_floor(std::uint32_t x) {
  std::uint32_t l = 0;
  while (x > 1) {
    x >>= 1;
    ++l;
  }
  return l;
}

} // namespace

const NcclCostTable* nccl_cost_tables(std::size_t* count) {
  if (count) *count = std::size(kTables);
  return kTables;
}

int nccl_version_code(const std::string& version) {
  // "2.26.2", "2.26.2+cuda12.2", "2.8": major.minor[.patch], anything after the numbers ignored.
  int parts[3] = {0, 0, 0};
  std::size_t i = 0;
  int n = 0;
  while (n < 3) {
    if (i >= version.size() || !std::isdigit(static_cast<unsigned char>(version[i]))) break;
    int v = 0;
    while (i < version.size() && std::isdigit(static_cast<unsigned char>(version[i])) && v < 100000)
      v = v * 10 + (version[i++] - '0');
    parts[n++] = v;
    if (i < version.size() && version[i] == '.')
      ++i;
    else
      break;
  }
  if (n < 2 || parts[0] != 2 || parts[1] > 99 || parts[2] > 99) return -1;
  return parts[0] * 10000 + parts[1] * 100 + parts[2];
}

const NcclCostTable& nccl_cost_table(const std::string& version, const std::string& what) {
  if (version.empty()) return kTables[kReference];
  const int code = nccl_version_code(version);
  if (code < 0)
    throw InputError(what + ": '" + version + "' is not an NCCL 2.x version (expected e.g. 2.26.2)");
  const NcclCostTable* pick = &kTables[0];
  for (const auto& t : kTables)
    if (t.code <= code) pick = &t;
  return *pick;
}

NcclStepCosts nccl_step_costs(const NcclCostTable& t, const NcclCostInputs& in) {
  if (in.algorithm == "nvls" || in.algorithm == "collnet") {
    if (!t.nc.present)
      throw InputError("nccl.version: the " + std::string(t.version) +
                       " constants have no NVLS/CollNet rows (modelled from 2.18 on)");
    const std::uint32_t nodes = std::max<std::uint32_t>(1, in.nodes);
    const double ppn = static_cast<double>(in.ranks) / nodes;
    NcclStepCosts c;
    if (in.algorithm == "nvls") {
      c.base_us = nodes > 1 ? t.nc.nvls_tree_base + t.nc.nvls_tree_intra : t.nc.nvls_base + t.nc.nvls_intra;
      c.net_us = t.nc.nvls_tree_net;
    } else {
      c.base_us = t.nc.collnet_base +
                  2.0 * (std::min(1.0, ppn - 1) * t.nc.collnet_intra + (ppn - 1) * t.nc.collnet_arity);
      c.net_us = (in.ranks == nodes && t.ppn1_tree_net_lat) ? t.hw_lat_net[kNcclTree][kNcclSimple]
                                                            : t.nc.collnet_net;
    }
    return c;
  }
  const int a = in.algorithm == "tree" ? kNcclTree : kNcclRing;
  const int p = proto_index(in.protocol);
  NcclStepCosts c;
  c.base_us = t.base_lat[a][p];
  c.intra_us = t.hw_lat_nvlink[a][p];
  const std::uint32_t nodes = std::max<std::uint32_t>(1, in.nodes);
  const bool ppn1 = in.ranks == nodes;
  c.net_us =
      (a == kNcclRing && ppn1 && t.ppn1_tree_net_lat) ? t.hw_lat_net[kNcclTree][p] : t.hw_lat_net[a][p];
  if (a == kNcclRing && nodes > 1 && t.net_overhead) {
    const double overhead = (in.amd_host ? 2.0 : 1.0) * (p == kNcclSimple ? 3.0 : 1.0);
    c.intra_us = std::max(c.intra_us, overhead);
  }
  return c;
}

NcclStepCounts nccl_step_counts(const NcclCostTable& t, CollOp op, const std::string& algorithm,
                                std::uint32_t ranks, std::uint32_t nodes) {
  NcclStepCounts c;
  const double n = ranks, m = std::max<std::uint32_t>(1, nodes);
  if (ranks < 2) return c;
  if (algorithm == "tree" && op == CollOp::AllReduce) {
    c.intra = 2.0 * (n / m - 1);
    c.net = 2.0 * log2_floor(static_cast<std::uint32_t>(m));
    return c;
  }
  if (op == CollOp::SendRecv || op == CollOp::AllToAll) {
    // Point-to-point: one exchange, across nodes when there are several.
    (m > 1 ? c.net : c.intra) = 1;
    return c;
  }
  const bool allreduce = op == CollOp::AllReduce;
  const bool chain = op == CollOp::Broadcast || op == CollOp::Reduce;
  const double steps = allreduce ? 2 * (n - 1) : n - 1;
  double net = 0;
  if (m > 1) {
    const double per_pass = (t.ring_inter_steps_minus_one || chain) ? m - 1 : m;
    net = allreduce ? 2 * per_pass : per_pass;
  }
  c.net = net;
  c.intra = steps - net; // may be negative with one GPU per node (2(n-1) < 2m), as NCCL's ints
  return c;
}

double nccl_wire_efficiency(const std::string& protocol) {
  if (protocol == "ll") return 0.5;
  if (protocol == "ll128") return 120.0 / 128.0;
  return 1.0;
}

} // namespace ibn::scen

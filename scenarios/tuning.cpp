#include "scenarios/tuning.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace ibn::scen {

namespace {

// NCCL 2.20.3 tuning tables (model-reference §5.6), microseconds, index [protocol] = {LL, LL128, Simple}.
constexpr double kBaseLatRing[3] = {6.6, 14.0, 8.4};
constexpr double kBaseLatTree[3] = {6.8, 14.0, 0.0};
constexpr double kHwLatNvlinkRing[3] = {0.6, 1.9, 3.4};
constexpr double kHwLatNvlinkTree[3] = {0.6, 1.25, 28.0};
constexpr double kHwLatNetRing[3] = {2.7, 4.0, 14.0};
constexpr double kHwLatNetTree[3] = {5.0, 8.5, 28.0};
// Hopper per-channel caps, GB/s, index [nodes: 1, 2, >= 3].
constexpr double kPerChMaxRingLL128Bw = 36.7;
constexpr double kPerChMaxTreeBw[3] = {38.7, 41.4, 36.0};
constexpr double kPerChMaxTreeLL128Bw[3] = {36.7, 36.7, 29.0};
constexpr const char* kProtoNames[3] = {"ll", "ll128", "simple"};
constexpr int kLL = 0, kLL128 = 1, kSimple = 2;

double ll_max_bw(const TuningInputs& in) {
  if (in.nodes <= 1) return 87.7; // Ampere / Hopper
  if (in.nodes == 2) return in.amd_host ? 22.5 : 39.0;
  return in.amd_host ? 19.0 : 20.4;
}

int node_index(std::uint32_t nodes) {
  return nodes <= 1 ? 0 : nodes == 2 ? 1 : 2;
}

std::uint32_t log2_floor(std::uint32_t x) {
  std::uint32_t l = 0;
  while (x > 1) {
    x >>= 1;
    ++l;
  }
  return l;
}

struct RingSteps {
  std::uint32_t steps, inter_steps;
};

RingSteps ring_steps(const TuningInputs& in) {
  const std::uint32_t n = in.ranks, m = in.nodes;
  switch (in.op) {
  case CollOp::AllReduce:
    return {2 * (n - 1), m > 1 ? 2 * m : 0};
  case CollOp::AllGather:
  case CollOp::ReduceScatter:
    return {n - 1, m > 1 ? m : 0};
  default:
    return {n - 1, m - 1}; // Broadcast, Reduce: a chain
  }
}

bool has_ring(CollOp op) {
  return op == CollOp::AllReduce || op == CollOp::AllGather || op == CollOp::ReduceScatter ||
         op == CollOp::Broadcast || op == CollOp::Reduce;
}

TuningEstimate estimate(const TuningInputs& in, bool tree, int p) {
  TuningEstimate e;
  e.algorithm = tree ? "tree" : "ring";
  e.protocol = kProtoNames[p];
  e.available = tree ? in.op == CollOp::AllReduce : has_ring(in.op);
  if (p == kLL128 && !in.ll128_enabled) e.available = false;
  if (!e.available || in.ranks < 2) {
    e.available = e.available && in.ranks >= 2;
    return e;
  }
  const double net_overhead = (in.amd_host ? 2.0 : 1.0) * (p == kSimple ? 3.0 : 1.0);
  double inter_lat = (tree ? kHwLatNetTree[p] : kHwLatNetRing[p]) + in.latency_inter_us;
  if (p == kSimple) inter_lat += in.latency_inter_us;
  const double ch = in.channels;
  double bus = in.bus_GBps;
  const double ppn = static_cast<double>(in.ranks) / in.nodes;
  if (!tree) {
    const auto [steps, inter_steps] = ring_steps(in);
    const double intra = in.nodes > 1 ? std::max(kHwLatNvlinkRing[p], net_overhead) : kHwLatNvlinkRing[p];
    // Signed, as NCCL's ints: with one GPU per node the inter-node steps (2 m) outnumber the steps
    // (2 (n - 1)) and the first term is negative.
    e.latency_us = kBaseLatRing[p] + (static_cast<double>(steps) - static_cast<double>(inter_steps)) * intra +
                   inter_steps * inter_lat;
    if (p == kSimple && in.op == CollOp::AllReduce && in.nodes > 1 &&
        in.size_bytes / (static_cast<std::uint64_t>(in.channels) * in.ranks) >= 64)
      e.latency_us *= in.sm >= 80 ? 1.4 : 1.9;
    if (p == kLL) bus = std::min(ll_max_bw(in), bus / 4.0);
    if (p == kLL128) bus = std::min(bus * (ppn < 2 ? 0.7 : 0.92), ch * kPerChMaxRingLL128Bw);
    const bool chain = in.op == CollOp::Broadcast || in.op == CollOp::Reduce;
    e.algbw_GBps = chain ? bus : bus * in.ranks / steps;
  } else {
    e.latency_us =
        kBaseLatTree[p] + 2.0 * ((ppn - 1) * kHwLatNvlinkTree[p] + log2_floor(in.nodes) * inter_lat);
    const int ni = node_index(in.nodes);
    if (p == kSimple) bus = std::min(bus * 0.92, ch * kPerChMaxTreeBw[ni]);
    if (p == kLL) bus = std::min(bus / 3.8, ll_max_bw(in));
    if (p == kLL128)
      bus = std::min(bus * (in.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), ch * kPerChMaxTreeLL128Bw[ni]);
    e.algbw_GBps = bus * 0.5;
  }
  e.time_us = e.latency_us + static_cast<double>(in.size_bytes) / (1000.0 * e.algbw_GBps);
  return e;
}

} // namespace

TuningInputs tuning_inputs(const CollectiveSpec& spec) {
  TuningInputs in;
  in.op = spec.op;
  in.size_bytes = spec.size_bytes;
  in.ranks = spec.ranks;
  in.nodes = spec.gpus_per_node ? std::max<std::uint32_t>(1, spec.ranks / spec.gpus_per_node) : 1;
  in.channels = spec.channels ? spec.channels : default_channels(spec);
  const double nvlink = spec.nvlink_gbps / 8.0;
  const double net = spec.nics_per_node * spec.nic_gbps / 8.0;
  in.bus_GBps = in.nodes > 1 ? std::min(nvlink, net) : nvlink;
  in.amd_host = spec.amd_host;
  in.ll128_enabled = spec.ll128_enabled;
  return in;
}

std::vector<TuningEstimate> tuning_table(const TuningInputs& in) {
  std::vector<TuningEstimate> out;
  for (bool tree : {false, true})
    for (int p : {kLL, kLL128, kSimple}) out.push_back(estimate(in, tree, p));
  return out;
}

TuningEstimate tuning_choose_protocol(const TuningInputs& in, const std::string& algorithm) {
  const TuningEstimate* best = nullptr;
  const auto table = tuning_table(in);
  for (const auto& e : table)
    if (e.available && (algorithm.empty() || e.algorithm == algorithm) &&
        (!best || e.time_us < best->time_us))
      best = &e;
  if (!best) throw std::logic_error("tuning: no algorithm/protocol available");
  return *best;
}

TuningEstimate tuning_choose(const TuningInputs& in) {
  return tuning_choose_protocol(in, "");
}

} // namespace ibn::scen

#include "scenarios/tuning.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

namespace ibn::scen {

namespace {

constexpr const char* kProtoNames[3] = {"ll", "ll128", "simple"};
constexpr int kLL = kNcclLL, kLL128 = kNcclLL128, kSimple = kNcclSimple;

const NcclCostTable& table_of(const TuningInputs& in) {
  return in.table ? *in.table : nccl_cost_table("");
}

int arch_index(const TuningInputs& in) {
  return in.sm >= 90 ? 1 : 0;
}

double ll_max_bw(const TuningInputs& in) {
  const auto& t = table_of(in);
  const int a = arch_index(in);
  if (in.nodes <= 1) return t.ll_max_bw_1node[a];
  const int i = in.nodes == 2 ? 0 : 1;
  return in.amd_host ? t.ll_max_bw_amd[i] : t.ll_max_bw_intel[i];
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
  const std::uint32_t per_pass = m > 1 ? (table_of(in).ring_inter_steps_minus_one ? m - 1 : m) : 0;
  switch (in.op) {
  case CollOp::AllReduce:
    return {2 * (n - 1), 2 * per_pass};
  case CollOp::AllGather:
  case CollOp::ReduceScatter:
    return {n - 1, per_pass};
  default:
    return {n - 1, m - 1}; // Broadcast, Reduce: a chain
  }
}

/// NCCL's treeCorrectionFactor (src/graph/tuning.cc), [LL, LL128, Simple][log2(size / 64)] for 64 B .. 256
/// MiB; 1 outside. 2.8 and 2.9 (our 2.8.4 entry) had another LL128 row (changed in 2.10).
double tree_correction(const NcclCostTable& t, int p, std::uint64_t size_bytes) {
  static constexpr double kFactor[3][23] = {
      {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
      {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
      {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
  static constexpr double kLL128V28[23] = {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
                                           .6,  .5,  .6,  .6,  .7,  .7, .8, .9, .9, .92, .92};
  const std::uint64_t units = size_bytes >> 6;
  if (units == 0) return 1.0; // log2i(0) is -1 in NCCL: no correction
  const int log_size = std::bit_width(units) - 1;
  if (log_size >= 23) return 1.0;
  if (p == kLL128 && t.code < 21000) return kLL128V28[log_size];
  return kFactor[p][log_size]; // rows in NCCL's protocol order, as kLL, kLL128, kSimple
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
  const auto& t = table_of(in);
  const int ai = tree ? kNcclTree : kNcclRing, arch = arch_index(in);
  const double net_overhead = t.net_overhead ? (in.amd_host ? 2.0 : 1.0) * (p == kSimple ? 3.0 : 1.0) : 0.0;
  const bool ppn1 = in.ranks == in.nodes;
  double inter_lat =
      ((!tree && ppn1 && t.ppn1_tree_net_lat) ? t.hw_lat_net[kNcclTree][p] : t.hw_lat_net[ai][p]) +
      in.latency_inter_us;
  if (p == kSimple) inter_lat += in.latency_inter_us;
  const double ch = in.channels;
  double bus = in.bus_GBps;
  const double ppn = static_cast<double>(in.ranks) / in.nodes;
  if (!tree) {
    const auto [steps, inter_steps] = ring_steps(in);
    const double intra =
        in.nodes > 1 ? std::max(t.hw_lat_nvlink[ai][p], net_overhead) : t.hw_lat_nvlink[ai][p];
    // Signed, as NCCL's ints: with one GPU per node the inter-node steps (2 m) outnumber the steps
    // (2 (n - 1)) and the first term is negative.
    e.latency_us = t.base_lat[ai][p] +
                   (static_cast<double>(steps) - static_cast<double>(inter_steps)) * intra +
                   inter_steps * inter_lat;
    if (p == kSimple && in.op == CollOp::AllReduce && in.nodes > 1 &&
        in.size_bytes / (static_cast<std::uint64_t>(in.channels) * in.ranks) >= 64)
      e.latency_us *= in.sm >= 80 ? 1.4 : 1.9;
    if (p == kLL) bus = std::min(ll_max_bw(in), bus * t.ring_ll_bw_factor);
    if (p == kLL128)
      bus = std::min(bus * (ppn < 2 ? t.ring_ll128_ppn1_factor : 0.92), ch * t.per_ch_ring_ll128[arch]);
    const bool chain = in.op == CollOp::Broadcast || in.op == CollOp::Reduce;
    e.algbw_GBps = chain ? bus : bus * in.ranks / steps;
  } else {
    e.latency_us =
        t.base_lat[ai][p] + 2.0 * ((ppn - 1) * t.hw_lat_nvlink[ai][p] + log2_floor(in.nodes) * inter_lat);
    // Two nodes: NCCL prices a communicator of <= 2 nodes by its graphs' intra-node bandwidth (tuning.cc:
    // bw = bwIntra when nNodes <= 2), and its graph search raises a tree's intra-node bandwidth up to twice
    // the inter-node one where NVLink allows (search.cc, pass 2, "increase bwIntra for trees (2 nodes or
    // collnet)"); a ring's stays equal to the network's. So a 2-node tree is priced at up to twice the
    // network bandwidth and wins large AllReduces, as measured (Snellius 2 x 4 H100: 155 GB/s busbw over
    // 4 x NDR200; issue 309 2 x 8 H100: 469 GB/s over 8 x NDR400; docs/collectives.md "Tuning model").
    if (in.nodes == 2 && ppn >= 2) bus = std::min(in.nvlink_GBps, 2.0 * in.net_GBps);
    const int ni = node_index(in.nodes);
    // Every tree protocol first takes x 0.92 under perChMaxTreeBw, then LL and LL128 their own factor on top
    // (tuning.cc, every release from 2.8 to 2.26): tree LL128 is priced at 0.92 x 120/128 of the graph.
    // 2.8/2.9 (our 2.8.4 entry) wrote 0.915 for 120/128.
    bus = std::min(bus * 0.92, ch * t.per_ch_tree[arch][ni]);
    if (p == kLL) bus = std::min(bus / 3.8, ll_max_bw(in));
    if (p == kLL128) {
      const double ll128 = in.nodes == 1 ? 7.0 / 9.0 : (t.code < 21000 ? 0.915 : 120.0 / 128.0);
      bus = std::min(bus * ll128, ch * t.per_ch_tree_ll128[arch][ni]);
    }
    e.algbw_GBps = bus * 0.5;
  }
  // The tree's bandwidth is corrected per size when NCCL compares times (ncclTopoGetAlgoTime): "trees are not
  // perfectly sticking to the model for medium sizes". algbw_GBps stays the uncorrected model's.
  const double bw = tree ? e.algbw_GBps * tree_correction(t, p, in.size_bytes) : e.algbw_GBps;
  e.time_us = e.latency_us + static_cast<double>(in.size_bytes) / (1000.0 * bw);
  return e;
}

/// NVLS (NVLS_TREE on several nodes) and CollNet Direct, Simple only (src/graph/tuning.cc, the rows of
/// NcclCostTable::nc; docs/collectives.md).
TuningEstimate estimate_nvls_collnet(const TuningInputs& in, bool nvls) {
  TuningEstimate e;
  e.algorithm = nvls ? "nvls" : "collnet";
  e.protocol = "simple";
  const auto& t = table_of(in);
  const double ppn = static_cast<double>(in.ranks) / std::max<std::uint32_t>(1, in.nodes);
  e.available = in.op == CollOp::AllReduce && t.nc.present && in.ranks >= 2 &&
                (nvls ? in.nvls && ppn >= 2 : in.collnet && in.nodes >= 2);
  if (!e.available) return e;
  const bool ppn1 = in.ranks == in.nodes;
  // interLat = hwLat[NET] + latencyInter, + latencyInter again for Simple; from 2.23 ppn 1 takes the tree's.
  auto inter = [&](double net) {
    return (ppn1 && t.ppn1_tree_net_lat ? t.hw_lat_net[kNcclTree][kSimple] : net) + 2 * in.latency_inter_us;
  };
  const double m = in.nodes;
  if (nvls) {
    double bw = in.nvlink_GBps;
    if (in.nodes == 1) {
      e.latency_us = t.nc.nvls_base + t.nc.nvls_intra;
      e.algbw_GBps = bw * 5.0 / 6.0;
    } else {
      bw = std::min(bw, in.nodes <= 2 ? in.net_GBps : in.net_GBps / 2);
      if (t.nc.nvls_tree_v218) {
        e.latency_us = t.nc.nvls_tree_base + 2 * (m - 1) * t.nc.nvls_tree_net;
        e.algbw_GBps = bw * 0.70 * m / (2 * (m - 1));
      } else {
        e.latency_us = t.nc.nvls_tree_base + t.nc.nvls_tree_intra +
                       2.0 * log2_floor(in.nodes) * inter(t.nc.nvls_tree_net);
        e.algbw_GBps = bw * 5.0 / 6.0;
      }
    }
  } else {
    const double heads = std::max<std::uint32_t>(1, std::min<std::uint32_t>(in.nics, in.ranks / in.nodes));
    double f = ppn / heads;
    f -= (f - 1) / 2;
    double bus = in.nvlink_GBps / f;
    if (in.sm >= 90) bus *= 0.85;
    e.algbw_GBps = bus * 0.5;
    e.latency_us = t.nc.collnet_base +
                   2.0 * (std::min(1.0, ppn - 1) * t.nc.collnet_intra + (ppn - 1) * t.nc.collnet_arity) +
                   inter(t.nc.collnet_net);
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
  in.nvlink_GBps = nvlink;
  in.net_GBps = net;
  in.nics = spec.nics_per_node;
  in.nvls = spec.nvls;
  in.collnet = spec.collnet;
  in.amd_host = spec.amd_host;
  in.ll128_enabled = spec.ll128_enabled;
  // The release's constants only with the cost model on: without it the tuning keeps its reference.
  in.table = &nccl_cost_table(spec.nccl_costs ? spec.nccl_version : "");
  return in;
}

TuningInputs hierarchical_tuning_inputs(const CollectiveSpec& spec) {
  TuningInputs in = tuning_inputs(spec);
  if (in.nodes <= 1 || spec.gpus_per_node < 2) return in;
  const std::uint32_t g = spec.gpus_per_node;
  in.size_bytes = (spec.size_bytes + g - 1) / g;
  in.ranks = in.nodes;
  in.net_GBps = spec.nic_gbps / 8.0; // the local GPU's ring runs through one NIC
  in.nics = 1;
  in.bus_GBps = std::min(in.nvlink_GBps, in.net_GBps);
  return in;
}

TuningInputs hierarchical_intra_inputs(const CollectiveSpec& spec) {
  TuningInputs in = tuning_inputs(spec);
  in.ranks = std::max<std::uint32_t>(1, spec.gpus_per_node);
  in.nodes = 1;
  in.bus_GBps = in.nvlink_GBps;
  return in;
}

double ring_channel_cap_GBps(const TuningInputs& in, const std::string& protocol) {
  if (protocol == "ll") return ll_max_bw(in) / std::max<std::uint32_t>(1, in.channels);
  if (protocol == "ll128") return table_of(in).per_ch_ring_ll128[arch_index(in)];
  return 0.0;
}

double tree_channel_cap_GBps(const TuningInputs& in, const std::string& protocol) {
  if (in.op != CollOp::AllReduce || in.ranks < 2) return 0.0;
  const int p = protocol == "ll" ? kLL : protocol == "ll128" ? kLL128 : kSimple;
  TuningInputs run = in;
  run.ll128_enabled = true; // the rate of the protocol that runs, named or chosen
  const auto e = estimate(run, true, p);
  if (!e.available) return 0.0;
  // busBw = 2 x algBw for the tree (algBw = busBw x 0.5), shared by the channels; corrected per size as
  // ncclTopoGetAlgoTime corrects the tree's time.
  return e.algbw_GBps * 2.0 / std::max<std::uint32_t>(1, in.channels) *
         tree_correction(table_of(in), p, in.size_bytes);
}

std::vector<TuningEstimate> tuning_table(const TuningInputs& in) {
  std::vector<TuningEstimate> out;
  for (bool tree : {false, true})
    for (int p : {kLL, kLL128, kSimple}) out.push_back(estimate(in, tree, p));
  for (bool nvls : {true, false}) out.push_back(estimate_nvls_collnet(in, nvls));
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

HierarchicalChoice hierarchical_choose_protocols(const CollectiveSpec& spec) {
  HierarchicalChoice h;
  const TuningInputs inter = hierarchical_tuning_inputs(spec);
  if (inter.ranks == spec.ranks) { // one node (or one GPU per node): one ring
    h.inter = h.intra = tuning_choose_protocol(inter, "ring");
    h.intra_time_us = 0;
    h.time_us = h.inter.time_us;
    return h;
  }
  // The intra-node protocol: the lowest ReduceScatter + AllGather over the node's GPUs (one NCCL call each,
  // the same shape, so the same protocol for both).
  TuningInputs intra = hierarchical_intra_inputs(spec);
  const auto rings = [](const TuningInputs& in) {
    std::vector<TuningEstimate> out;
    for (const auto& e : tuning_table(in))
      if (e.algorithm == "ring") out.push_back(e);
    return out;
  };
  intra.op = CollOp::ReduceScatter;
  const auto rs = rings(intra);
  intra.op = CollOp::AllGather;
  const auto ag = rings(intra);
  std::optional<double> best;
  for (std::size_t p = 0; p < rs.size(); ++p) {
    if (!rs[p].available || !ag[p].available) continue;
    const double t = rs[p].time_us + ag[p].time_us;
    if (!best || t < *best) {
      best = t;
      h.intra = rs[p];
    }
  }
  if (!best) throw std::logic_error("tuning: no protocol available for the intra-node rings");
  h.inter = tuning_choose_protocol(inter, "ring");
  h.intra_time_us = *best;
  h.time_us = *best + h.inter.time_us;
  return h;
}

TuningEstimate tuning_choose(const TuningInputs& in) {
  return tuning_choose_protocol(in, "");
}

} // namespace ibn::scen

#pragma once
// The internals the collective builders share (scenarios/collectives.cpp: ring, tree, halving-doubling,
// hierarchical, direct; scenarios/collectives_sharp.cpp: nvls, collnet): the protocol cut (chunk, slice,
// window), NCCL's run-time channel count, and Builder, which holds the DAG being built with its
// connections (FIFO window) and NCCL's software costs. Not part of the public interface.
#include "scenarios/collectives.hpp"
#include "scenarios/nccl_cost.hpp"
#include "scenarios/tuning.hpp"
#include "sim/error.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>
#include <unordered_map>

namespace ibn::scen::detail {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kSimpleStepBytes = 512 * kKiB; ///< DEFAULT_BUFFSIZE 4 MiB / NCCL_STEPS
constexpr std::uint64_t kLLStepDataBytes = 32 * kKiB;  ///< 64 KiB of 16 B lines per step, half is data
constexpr std::uint64_t kLL128StepDataBytes = 576000;  ///< 614,400 B of 128 B lines per step x 120/128
constexpr std::uint64_t kP2PChunkBytes = 128 * kKiB;   ///< NCCL_P2P_NET_CHUNKSIZE
constexpr TransferId kNone = std::numeric_limits<TransferId>::max();

enum class Proto { LL, LL128, Simple };

inline std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

inline Proto parse_proto(const std::string& p) {
  const auto l = lower(p);
  if (l == "simple") return Proto::Simple;
  if (l == "ll") return Proto::LL;
  if (l == "ll128") return Proto::LL128;
  throw InputError("protocol: unknown protocol '" + p + "' (known: simple, ll128, ll, auto)");
}

inline const char* proto_name(Proto p) {
  return p == Proto::LL ? "ll" : p == Proto::LL128 ? "ll128" : "simple";
}

inline std::uint64_t div_up(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}
inline std::uint64_t align_up(std::uint64_t a, std::uint64_t g) {
  return div_up(a, g) * g;
}
inline bool is_pow2(std::uint32_t x) {
  return x && !(x & (x - 1));
}
inline std::uint32_t log2_floor(std::uint32_t x) {
  std::uint32_t l = 0;
  while (x > 1) {
    x >>= 1;
    ++l;
  }
  return l;
}

/// How data is cut: chunk (data bytes), slices per chunk, window, alignment of the per-loop chunk.
struct Cut {
  std::uint64_t chunk = kSimpleStepBytes;
  std::uint64_t slice = kSimpleStepBytes; ///< nominal slice (chunk / slices per chunk)
  std::uint32_t slices_per_chunk = 1;
  std::uint32_t window = kNcclSteps;
  std::uint64_t grain = 512;
};

/// NCCL's channel count for a ring or tree collective of `bytes` (total buffer, the larger of send and
/// receive) out of `nc` (enqueue.cc, getAlgoInfo/computeColl, same in 2.8 to 2.27): while
/// bytes < nc x threads x threshold and nc >= 2, one channel less. threads = the protocol's maximum per
/// block (LL and Simple 512, LL128 640: NCCL_*_MAX_NTHREADS); threshold = bytes per thread
/// (NCCL_LL_THREAD_THRESHOLD 8, x ranks for ring LL; LL128 8; Simple 64). E.g. ring LL on 16 ranks uses
/// one channel up to 64 KiB; Simple keeps 16 channels down to 512 KiB.
inline std::uint32_t size_channels(std::uint64_t bytes, bool ring, Proto p, std::uint32_t ranks,
                                   std::uint32_t nc) {
  const std::uint64_t threads = p == Proto::LL128 ? 640 : 512;
  std::uint64_t threshold = p == Proto::Simple ? 64 : 8;
  if (ring && p == Proto::LL) threshold *= ranks;
  while (nc >= 2 && bytes < std::uint64_t{nc} * threads * threshold) --nc;
  return nc;
}

/// The spec after validation and protocol resolution, plus the DAG being built and its connections.
class Builder {
 public:
  Builder(const CollectiveSpec& spec, std::string algorithm, Proto proto)
      : Builder(spec, std::move(algorithm), proto, proto) {}
  /// `nvlink_proto`: the protocol of the transfers inside a node when it differs (a hierarchical
  /// AllReduce's intra-node rings, tuned on their own): their wire bytes, step cost, stage and cut.
  Builder(const CollectiveSpec& spec, std::string algorithm, Proto proto, Proto nvlink_proto)
      : s_(spec), proto_(proto), nvl_proto_(nvlink_proto), n_(spec.ranks), g_(spec.gpus_per_node),
        nics_(spec.nics_per_node), nodes_(spec.ranks / spec.gpus_per_node),
        c_(spec.channels ? spec.channels : default_channels(spec)), dag_(spec.ranks) {
    // NCCL's run-time channel count (with its cost model on and no channel count forced): fewer channels
    // while the collective is small against channels x threads x the protocol's bytes per thread.
    if (!spec.channels && spec.nccl_costs && (algorithm == "ring" || algorithm == "tree"))
      c_ = size_channels(spec.size_bytes, algorithm == "ring", proto, spec.ranks, c_);
    dag_.op = to_string(spec.op);
    dag_.algorithm = std::move(algorithm);
    dag_.protocol = proto_name(proto);
    if (nvlink_proto != proto) dag_.protocol_nvlink = proto_name(nvlink_proto);
    dag_.size_bytes = spec.size_bytes;
    dag_.channels = c_;
    // Software costs: the spec's own, plus NCCL's per release when the cost model is on
    // (scenarios/nccl_cost.hpp); a fitted override replaces the base and net costs of its protocol.
    intra_delay_ = spec.step_overhead;
    net_delay_ = spec.net_step_overhead ? *spec.net_step_overhead : spec.step_overhead;
    Time launch = spec.launch_latency;
    if (spec.nccl_costs) {
      NcclCostInputs ci;
      ci.algorithm = dag_.algorithm;
      ci.protocol = dag_.protocol;
      ci.ranks = n_;
      ci.nodes = nodes_;
      ci.amd_host = spec.amd_host;
      const auto& table = nccl_cost_table(spec.nccl_version);
      auto c = nccl_step_costs(table, ci);
      auto cn = c; // the intra-node rings' costs: their protocol's
      if (nvlink_proto != proto) {
        ci.protocol = proto_name(nvlink_proto);
        cn = nccl_step_costs(table, ci);
        c.intra_us = cn.intra_us;
      }
      // The table's net step contains the network latency the engine charges by itself (CollectiveSpec::
      // hw_net_latency); fitted costs were measured against the simulation and are charged whole.
      Time net = std::max(Time::zero(), Time::from_us(c.net_us) - spec.hw_net_latency);
      if (!spec.nccl_fitted.protocol.empty() && spec.nccl_fitted.protocol == dag_.protocol) {
        c.base_us = spec.nccl_fitted.base_us;
        net = Time::from_us(spec.nccl_fitted.net_us);
      }
      if (!spec.nccl_fitted.protocol.empty() && spec.nccl_fitted.protocol == proto_name(nvlink_proto))
        cn.base_us = spec.nccl_fitted.base_us;
      Time first_base = Time::from_us(c.base_us);
      if (dag_.algorithm == "hierarchical") {
        // Three NCCL calls (ReduceScatter and AllGather inside the node, AllReduce between nodes), each with
        // its own launch of its own protocol's base: the first before the rank's first transfer, the others
        // on the sends of their phase's first step (emit's `extra`).
        first_base = Time::from_us(cn.base_us);
        phase_launch_nvlink_ = first_base;
        if (nodes_ > 1) phase_launch_net_ = Time::from_us(c.base_us);
      }
      // The base holds the typical launch jitter that the variability model draws on top (launch_credit;
      // one draw per execution, so credited once).
      launch += std::max(Time::zero(), first_base - spec.launch_credit);
      intra_delay_ += Time::from_us(c.intra_us);
      if (nodes_ > 1) net_delay_ += net;
      if (dag_.algorithm == "tree") {
        // NCCL's tree bandwidth per channel (tuning.cc's busBw, size-corrected; scenarios/tuning.hpp
        // tree_channel_cap_GBps), half of it on each of a rank's two lanes, up and down: a rank moves every
        // byte once each way, so the pipeline moves S in S / algBw, NCCL's bandwidth term. Not a pass before
        // each post as for the ring: the tree forwards what arrives while it still arrives, so its rate
        // bounds the pipeline's throughput and adds no latency per hop (DagExecutor::release).
        auto in = tuning_inputs(spec);
        in.channels = c_;
        if (const double cap = tree_channel_cap_GBps(in, dag_.protocol); cap > 0) {
          dag_.channel_gbps = cap / 2 * 8.0 / nccl_wire_efficiency(dag_.protocol);
          dag_.channel_stage_all = true;
          dag_.channel_stage_overlaps = true;
        }
      }
      if (dag_.algorithm == "direct") { // NCCL point-to-point: channels per peer, per-channel rate
        peer_channels_ = std::min(c_, kP2pChannelsPerNetPeer);
        dag_.channel_gbps = kP2pChannelNetGBps * 8.0;
      } else if (dag_.algorithm == "ring" || dag_.algorithm == "hierarchical") {
        // The protocol's own per-channel ceiling (llMaxBw, perChMaxRingLL128Bw) as each channel's stage on
        // every transfer it sends, in wire Gb/s (the transfers carry wire bytes). A hierarchical AllReduce
        // is three rings, each with NCCL's ceiling for its own shape: the inter-node ring's on the network
        // transfers, the one-node ring's on the NVLink ones.
        const bool hier = dag_.algorithm == "hierarchical";
        auto cap_of = [&](TuningInputs in, Proto p) {
          in.channels = c_;
          return ring_channel_cap_GBps(in, proto_name(p)) * 8.0 / nccl_wire_efficiency(proto_name(p));
        };
        const double cap = cap_of(hier ? hierarchical_tuning_inputs(spec) : tuning_inputs(spec), proto);
        const double nvl_cap =
            hier && nodes_ > 1 ? cap_of(hierarchical_intra_inputs(spec), nvlink_proto) : cap;
        if (cap > 0 || nvl_cap > 0) {
          dag_.channel_gbps = cap;
          dag_.channel_stage_all = true;
          if (hier && nodes_ > 1) dag_.channel_gbps_nvlink = nvl_cap;
        }
      }
    }
    dag_.launch_latency = launch;
  }

  const CollectiveSpec& spec() const { return s_; }
  std::uint32_t n() const { return n_; }
  std::uint32_t gpn() const { return g_; }
  std::uint32_t nodes() const { return nodes_; }
  std::uint32_t channels() const { return c_; }
  Proto proto() const { return proto_; }
  Proto nvlink_proto() const { return nvl_proto_; }
  std::int32_t channel_rail(std::uint32_t c) const { return static_cast<std::int32_t>(c % nics_); }
  std::int32_t gpu_rail(std::uint32_t local) const { return static_cast<std::int32_t>(local % nics_); }
  /// Point-to-point: the channel of chunk i to the d-th peer (d >= 1). With the NCCL model on, a peer gets
  /// kP2pChannelsPerNetPeer channels, consecutive peers consecutive sets; else chunks go round all channels.
  std::uint32_t peer_channel(std::uint32_t d, std::uint32_t i) const {
    if (peer_channels_ == 0) return i % c_;
    return ((d - 1) * peer_channels_ + i % peer_channels_) % c_;
  }
  TransferDag take() { return std::move(dag_); }
  /// The protocol's per-channel stage on every transfer (TransferDag::channel_stage_all), wire Gb/s; 0: none.
  double stage_all_gbps() const { return dag_.channel_stage_all ? dag_.channel_gbps : 0.0; }
  /// Its rate on transfers inside a node when it is their own (TransferDag::channel_gbps_nvlink; 0: none);
  /// nullopt: the same as stage_all_gbps().
  std::optional<double> stage_nvlink_gbps() const {
    return dag_.channel_stage_all ? dag_.channel_gbps_nvlink : std::nullopt;
  }
  Time intra_delay() const { return intra_delay_; }
  Time net_delay() const { return net_delay_; }
  Time launch_latency() const { return dag_.launch_latency; }
  /// A hierarchical AllReduce's later NCCL calls: the launch before the inter-node AllReduce phase and
  /// before the intra-node AllGather phase (zero without the cost model or for other algorithms).
  Time phase_launch_net() const { return phase_launch_net_; }
  Time phase_launch_nvlink() const { return phase_launch_nvlink_; }

  /// The cut for `proto_`: Simple uses `default_simple_chunk` and, with `two_step_slices` (ring AllReduce,
  /// AllGather, ReduceScatter, halving-doubling: SLICESTEPS = 2), 2 slices per chunk and a window of 4;
  /// LL/LL128 use one step of data per chunk and slice and a window of 8. The spec's knobs override.
  Cut cut(std::uint64_t default_simple_chunk, bool two_step_slices) const {
    return cut_for(proto_, default_simple_chunk, two_step_slices);
  }
  /// The same for the transfers inside a node (nvlink_proto()).
  Cut cut_nvlink(std::uint64_t default_simple_chunk, bool two_step_slices) const {
    return cut_for(nvl_proto_, default_simple_chunk, two_step_slices);
  }
  Cut cut_for(Proto proto, std::uint64_t default_simple_chunk, bool two_step_slices) const {
    Cut k;
    if (proto == Proto::Simple) {
      k.chunk = default_simple_chunk;
      k.slices_per_chunk = two_step_slices ? 2 : 1;
      k.grain = 512;
    } else {
      k.chunk = proto == Proto::LL ? kLLStepDataBytes : kLL128StepDataBytes;
      k.slices_per_chunk = 1;
      k.grain = proto == Proto::LL ? 16 : 1920;
    }
    if (s_.chunk_bytes) k.chunk = s_.chunk_bytes;
    k.grain = std::min(k.grain, k.chunk);
    k.slice = std::max<std::uint64_t>(1, k.chunk / k.slices_per_chunk);
    k.window = s_.slices_in_flight ? s_.slices_in_flight : kNcclSteps / (k.slices_per_chunk == 2 ? 2 : 1);
    return k;
  }

  /// NCCL's split of one chunk of `bytes` into at most `k.slices_per_chunk` slices:
  /// slice = max(ceil(bytes / slices) rounded up to 16 B, nominal slice / 32).
  static std::vector<std::uint64_t> slices_of(std::uint64_t bytes, const Cut& k) {
    std::vector<std::uint64_t> out;
    if (bytes == 0) return out;
    const std::uint64_t sz =
        std::max(align_up(div_up(bytes, k.slices_per_chunk), 16), std::max<std::uint64_t>(1, k.slice / 32));
    for (std::uint64_t off = 0; off < bytes; off += sz) out.push_back(std::min(sz, bytes - off));
    return out;
  }

  /// The transfer a new one on (src, dst, channel) waits for under a FIFO window of `window` (emit's own
  /// window dependency), if there is one.
  std::optional<TransferId> window_dep(std::uint32_t src, std::uint32_t dst, std::uint32_t channel,
                                       std::uint32_t window) const {
    const auto it = conn_.find((static_cast<std::uint64_t>(src) * n_ + dst) * c_ + channel);
    return it == conn_.end() ? std::nullopt : window_of(it->second, window);
  }
  /// Appends a transfer of `data_bytes` (the wire bytes of the protocol are written) with `deps` plus the
  /// FIFO window dependency: the transfer `window` positions earlier on the same connection. `stage_shared`
  /// and `stage_lane`: Transfer's (a tree's stage lanes).
  TransferId emit(std::uint32_t src, std::uint32_t dst, std::uint64_t data_bytes, std::uint32_t channel,
                  std::int32_t rail, std::uint32_t step, std::uint32_t window, std::vector<TransferId>& deps,
                  Time extra = Time::zero(), bool stage_shared = false, std::uint8_t stage_lane = 0) {
    auto& hist = conn_[(static_cast<std::uint64_t>(src) * n_ + dst) * c_ + channel];
    if (const auto w = window_of(hist, window)) deps.push_back(*w);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    Transfer t;
    t.src = src;
    t.dst = dst;
    t.bytes = wire_bytes(data_bytes, proto_name(src / g_ != dst / g_ ? proto_ : nvl_proto_));
    t.channel = channel;
    t.rail = src / g_ == dst / g_ ? -1 : rail;
    t.local_delay = (src / g_ != dst / g_ ? net_delay_ : intra_delay_) + extra;
    t.step = step;
    t.stage_shared = stage_shared;
    t.stage_lane = stage_lane;
    const auto id = dag_.add(t, deps);
    hist.push_back(id);
    deps.clear();
    return id;
  }

 private:
  /// The transfer `window` positions back in a connection's history `hist` (none when shorter, or 0).
  static std::optional<TransferId> window_of(const std::vector<TransferId>& hist, std::uint32_t window) {
    if (!window || hist.size() < window) return std::nullopt;
    return hist[hist.size() - window];
  }
  const CollectiveSpec& s_;
  Proto proto_, nvl_proto_;
  std::uint32_t n_, g_, nics_, nodes_, c_;
  TransferDag dag_;
  Time intra_delay_, net_delay_;
  Time phase_launch_net_, phase_launch_nvlink_;
  std::uint32_t peer_channels_ = 0; ///< channels per peer of point-to-point (0: all)
  std::unordered_map<std::uint64_t, std::vector<TransferId>> conn_;
};

inline void require_op(const CollectiveSpec& s, const std::string& algo, std::initializer_list<CollOp> ops) {
  if (std::find(ops.begin(), ops.end(), s.op) != ops.end()) return;
  std::string names;
  for (auto o : ops) names += (names.empty() ? "" : ", ") + to_string(o);
  const bool p2p = s.op == CollOp::AllToAll || s.op == CollOp::SendRecv;
  throw InputError("algorithm: '" + algo + "' does not do " + to_string(s.op) + " (it does: " + names +
                   "); use " + (p2p ? "'direct'" : "'ring'") + " or 'auto'");
}

/// Slices over every loop when `bytes` are cut into `units` chunks per loop (NCCL's realChunkSize rule):
/// the full loops, then the last one with its smaller chunk and only its non-empty chunks.
inline std::uint64_t pieces(std::uint64_t bytes, std::uint64_t units, const Cut& k) {
  const std::uint64_t loop = units * k.chunk, full = bytes / loop, rem = bytes % loop;
  std::uint64_t n = full * units * Builder::slices_of(k.chunk, k).size();
  if (rem) {
    const std::uint64_t real = std::min(k.chunk, align_up(div_up(rem, units), k.grain));
    n += div_up(rem, real) * Builder::slices_of(real, k).size();
  }
  return n;
}

inline void check_size(std::uint64_t estimate, const std::string& algo) {
  if (estimate > kMaxTransfers)
    throw InputError("collective too large: about " + std::to_string(estimate) +
                     " transfers with algorithm '" + algo + "' (limit " + std::to_string(kMaxTransfers) +
                     "); raise chunk_bytes, lower channels or use fewer ranks");
}

inline bool trivial(const CollectiveSpec& s) {
  return s.ranks < 2 || s.size_bytes == 0;
}

/// NVLS and CollNet AllReduce (scenarios/collectives_sharp.cpp).
TransferDag build_nvls(const CollectiveSpec& s);
TransferDag build_collnet(const CollectiveSpec& s);

} // namespace ibn::scen::detail

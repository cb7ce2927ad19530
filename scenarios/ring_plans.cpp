// Ring evaluators' descriptions of a collective (scenarios/collectives.hpp): RingPlan (the symmetric-steps
// shortcut, scenarios/ring_shortcut.hpp) and RingStages (the ring-fluid model, scenarios/ring_fluid.hpp),
// cut and costed by the DAG builder's own choices (scenarios/collectives_detail.hpp).
#include "scenarios/collectives.hpp"
#include "scenarios/collectives_detail.hpp"

#include <algorithm>
#include <cctype>

namespace ibn::scen {
namespace {

std::uint64_t div_up(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}
std::uint64_t align_up(std::uint64_t a, std::uint64_t g) {
  return div_up(a, g) * g;
}
std::string lower_name(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}
detail::RingCut cut_of(std::uint64_t chunk, std::uint64_t slice, std::uint32_t spc, std::uint32_t window,
                       std::uint64_t grain) {
  detail::RingCut c;
  c.chunk = chunk;
  c.slice = slice;
  c.slices_per_chunk = spc;
  c.window = window;
  c.grain = grain;
  return c;
}

/// The builder's choices (protocol, channels, cut, software costs) into a RingPlan or RingStages.
template <typename Plan> void take_cut(Plan& p, const detail::RingCut& k) {
  p.protocol = k.protocol;
  p.channels = k.channels;
  p.chunk = k.chunk;
  p.slice = k.slice;
  p.grain = k.grain;
  p.slices_per_chunk = k.slices_per_chunk;
  p.window = k.window;
  p.step_overhead = k.step_overhead;
  p.net_step_overhead = k.net_step_overhead;
  p.launch_latency = k.launch_latency;
  p.stage_gbps = k.stage_gbps;
}

} // namespace

// ---- RingPlan (one ring collective) -------------------------------------------------------------------

std::uint64_t RingPlan::loop_bytes() const {
  return all_reduce() ? std::uint64_t{channels} * ranks * chunk : std::uint64_t{channels} * chunk;
}

std::uint64_t RingPlan::real_chunk(std::uint64_t rem) const {
  return std::min(chunk,
                  align_up(div_up(rem, all_reduce() ? std::uint64_t{channels} * ranks : channels), grain));
}

std::uint64_t RingPlan::chunk_size(std::uint64_t rem, std::uint64_t real, std::uint32_t c,
                                   std::uint32_t j) const {
  const std::uint64_t off = (all_reduce() ? std::uint64_t{c} * ranks + j : c) * real;
  return off >= rem ? 0 : std::min(real, rem - off);
}

std::vector<std::uint64_t> RingPlan::slices_of(std::uint64_t data_bytes) const {
  return detail::cut_slices(data_bytes, cut_of(chunk, slice, slices_per_chunk, window, grain));
}

std::optional<RingPlan> ring_plan(const CollectiveSpec& s) {
  if (lower_name(s.algorithm) != "ring") return std::nullopt;
  detail::check_spec(s);
  if (s.op != CollOp::AllReduce && s.op != CollOp::AllGather && s.op != CollOp::ReduceScatter)
    return std::nullopt;
  if (detail::trivial_spec(s)) return std::nullopt;
  // The same steps as build_ring(): the builder's protocol, channels and cut.
  const auto k = detail::ring_cut(s, "ring");
  RingPlan p;
  take_cut(p, k);
  p.op = s.op;
  p.ranks = s.ranks;
  p.gpus_per_node = s.gpus_per_node;
  p.nics_per_node = s.nics_per_node;
  p.bytes = s.op == CollOp::AllReduce ? s.size_bytes : div_up(s.size_bytes, s.ranks);
  for (std::uint32_t c = 0; c < p.channels; ++c) {
    p.orders.push_back(ring_order(s.ranks, s.gpus_per_node, c));
    p.rails.push_back(static_cast<std::int32_t>(c % s.nics_per_node));
  }
  return p;
}

std::uint64_t ring_plan_transfers(const RingPlan& p) {
  const bool ar = p.all_reduce();
  // As build_ring() counts them: every slice of every chunk once per step (AllGather / ReduceScatter: every
  // rank's chunk).
  const std::uint64_t n = p.ranks;
  return (ar ? 2 * (n - 1) : (n - 1) * n) *
         detail::cut_pieces(p.bytes, (ar ? n : 1) * p.channels,
                            cut_of(p.chunk, p.slice, p.slices_per_chunk, p.window, p.grain));
}

// ---- RingStages (ring and hierarchical, stage by stage) -----------------------------------------------

RingProtocolCut RingStages::cut_of(const RingStage& st) const {
  if (st.nvlink) return nvlink;
  return {protocol, chunk, slice, grain, slices_per_chunk, window};
}

std::uint64_t RingStages::real_chunk(const RingStage& st, std::uint64_t rem) const {
  const auto k = cut_of(st);
  return std::min(k.chunk, align_up(div_up(rem, st.chunks_per_loop()), k.grain));
}

std::pair<std::uint64_t, std::uint64_t> RingStages::slices(const RingStage& st,
                                                           std::uint64_t data_bytes) const {
  const auto k = cut_of(st);
  const auto sl = detail::cut_slices(
      data_bytes, ::ibn::scen::cut_of(k.chunk, k.slice, k.slices_per_chunk, k.window, k.grain));
  return {sl.size(), sl.empty() ? 0 : sl.front()};
}

namespace {

/// A tree AllReduce (build_tree): one stage, the channels' trees.
std::optional<RingStages> tree_stages(const CollectiveSpec& s) {
  detail::check_spec(s);
  if (s.op != CollOp::AllReduce || detail::trivial_spec(s)) return std::nullopt;
  const auto t = detail::tree_shape(s);
  RingStages p;
  take_cut(p, t.cut);
  p.algorithm = "tree";
  p.ranks = s.ranks;
  p.gpus_per_node = s.gpus_per_node;
  RingStage st;
  st.all_reduce = true;
  st.bytes = s.size_bytes;
  st.channels = t.cut.channels;
  st.parents = t.parents;
  st.rails = t.rails;
  p.stages.push_back(std::move(st));
  return p;
}

} // namespace

std::optional<RingStages> ring_stages(const CollectiveSpec& spec) {
  if (lower_name(spec.algorithm) == "auto" || spec.algorithm.find(',') != std::string::npos)
    detail::check_spec(spec);
  const CollectiveSpec s = detail::resolve_auto(spec);
  const auto algo = lower_name(s.algorithm);
  if (algo == "tree") return tree_stages(s);
  if (algo != "ring" && algo != "hierarchical") return std::nullopt;
  detail::check_spec(s);
  const bool ring_op = s.op == CollOp::AllGather || s.op == CollOp::ReduceScatter;
  if (s.op != CollOp::AllReduce && (algo != "ring" || !ring_op)) return std::nullopt;
  if (detail::trivial_spec(s) || (algo == "hierarchical" && s.gpus_per_node < 2)) return std::nullopt;
  // The same choices as build_ring() / build_hierarchical(): the builder's protocol, channels and cut.
  const auto k = detail::ring_cut(s, algo);
  RingStages p;
  take_cut(p, k);
  p.stage_gbps_nvlink = k.stage_gbps_nvlink;
  p.nvlink = k.nvlink;
  p.algorithm = algo;
  p.ranks = s.ranks;
  p.gpus_per_node = s.gpus_per_node;
  const std::uint32_t nc = k.channels, nics = s.nics_per_node;
  if (algo == "ring") {
    RingStage st;
    st.all_reduce = s.op == CollOp::AllReduce;
    st.bytes = st.all_reduce ? s.size_bytes : div_up(s.size_bytes, s.ranks);
    st.channels = nc;
    for (std::uint32_t c = 0; c < nc; ++c) {
      st.orders.push_back(ring_order(s.ranks, s.gpus_per_node, c));
      st.rails.push_back(static_cast<std::int32_t>(c % nics));
    }
    p.stages.push_back(std::move(st));
    return p;
  }
  // Hierarchical (build_hierarchical): intra-node reduce-scatter, inter-node AllReduce per local GPU on its
  // rail, intra-node all-gather, each over part = size / g (the two intra-node stages move the same bytes).
  const std::uint32_t g = s.gpus_per_node, m = k.nodes;
  const std::uint64_t part = div_up(s.size_bytes, g);
  RingStage intra;
  intra.nvlink = true;
  intra.all_reduce = false;
  intra.bytes = part;
  intra.channels = nc;
  for (std::uint32_t node = 0; node < m; ++node)
    for (std::uint32_t c = 0; c < nc; ++c) {
      std::vector<std::uint32_t> o(g);
      for (std::uint32_t i = 0; i < g; ++i) o[i] = node * g + (c + i) % g;
      intra.orders.push_back(std::move(o));
      intra.rails.push_back(-1);
    }
  p.stages.push_back(intra);
  if (m > 1) {
    RingStage st;
    st.all_reduce = true;
    st.bytes = part;
    st.channels = nc;
    st.launch = k.phase_launch_net;
    for (std::uint32_t local = 0; local < g; ++local) {
      std::vector<std::uint32_t> o(m);
      for (std::uint32_t node = 0; node < m; ++node) o[node] = node * g + local;
      for (std::uint32_t c = 0; c < nc; ++c) {
        st.orders.push_back(o);
        st.rails.push_back(static_cast<std::int32_t>(local % nics));
      }
    }
    p.stages.push_back(std::move(st));
  }
  intra.launch = k.phase_launch_nvlink;
  p.stages.push_back(std::move(intra));
  return p;
}

std::uint64_t ring_stage_transfers(const RingStages& p, std::size_t i) {
  const auto& st = p.stages.at(i);
  const auto c = p.cut_of(st);
  const auto k = cut_of(c.chunk, c.slice, c.slices_per_chunk, c.window, c.grain);
  if (st.tree()) // build_tree's check_size: every rank but the root, up and down, per chunk
    return 2 * (std::uint64_t{p.ranks} - 1) * detail::cut_pieces(st.bytes, st.channels, k);
  const std::uint64_t n = st.positions(), groups = st.orders.size() / st.channels;
  // As ring_phase() emits them (build_ring / build_hierarchical's check_size).
  return groups * (st.all_reduce ? 2 * (n - 1) * detail::cut_pieces(st.bytes, n * st.channels, k)
                                 : (n - 1) * n * detail::cut_pieces(st.bytes, st.channels, k));
}

std::uint64_t ring_stages_transfers(const RingStages& p) {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < p.stages.size(); ++i) total += ring_stage_transfers(p, i);
  return total;
}

} // namespace ibn::scen

#include "scenarios/collectives.hpp"
#include "scenarios/collectives_detail.hpp"

#include "scenarios/collective_builder.hpp"
#include "scenarios/nccl_cost.hpp"
#include "scenarios/tuning.hpp"
#include "sim/error.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <unordered_map>

namespace ibn::scen {

using namespace detail;

namespace {

// ---- ring ---------------------------------------------------------------------------------------------

enum class RingKind { AllReduce, AllGather, ReduceScatter };

struct RingPhase {
  RingKind kind = RingKind::AllReduce;
  std::uint64_t bytes = 0; ///< AllReduce: the buffer; AllGather/ReduceScatter: the per-rank part
  std::vector<std::vector<std::uint32_t>> orders; ///< per channel: ring position -> rank
  std::vector<std::int32_t> rails;                ///< per channel
  std::uint32_t step_base = 0;
  /// Per rank (index = rank): transfers every transfer the rank sends in the first loop depends on.
  const std::vector<std::vector<TransferId>>* start = nullptr;
  /// A launch before a rank's first transfer of the phase (a later NCCL call of a hierarchical AllReduce).
  Time launch;
};

/// Emits one ring collective; returns per rank the last transfer delivered to it on each channel (the
/// phase is over for that rank once those are delivered: connections deliver in order).
std::vector<std::vector<TransferId>> ring_phase(Builder& b, const RingPhase& ph, const Cut& k) {
  std::vector<std::vector<TransferId>> done(b.n());
  const auto nc = static_cast<std::uint32_t>(ph.orders.size());
  if (nc == 0 || ph.bytes == 0) return done;
  const auto nr = static_cast<std::uint32_t>(ph.orders[0].size());
  if (nr < 2) return done;
  const bool ar = ph.kind == RingKind::AllReduce;
  const std::uint32_t nsteps = ar ? 2 * (nr - 1) : nr - 1;
  const std::uint64_t loop_bytes = ar ? std::uint64_t{nc} * nr * k.chunk : std::uint64_t{nc} * k.chunk;
  // lr[c][p]: last transfer delivered to position p on channel c; prev/cur[c][p]: slices sent at a step.
  std::vector<std::vector<TransferId>> lr(nc, std::vector<TransferId>(nr, kNone));
  using Slices = std::vector<TransferId>;
  std::vector<std::vector<Slices>> prev(nc, std::vector<Slices>(nr)), cur = prev;
  std::vector<std::vector<std::uint64_t>> sizes(nc, std::vector<std::uint64_t>(nr));
  std::vector<TransferId> deps;
  bool first_loop = true;
  for (std::uint64_t grid = 0; grid < ph.bytes; grid += loop_bytes) {
    const std::uint64_t rem = ph.bytes - grid;
    // NCCL's realChunkSize: min(chunk, ceil(remaining / (channels x ranks))) for AllReduce, / channels
    // for AllGather/ReduceScatter (each step moves one rank's part), rounded up to the protocol grain.
    const std::uint64_t real =
        std::min(k.chunk, align_up(div_up(rem, ar ? std::uint64_t{nc} * nr : nc), k.grain));
    for (std::uint32_t c = 0; c < nc; ++c)
      for (std::uint32_t j = 0; j < nr; ++j) {
        const std::uint64_t off = (ar ? std::uint64_t{c} * nr + j : c) * real;
        sizes[c][j] = off >= rem ? 0 : std::min(real, rem - off);
      }
    const auto start_lr = lr; // a rank starts a loop once it has received everything of the previous one
    for (std::uint32_t s = 0; s < nsteps; ++s) {
      for (std::uint32_t c = 0; c < nc; ++c) {
        const auto& order = ph.orders[c];
        for (std::uint32_t p = 0; p < nr; ++p) {
          const std::uint32_t j = (p + nr - s % nr) % nr; // position p sends chunk p - s at step s
          const auto sl = Builder::slices_of(sizes[c][j], k);
          auto& out = cur[c][p];
          out.clear();
          const std::uint32_t src = order[p], dst = order[(p + 1) % nr];
          for (std::size_t q = 0; q < sl.size(); ++q) {
            if (s == 0) {
              if (start_lr[c][p] != kNone) deps.push_back(start_lr[c][p]);
            } else {
              deps.push_back(prev[c][(p + nr - 1) % nr].at(q)); // same slice, one step earlier, one rank back
            }
            if (first_loop && ph.start)
              deps.insert(deps.end(), (*ph.start)[src].begin(), (*ph.start)[src].end());
            const auto id = b.emit(src, dst, sl[q], c, ph.rails[c], ph.step_base + s, k.window, deps,
                                   first_loop && s == 0 ? ph.launch : Time::zero());
            out.push_back(id);
            lr[c][(p + 1) % nr] = id;
          }
        }
      }
      std::swap(prev, cur);
    }
    first_loop = false;
  }
  for (std::uint32_t c = 0; c < nc; ++c)
    for (std::uint32_t p = 0; p < nr; ++p)
      if (lr[c][p] != kNone) done[ph.orders[c][p]].push_back(lr[c][p]);
  return done;
}

RingPhase global_ring(Builder& b, RingKind kind, std::uint64_t bytes) {
  RingPhase ph;
  ph.kind = kind;
  ph.bytes = bytes;
  for (std::uint32_t c = 0; c < b.channels(); ++c) {
    ph.orders.push_back(ring_order(b.n(), b.gpn(), c));
    ph.rails.push_back(b.channel_rail(c));
  }
  return ph;
}

/// Broadcast (data flows root -> ... ) and Reduce (flows ... -> root): a pipelined chain along each
/// channel's ring order, rotated so that the root is first (Broadcast) or last (Reduce).
void chain(Builder& b, bool to_root, const Cut& k) {
  const std::uint32_t n = b.n(), nc = b.channels();
  const std::uint64_t bytes = b.spec().size_bytes;
  std::vector<std::vector<std::uint32_t>> orders;
  for (std::uint32_t c = 0; c < nc; ++c) {
    auto o = ring_order(n, b.gpn(), c);
    const auto it = std::find(o.begin(), o.end(), b.spec().root);
    std::rotate(o.begin(), to_root ? it + 1 : it, o.end());
    orders.push_back(std::move(o));
  }
  std::vector<TransferId> deps;
  std::vector<std::vector<TransferId>> got(nc); // per channel: transfer ids of the current piece's slices
  for (std::uint64_t grid = 0; grid < bytes; grid += std::uint64_t{nc} * k.chunk) {
    const std::uint64_t rem = bytes - grid;
    const std::uint64_t real = std::min(k.chunk, align_up(div_up(rem, nc), k.grain));
    for (std::uint32_t c = 0; c < nc; ++c) {
      const std::uint64_t off = std::uint64_t{c} * real;
      const std::uint64_t sz = off >= rem ? 0 : std::min(real, rem - off);
      const auto sl = Builder::slices_of(sz, k);
      got[c].assign(sl.size(), kNone);
      for (std::uint32_t p = 0; p + 1 < n; ++p)
        for (std::size_t q = 0; q < sl.size(); ++q) {
          if (p > 0) deps.push_back(got[c][q]);
          got[c][q] = b.emit(orders[c][p], orders[c][p + 1], sl[q], c, b.channel_rail(c), p, k.window, deps);
        }
    }
  }
}

// ---- double binary tree -------------------------------------------------------------------------------

struct RankTree {
  std::vector<std::int32_t> parent;                 ///< per rank, -1 for the root
  std::vector<std::vector<std::uint32_t>> children; ///< per rank
  std::vector<std::uint32_t> up_order;              ///< non-root ranks, deepest first
  std::vector<std::uint32_t> down_order;            ///< every rank, root first (BFS)
};

RankTree rank_tree(std::uint32_t ranks, std::uint32_t gpn, std::uint32_t channel, std::uint32_t tree) {
  const std::uint32_t nodes = ranks / gpn;
  const auto np = double_tree_parents(nodes, tree);
  RankTree t;
  t.parent.assign(ranks, -1);
  t.children.assign(ranks, {});
  auto at = [&](std::uint32_t node, std::uint32_t i) { return node * gpn + (channel + i) % gpn; };
  std::int32_t root = -1;
  for (std::uint32_t m = 0; m < nodes; ++m) {
    for (std::uint32_t i = 1; i < gpn; ++i) t.parent[at(m, i)] = static_cast<std::int32_t>(at(m, i - 1));
    if (np[m] >= 0)
      t.parent[at(m, 0)] = static_cast<std::int32_t>(at(static_cast<std::uint32_t>(np[m]), 0));
    else
      root = static_cast<std::int32_t>(at(m, 0));
  }
  for (std::uint32_t r = 0; r < ranks; ++r)
    if (t.parent[r] >= 0) t.children[static_cast<std::uint32_t>(t.parent[r])].push_back(r);
  t.down_order.push_back(static_cast<std::uint32_t>(root));
  for (std::size_t i = 0; i < t.down_order.size(); ++i)
    for (auto ch : t.children[t.down_order[i]]) t.down_order.push_back(ch);
  t.up_order.assign(t.down_order.rbegin(), t.down_order.rend() - 1);
  return t;
}

void tree_allreduce(Builder& b, const Cut& k) {
  const std::uint32_t n = b.n(), nc = b.channels();
  const std::uint64_t bytes = b.spec().size_bytes;
  // NCCL doubles the tree graph's channels: channel c < h (h = ceil(C/2)) runs tree 0 and channel c + h the
  // mirrored tree 1 over the same intra-node chain and NIC (graph channel c mod h). So every NIC carries both
  // trees, leaf in one and inner node in the other, and the two trees' loads balance on it.
  const std::uint32_t h = nc >= 2 ? (nc + 1) / 2 : 1;
  std::vector<RankTree> trees;
  for (std::uint32_t c = 0; c < nc; ++c) trees.push_back(rank_tree(n, b.gpn(), c % h, c / h));
  std::vector<TransferId> up(n), down(n), deps;
  for (std::uint64_t grid = 0; grid < bytes; grid += std::uint64_t{nc} * k.chunk) {
    const std::uint64_t rem = bytes - grid;
    const std::uint64_t real = std::min(k.chunk, align_up(div_up(rem, nc), k.grain));
    for (std::uint32_t c = 0; c < nc; ++c) {
      const std::uint64_t off = std::uint64_t{c} * real;
      const std::uint64_t sz = off >= rem ? 0 : std::min(real, rem - off);
      if (sz == 0) continue;
      const auto& t = trees[c];
      const auto rail = b.channel_rail(c % h);
      // Reduce up: a rank sends its partial sum once every child's partial sum of this chunk arrived.
      for (auto r : t.up_order) {
        for (auto ch : t.children[r]) deps.push_back(up[ch]);
        up[r] = b.emit(r, static_cast<std::uint32_t>(t.parent[r]), sz, c, rail, 0, k.window, deps,
                       Time::zero(), false, 0);
      }
      // Broadcast down: the root once it has reduced; the others once their parent's copy arrived. A rank
      // writes its copy to every child in one pass (NCCL's tree broadcasts to up to 3 children at once, once
      // each of them has room): every child's send waits for the same things, the FIFO windows of all of
      // them included, and the children after the first share the first one's pass.
      for (auto r : t.down_order) {
        const auto& kids = t.children[r];
        if (kids.empty()) continue;
        std::vector<TransferId> common;
        if (t.parent[r] < 0)
          for (auto x : kids) common.push_back(up[x]);
        else
          common.push_back(down[r]);
        for (auto ch : kids)
          if (const auto w = b.window_dep(r, ch, c, k.window)) common.push_back(*w);
        for (std::size_t i = 0; i < kids.size(); ++i) {
          deps = common;
          down[kids[i]] = b.emit(r, kids[i], sz, c, rail, 1, k.window, deps, Time::zero(), i > 0, 1);
        }
      }
    }
  }
}

/// NCCL's Tree Simple chunk (model-reference §5.2): a step (512 KiB), halved while the collective is
/// small against the pipeline depth = (ranks/nodes - 1) + log2(nodes).
std::uint64_t tree_simple_chunk(const Builder& b) {
  const std::uint64_t depth = (b.gpn() - 1) + log2_floor(b.nodes());
  const std::uint64_t bytes = b.spec().size_bytes, nc = b.channels();
  std::uint64_t chunk = kSimpleStepBytes;
  while (bytes / (nc * chunk) < depth * 8 && chunk > 128 * kKiB) chunk /= 2;
  while (bytes / (nc * chunk) < depth * 4 && chunk > 64 * kKiB) chunk /= 2;
  while (bytes / (nc * chunk) < depth && chunk > 32 * kKiB) chunk /= 2;
  return chunk;
}

// ---- recursive halving-doubling ----------------------------------------------------------------------

void halving_doubling(Builder& b, const Cut& k) {
  const std::uint32_t n = b.n(), nc = b.channels(), lg = log2_floor(n);
  const std::uint64_t bytes = b.spec().size_bytes;
  const std::uint64_t per_channel = align_up(div_up(bytes, nc), k.grain);
  std::vector<TransferId> deps;
  for (std::uint32_t c = 0; c < nc; ++c) {
    const std::uint64_t off = std::uint64_t{c} * per_channel;
    if (off >= bytes) break;
    const std::uint64_t piece = std::min(per_channel, bytes - off);
    const auto rail = b.channel_rail(c);
    // seg[r] = the part of the piece rank r is responsible for; hist[r][i] = its segment before step i.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> seg(n, {0, piece});
    std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> hist(n);
    std::vector<std::vector<TransferId>> got(n), next(n);
    auto send = [&](std::uint32_t r, std::uint32_t peer, std::uint64_t len, std::uint32_t step) {
      for (std::uint64_t done = 0; done < len; done += k.slice) {
        deps = got[r];
        next[peer].push_back(b.emit(r, peer, std::min(k.slice, len - done), c, rail, step, k.window, deps));
      }
    };
    for (std::uint32_t i = 0; i < lg; ++i) { // reduce-scatter: distance n/2, n/4, ..., 1
      const std::uint32_t d = n >> (i + 1);
      for (std::uint32_t r = 0; r < n; ++r) {
        auto [lo, hi] = seg[r];
        hist[r].push_back(seg[r]);
        const std::uint64_t mid = lo + (hi - lo) / 2;
        const bool keep_low = (r & d) == 0;
        send(r, r ^ d, keep_low ? hi - mid : mid - lo, i);
        seg[r] = keep_low ? std::make_pair(lo, mid) : std::make_pair(mid, hi);
      }
      std::swap(got, next);
      for (auto& v : next) v.clear();
    }
    for (std::uint32_t i = lg; i-- > 0;) { // all-gather: distance 1, 2, ..., n/2
      const std::uint32_t d = n >> (i + 1);
      for (std::uint32_t r = 0; r < n; ++r) send(r, r ^ d, seg[r].second - seg[r].first, 2 * lg - 1 - i);
      for (std::uint32_t r = 0; r < n; ++r) seg[r] = hist[r][i];
      std::swap(got, next);
      for (auto& v : next) v.clear();
    }
  }
}

// ---- direct (AllToAll, SendRecv) ----------------------------------------------------------------------

void direct(Builder& b, const Cut& k) {
  const std::uint32_t n = b.n();
  const bool a2a = b.spec().op == CollOp::AllToAll;
  const std::uint64_t per_peer = a2a ? div_up(b.spec().size_bytes, n) : b.spec().size_bytes;
  std::vector<TransferId> deps;
  for (std::uint32_t r = 0; r < n; ++r)
    for (std::uint32_t d = 1; d < (a2a ? n : 2); ++d) {
      const std::uint32_t dst = (r + d) % n;
      std::uint32_t i = 0;
      for (std::uint64_t off = 0; off < per_peer; off += k.chunk, ++i)
        b.emit(r, dst, std::min(k.chunk, per_peer - off), b.peer_channel(d, i), b.gpu_rail(r % b.gpn()), d - 1,
               k.window, deps);
    }
}

// ---- validation, resolution and the registry ----------------------------------------------------------

void validate(const CollectiveSpec& s) {
  if (s.ranks == 0) throw InputError("ranks: must be >= 1");
  if (s.gpus_per_node == 0) throw InputError("gpus_per_node: must be >= 1");
  if (s.nics_per_node == 0) throw InputError("nics_per_node: must be >= 1");
  if (s.ranks % s.gpus_per_node != 0)
    throw InputError("ranks: " + std::to_string(s.ranks) + " is not a multiple of gpus_per_node (" +
                     std::to_string(s.gpus_per_node) + "); ranks fill whole nodes");
  if (s.channels > kMaxChannels)
    throw InputError("channels: " + std::to_string(s.channels) + " is above NCCL's maximum of " +
                     std::to_string(kMaxChannels));
  if (s.chunk_bytes != 0 && s.chunk_bytes < 16)
    throw InputError("chunk_bytes: " + std::to_string(s.chunk_bytes) + " is below 16 B (0 = NCCL's)");
  if ((s.op == CollOp::Broadcast || s.op == CollOp::Reduce) && s.root >= s.ranks)
    throw InputError("root: rank " + std::to_string(s.root) +
                     " does not exist (ranks = " + std::to_string(s.ranks) + ")");
  if (s.protocol != "auto" && lower(s.protocol) != "auto") parse_proto(s.protocol);
  if (!(s.nic_gbps > 0) || !(s.nvlink_gbps > 0))
    throw InputError("nic_gbps/nvlink_gbps: must be > 0 (inputs of the tuning model)");
}

/// Protocol for a named algorithm: the spec's, or the tuning model's choice (ring, tree), or Simple
/// (hierarchical: resolve_protos).
Proto resolve_proto(const CollectiveSpec& s, const std::string& algo) {
  if (lower(s.protocol) != "auto") return parse_proto(s.protocol);
  if ((algo == "ring" || algo == "tree") && s.ranks >= 2)
    return parse_proto(tuning_choose_protocol(tuning_inputs(s), algo).protocol);
  return Proto::Simple;
}

/// The protocols of the transfers between nodes and inside a node: one (resolve_proto's), except a
/// hierarchical AllReduce under `auto`, whose inter-node ring and intra-node rings NCCL would tune on their
/// own (hierarchical_choose_protocols).
struct Protos {
  Proto net, nvlink;
};
Protos resolve_protos(const CollectiveSpec& s, const std::string& algo) {
  if (algo == "hierarchical" && lower(s.protocol) == "auto" && s.ranks >= 2) {
    const auto h = hierarchical_choose_protocols(s);
    return {parse_proto(h.inter.protocol), parse_proto(h.intra.protocol)};
  }
  const Proto p = resolve_proto(s, algo);
  return {p, p};
}

std::uint64_t loops(std::uint64_t bytes, std::uint64_t per_loop) {
  return std::max<std::uint64_t>(1, div_up(bytes, per_loop));
}

TransferDag build_ring(const CollectiveSpec& s) {
  require_op(
      s, "ring",
      {CollOp::AllReduce, CollOp::AllGather, CollOp::ReduceScatter, CollOp::Broadcast, CollOp::Reduce});
  Builder b(s, "ring", resolve_proto(s, "ring"));
  if (trivial(s)) return b.take();
  const std::uint64_t n = s.ranks, nc = b.channels();
  if (s.op == CollOp::Broadcast || s.op == CollOp::Reduce) {
    const auto k = b.cut(kSimpleStepBytes, false);
    check_size((n - 1) * pieces(s.size_bytes, nc, k), "ring");
    chain(b, s.op == CollOp::Reduce, k);
    return b.take();
  }
  const auto k = b.cut(4 * kSimpleStepBytes, true);
  const bool ar = s.op == CollOp::AllReduce;
  const std::uint64_t bytes = ar ? s.size_bytes : div_up(s.size_bytes, n);
  // AllReduce: each chunk is sent once per step; AllGather/ReduceScatter: each rank's chunk once per step.
  check_size((ar ? 2 * (n - 1) : (n - 1) * n) * pieces(bytes, (ar ? n : 1) * nc, k), "ring");
  ring_phase(b,
             global_ring(b,
                         ar                          ? RingKind::AllReduce
                         : s.op == CollOp::AllGather ? RingKind::AllGather
                                                     : RingKind::ReduceScatter,
                         bytes),
             k);
  return b.take();
}

TransferDag build_tree(const CollectiveSpec& s) {
  require_op(s, "tree", {CollOp::AllReduce});
  Builder b(s, "tree", resolve_proto(s, "tree"));
  if (trivial(s)) return b.take();
  const auto k = b.cut(tree_simple_chunk(b), false);
  check_size(2 * (std::uint64_t{s.ranks} - 1) * pieces(s.size_bytes, b.channels(), k), "tree");
  tree_allreduce(b, k);
  return b.take();
}

TransferDag build_hd(const CollectiveSpec& s) {
  require_op(s, "halving-doubling", {CollOp::AllReduce});
  if (!is_pow2(s.ranks))
    throw InputError("algorithm: 'halving-doubling' needs a power-of-two rank count, not " +
                     std::to_string(s.ranks) + "; use 'ring'");
  Builder b(s, "halving-doubling", resolve_proto(s, "halving-doubling"));
  if (trivial(s)) return b.take();
  const auto k = b.cut(4 * kSimpleStepBytes, true);
  const std::uint64_t n = s.ranks, nc = b.channels();
  check_size(2 * n * nc * (log2_floor(s.ranks) + s.size_bytes / (nc * k.slice)), "halving-doubling");
  halving_doubling(b, k);
  return b.take();
}

TransferDag build_hierarchical(const CollectiveSpec& s) {
  require_op(s, "hierarchical", {CollOp::AllReduce});
  if (s.gpus_per_node < 2)
    throw InputError(
        "algorithm: 'hierarchical' needs gpus_per_node > 1 (it reduces inside each node first); use "
        "'ring'");
  const auto pr = resolve_protos(s, "hierarchical");
  Builder b(s, "hierarchical", pr.net, pr.nvlink);
  if (trivial(s)) return b.take();
  // The inter-node ring is cut for its protocol, the intra-node rings for theirs (Builder::cut_nvlink).
  const auto k = b.cut(4 * kSimpleStepBytes, true), kn = b.cut_nvlink(4 * kSimpleStepBytes, true);
  const std::uint32_t g = s.gpus_per_node, m = b.nodes(), nc = b.channels();
  const std::uint64_t part = div_up(s.size_bytes, g);
  check_size(2 * std::uint64_t{m} * (g - 1) * g * pieces(part, nc, kn) +
                 2 * std::uint64_t{g} * (m - 1) * pieces(part, std::uint64_t{m} * nc, k),
             "hierarchical");
  // Each phase is its own NCCL call: the first's launch is the DAG's, the later ones' delay every send of
  // their phase's first step (Builder::phase_launch_*; a rank with nothing to send at that step starts
  // behind one that paid it).
  auto intra = [&](RingKind kind, std::uint32_t step_base, const std::vector<std::vector<TransferId>>* start,
                   Time launch) {
    std::vector<std::vector<TransferId>> done(s.ranks);
    for (std::uint32_t node = 0; node < m; ++node) {
      RingPhase ph;
      ph.kind = kind;
      ph.bytes = part;
      ph.step_base = step_base;
      ph.start = start;
      ph.launch = launch;
      for (std::uint32_t c = 0; c < nc; ++c) {
        std::vector<std::uint32_t> o(g);
        for (std::uint32_t i = 0; i < g; ++i) o[i] = node * g + (c + i) % g;
        ph.orders.push_back(std::move(o));
        ph.rails.push_back(-1);
      }
      auto d = ring_phase(b, ph, kn);
      for (std::uint32_t r = 0; r < s.ranks; ++r) done[r].insert(done[r].end(), d[r].begin(), d[r].end());
    }
    return done;
  };
  auto after = intra(RingKind::ReduceScatter, 0, nullptr, Time::zero());
  if (m > 1) {
    std::vector<std::vector<TransferId>> done(s.ranks);
    for (std::uint32_t local = 0; local < g; ++local) {
      RingPhase ph;
      ph.kind = RingKind::AllReduce;
      ph.bytes = part;
      ph.step_base = g - 1;
      ph.start = &after;
      ph.launch = b.phase_launch_net();
      std::vector<std::uint32_t> o(m);
      for (std::uint32_t node = 0; node < m; ++node) o[node] = node * g + local;
      for (std::uint32_t c = 0; c < nc; ++c) {
        ph.orders.push_back(o);
        ph.rails.push_back(b.gpu_rail(local));
      }
      auto d = ring_phase(b, ph, k);
      for (std::uint32_t r = 0; r < s.ranks; ++r) done[r].insert(done[r].end(), d[r].begin(), d[r].end());
    }
    after = std::move(done);
  }
  intra(RingKind::AllGather, (g - 1) + (m > 1 ? 2 * (m - 1) : 0), &after, b.phase_launch_nvlink());
  return b.take();
}

TransferDag build_direct(const CollectiveSpec& s) {
  require_op(s, "direct", {CollOp::AllToAll, CollOp::SendRecv});
  Builder b(s, "direct", resolve_proto(s, "direct"));
  if (trivial(s)) return b.take();
  const auto k = b.cut(kP2PChunkBytes, false);
  const std::uint64_t n = s.ranks;
  const std::uint64_t per_peer = s.op == CollOp::AllToAll ? div_up(s.size_bytes, n) : s.size_bytes;
  check_size((s.op == CollOp::AllToAll ? n * (n - 1) : n) * loops(per_peer, k.chunk), "direct");
  direct(b, k);
  return b.take();
}

/// The tuning model's fastest available (algorithm, protocol) among `allowed` (ring, tree, nvls, collnet),
/// the protocol fixed if the spec names one; nullopt when none is available.
std::optional<TuningEstimate> tuned_choice(const CollectiveSpec& s, const std::vector<std::string>& allowed) {
  auto has = [&](const std::string& a) {
    return std::find(allowed.begin(), allowed.end(), a) != allowed.end();
  };
  auto in = tuning_inputs(s);
  in.nvls = has("nvls");
  in.collnet = has("collnet");
  const bool fixed = lower(s.protocol) != "auto";
  const auto want = fixed ? std::string(proto_name(parse_proto(s.protocol))) : std::string();
  std::optional<TuningEstimate> best;
  for (const auto& e : tuning_table(in))
    if (e.available && has(e.algorithm) && (!fixed || e.protocol == want) &&
        (!best || e.time_us < best->time_us))
      best = e;
  return best;
}

/// What "auto" chooses among: ring and tree, and what the system offers (nccl.nvls, nccl.collnet).
std::vector<std::string> auto_allowed(const CollectiveSpec& s) {
  std::vector<std::string> allowed = {"ring", "tree"};
  if (s.nvls) allowed.push_back("nvls");
  if (s.collnet) allowed.push_back("collnet");
  return allowed;
}

/// NCCL's choice among `allowed` (tuned_choice). AllToAll and SendRecv: direct.
TransferDag build_tuned(const CollectiveSpec& s, const std::vector<std::string>& allowed) {
  if (s.op == CollOp::AllToAll || s.op == CollOp::SendRecv) return build_direct(s);
  if (s.ranks < 2) return build_ring(s);
  const auto best = tuned_choice(s, allowed);
  if (!best) {
    const bool fixed = lower(s.protocol) != "auto";
    std::string names;
    for (const auto& a : allowed) names += (names.empty() ? "" : ",") + a;
    throw InputError("algorithm: none of '" + names + "' does " + to_string(s.op) +
                     (fixed ? " with protocol '" + s.protocol + "'" : std::string()) + " here");
  }
  CollectiveSpec t = s;
  t.protocol = best->protocol;
  if (best->algorithm == "tree") return build_tree(t);
  if (best->algorithm == "nvls") return build_nvls(t);
  if (best->algorithm == "collnet") return build_collnet(t);
  return build_ring(t);
}

TransferDag build_auto(const CollectiveSpec& s) {
  return build_tuned(s, auto_allowed(s));
}

} // namespace

Registry<CollectiveFactory> builtin_collectives() {
  Registry<CollectiveFactory> reg("collective algorithm");
  reg.add("ring",
          "NCCL ring: AllReduce (reduce-scatter + all-gather, 2(n-1) steps), AllGather, ReduceScatter (n-1 "
          "steps), "
          "Broadcast/Reduce as a pipelined chain; channels rail-aligned, chunks, slices, FIFO window",
          build_ring);
  reg.add(
      "tree",
      "NCCL double binary tree (AllReduce): two complementary trees over nodes, a chain inside each node, "
      "reduce up and broadcast down pipelined per chunk",
      build_tree);
  reg.add("halving-doubling",
          "recursive halving reduce-scatter + recursive doubling all-gather (AllReduce, power-of-two ranks)",
          build_hd);
  reg.add("hierarchical",
          "AllReduce: intra-node ring reduce-scatter, inter-node ring AllReduce per local GPU (its rail), "
          "intra-node ring all-gather (gpus_per_node > 1)",
          build_hierarchical);
  reg.add("direct",
          "AllToAll (every pair, 128 KiB chunks) and SendRecv (r -> r+1), FIFO window per connection",
          build_direct);
  reg.add("nvls",
          "NVLink SHARP (AllReduce, Simple): NVSwitch reduces each GPU's shard (multimem ld_reduce) and "
          "multicasts the result (multimem st); across nodes NCCL's NVLS_TREE, a tree over nodes per shard",
          build_nvls);
  reg.add(
      "collnet",
      "CollNet Direct with InfiniBand SHARP (AllReduce, Simple, 2+ nodes): gather to one head per NIC, one "
      "trip per NIC through the switches' reduction tree, broadcast inside the node",
      build_collnet);
  reg.add("auto",
          "NCCL's tuning model: ring or tree (nvls, collnet where the system offers them) and the protocol "
          "with the lowest predicted time; a list \"ring,nvls\" (NCCL_ALGO) picks among those",
          build_auto);
  return reg;
}

namespace detail {

void check_spec(const CollectiveSpec& s) {
  validate(s);
}
bool trivial_spec(const CollectiveSpec& s) {
  return trivial(s);
}

namespace {
RingProtocolCut protocol_cut(Proto p, const Cut& k) {
  return {proto_name(p), k.chunk, k.slice, k.grain, k.slices_per_chunk, k.window};
}

/// A builder's choices and its cut `k`, as the ring evaluators read them.
RingCut cut_of(const Builder& b, const Cut& k) {
  RingCut r;
  r.protocol = proto_name(b.proto());
  r.channels = b.channels();
  r.nodes = b.nodes();
  r.chunk = k.chunk;
  r.slice = k.slice;
  r.grain = k.grain;
  r.slices_per_chunk = k.slices_per_chunk;
  r.window = k.window;
  r.step_overhead = b.intra_delay();
  r.net_step_overhead = b.net_delay();
  r.launch_latency = b.launch_latency();
  r.phase_launch_net = b.phase_launch_net();
  r.phase_launch_nvlink = b.phase_launch_nvlink();
  r.stage_gbps = b.stage_all_gbps();
  r.stage_gbps_nvlink = b.stage_nvlink_gbps();
  r.nvlink = protocol_cut(b.proto(), k);
  return r;
}
} // namespace

RingCut ring_cut(const CollectiveSpec& s, const std::string& algorithm) {
  const auto pr = resolve_protos(s, algorithm);
  Builder b(s, algorithm, pr.net, pr.nvlink);
  RingCut r = cut_of(b, b.cut(4 * kSimpleStepBytes, true));
  r.nvlink = protocol_cut(b.nvlink_proto(), b.cut_nvlink(4 * kSimpleStepBytes, true));
  return r;
}

TreeShape tree_shape(const CollectiveSpec& s) {
  Builder b(s, "tree", resolve_proto(s, "tree"));
  TreeShape t;
  t.cut = cut_of(b, b.cut(tree_simple_chunk(b), false));
  const std::uint32_t nc = b.channels(), h = nc >= 2 ? (nc + 1) / 2 : 1; // as tree_allreduce()
  for (std::uint32_t c = 0; c < nc; ++c) {
    t.parents.push_back(rank_tree(s.ranks, b.gpn(), c % h, c / h).parent);
    t.rails.push_back(b.channel_rail(c % h));
  }
  return t;
}

CollectiveSpec resolve_auto(const CollectiveSpec& s) {
  if (s.op == CollOp::AllToAll || s.op == CollOp::SendRecv || s.ranks < 2) return s;
  // The algorithms build_collective() would choose among (build_auto, build_tuned).
  std::vector<std::string> allowed;
  if (lower(s.algorithm) == "auto")
    allowed = auto_allowed(s);
  else if (s.algorithm.find(',') != std::string::npos)
    allowed = algorithm_names(s.algorithm);
  else
    return s;
  const auto best = tuned_choice(s, allowed);
  if (!best) return s;
  CollectiveSpec t = s;
  t.algorithm = best->algorithm;
  t.protocol = best->protocol;
  return t;
}

namespace {
Cut as_cut(const RingCut& c) {
  Cut k;
  k.chunk = c.chunk;
  k.slice = c.slice;
  k.slices_per_chunk = c.slices_per_chunk;
  k.window = c.window;
  k.grain = c.grain;
  return k;
}
} // namespace

std::vector<std::uint64_t> cut_slices(std::uint64_t data_bytes, const RingCut& c) {
  return Builder::slices_of(data_bytes, as_cut(c));
}
std::uint64_t cut_pieces(std::uint64_t bytes, std::uint64_t units, const RingCut& c) {
  return pieces(bytes, units, as_cut(c));
}

} // namespace detail

std::vector<std::string> algorithm_names(const std::string& algorithm) {
  std::vector<std::string> out;
  const bool list = algorithm.find(',') != std::string::npos;
  std::size_t pos = 0;
  while (true) {
    const auto end = algorithm.find(',', pos);
    std::string name;
    for (char ch : algorithm.substr(pos, end == std::string::npos ? std::string::npos : end - pos))
      if (!std::isspace(static_cast<unsigned char>(ch)))
        name += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    // NCCL's spellings (NCCL_ALGO and its INFO lines): NVLSTree, CollNetDirect, COLLNET_CHAIN, ...
    std::string key;
    for (char ch : name)
      if (ch != '_' && ch != '-') key += ch;
    if (key == "nvlstree") name = "nvls";
    if (key == "collnetdirect" || key == "collnetchain") name = "collnet";
    if (list && name != "ring" && name != "tree" && name != "nvls" && name != "collnet")
      throw InputError("algorithm: '" + name + "' in the list '" + algorithm +
                       "' is not one of NCCL's algorithms modelled here (ring, tree, nvls, collnet)");
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return out;
}

TransferDag build_collective(const CollectiveSpec& spec) {
  validate(spec);
  const auto names = algorithm_names(spec.algorithm);
  if (names.size() > 1 || spec.algorithm.find(',') != std::string::npos) return build_tuned(spec, names);
  return builtin_collectives().get(names.front()).factory(spec);
}

} // namespace ibn::scen

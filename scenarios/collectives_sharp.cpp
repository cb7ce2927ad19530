// NVLS (NVLink SHARP) and CollNet with InfiniBand SHARP as transfer DAGs (docs/collectives.md, "nvls",
// "collnet"): the builders registered in builtin_collectives() (scenarios/collectives.cpp).
#include "scenarios/collective_builder.hpp"

namespace ibn::scen::detail {

namespace {

/// NCCL's double binary tree (double_tree_parents) over nodes as children lists, with the root-first order.
struct NodeTree {
  std::vector<std::int32_t> parent;
  std::vector<std::vector<std::uint32_t>> children;
  std::vector<std::uint32_t> down; ///< root first (BFS); reversed, without the root: the up order
};

NodeTree node_tree(std::uint32_t nodes, std::uint32_t tree) {
  NodeTree t;
  t.parent = double_tree_parents(nodes, tree);
  t.children.assign(nodes, {});
  for (std::uint32_t x = 0; x < nodes; ++x)
    if (t.parent[x] >= 0)
      t.children[static_cast<std::uint32_t>(t.parent[x])].push_back(x);
    else
      t.down.insert(t.down.begin(), x);
  for (std::size_t i = 0; i < t.down.size(); ++i)
    for (auto ch : t.children[t.down[i]]) t.down.push_back(ch);
  return t;
}

/// NCCL's NVLS channel count (NCCL_NVLS_NCHANNELS, default 16: src/transport/nvls.cc, v2.19.3-1).
constexpr std::uint32_t kNvlsChannels = 16;

/// NCCL's NVLS chunk (src/enqueue.cc computeColl, v2.19.3-1), with concurrent = channels x GPUs per node:
/// one node: 128 KiB, lowered to 64 / 32 / 16 KiB while size < 64 / 8 / 2 x concurrent x chunk; several
/// nodes (NVLS_TREE): the 512 KiB step (64 KiB from 4 nodes), lowered to 256 / 128 / 64 KiB while size <
/// 32 / 16 / 4 x concurrent x chunk.
std::uint64_t nvls_chunk(const Builder& b) {
  const std::uint64_t bytes = b.spec().size_bytes, ops = std::uint64_t{b.channels()} * b.gpn();
  std::uint64_t chunk = kSimpleStepBytes;
  if (b.nodes() == 1) {
    chunk = 128 * kKiB;
    if (bytes < 64 * ops * chunk && chunk > 64 * kKiB) chunk = 64 * kKiB;
    if (bytes < 8 * ops * chunk && chunk > 32 * kKiB) chunk = 32 * kKiB;
    if (bytes < 2 * ops * chunk && chunk > 16 * kKiB) chunk = 16 * kKiB;
  } else {
    if (b.nodes() >= 4) chunk = 64 * kKiB;
    if (bytes < 32 * ops * chunk && chunk > 256 * kKiB) chunk = 256 * kKiB;
    if (bytes < 16 * ops * chunk && chunk > 128 * kKiB) chunk = 128 * kKiB;
    if (bytes < 4 * ops * chunk && chunk > 64 * kKiB) chunk = 64 * kKiB;
  }
  return chunk;
}

/// NVLS AllReduce. The buffer is cut into shards, one per local GPU (per loop: channels x GPUs chunks;
/// channel c, shard j of a loop at offset (c g + j) x chunk). Inside a node, for each shard j:
///  - reduce-scatter through the switch (multimem.ld_reduce by GPU j): the switch reads shard j from every
///    GPU of the node, j included, and returns the sum to j. Each read loads the reading GPU's NVLink
///    egress once: a transfer i -> j of the shard for every i != j, and for j's own copy a transfer j ->
///    j+1 (its destination stands for the switch: only the egress is charged, docs/collectives.md).
///  - all-gather by multicast store (multimem.st): GPU j writes the reduced shard once, the switch copies
///    it to every GPU: one transfer j -> j+1 of the shard, after the reduction (and, on several nodes, the
///    tree) is done. Per GPU the egress is S (g - 1)/g + S/g + S/g = S (g + 1)/g.
/// On several nodes (NCCL's NVLS_TREE) the reduced shard j of every node is then all-reduced over nodes
/// by GPU j through its NIC (j mod NICs) along NCCL's double binary tree (tree c mod 2): up with the
/// partial sums, down with the result, before the multicast store.
void nvls_allreduce(Builder& b, const Cut& k) {
  const std::uint32_t g = b.gpn(), m = b.nodes(), nc = b.channels();
  const std::uint64_t bytes = b.spec().size_bytes, units = std::uint64_t{nc} * g;
  const NodeTree trees[2] = {node_tree(m, 0), node_tree(m, m > 1 ? 1 : 0)};
  std::vector<std::vector<TransferId>> red(m);
  std::vector<TransferId> up(m, kNone), down(m, kNone), deps;
  for (std::uint64_t grid = 0; grid < bytes; grid += units * k.chunk) {
    const std::uint64_t rem = bytes - grid;
    const std::uint64_t real = std::min(k.chunk, align_up(div_up(rem, units), k.grain));
    for (std::uint32_t c = 0; c < nc; ++c)
      for (std::uint32_t j = 0; j < g; ++j) {
        const std::uint64_t off = (std::uint64_t{c} * g + j) * real;
        if (off >= rem) continue;
        const std::uint64_t sz = std::min(real, rem - off);
        for (std::uint32_t x = 0; x < m; ++x) {
          red[x].clear();
          for (std::uint32_t i = 0; i < g; ++i) {
            const std::uint32_t dst = x * g + (i == j ? (j + 1) % g : j);
            red[x].push_back(b.emit(x * g + i, dst, sz, c, -1, 0, k.window, deps));
          }
        }
        const auto& t = trees[c % 2];
        auto reduced = [&](std::uint32_t x) { // node x's sum over its subtree is complete
          deps.insert(deps.end(), red[x].begin(), red[x].end());
          for (auto ch : t.children[x]) deps.push_back(up[ch]);
        };
        if (m > 1) {
          const auto rail = b.gpu_rail(j);
          for (auto it = t.down.rbegin(); it + 1 != t.down.rend(); ++it) {
            const auto x = *it;
            reduced(x);
            up[x] = b.emit(x * g + j, static_cast<std::uint32_t>(t.parent[x]) * g + j, sz, c, rail, 1,
                           k.window, deps);
          }
          for (auto x : t.down)
            for (auto ch : t.children[x]) {
              if (t.parent[x] < 0)
                reduced(x);
              else
                deps.push_back(down[x]);
              down[ch] = b.emit(x * g + j, ch * g + j, sz, c, rail, 2, k.window, deps);
            }
        }
        for (std::uint32_t x = 0; x < m; ++x) {
          if (m == 1 || t.parent[x] < 0)
            reduced(x);
          else
            deps.push_back(down[x]);
          b.emit(x * g + j, x * g + (j + 1) % g, sz, c, -1, 3, 0, deps);
        }
      }
  }
}

/// NCCL's CollNet Direct chunk (src/enqueue.cc computeColl, v2.19.3-1) with the tree depth taken as 1: the
/// 512 KiB step, halved while size / (channels x heads x chunk) < 64 (down to 128 KiB), < 8 (to 64 KiB and
/// then to 32 KiB).
std::uint64_t collnet_chunk(const Builder& b, std::uint32_t heads) {
  const std::uint64_t bytes = b.spec().size_bytes, per = std::uint64_t{b.channels()} * heads;
  std::uint64_t chunk = kSimpleStepBytes;
  while (bytes / (per * chunk) < 64 && chunk > 128 * kKiB) chunk /= 2;
  while (bytes / (per * chunk) < 8 && chunk > 64 * kKiB) chunk /= 2;
  while (bytes / (per * chunk) < 8 && chunk > 32 * kKiB) chunk /= 2;
  return chunk;
}

/// CollNet (Direct) AllReduce with SHARP. Heads: local GPU r for NIC r, r < min(NICs, GPUs per node); the
/// buffer is cut into one part per head (per loop: channels x heads chunks). For each part r, in every node:
///  - gather-reduce: every other GPU sends its copy of part r to head r over NVLink;
///  - SHARP: once head r has them all, it sends the part once through NIC r into the switch tree, which
///    reduces it across nodes and multicasts the result back, so each NIC sends the part once and receives
///    it once. The engines move bytes only between HCAs, so the trip is a transfer from node x's NIC r to
///    node x+1's NIC r (same rail): each NIC's send and receive links carry the part exactly once, as with
///    SHARP; the switches' reduction work and the tree's inner links are not modelled.
///  - broadcast: once every node's part r has been sent (all m SHARP transfers delivered: the reduction
///    needs them all), head r sends the result to every other GPU of its node.
void collnet_allreduce(Builder& b, const Cut& k, std::uint32_t heads) {
  const std::uint32_t g = b.gpn(), m = b.nodes(), nc = b.channels();
  const std::uint64_t bytes = b.spec().size_bytes, units = std::uint64_t{nc} * heads;
  std::vector<std::vector<TransferId>> gathered(m);
  std::vector<TransferId> net(m), deps;
  for (std::uint64_t grid = 0; grid < bytes; grid += units * k.chunk) {
    const std::uint64_t rem = bytes - grid;
    const std::uint64_t real = std::min(k.chunk, align_up(div_up(rem, units), k.grain));
    for (std::uint32_t c = 0; c < nc; ++c)
      for (std::uint32_t r = 0; r < heads; ++r) {
        const std::uint64_t off = (std::uint64_t{c} * heads + r) * real;
        if (off >= rem) continue;
        const std::uint64_t sz = std::min(real, rem - off);
        for (std::uint32_t x = 0; x < m; ++x) {
          gathered[x].clear();
          for (std::uint32_t i = 0; i < g; ++i)
            if (i != r) gathered[x].push_back(b.emit(x * g + i, x * g + r, sz, c, -1, 0, k.window, deps));
        }
        for (std::uint32_t x = 0; x < m; ++x) {
          deps = gathered[x];
          net[x] = b.emit(x * g + r, ((x + 1) % m) * g + r, sz, c, b.gpu_rail(r), 1, k.window, deps);
        }
        for (std::uint32_t x = 0; x < m; ++x)
          for (std::uint32_t i = 0; i < g; ++i)
            if (i != r) {
              deps = net;
              b.emit(x * g + r, x * g + i, sz, c, -1, 2, k.window, deps);
            }
      }
  }
}

/// NVLS and CollNet run Simple only (NCCL skips their LL and LL128 rows).
Proto simple_only(const CollectiveSpec& s, const std::string& algo) {
  if (lower(s.protocol) != "auto" && parse_proto(s.protocol) != Proto::Simple)
    throw InputError("protocol: '" + algo +
                     "' runs the Simple protocol only (NCCL has no LL/LL128 for it), not '" + s.protocol +
                     "'");
  return Proto::Simple;
}

} // namespace

TransferDag build_nvls(const CollectiveSpec& s) {
  require_op(s, "nvls", {CollOp::AllReduce});
  if (s.gpus_per_node < 2)
    throw InputError(
        "algorithm: 'nvls' needs gpus_per_node > 1 (NVSwitch reduction inside a node); use 'ring'");
  CollectiveSpec t = s;
  if (!t.channels) t.channels = kNvlsChannels; // NCCL_NVLS_NCHANNELS, not the ring's search
  Builder b(t, "nvls", simple_only(s, "nvls"));
  if (trivial(s)) return b.take();
  const auto k = b.cut(nvls_chunk(b), false);
  const std::uint64_t g = s.gpus_per_node, m = b.nodes();
  check_size(pieces(s.size_bytes, std::uint64_t{b.channels()} * g, k) * (m * (g + 1) + 2 * (m - 1)), "nvls");
  nvls_allreduce(b, k);
  return b.take();
}

TransferDag build_collnet(const CollectiveSpec& s) {
  require_op(s, "collnet", {CollOp::AllReduce});
  if (s.ranks / s.gpus_per_node < 2 && !trivial(s))
    throw InputError(
        "algorithm: 'collnet' reduces across nodes in the switches and needs 2 or more nodes; use "
        "'ring' or 'nvls' inside one node");
  Builder b(s, "collnet", simple_only(s, "collnet"));
  if (trivial(s)) return b.take();
  const std::uint32_t heads = std::min(s.nics_per_node, s.gpus_per_node);
  const auto k = b.cut(collnet_chunk(b, heads), false);
  const std::uint64_t g = s.gpus_per_node, m = b.nodes();
  // Transfers, and the broadcasts' dependencies on every node's SHARP transfer (m per broadcast).
  check_size(pieces(s.size_bytes, std::uint64_t{b.channels()} * heads, k) *
                 (m * (2 * (g - 1) + 1) + m * (g - 1) * m / 4),
             "collnet");
  collnet_allreduce(b, k, heads);
  return b.take();
}

} // namespace ibn::scen::detail

// Collectives as transfer DAGs (scenarios/collectives.hpp) and NCCL's tuning model (scenarios/tuning.hpp):
// bytes per rank against the closed forms (formula in each comment), step counts, dependencies (data and
// FIFO window), rails, the double binary tree's shape, a symbolic executor for closed-form times, bad
// specs, and the tuning model's worked example (model-reference §5.6).
#include "scenarios/collectives.hpp"
#include "scenarios/tuning.hpp"

#include "sim/error.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>

using namespace ibn;
using namespace ibn::scen;

namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;

CollectiveSpec spec(CollOp op, std::uint64_t size, std::uint32_t ranks, std::uint32_t gpn, std::uint32_t nics,
                    const std::string& algo, const std::string& proto = "simple") {
  CollectiveSpec s;
  s.op = op;
  s.size_bytes = size;
  s.ranks = ranks;
  s.gpus_per_node = gpn;
  s.nics_per_node = nics;
  s.algorithm = algo;
  s.protocol = proto;
  return s;
}

std::uint32_t max_step(const TransferDag& d) {
  std::uint32_t m = 0;
  for (const auto& t : d.transfers()) m = std::max(m, t.step);
  return m;
}

void check_topological(const TransferDag& d) {
  for (TransferId i = 0; i < d.size(); ++i)
    for (auto dep : d.deps_of(i)) REQUIRE(dep < i);
}

/// Delivery time of every transfer when a transfer of b wire bytes takes alpha + b x ps_per_byte and
/// starts at max(deliveries of its dependencies) + local_delay (no contention). Returns the last delivery.
Time symbolic_run(const TransferDag& d, Time alpha, std::int64_t ps_per_byte) {
  std::vector<Time> done(d.size());
  Time end;
  for (TransferId i = 0; i < d.size(); ++i) {
    Time start;
    for (auto dep : d.deps_of(i)) start = std::max(start, done[dep]);
    done[i] =
        start + d[i].local_delay + alpha + Time::ps(static_cast<std::int64_t>(d[i].bytes) * ps_per_byte);
    end = std::max(end, done[i]);
  }
  return end;
}

} // namespace

TEST_CASE("collective op names and busbw factors") {
  CHECK(parse_coll_op("all_reduce", "op") == CollOp::AllReduce);
  CHECK(parse_coll_op("AllGather", "op") == CollOp::AllGather);
  CHECK(parse_coll_op("reduce-scatter", "op") == CollOp::ReduceScatter);
  CHECK(parse_coll_op("alltoall", "op") == CollOp::AllToAll);
  for (auto op : {CollOp::AllReduce, CollOp::AllGather, CollOp::ReduceScatter, CollOp::AllToAll,
                  CollOp::SendRecv, CollOp::Broadcast, CollOp::Reduce})
    CHECK(parse_coll_op(to_string(op), "op") == op);
  const auto e = test::error_of([] { parse_coll_op("allredux", "--op"); });
  CHECK(e.find("--op") != std::string::npos);
  CHECK(e.find("allredux") != std::string::npos);
  // nccl-tests PERFORMANCE.md: AllReduce 2(n-1)/n, AG/RS/A2A (n-1)/n, others 1.
  CHECK(busbw_factor(CollOp::AllReduce, 16) == doctest::Approx(30.0 / 16));
  CHECK(busbw_factor(CollOp::AllGather, 8) == doctest::Approx(7.0 / 8));
  CHECK(busbw_factor(CollOp::ReduceScatter, 8) == doctest::Approx(7.0 / 8));
  CHECK(busbw_factor(CollOp::AllToAll, 4) == doctest::Approx(3.0 / 4));
  CHECK(busbw_factor(CollOp::SendRecv, 4) == 1.0);
  CHECK(busbw_factor(CollOp::Broadcast, 4) == 1.0);
  CHECK(busbw_factor(CollOp::Reduce, 4) == 1.0);
}

TEST_CASE("ring AllReduce: bytes per rank, steps, data and window dependencies, rails") {
  // 2 nodes x 4 GPUs, 4 NICs, default channels = min(32, 2 x 4) = 8; S a multiple of channels x ranks x
  // 2 MiB x 3 so that there are 3 loops of full chunks.
  const std::uint32_t n = 8;
  const std::uint64_t S = 3ull * 8 * n * 2 * MiB;
  const auto d = build_collective(spec(CollOp::AllReduce, S, n, 4, 4, "ring"));
  CHECK(d.channels == 8);
  CHECK(d.algorithm == "ring");
  CHECK(d.protocol == "simple");
  check_topological(d);
  // Each rank sends 2(n-1)/n x S bytes.
  for (std::uint32_t r = 0; r < n; ++r) CHECK(bytes_sent_by(d, r) == 2 * (n - 1) * S / n);
  // 2(n-1) steps; slices of 1 MiB (a 2 MiB chunk is 2 slices).
  CHECK(max_step(d) + 1 == 2 * (n - 1));
  for (const auto& t : d.transfers()) CHECK(t.bytes == MiB);
  // Data dependency: a step-s transfer waits for the same slice delivered to its sender at step s-1.
  std::size_t data_deps = 0, window_deps = 0;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::vector<TransferId>> conn;
  for (TransferId i = 0; i < d.size(); ++i) {
    const auto& t = d[i];
    bool has_data = false;
    for (auto dep : d.deps_of(i))
      if (d[dep].dst == t.src && d[dep].channel == t.channel && d[dep].step + 1 == t.step) has_data = true;
    if (t.step > 0) {
      CHECK(has_data);
      data_deps += has_data;
    }
    // Window: the transfer 4 positions earlier on the same connection (Simple: 8 steps / 2 per slice).
    auto& h = conn[{t.src, t.dst, t.channel}];
    if (h.size() >= 4) {
      const auto deps = d.deps_of(i);
      const bool w = std::find(deps.begin(), deps.end(), h[h.size() - 4]) != deps.end();
      CHECK(w);
      window_deps += w;
    }
    h.push_back(i);
  }
  CHECK(data_deps > 0);
  CHECK(window_deps > 0);
  // Rails: channel c leaves a node from local GPU (c + 3) mod 4, enters at c mod 4, through NIC c mod 4.
  std::size_t inter = 0;
  for (const auto& t : d.transfers()) {
    if (t.src / 4 == t.dst / 4) {
      CHECK(t.rail == -1);
      continue;
    }
    ++inter;
    CHECK(t.rail == static_cast<std::int32_t>(t.channel % 4));
    CHECK(t.src % 4 == (t.channel + 3) % 4);
    CHECK(t.dst % 4 == t.channel % 4);
  }
  // Two node boundaries per channel ring, each crossed at every one of the 2(n-1) steps by 2 slices x 3
  // loops.
  CHECK(inter == 8u * 2 * 2 * (n - 1) * 2 * 3);
}

TEST_CASE("ring AllGather, ReduceScatter, protocols and the LL wire factor") {
  const std::uint32_t n = 6;
  const std::uint64_t S = n * 2 * 4 * MiB; // per-rank part 8 MiB = 2 channels x 2 loops x 2 MiB
  for (auto op : {CollOp::AllGather, CollOp::ReduceScatter}) {
    const auto d = build_collective(spec(op, S, n, 2, 1, "ring"));
    CHECK(max_step(d) + 1 == n - 1);
    for (std::uint32_t r = 0; r < n; ++r) CHECK(bytes_sent_by(d, r) == (n - 1) * S / n); // (n-1)/n x S
  }
  // LL: 8 B of data per 16 B line, so wire bytes = 2 x 2(n-1)/n x S; LL128: x 128/120 per transfer.
  const std::uint64_t S2 = n * 2 * 64 * KiB;
  const auto ll = build_collective(spec(CollOp::AllReduce, S2, n, 2, 1, "ring", "ll"));
  for (std::uint32_t r = 0; r < n; ++r) CHECK(bytes_sent_by(ll, r) == 2 * 2 * (n - 1) * S2 / n);
  const auto ll128 = build_collective(spec(CollOp::AllReduce, S2, n, 2, 1, "ring", "ll128"));
  for (const auto& t : ll128.transfers()) CHECK(t.bytes > 0);
  std::uint64_t data = 0;
  for (const auto& t : ll128.transfers()) data += t.bytes;
  // Sum of ceil(data x 128/120) per transfer: between the exact product and that plus one per transfer.
  CHECK(data >= 2 * (n - 1) * S2 * 128 / 120);
  CHECK(data <= 2 * (n - 1) * S2 * 128 / 120 + ll128.size());
}

TEST_CASE("ring Broadcast and Reduce: pipelined chains from / to the root") {
  const std::uint32_t n = 5;
  const std::uint64_t S = 2 * 4 * 512 * KiB; // 2 channels x 4 chunks of 512 KiB
  auto s = spec(CollOp::Broadcast, S, n, 1, 1, "ring");
  s.root = 3;
  const auto b = build_collective(s);
  std::uint64_t total = 0;
  for (std::uint32_t r = 0; r < n; ++r) total += bytes_sent_by(b, r);
  CHECK(total == (n - 1) * S);     // every rank but the last of each chain forwards S
  CHECK(bytes_sent_by(b, 3) == S); // the root sends all of it
  for (const auto& t : b.transfers()) CHECK(t.dst != 3);
  s.op = CollOp::Reduce;
  const auto rd = build_collective(s);
  CHECK(bytes_sent_by(rd, 3) == 0); // the root only receives
  std::uint64_t into_root = 0;
  for (const auto& t : rd.transfers())
    if (t.dst == 3) into_root += t.bytes;
  CHECK(into_root == S);
  check_topological(rd);
}

TEST_CASE("double binary tree: shape, complementarity, depth") {
  for (std::uint32_t m = 1; m <= 64; ++m) {
    std::uint32_t lg = 0;
    while ((2u << lg) <= m) ++lg; // floor(log2 m)
    std::vector<std::vector<std::uint32_t>> kids(2, std::vector<std::uint32_t>(m));
    for (std::uint32_t tr = 0; tr < 2; ++tr) {
      const auto p = double_tree_parents(m, tr);
      CHECK(std::count(p.begin(), p.end(), -1) == 1); // one root
      for (std::uint32_t x = 0; x < m; ++x) {
        std::uint32_t depth = 0, y = x;
        while (p[y] >= 0 && depth <= m) y = static_cast<std::uint32_t>(p[y]), ++depth;
        CHECK(depth <= lg + 1); // reaches the root (acyclic) within log2(m) + 1 hops
        if (p[x] >= 0) ++kids[tr][static_cast<std::uint32_t>(p[x])];
      }
      for (std::uint32_t x = 0; x < m; ++x) CHECK(kids[tr][x] <= 2); // binary
    }
    if (m % 2 == 0)
      for (std::uint32_t x = 0; x < m; ++x)
        CHECK((kids[0][x] == 0 || kids[1][x] == 0)); // interior in one tree
  }
}

TEST_CASE("tree AllReduce: NCCL's channel doubling puts both trees on every NIC") {
  // 16 channels over 8 NICs per node: channel c < 8 runs tree 0, channel c + 8 the mirrored tree 1 on the
  // same NIC (graph channel c). Every NIC that sends between nodes serves both trees, so the two trees'
  // roles (leaf in one, inner node in the other) balance on it.
  auto s = spec(CollOp::AllReduce, 64 * MiB, 32, 8, 8, "tree");
  s.channels = 16;
  const auto d = build_collective(s);
  std::map<std::pair<std::uint32_t, std::int32_t>, std::set<std::uint32_t>> trees; // (node, rail) -> trees
  for (const auto& t : d.transfers())
    if (t.src / 8 != t.dst / 8) {
      CHECK(t.rail == static_cast<std::int32_t>(t.channel % 8));
      trees[{t.src / 8, t.rail}].insert(t.channel / 8);
    }
  CHECK(trees.size() == 4 * 8);
  for (const auto& [nic, set] : trees) {
    INFO("node " << nic.first << " rail " << nic.second);
    CHECK(set.size() == 2);
  }
}

TEST_CASE("sendrecv and alltoall with the NCCL model: 2 channels per peer and a per-channel rate") {
  // NCCL_NCHANNELS_PER_NET_PEER = 2: the chunks to one peer alternate over 2 channels; peer d (1-based) of
  // an alltoall takes channels 2(d-1), 2(d-1)+1 mod C. The DAG carries the per-channel rate (14 GB/s).
  auto s = spec(CollOp::SendRecv, 4 * MiB, 16, 8, 8, "direct");
  s.nccl_costs = true;
  auto d = build_collective(s);
  CHECK(d.channels == 16);
  CHECK(d.channel_gbps == doctest::Approx(14.0 * 8));
  std::map<std::uint32_t, std::set<std::uint32_t>> ch; // rank -> channels used
  for (const auto& t : d.transfers()) ch[t.src].insert(t.channel);
  for (const auto& [r, set] : ch) CHECK(set == std::set<std::uint32_t>{0, 1});
  s.op = CollOp::AllToAll;
  s.ranks = 4;
  s.gpus_per_node = 1;
  s.nics_per_node = 1; // 2 channels: every peer on both
  d = build_collective(s);
  for (const auto& t : d.transfers()) CHECK(t.channel < 2);
  // Without the model, chunks go round every channel and no rate is set.
  s.nccl_costs = false;
  s.op = CollOp::SendRecv;
  s.ranks = 16;
  s.gpus_per_node = 8;
  s.nics_per_node = 8;
  d = build_collective(s);
  CHECK(d.channel_gbps == 0);
  std::set<std::uint32_t> all;
  for (const auto& t : d.transfers()) all.insert(t.channel);
  CHECK(all.size() == 16);
}

TEST_CASE("tree AllReduce: bytes per rank and total, reduce before broadcast") {
  // 4 nodes x 2 GPUs, 2 NICs -> 4 channels (2 per tree); S a multiple of 4 channels x the chunk.
  const std::uint32_t n = 8, g = 2;
  const std::uint64_t S = 4 * 4 * 512 * KiB;
  const auto d = build_collective(spec(CollOp::AllReduce, S, n, g, 2, "tree"));
  CHECK(d.algorithm == "tree");
  check_topological(d);
  // Every tree edge carries each byte of its channels once up and once down: sum over ranks = 2(n-1) x S.
  std::uint64_t total = 0;
  for (std::uint32_t r = 0; r < n; ++r) total += bytes_sent_by(d, r);
  CHECK(total == 2 * (n - 1) * S);
  // Per rank and channel: S/C x (1 if it has a parent + number of children).
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::set<std::uint32_t>>
      peers; // (rank, channel) -> peers
  for (const auto& t : d.transfers()) peers[{t.src, t.channel}].insert(t.dst);
  for (std::uint32_t r = 0; r < n; ++r) {
    std::uint64_t expect = 0;
    for (std::uint32_t c = 0; c < 4; ++c) expect += S / 4 * peers[{r, c}].size();
    CHECK(bytes_sent_by(d, r) == expect);
  }
  // Inter-node edges use the channel's NIC; down transfers (step 1) of a chunk come after its up ones.
  for (const auto& t : d.transfers())
    if (t.src / g != t.dst / g) CHECK(t.rail == static_cast<std::int32_t>(t.channel % 2));
  for (TransferId i = 0; i < d.size(); ++i)
    if (d[i].step == 1) {
      bool dep_ok = false;
      for (auto dep : d.deps_of(i)) dep_ok |= d[dep].dst == d[i].src;
      CHECK(dep_ok);
    }
  // One chunk per channel: a rank sends up once every child's partial sum arrived, and with no contention
  // the chunk takes 2 x height x (delta + alpha + chunk/B), height = chain (g-1) + node-tree depth (2 for 4
  // nodes, both trees) = 3.
  auto one = spec(CollOp::AllReduce, 4 * 64 * KiB, n, g, 2, "tree");
  one.chunk_bytes = 64 * KiB;
  one.step_overhead = Time::ns(2);
  const auto d1 = build_collective(one);
  for (TransferId i = 0; i < d1.size(); ++i) {
    if (d1[i].step != 0) continue;
    std::set<TransferId> deps(d1.deps_of(i).begin(), d1.deps_of(i).end());
    for (TransferId j = 0; j < i; ++j)
      if (d1[j].step == 0 && d1[j].dst == d1[i].src && d1[j].channel == d1[i].channel)
        CHECK(deps.count(j) == 1);
  }
  CHECK(symbolic_run(d1, Time::ns(3), 20) == (Time::ns(5) + Time::ps(64 * KiB * 20)) * 6);
}

TEST_CASE("halving-doubling AllReduce: partners, steps, bytes, power of two only") {
  const std::uint32_t n = 8;
  const std::uint64_t S = 2 * n * 4 * MiB;
  const auto d = build_collective(spec(CollOp::AllReduce, S, n, 2, 1, "halving-doubling"));
  check_topological(d);
  CHECK(max_step(d) + 1 == 6);                                                             // 2 log2(n)
  for (std::uint32_t r = 0; r < n; ++r) CHECK(bytes_sent_by(d, r) == 2 * (n - 1) * S / n); // 2(n-1)/n x S
  for (const auto& t : d.transfers()) {
    const std::uint32_t i = t.step < 3 ? t.step : 5 - t.step; // halving: n/2, n/4, 1; doubling reverses
    CHECK((t.src ^ t.dst) == (n >> (i + 1)));
  }
  const auto e =
      test::error_of([] { build_collective(spec(CollOp::AllReduce, MiB, 6, 1, 1, "halving-doubling")); });
  CHECK(e.find("power-of-two") != std::string::npos);
  CHECK(e.find("ring") != std::string::npos);
}

TEST_CASE("hierarchical AllReduce: intra RS, inter AR per local GPU on its rail, intra AG") {
  const std::uint32_t m = 3, g = 4, n = m * g;
  const std::uint64_t S = g * 3 * 8 * 2 * MiB; // part S/g divisible by channels x m x chunk
  const auto d = build_collective(spec(CollOp::AllReduce, S, n, g, 4, "hierarchical"));
  check_topological(d);
  // (g-1)/g S reduce-scatter + 2(m-1)/m S/g inter-node AllReduce + (g-1)/g S all-gather.
  for (std::uint32_t r = 0; r < n; ++r)
    CHECK(bytes_sent_by(d, r) == 2 * (g - 1) * S / g + 2 * (m - 1) * (S / g) / m);
  for (const auto& t : d.transfers())
    if (t.src / g != t.dst / g) {
      CHECK(t.src % g == t.dst % g);
      CHECK(t.rail == static_cast<std::int32_t>(t.src % g));
    }
  CHECK(max_step(d) + 1 == (g - 1) + 2 * (m - 1) + (g - 1));
  const auto e =
      test::error_of([] { build_collective(spec(CollOp::AllReduce, MiB, 4, 1, 1, "hierarchical")); });
  CHECK(e.find("gpus_per_node") != std::string::npos);
}

TEST_CASE("direct AllToAll and SendRecv") {
  const std::uint32_t n = 6;
  const std::uint64_t S = n * 300 * KiB;
  const auto a = build_collective(spec(CollOp::AllToAll, S, n, 2, 2, "auto", "auto"));
  CHECK(a.algorithm == "direct");
  for (std::uint32_t r = 0; r < n; ++r) CHECK(bytes_sent_by(a, r) == (n - 1) * S / n); // (n-1) x S/n
  std::set<std::pair<std::uint32_t, std::uint32_t>> pairs;
  for (const auto& t : a.transfers()) {
    CHECK(t.bytes <= 128 * KiB);
    pairs.insert({t.src, t.dst});
  }
  CHECK(pairs.size() == n * (n - 1));
  const auto s = build_collective(spec(CollOp::SendRecv, 1 * MiB, n, 1, 1, "direct"));
  for (const auto& t : s.transfers()) CHECK(t.dst == (t.src + 1) % n);
  for (std::uint32_t r = 0; r < n; ++r) CHECK(bytes_sent_by(s, r) == MiB);
  // 8 chunks of 128 KiB over 2 channels on one connection; window 8 not reached: no dependencies.
  for (TransferId i = 0; i < s.size(); ++i) CHECK(s.deps_of(i).empty());
}

TEST_CASE("symbolic executor: ring AllReduce closed forms") {
  // One channel, n ranks, transfer time alpha + bytes x 20 ps (50 GB/s), local_delay delta.
  const std::uint32_t n = 5;
  const std::uint64_t S = n * 2 * MiB;
  const Time alpha = Time::ns(3), delta = Time::ns(2);
  auto base = spec(CollOp::AllReduce, S, n, 1, 1, "ring");
  base.channels = 1;
  base.step_overhead = delta;
  const auto per = [&](std::uint64_t bytes) {
    return delta + alpha + Time::ps(static_cast<std::int64_t>(bytes) * 20);
  };
  {
    // chunk = S/n = 2 MiB, two 1 MiB slices travel independently: T = 2(n-1)(delta + alpha + S/(2nB)).
    const auto d = build_collective(base);
    CHECK(symbolic_run(d, alpha, 20) == per(S / (2 * n)) * (2 * (n - 1)));
  }
  {
    // Window 1: the connection carries one slice at a time: T = 2 x 2(n-1)(delta + alpha + S/(2nB)).
    auto s = base;
    s.slices_in_flight = 1;
    CHECK(symbolic_run(build_collective(s), alpha, 20) == per(S / (2 * n)) * (4 * (n - 1)));
  }
  {
    // chunk = S/(2n): two loops, a rank starts loop 2 once it received all of loop 1:
    // T = 2 x 2(n-1)(delta + alpha + S/(4nB)).
    auto s = base;
    s.chunk_bytes = S / (2 * n);
    CHECK(symbolic_run(build_collective(s), alpha, 20) == per(S / (4 * n)) * (4 * (n - 1)));
  }
  {
    // LL with chunk >= S/n: one slice per chunk, wire bytes 2 x S/n: T = 2(n-1)(delta + alpha + 2S/(nB)).
    auto s = base;
    s.protocol = "ll";
    s.chunk_bytes = S / n;
    CHECK(symbolic_run(build_collective(s), alpha, 20) == per(2 * S / n) * (2 * (n - 1)));
  }
}

TEST_CASE("bad specs give InputError naming the key") {
  using test::error_of;
  CHECK(error_of([] { build_collective(spec(CollOp::AllReduce, MiB, 0, 1, 1, "ring")); }).find("ranks") == 0);
  CHECK(error_of([] { build_collective(spec(CollOp::AllReduce, MiB, 10, 8, 1, "ring")); }).find("multiple") !=
        std::string::npos);
  const auto unknown = error_of([] { build_collective(spec(CollOp::AllReduce, MiB, 4, 1, 1, "rign")); });
  CHECK(unknown.find("rign") != std::string::npos);
  CHECK(unknown.find("halving-doubling") != std::string::npos);
  CHECK(error_of([] {
          build_collective(spec(CollOp::AllReduce, MiB, 4, 1, 1, "ring", "ll64"));
        }).find("protocol") == 0);
  CHECK(error_of([] { build_collective(spec(CollOp::AllGather, MiB, 4, 1, 1, "tree")); }).find("'ring'") !=
        std::string::npos);
  CHECK(error_of([] {
          build_collective(spec(CollOp::AllReduce, MiB, 4, 1, 1, "direct"));
        }).find("allreduce") != std::string::npos);
  auto s = spec(CollOp::AllReduce, MiB, 4, 1, 1, "ring");
  s.channels = 65;
  CHECK(error_of([&] { build_collective(s); }).find("channels") == 0);
  s = spec(CollOp::Broadcast, MiB, 4, 1, 1, "ring");
  s.root = 4;
  CHECK(error_of([&] { build_collective(s); }).find("root") == 0);
  CHECK(error_of([] {
          build_collective(spec(CollOp::AllToAll, 1ull << 40, 4096, 8, 8, "direct"));
        }).find("too large") != std::string::npos);
  // One rank or an empty buffer: nothing to send.
  CHECK(build_collective(spec(CollOp::AllReduce, MiB, 1, 1, 1, "ring")).size() == 0);
  CHECK(build_collective(spec(CollOp::AllReduce, 0, 4, 1, 1, "ring")).size() == 0);
}

TEST_CASE("tuning model: worked example latencies and choices") {
  // 128 ranks = 16 nodes x 8 GPUs, Intel host, latencyInter 0 (model-reference §5.6):
  // Ring LL = 6.6 + 222 x 1.0 + 32 x 2.7 = 315; Ring Simple = 8.4 + 222 x 3.4 + 32 x 14 = 1211.2 (before the
  // x1.4 plateau, which needs size / (channels x ranks) >= 64 B: size 1 KiB keeps it off);
  // Tree LL = 6.8 + 2(7 x 0.6 + 4 x 5.0) = 55.2; Tree LL128 = 14 + 2(7 x 1.25 + 4 x 8.5) = 99.5.
  auto s = spec(CollOp::AllReduce, 1 * KiB, 128, 8, 8, "auto", "auto");
  const auto in = tuning_inputs(s);
  CHECK(in.nodes == 16);
  CHECK(in.channels == 16);
  const auto table = tuning_table(in);
  auto find = [&](const std::string& a, const std::string& p) {
    for (const auto& e : table)
      if (e.algorithm == a && e.protocol == p) return e;
    FAIL("missing");
    return TuningEstimate{};
  };
  CHECK(find("ring", "ll").latency_us == doctest::Approx(315.0));
  CHECK(find("ring", "simple").latency_us == doctest::Approx(1211.2));
  CHECK(find("tree", "ll").latency_us == doctest::Approx(55.2));
  CHECK(find("tree", "ll128").latency_us == doctest::Approx(99.5));
  // The plateau factor at a large size: x1.4 on sm >= 80.
  auto big = in;
  big.size_bytes = 1ull << 30;
  for (const auto& e : tuning_table(big))
    if (e.algorithm == "ring" && e.protocol == "simple") CHECK(e.latency_us == doctest::Approx(1211.2 * 1.4));
  // Small sizes pick Tree/LL; large ones Ring/Simple (4 nodes x 8 GPUs, 1 GiB).
  const auto small = tuning_choose(in);
  CHECK(small.algorithm == "tree");
  CHECK(small.protocol == "ll");
  const auto large =
      tuning_choose(tuning_inputs(spec(CollOp::AllReduce, 1ull << 30, 32, 8, 8, "auto", "auto")));
  CHECK(large.algorithm == "ring");
  CHECK(large.protocol == "simple");
  // build_collective's auto follows the model.
  const auto d = build_collective(spec(CollOp::AllReduce, 1 * KiB, 32, 8, 8, "auto", "auto"));
  CHECK(d.algorithm == "tree");
  CHECK(d.protocol == "ll");
  const auto d2 = build_collective(spec(CollOp::AllGather, 64 * MiB, 16, 8, 8, "auto", "auto"));
  CHECK(d2.algorithm == "ring");
  // Tree is not available for AllGather.
  for (const auto& e : tuning_table(tuning_inputs(spec(CollOp::AllGather, MiB, 16, 8, 8, "auto", "auto"))))
    CHECK(e.available == (e.algorithm == "ring"));
}

TEST_CASE("tuning model: one GPU per node (more inter-node steps than steps) stays finite") {
  // 2 nodes x 1 GPU, AllReduce: steps 2(n-1) = 2, inter-node steps 2m = 4, so NCCL's signed
  // (steps - interSteps) x intra is negative: Ring LL = 6.6 + (2 - 4) x 1.0 + 4 x 2.7 = 15.4 us (the
  // 1 us netOverhead as intra, latencyInter 0). The choice at 256 MiB is Ring/Simple, not LL.
  const auto in = tuning_inputs(spec(CollOp::AllReduce, 256 * MiB, 2, 1, 1, "ring", "auto"));
  CHECK(in.nodes == 2);
  for (const auto& e : tuning_table(in)) {
    CAPTURE(e.algorithm + "/" + e.protocol);
    if (e.algorithm == "nvls" || e.algorithm == "collnet") { // not offered here
      CHECK_FALSE(e.available);
      continue;
    }
    CHECK(e.latency_us > 0);
    CHECK(e.latency_us < 1000);
    if (e.algorithm == "ring" && e.protocol == "ll") CHECK(e.latency_us == doctest::Approx(15.4));
  }
  CHECK(tuning_choose_protocol(in, "ring").protocol == "simple");
  // AllGather with one GPU per node: steps n-1 = 1, inter-node steps m = 2.
  for (const auto& e : tuning_table(tuning_inputs(spec(CollOp::AllGather, MiB, 2, 1, 1, "ring", "auto"))))
    if (e.available) CHECK(e.latency_us < 1000);
}

TEST_CASE("collective registry lists every algorithm") {
  const auto reg = builtin_collectives();
  for (const char* name : {"ring", "tree", "halving-doubling", "hierarchical", "direct", "auto"})
    CHECK(reg.contains(name));
  for (const auto& e : reg.entries()) CHECK(!e.description.empty());
}

TEST_CASE("tuning: the tree's time carries NCCL's treeCorrectionFactor per size") {
  // ncclTopoGetAlgoTime: time = latency + size / (1000 x algBw x
  // treeCorrectionFactor[protocol][log2(size/64)]), the factor only for 64 B .. 256 MiB (index < 23). LL128
  // row (2.10 on): index 16 (4 MiB) 0.8, 13 (512 KiB) 0.6; the 2.8/2.9 row: index 13 0.5. Ring times carry
  // none.
  TuningInputs in;
  in.op = CollOp::AllReduce;
  in.ranks = 32;
  in.nodes = 4;
  in.channels = 8;
  in.nvlink_GBps = 450;
  in.net_GBps = 100;
  in.bus_GBps = 100;
  auto tree_ll128 = [&](std::uint64_t bytes, const char* version) {
    in.size_bytes = bytes;
    in.table = &nccl_cost_table(version);
    for (const auto& e : tuning_table(in))
      if (e.algorithm == "tree" && e.protocol == "ll128") return e;
    FAIL("no tree LL128 row");
    return TuningEstimate{};
  };
  const auto at4m = tree_ll128(4u << 20, "2.19.3");
  CHECK(at4m.time_us == doctest::Approx(at4m.latency_us + (4u << 20) / (1000.0 * at4m.algbw_GBps * 0.8)));
  const auto at512k = tree_ll128(512u << 10, "2.19.3");
  CHECK(at512k.time_us ==
        doctest::Approx(at512k.latency_us + (512u << 10) / (1000.0 * at512k.algbw_GBps * 0.6)));
  const auto old512k = tree_ll128(512u << 10, "2.8.4");
  CHECK(old512k.time_us ==
        doctest::Approx(old512k.latency_us + (512u << 10) / (1000.0 * old512k.algbw_GBps * 0.5)));
  const auto at1g = tree_ll128(1u << 30, "2.19.3"); // index 24: no correction
  CHECK(at1g.time_us == doctest::Approx(at1g.latency_us + (1u << 30) / (1000.0 * at1g.algbw_GBps)));
  // busBw: min(100 x 0.92, 8 x perChMaxTreeBw) x 120/128, algBw x 0.5 (Hopper caps do not bind here).
  CHECK(at1g.algbw_GBps == doctest::Approx(100 * 0.92 * 120.0 / 128.0 * 0.5));
}

TEST_CASE("tuning: a 2-node tree is priced at up to twice the network (NCCL's bwIntra for <= 2 nodes)") {
  // 2 x 4 GPUs, 4 x NDR200 per node (100 GB/s), NVLink 450 GB/s, 1 GiB AllReduce. NCCL prices <= 2 nodes by
  // the graphs' intra-node bandwidth and lets a tree's rise to twice the inter-node one (search.cc pass 2):
  // tree busBw = min(450, 2 x 100) x 0.92 = 184 for every protocol, algbw 92 GB/s for Simple; LL128 x 120/128
  // on top, 172.5 / 86.25 (tuning.cc; no treeCorrectionFactor above 256 MiB); ring busBw 100, algbw
  // 100 x 8/14 = 57.1 GB/s. So tree Simple. On 4 nodes the raise does not apply: busBw 100 for both, ring
  // algbw 100 x 16/30 = 53.3 against tree 46: ring.
  TuningInputs in;
  in.op = CollOp::AllReduce;
  in.size_bytes = 1ull << 30;
  in.ranks = 8;
  in.nodes = 2;
  in.channels = 16;
  in.nvlink_GBps = 450;
  in.net_GBps = 100;
  in.bus_GBps = 100;
  in.nics = 4;
  const auto two = tuning_choose(in);
  CHECK(two.algorithm == "tree");
  CHECK(two.protocol == "simple");
  CHECK(two.algbw_GBps == doctest::Approx(92.0));
  CHECK(tuning_choose_protocol(in, "tree").protocol == "simple");
  in.ranks = 16;
  in.nodes = 4;
  CHECK(tuning_choose(in).algorithm == "ring");
  // One GPU per node: no NVLink chain to raise; the network alone (ring, as before).
  in.ranks = 2;
  in.nodes = 2;
  CHECK(tuning_choose_protocol(in, "tree").algbw_GBps <= 0.5 * 100 + 1e-9);
}

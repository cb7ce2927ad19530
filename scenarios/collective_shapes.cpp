// The small, DAG-independent parts of scenarios/collectives.hpp: collective names, default channel count,
// protocol wire bytes, nccl-tests' busbw factor, bytes per rank, ring order within nodes and NCCL's double
// binary tree over nodes. The DAG builders are in scenarios/collectives.cpp.
#include "scenarios/collectives.hpp"

#include "sim/error.hpp"

#include <algorithm>
#include <cctype>

namespace ibn::scen {

std::string to_string(CollOp op) {
  switch (op) {
  case CollOp::AllReduce:
    return "allreduce";
  case CollOp::AllGather:
    return "allgather";
  case CollOp::ReduceScatter:
    return "reducescatter";
  case CollOp::AllToAll:
    return "alltoall";
  case CollOp::SendRecv:
    return "sendrecv";
  case CollOp::Broadcast:
    return "broadcast";
  case CollOp::Reduce:
    return "reduce";
  }
  return "?";
}

CollOp parse_coll_op(const std::string& text, const std::string& what) {
  std::string key;
  for (char ch : text)
    if (ch != '_' && ch != '-') key += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (auto op : {CollOp::AllReduce, CollOp::AllGather, CollOp::ReduceScatter, CollOp::AllToAll,
                  CollOp::SendRecv, CollOp::Broadcast, CollOp::Reduce})
    if (key == to_string(op)) return op;
  throw InputError(what + ": unknown collective '" + text +
                   "' (known: allreduce, allgather, reducescatter, alltoall, sendrecv, broadcast, reduce)");
}

std::uint32_t default_channels(const CollectiveSpec& spec) {
  std::uint32_t nc = std::clamp<std::uint32_t>(2 * spec.nics_per_node, 2, 32);
  if (spec.min_channels) nc = std::max(nc, spec.min_channels);
  if (spec.max_channels) nc = std::min(nc, spec.max_channels);
  return nc;
}

std::uint64_t wire_bytes(std::uint64_t data_bytes, const std::string& protocol) {
  if (protocol == "ll") return 2 * data_bytes;
  if (protocol == "ll128") return (data_bytes * 128 + 119) / 120;
  return data_bytes;
}

double busbw_factor(CollOp op, std::uint32_t ranks) {
  if (ranks == 0) return 0;
  const double n = ranks;
  switch (op) {
  case CollOp::AllReduce:
    return 2.0 * (n - 1) / n;
  case CollOp::AllGather:
  case CollOp::ReduceScatter:
  case CollOp::AllToAll:
    return (n - 1) / n;
  default:
    return 1.0;
  }
}

std::uint64_t bytes_sent_by(const TransferDag& dag, std::uint32_t rank) {
  std::uint64_t sum = 0;
  for (const auto& t : dag.transfers())
    if (t.src == rank) sum += t.bytes;
  return sum;
}

std::vector<std::uint32_t> ring_order(std::uint32_t ranks, std::uint32_t gpus_per_node,
                                      std::uint32_t channel) {
  std::vector<std::uint32_t> o(ranks);
  for (std::uint32_t p = 0; p < ranks; ++p)
    o[p] = (p / gpus_per_node) * gpus_per_node + (channel + p % gpus_per_node) % gpus_per_node;
  return o;
}

std::vector<std::int32_t> double_tree_parents(std::uint32_t nodes, std::uint32_t tree) {
  // Tree 0 over labels 0..nodes-1; tree 1 gives node x the role of label mirror(x) or shift(x).
  std::vector<std::int32_t> label_parent(nodes, -1);
  for (std::uint32_t x = 1; x < nodes; ++x) {
    const std::uint32_t bit = x & (~x + 1);
    std::uint32_t up = (x ^ bit) | (bit << 1);
    if (up >= nodes) up = x ^ bit;
    label_parent[x] = static_cast<std::int32_t>(up);
  }
  if (tree % 2 == 0 || nodes < 2) return label_parent;
  const bool even = nodes % 2 == 0;
  auto role = [&](std::uint32_t x) { return even ? nodes - 1 - x : (x + nodes - 1) % nodes; };
  auto node_of_role = [&](std::uint32_t l) { return even ? nodes - 1 - l : (l + 1) % nodes; };
  std::vector<std::int32_t> parent(nodes, -1);
  for (std::uint32_t x = 0; x < nodes; ++x) {
    const auto lp = label_parent[role(x)];
    parent[x] = lp < 0 ? -1 : static_cast<std::int32_t>(node_of_role(static_cast<std::uint32_t>(lp)));
  }
  return parent;
}

} // namespace ibn::scen

#include "scenarios/placement.hpp"

#include "sim/error.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <set>

namespace ibn::scen {
namespace {

using topo::Fabric;
using topo::NodeId;

/// "host-3-rail-0" -> "host-3"; anything else unchanged.
std::string strip_rail_suffix(const std::string& name) {
  const auto pos = name.rfind("-rail-");
  if (pos == std::string::npos || pos + 6 >= name.size()) return name;
  for (std::size_t i = pos + 6; i < name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return name;
  return name.substr(0, pos);
}

std::string host_name_of(const topo::Node& hca) {
  const auto& d = hca.description;
  const auto b = d.find_first_not_of(" \t");
  if (b != std::string::npos) {
    const auto e = d.find_first_of(" \t", b);
    return d.substr(b, e == std::string::npos ? std::string::npos : e - b);
  }
  return strip_rail_suffix(hca.name);
}

NodeId leaf_of(const Fabric& f, NodeId hca) {
  const auto l = f.link_at(hca, 1);
  return l ? f.link(*l).other(hca) : topo::kNoNode;
}

std::string count_nodes(std::uint64_t n) {
  return std::to_string(n) + (n == 1 ? " node" : " nodes");
}

std::optional<std::uint32_t> parse_index(const std::string& s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  for (const char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  return static_cast<std::uint32_t>(std::stoul(s));
}

std::vector<std::uint32_t> take_linear(const NodePool&, const std::vector<std::uint32_t>& free,
                                       const JobPlacementRequest&, std::uint32_t n, Rng&) {
  return {free.begin(), free.begin() + n};
}

std::vector<std::uint32_t> take_random(const NodePool&, const std::vector<std::uint32_t>& free,
                                       const JobPlacementRequest&, std::uint32_t n, Rng& rng) {
  std::vector<std::uint32_t> v = free;
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto j = i + rng.uniform_below(v.size() - i);
    std::swap(v[i], v[j]);
  }
  v.resize(n);
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::uint32_t> take_spread(const NodePool& pool, const std::vector<std::uint32_t>& free,
                                       const JobPlacementRequest&, std::uint32_t n, Rng&) {
  std::vector<std::vector<std::uint32_t>> by_leaf;
  std::map<NodeId, std::size_t> leaf_pos;
  for (const auto s : free) {
    const auto [it, inserted] = leaf_pos.emplace(pool.slot(s).leaf, by_leaf.size());
    if (inserted) by_leaf.emplace_back();
    by_leaf[it->second].push_back(s);
  }
  std::vector<std::uint32_t> out;
  for (std::size_t round = 0; out.size() < n; ++round)
    for (const auto& leaf : by_leaf)
      if (round < leaf.size() && out.size() < n) out.push_back(leaf[round]);
  return out;
}

std::vector<std::uint32_t> take_fragmented(const NodePool&, const std::vector<std::uint32_t>& free,
                                           const JobPlacementRequest&, std::uint32_t n, Rng&) {
  std::vector<std::uint32_t> out;
  for (std::size_t start = 0; start < 2 && out.size() < n; ++start)
    for (std::size_t i = start; i < free.size() && out.size() < n; i += 2) out.push_back(free[i]);
  return out;
}

std::vector<std::uint32_t> take_explicit(const NodePool& pool, const std::vector<std::uint32_t>& free,
                                         const JobPlacementRequest& req, std::uint32_t, Rng&) {
  const std::set<std::uint32_t> is_free(free.begin(), free.end());
  std::vector<std::uint32_t> out;
  std::set<std::uint32_t> seen;
  for (std::size_t i = 0; i < req.explicit_nodes.size(); ++i) {
    const std::string& entry = req.explicit_nodes[i];
    // "FILE: key 'jobs[0].hosts[3]': job 'train': ..." when the scenario's file is known.
    const std::string who =
        (req.file.empty() ? std::string()
                          : req.file + ": key '" + req.key + ".hosts[" + std::to_string(i) + "]': ") +
        "job '" + req.job + "': explicit node '" + entry + "'";
    std::optional<std::uint32_t> s = pool.find(entry);
    if (!s) s = parse_index(entry);
    if (!s || *s >= pool.size())
      throw InputError(who + " is neither a node index below " + std::to_string(pool.size()) +
                       " nor a host or HCA name of the fabric");
    if (!seen.insert(*s).second) throw InputError(who + " is listed twice");
    if (!is_free.count(*s))
      throw InputError(who + " (node " + std::to_string(*s) + ", " + pool.slot(*s).name +
                       ") is already used by an earlier job");
    out.push_back(*s);
  }
  return out;
}

} // namespace

NodePool::NodePool(std::vector<NodeSlot> slots, std::uint32_t nics_per_node)
    : slots_(std::move(slots)), nics_per_node_(nics_per_node) {
  if (nics_per_node_ == 0) throw InputError("nics_per_node must be at least 1");
  for (const auto& s : slots_)
    if (s.hcas.size() != nics_per_node_)
      throw InputError("node '" + s.name + "' has " + std::to_string(s.hcas.size()) + " HCAs, expected " +
                       std::to_string(nics_per_node_) + " (nics_per_node)");
}

NodePool NodePool::from_fabric(const Fabric& f, std::uint32_t nics_per_node) {
  if (nics_per_node == 0) throw InputError("nics_per_node must be at least 1");
  const std::vector<NodeId> hcas = f.hcas(); // HcaIndex -> NodeId
  if (hcas.empty()) throw InputError("fabric '" + f.name + "' has no HCAs to place jobs on");

  // HCAs per host (HCAs with host -1 are hosts of their own): (host, HCA) pairs sorted by host, then HCA
  // (generated fabrics list them sorted already); runs of one host are its HCAs, in HCA order.
  std::vector<std::pair<int, HcaIndex>> by_host;
  by_host.reserve(hcas.size());
  for (HcaIndex i = 0; i < hcas.size(); ++i)
    if (const int h = f.node(hcas[i]).host; h >= 0) by_host.emplace_back(h, i);
  if (!std::is_sorted(by_host.begin(), by_host.end())) std::sort(by_host.begin(), by_host.end());
  const bool multi = std::adjacent_find(by_host.begin(), by_host.end(), [](const auto& a, const auto& b) {
                       return a.first == b.first;
                     }) != by_host.end();

  std::vector<NodeSlot> slots;
  std::size_t left_out_hosts = 0; // host mode: hosts with fewer HCAs than nics_per_node, and the first
  std::string left_out_first;
  if (multi) {
    for (HcaIndex i = 0; i < hcas.size(); ++i)
      if (f.node(hcas[i]).host < 0)
        throw InputError(
            "fabric '" + f.name + "': HCA '" + f.node(hcas[i]).name +
            "' belongs to no host while other hosts own several HCAs; cannot group HCAs into nodes");
    std::vector<std::vector<HcaIndex>> groups; // per host, in host order
    for (std::size_t k = 0; k < by_host.size(); ++k) {
      if (k == 0 || by_host[k].first != by_host[k - 1].first) groups.emplace_back();
      groups.back().push_back(by_host[k].second);
    }
    std::size_t most = 0;
    for (auto& members : groups) {
      most = std::max(most, members.size());
      if (members.size() < nics_per_node) { // not a node of this scenario: a storage or login server
        if (left_out_hosts++ == 0)
          left_out_first = "'" + host_name_of(f.node(hcas[members.front()])) + "' (" +
                           std::to_string(members.size()) + " HCA" + (members.size() == 1 ? "" : "s") + ")";
        continue;
      }
      std::stable_sort(members.begin(), members.end(),
                       [&](HcaIndex a, HcaIndex b) { return f.node(hcas[a]).plane < f.node(hcas[b]).plane; });
      members.resize(nics_per_node);
      NodeSlot s;
      s.hcas = members;
      slots.push_back(std::move(s));
    }
    if (slots.empty())
      throw InputError("fabric '" + f.name + "': no host has " + std::to_string(nics_per_node) +
                       " HCAs (nics_per_node); the most any host has is " + std::to_string(most));
    std::sort(slots.begin(), slots.end(), [](const NodeSlot& a, const NodeSlot& b) {
      return *std::min_element(a.hcas.begin(), a.hcas.end()) <
             *std::min_element(b.hcas.begin(), b.hcas.end());
    });
    for (auto& s : slots) s.name = host_name_of(f.node(hcas[s.hcas.front()]));
  } else {
    slots.reserve(hcas.size() / nics_per_node);
    for (std::size_t first = 0; first + nics_per_node <= hcas.size(); first += nics_per_node) {
      NodeSlot s;
      for (std::uint32_t r = 0; r < nics_per_node; ++r) s.hcas.push_back(static_cast<HcaIndex>(first + r));
      const auto& n0 = f.node(hcas[first]);
      s.name = nics_per_node == 1 ? host_name_of(n0) : n0.name;
      slots.push_back(std::move(s));
    }
    if (slots.empty())
      throw InputError("fabric '" + f.name + "' has " + std::to_string(hcas.size()) + " HCAs, fewer than " +
                       "nics_per_node = " + std::to_string(nics_per_node) +
                       " (keys jobs[].nics_per_node / background[].nics_per_node: the most any asks for)");
  }
  for (auto& s : slots) {
    for (const HcaIndex h : s.hcas) s.rail_leaves.push_back(leaf_of(f, hcas[h]));
    s.leaf = s.rail_leaves.front();
  }
  NodePool pool(std::move(slots), nics_per_node);
  pool.host_mode_ = multi;
  pool.left_out_ = left_out_hosts;
  pool.left_out_example_ = std::move(left_out_first);
  std::vector<std::string> names;
  names.reserve(hcas.size());
  for (const auto id : hcas) names.push_back(f.node(id).name);
  pool.set_hca_names(std::move(names));
  return pool;
}

std::optional<std::uint32_t> NodePool::find(const std::string& name) const {
  for (std::uint32_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].name == name) return i;
    if (!hca_names_.empty())
      for (const auto h : slots_[i].hcas)
        if (h < hca_names_.size() && hca_names_[h] == name) return i;
  }
  return std::nullopt;
}

std::vector<HcaIndex> JobPlacement::all_hcas() const {
  std::vector<HcaIndex> v;
  for (const auto& n : nodes) v.insert(v.end(), n.begin(), n.end());
  return v;
}

Registry<PlacementFn> builtin_placement_policies() {
  Registry<PlacementFn> r("placement policy");
  r.add("linear", "the first free nodes in node order", take_linear);
  r.add("random", "free nodes drawn uniformly (seeded), ranks in node order", take_random);
  r.add("spread", "round-robin over leaf switches: the job spans as many leaves as possible", take_spread);
  r.add("fragmented", "every other free node (free[0], free[2], ...), then the skipped ones",
        take_fragmented);
  r.add("explicit", "the listed node indices or host/HCA names, in the listed order", take_explicit);
  return r;
}

std::vector<JobPlacement> place_jobs(const NodePool& pool, const std::vector<JobPlacementRequest>& jobs,
                                     Rng& rng) {
  const auto policies = builtin_placement_policies();
  std::vector<char> used(pool.size(), 0);
  // The free slots in slot order, kept across jobs (a job's slots are taken out after it is placed):
  // one pass over a large fabric's slots per job, not a rebuilt list.
  std::vector<std::uint32_t> free(pool.size());
  std::iota(free.begin(), free.end(), 0u);
  std::vector<JobPlacement> out;
  for (const auto& req : jobs) {
    const PlacementFn* fn = nullptr;
    try {
      fn = &policies.get(req.policy).factory;
    } catch (const InputError& e) {
      throw InputError("job '" + req.job + "': " + e.what());
    }
    const bool is_explicit = req.policy == "explicit";
    if (!is_explicit && !req.explicit_nodes.empty())
      throw InputError("job '" + req.job + "': a node list is only allowed with placement 'explicit', not '" +
                       req.policy + "'");
    if (is_explicit && req.explicit_nodes.empty())
      throw InputError("job '" + req.job + "': placement 'explicit' needs a list of nodes");
    if (is_explicit && req.nodes != 0 && req.nodes != req.explicit_nodes.size())
      throw InputError("job '" + req.job + "': asks for " + count_nodes(req.nodes) + " but lists " +
                       std::to_string(req.explicit_nodes.size()) + " explicit nodes");
    const std::uint32_t n = is_explicit ? static_cast<std::uint32_t>(req.explicit_nodes.size()) : req.nodes;
    if (n == 0) throw InputError("job '" + req.job + "': nodes must be at least 1");
    const std::uint32_t nics = req.nics_per_node == 0 ? pool.nics_per_node() : req.nics_per_node;
    if (nics > pool.nics_per_node())
      throw InputError("job '" + req.job + "': asks for " + std::to_string(nics) + " NICs per node but the " +
                       "fabric's nodes have " + std::to_string(pool.nics_per_node()));

    if (n > free.size())
      throw InputError((req.file.empty() ? std::string() : req.file + ": key '" + req.key + ".nodes': ") +
                       "job '" + req.job + "': asks for " + count_nodes(n) + " but only " +
                       std::to_string(free.size()) + " of " + count_nodes(pool.size()) + " are free" +
                       (pool.nics_per_node() > 1 ? " (a node is " + std::to_string(pool.nics_per_node()) +
                                                       " HCAs: the most NICs per node any job or background "
                                                       "asks for)"
                                                 : std::string()) +
                       (pool.left_out() > 0
                            ? "; " + std::to_string(pool.left_out()) +
                                  " host(s) with fewer HCAs are not nodes, e.g. " + pool.left_out_example()
                            : std::string()));

    JobPlacement p;
    p.job = req.job;
    p.slots = (*fn)(pool, free, req, n, rng);
    if (p.slots.size() != n)
      throw std::logic_error("placement policy '" + req.policy + "' returned a wrong count");
    for (const auto s : p.slots) {
      if (s >= pool.size() || used[s])
        throw std::logic_error("placement policy '" + req.policy + "' returned a busy or bad node");
      used[s] = 1;
      const auto& hcas = pool.slot(s).hcas;
      p.nodes.emplace_back(hcas.begin(), hcas.begin() + nics);
    }
    std::erase_if(free, [&](std::uint32_t s) { return used[s] != 0; });
    out.push_back(std::move(p));
  }
  return out;
}

std::size_t leaves_spanned(const NodePool& pool, const JobPlacement& job) {
  std::set<topo::NodeId> leaves;
  for (std::size_t k = 0; k < job.slots.size(); ++k) {
    const NodeSlot& s = pool.slot(job.slots[k]);
    const std::size_t rails = k < job.nodes.size() ? job.nodes[k].size() : 1;
    for (std::size_t r = 0; r < std::max<std::size_t>(rails, 1); ++r)
      leaves.insert(r < s.rail_leaves.size() ? s.rail_leaves[r] : s.leaf);
  }
  return leaves.size();
}

} // namespace ibn::scen

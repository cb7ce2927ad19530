#include "scenarios/ring_fluid.hpp"

#include "scenarios/ring_shortcut.hpp"

#include "sim/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace ibn::scen {

std::string ring_fluid_blocker(const Scenario& s, const World& w, bool adaptive_routing, bool variability,
                               bool trace) {
  if (!s.background.empty()) return "background traffic";
  if (w.profile || !s.calibration.empty()) return "a calibration profile";
  if (adaptive_routing) return "adaptive routing";
  if (!w.timed_faults.empty() || !w.packet.link_bit_error_rate.empty()) return "timed faults or bit errors";
  if (variability) return "the variability model";
  if (trace) return "a transfer trace";
  for (const auto& j : s.jobs)
    if (!j.workload.trace.empty()) return "job '" + j.name + "' replays a trace";
  return "";
}

RingFluidChoice choose_ring_fluid(const Scenario& s, const std::string& blocker, bool shortcut,
                                  const std::function<CollectiveSpec(std::size_t, std::uint64_t)>& spec) {
  RingFluidChoice c;
  const std::string& mode = s.flow_ring_fluid;
  if (mode == "off") return c;
  const bool forced = mode == "on";
  auto refuse = [&](const std::string& why) {
    if (forced) throw InputError(s.file + ": key 'flow.ring_fluid': 'on' cannot be used: " + why);
    return c;
  };
  if (!blocker.empty()) return refuse(blocker);
  bool too_large = false;
  for (std::size_t i = 0; i < s.jobs.size(); ++i) {
    const auto& w = s.jobs[i].workload;
    for (const auto size : w.sizes_bytes) {
      std::optional<RingStages> st;
      const auto cs = spec(i, size);
      if (cs.size_bytes == 0 || cs.ranks < 2) continue; // nothing to move: its empty DAG takes no time
      try {
        st = ring_stages(cs);
      } catch (const InputError&) { // reported with its key when the collective is built
        return c;
      }
      if (!st)
        return refuse("job '" + s.jobs[i].name + "' runs " + to_string(w.op) + " with algorithm '" +
                      w.algorithm + "' (only ring and hierarchical collectives)");
      // A one-job run: a named ring with one GPU per node goes to the exact symmetric-steps shortcut (its own
      // limits apply); any other collective too large for its DAG comes here.
      if (shortcut && RingShortcut::takes_layout(cs.gpus_per_node) && ring_plan(cs)) continue;
      too_large = too_large || ring_stages_transfers(*st) > kMaxTransfers;
    }
  }
  if (!forced && !too_large) return c;
  c.use = true;
  c.reason = forced ? "flow.ring_fluid: on"
                    : "a collective's transfer DAG would exceed " + std::to_string(kMaxTransfers) +
                          " transfers (flow.ring_fluid: auto)";
  return c;
}

// ---- CoflowNetwork ------------------------------------------------------------------------------------

CoflowNetwork::CoflowNetwork(eng::Engine& engine, std::function<double(std::uint32_t)> capacity)
    : engine_(engine), capacity_(std::move(capacity)) {}

void CoflowNetwork::start(const std::vector<Use>& uses, double bytes,
                          std::function<double(double)> time_of_rate, std::function<void(Time)> done) {
  std::size_t k = 0;
  while (k < act_.size() && act_[k].live) ++k;
  if (k == act_.size()) act_.emplace_back();
  auto& a = act_[k];
  a.uses = &uses;
  a.left = 1.0;
  a.rate = 0;
  a.bytes = bytes;
  a.scheduled = false;
  a.time_of_rate = std::move(time_of_rate);
  a.last = engine_.now();
  a.done = std::move(done);
  a.live = true;
  ++started_;
  for (const auto& u : uses)
    if (u.link >= weight_.size()) weight_.resize(u.link + 1, 0.0);
  solve();
}

void CoflowNetwork::solve() {
  ++solves_;
  const Time now = engine_.now();
  // Bring every coflow's work up to now at the rate it had.
  for (auto& a : act_)
    if (a.live) {
      if (a.rate > 0) a.left = std::max(0.0, a.left - (now - a.last).to_s() / a.time_of_rate(a.rate));
      a.last = now;
    }
  // Processor sharing with duty cycles: a flow, while active, shares each link with its own coflow's flows
  // on it (in lock step, all active together) and with the other coflows' flows weighted by how much of the
  // time they are active (duty = bandwidth time / stage time at their rate): a latency-bound stage slows the
  // others little, a bandwidth-bound one takes its fair share. A fixed point, from every duty at 1.
  for (auto& a : act_) a.duty = 1.0;
  for (int iter = 0; iter < 8; ++iter) {
    for (const auto& a : act_)
      if (a.live)
        for (const auto& u : *a.uses) weight_[u.link] = 0;
    for (const auto& a : act_)
      if (a.live)
        for (const auto& u : *a.uses) weight_[u.link] += u.flows * a.duty;
    for (auto& a : act_) {
      if (!a.live) continue;
      double x = std::numeric_limits<double>::infinity();
      for (const auto& u : *a.uses)
        x = std::min(x, capacity_(u.link) / (weight_[u.link] - u.flows * a.duty + u.flows));
      a.rate = x;
    }
    for (auto& a : act_)
      if (a.live) a.duty = std::min(1.0, a.bytes / a.rate / a.time_of_rate(a.rate));
  }
  for (std::size_t k = 0; k < act_.size(); ++k) {
    auto& a = act_[k];
    if (!a.live) continue;
    const double s = a.left * a.time_of_rate(a.rate);
    if (!(a.rate > 0) || !std::isfinite(a.rate) || !std::isfinite(s) || s < 0 || s > 1e6)
      throw std::logic_error("CoflowNetwork: a coflow without a finite rate or end (a link of capacity 0?)");
    const Time end = now + Time::ps(static_cast<std::int64_t>(std::ceil(s * 1e12)));
    if (a.scheduled && end == a.end) continue; // its pending event still stands
    a.end = end;
    a.scheduled = true;
    const std::uint64_t v = ++a.version;
    engine_.call_at(end, [this, k, v] { finish(k, v); });
  }
}

void CoflowNetwork::finish(std::size_t k, std::uint64_t version) {
  auto& a = act_[k];
  if (!a.live || a.version != version) return; // re-solved since: a later event stands for it
  a.live = false;
  a.rate = 0;
  auto done = std::move(a.done);
  a.done = nullptr;
  a.time_of_rate = nullptr;
  solve(); // the others share what it leaves
  done(engine_.now());
}

// ---- RingFluid ----------------------------------------------------------------------------------------

double RingFluid::Stage::time_s(double x) const {
  if (tree) {
    // A tree pipelines its chunks: the first one's chain up to the root and back down, then one chunk per
    // slice period of the busiest connection.
    const double win = static_cast<double>(std::max<std::uint32_t>(1, window));
    double total = 0;
    for (std::size_t i = 0; i < loops.size(); ++i) {
      const double w = static_cast<double>(loops[i].chunk_wire);
      // The first chunk's chain runs on paths not yet loaded by the pipeline: a hop at the path's own rate,
      // scaled by what other collectives take (x / x_alone).
      const double tn = has_net ? w / x : 0, tv = has_nvl ? w / nvl_rate : 0;
      const double tn_chain = has_net ? w / (x * x_line / x_alone) : 0;
      const double ln = net_latency.to_s(), lv = nvl_latency.to_s();
      double thr = 0;
      if (has_net) thr = std::max(thr, std::max(tn, (tn + ln) / win));
      if (has_nvl) thr = std::max(thr, std::max(tv, (tv + lv) / win));
      // The tree's stage spaces each lane's passes at its rate (channel_stage_overlaps): no latency on the
      // chain, one pass per chunk on each lane (up; down to every child at once).
      if (stage_rate > 0) thr = std::max(thr, w / stage_rate);
      if (i == 0)
        total += 2.0 * (chain_net * (tn_chain + ln) + chain_nvl * (tv + lv));
      else
        total += thr;
    }
    return total;
  }
  // A chunk's dependency chain crosses the ring's edges in turn: per step, the edge kinds weigh by their
  // share of the ring's edges (a flat ring over g GPUs per node crosses the network once every g hops).
  const double win = static_cast<double>(std::max<std::uint32_t>(1, window));
  double total = 0;
  for (const auto& l : loops) {
    const double w = static_cast<double>(l.slice_wire);
    double chain = 0, thr = 0, last = 0;
    // The channel's stage (DagExecutor::release) passes every slice before it is posted: in series on the
    // chain, and a connection's slice period is no shorter than the pass.
    const double ts = stage_rate > 0 ? w / stage_rate : 0;
    // A connection is the stage and the link in tandem: its last slice leaves the pair min(t, ts) after the
    // period that paces them, then crosses the route's latency.
    auto take = [&](double rate, Time lat, double share) {
      const double t = w / rate, L = lat.to_s() + ts;
      chain += share * (t + L);
      thr = std::max(thr, std::max(std::max(t, ts), (t + L) / win)); // the FIFO window's period
      last = std::max(last, lat.to_s() + std::min(t, ts));
    };
    if (has_net) take(x, net_latency, net_share);
    if (has_nvl) take(nvl_rate, nvl_latency, 1.0 - net_share);
    const double st = static_cast<double>(steps), S = static_cast<double>(l.slices);
    total += std::max(st * S * thr + last, st * chain + (S - 1) * thr);
  }
  return total;
}

std::unique_ptr<RingFluid> RingFluid::make(const RingStages& plan, const JobLayout& layout,
                                           flow::FlowEngine& engine, const ExecOptions& opt) {
  if (plan.ranks > layout.ranks() || plan.gpus_per_node != layout.gpus_per_node)
    throw std::logic_error("RingFluid: the job's layout does not match the collective");
  std::unique_ptr<RingFluid> rf(new RingFluid(plan, engine));
  const std::uint32_t g = layout.gpus_per_node;
  const double nvl_bytes_per_s = opt.nvlink_gbps * 1e9 / 8.0;
  std::map<std::pair<eng::HcaIndex, eng::HcaIndex>, flow::FlowEngine::StaticPath> paths;
  for (const auto& st : rf->plan_.stages) {
    Stage s;
    s.window = plan.cut_of(st).window;
    s.steps = st.steps();
    std::unordered_map<std::uint32_t, std::uint32_t> mult;                  // directed link -> flows
    std::map<std::pair<eng::HcaIndex, eng::HcaIndex>, std::uint64_t> edges; // HCA pair -> ring edges
    std::unordered_map<std::uint32_t, std::uint32_t> copies;                // rank -> NVLink copies it sends
    double delay_sum = 0; // route delays of the network edges (s)
    // The stage's edges (source rank, destination rank, rail): a ring's position p -> p + 1; a tree's child
    // -> parent (reduce up) and parent -> child (broadcast down), each chunk once each way.
    struct Edge {
      std::uint32_t src, dst;
      std::int32_t rail;
    };
    std::vector<Edge> list;
    if (st.tree()) {
      s.tree = true;
      for (std::size_t c = 0; c < st.parents.size(); ++c) {
        const auto& par = st.parents[c];
        for (std::uint32_t r = 0; r < par.size(); ++r) {
          if (par[r] < 0) continue;
          const auto p = static_cast<std::uint32_t>(par[r]);
          list.push_back({r, p, st.rails[c]});
          list.push_back({p, r, st.rails[c]});
          // The chain: the deepest rank's path to the root, up and back down (the most network hops).
          std::uint32_t net = 0, nvl = 0;
          for (std::int32_t x = static_cast<std::int32_t>(r); par[x] >= 0; x = par[x])
            (static_cast<std::uint32_t>(x) / g != static_cast<std::uint32_t>(par[x]) / g ? net : nvl) += 1;
          if (net > s.chain_net || (net == s.chain_net && nvl > s.chain_nvl))
            s.chain_net = net, s.chain_nvl = nvl;
        }
      }
    } else {
      const std::uint32_t n = st.positions();
      for (std::size_t r = 0; r < st.orders.size(); ++r)
        for (std::uint32_t p = 0; p < n; ++p)
          list.push_back({st.orders[r][p], st.orders[r][(p + 1) % n], st.rails[r]});
    }
    for (const auto& e : list) {
      const std::uint32_t src = e.src, dst = e.dst;
      const std::uint32_t sn = src / g, dn = dst / g;
      if (sn == dn) {
        s.has_nvl = true;
        ++copies[src];
        continue;
      }
      s.has_net = true;
      ++s.flows;
      const auto& snode = layout.nodes.at(sn);
      const auto& dnode = layout.nodes.at(dn);
      const auto nics = static_cast<std::uint32_t>(std::min(snode.size(), dnode.size()));
      const auto rail = static_cast<std::uint32_t>(std::max(0, e.rail)) % nics;
      const auto key = std::make_pair(snode[rail], dnode[rail]);
      auto it = paths.find(key);
      if (it == paths.end()) it = paths.emplace(key, engine.static_path(key.first, key.second)).first;
      for (const auto d : it->second.links) ++mult[d];
      delay_sum += it->second.delay.to_s();
      ++edges[key];
    }
    for (const auto& [key, cnt] : edges) s.pairs.push_back({paths.at(key), cnt});
    s.uses.reserve(mult.size());
    for (const auto& [d, f] : mult) s.uses.push_back({d, f});
    std::sort(s.uses.begin(), s.uses.end(), [](const auto& a, const auto& b) { return a.link < b.link; });
    s.x_line = std::numeric_limits<double>::infinity();
    for (const auto& p : s.pairs) s.x_line = std::min(s.x_line, p.path.bytes_per_s);
    s.x_alone = std::numeric_limits<double>::infinity();
    for (const auto& u : s.uses) s.x_alone = std::min(s.x_alone, engine.link_bytes_per_s(u.link) / u.flows);
    std::uint32_t max_copies = 1;
    for (const auto& [r, c] : copies) max_copies = std::max(max_copies, c);
    s.nvl_rate = nvl_bytes_per_s / max_copies; // a GPU's copies share its NVLink egress
    // The chain crosses every edge of the ring in turn: their mean route delay.
    s.net_latency = (s.flows ? Time::from_s(delay_sum / static_cast<double>(s.flows)) : Time::zero()) +
                    plan.net_step_overhead;
    s.nvl_latency = opt.nvlink_latency + plan.step_overhead;
    s.stage_rate =
        (!s.has_net ? plan.stage_gbps_nvlink.value_or(plan.stage_gbps) : plan.stage_gbps) * 1e9 / 8.0;
    // Loops of chunks (ring_phase, tree_allreduce): the largest chunk of each loop sets its lock step.
    for (std::uint64_t grid = 0; grid < st.bytes; grid += st.loop_bytes(plan.cut_of(st).chunk)) {
      const std::uint64_t rem = st.bytes - grid;
      Loop l;
      l.chunk = std::min(plan.real_chunk(st, rem), rem);
      const auto [count, first] = plan.slices(st, l.chunk);
      l.slices = count;
      l.slice_wire = plan.wire(st, first);
      l.chunk_wire = plan.wire(st, l.chunk);
      s.loops.push_back(l);
      s.bytes += static_cast<double>(s.steps) * static_cast<double>(l.chunk_wire);
    }
    std::uint64_t nvl_edges = 0;
    for (const auto& [r, c] : copies) nvl_edges += c;
    s.net_share = static_cast<double>(s.flows) / static_cast<double>(s.flows + nvl_edges);
    // Transfers per execution as the DAG counts them (chunks with nothing to move are not sent), split
    // between network and NVLink by the edges' shares.
    const std::uint64_t stage_transfers = ring_stage_transfers(rf->plan_, rf->stages_.size());
    const auto net_transfers =
        static_cast<std::uint64_t>(std::llround(static_cast<double>(stage_transfers) * s.net_share));
    rf->network_transfers_ += net_transfers;
    rf->nvlink_transfers_ += stage_transfers - net_transfers;
    s.alone = Time::from_s(s.time_s(s.x_alone));
    rf->stages_.push_back(std::move(s));
  }
  return rf;
}

std::vector<Time> RingFluid::stage_times_alone() const {
  std::vector<Time> out;
  for (const auto& s : stages_) out.push_back(s.alone);
  return out;
}

void RingFluid::run(Time now, const std::vector<Time>& ready, CoflowNetwork& net,
                    std::function<void(Time)> done) {
  Time t = now;
  for (const auto r : ready) t = std::max(t, r);
  t += plan_.launch_latency;
  run_stage(0, t, net, std::move(done));
}

void RingFluid::run_stage(std::size_t i, Time t, CoflowNetwork& net, std::function<void(Time)> done) {
  if (i == stages_.size()) return done(t);
  t += plan_.stages[i].launch; // a later NCCL call's launch (hierarchical)
  const Stage& s = stages_[i];
  auto next = [this, i, &net, done = std::move(done)](Time end) mutable {
    const Stage& st = stages_[i];
    for (const auto& p : st.pairs) {
      std::uint64_t payload = 0, wire = 0, messages = 0;
      for (const auto& l : st.loops) {
        payload += st.steps * l.chunk;
        wire += st.steps * l.chunk_wire;
        messages += st.steps * l.slices;
      }
      engine_.account(p.path, payload * p.edges, wire * p.edges, messages * p.edges);
    }
    run_stage(i + 1, end, net, std::move(done));
  };
  if (!s.has_net || !(s.bytes > 0)) {
    const Time end = t + s.alone;
    engine_.call_at(end, [next = std::move(next), end]() mutable { next(end); });
    return;
  }
  engine_.call_at(t, [&net, &s, next = std::move(next)]() mutable {
    net.start(
        s.uses, s.bytes, [&s](double x) { return s.time_s(x); }, std::move(next));
  });
}

} // namespace ibn::scen

#include "scenarios/perftest.hpp"

#include "models/packet/network.hpp"
#include "sim/error.hpp"
#include "sim/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace ibn::scen {
namespace {

using pkt::MessageRecord;
using pkt::MessageSpec;
using pkt::Verb;
using routing::HcaIndex;

Verb verb_of(PerftestTool t) {
  switch (t) {
  case PerftestTool::ib_write_bw:
  case PerftestTool::ib_write_lat:
    return Verb::Write;
  case PerftestTool::ib_send_bw:
  case PerftestTool::ib_send_lat:
    return Verb::Send;
  case PerftestTool::ib_read_bw:
  case PerftestTool::ib_read_lat:
    return Verb::Read;
  }
  return Verb::Write;
}

double to_us(std::int64_t ps) {
  return static_cast<double>(ps) * 1e-6;
}

std::string metres(double m) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", m);
  return buf;
}

/// When a message the test wants to post at now() reaches the engine under spec.profile.
class PostClock {
 public:
  PostClock(Simulation& sim, const PerftestSpec& spec, std::size_t senders)
      : sim_(sim), profile_(spec.profile.get()), last_(senders, Time::zero()), used_(senders, false) {
    if (profile_ != nullptr && !profile_->noise.empty()) rng_ = &sim.rng("perftest noise");
  }
  /// `noise_draws`: how many times one noise draw is added (0: none; 2 on a ping-pong request, whose
  /// sample is RTT/2).
  Time when(std::size_t sender, std::uint64_t size, int noise_draws = 1) {
    if (profile_ == nullptr) return sim_.now();
    Time t = sim_.now() + profile_->host_latency(size);
    if (rng_ != nullptr && noise_draws > 0)
      t = t + Time::ps(profile_->noise.draw(*rng_, size).count_ps() * noise_draws);
    if (used_[sender]) t = std::max(t, last_[sender] + profile_->post_spacing(size));
    last_[sender] = t;
    used_[sender] = true;
    return t;
  }

 private:
  Simulation& sim_;
  const calib::Profile* profile_;
  Rng* rng_ = nullptr;
  std::vector<Time> last_;
  std::vector<bool> used_;
};

struct BwSide {
  HcaIndex from = 0, to = 0;
  std::vector<std::uint64_t> posted, done; // per QP
  std::vector<Time> tposted, tcompleted;
};

PerftestResultRow run_bw(const topo::Fabric& fabric, const routing::RoutingTables& tables,
                         const pkt::PacketConfig& cfg, const PerftestSpec& spec, std::uint64_t size) {
  const std::uint64_t n = perftest_iterations_for(spec, size);
  Simulation sim(spec.seed);
  pkt::PacketNetwork net(sim, fabric, tables, cfg);
  const Verb verb = verb_of(spec.tool);

  std::vector<BwSide> sides(spec.bidirectional ? 2 : 1);
  sides[0].from = spec.src;
  sides[0].to = spec.dst;
  if (spec.bidirectional) {
    sides[1].from = spec.dst;
    sides[1].to = spec.src;
  }
  for (auto& s : sides) {
    s.posted.assign(spec.qps, 0);
    s.done.assign(spec.qps, 0);
    s.tposted.reserve(n * spec.qps);
    s.tcompleted.reserve(n * spec.qps);
  }
  std::uint64_t messages = 0;
  PostClock clock(sim, spec, sides.size());
  auto post_one = [&](std::size_t side, std::uint32_t qp) {
    BwSide& s = sides[side];
    MessageSpec m;
    m.src = s.from;
    m.dst = s.to;
    m.bytes = size;
    m.qp_slot = qp;
    m.verb = verb;
    m.user_tag = side;
    const Time when = clock.when(side, size);
    if (when == sim.now())
      net.post(m);
    else
      net.post_at(when, m);
    s.tposted.push_back(sim.now());
    ++s.posted[qp];
    ++messages;
  };
  net.on_acked([&](const MessageRecord& rec) {
    // Copy what we need first: posting may grow the engine's message table under `rec`.
    const auto side = static_cast<std::size_t>(rec.spec.user_tag);
    const std::uint32_t qp = rec.spec.qp_slot;
    BwSide& s = sides[side];
    s.tcompleted.push_back(sim.now());
    ++s.done[qp];
    if (s.posted[qp] < n) post_one(side, qp);
  });
  for (std::size_t side = 0; side < sides.size(); ++side)
    for (std::uint32_t qp = 0; qp < spec.qps; ++qp)
      while (sides[side].posted[qp] < n && sides[side].posted[qp] - sides[side].done[qp] < spec.tx_depth)
        post_one(side, qp);
  sim.run();

  PerftestResultRow row;
  row.bytes = size;
  row.iterations_per_qp = n;
  row.iterations = n * spec.qps;
  row.events = sim.total_events_executed();
  row.messages = messages;
  for (const BwSide& s : sides) {
    if (s.tcompleted.size() != n * spec.qps)
      throw std::logic_error("perftest: the packet engine stopped with " +
                             std::to_string(s.tcompleted.size()) + " of " + std::to_string(n * spec.qps) +
                             " messages completed");
    const Time span = s.tcompleted.back() - s.tposted.front();
    const double secs = span.to_s();
    const double total_bytes = static_cast<double>(size) * static_cast<double>(n * spec.qps);
    const double avg_gbps = total_bytes * 8.0 / secs * 1e-9;
    row.bw_avg_gbps += avg_gbps;
    row.msg_rate_mpps += static_cast<double>(n * spec.qps) / secs * 1e-6;
    const double ps_per_msg = perftest_min_time_per_message(s.tposted, s.tcompleted);
    // The whole run (i = 0, j = n - 1) is one of the candidates: peak >= average up to rounding.
    row.bw_peak_gbps += std::max(avg_gbps, static_cast<double>(size) * 8.0 / (ps_per_msg * 1e-12) * 1e-9);
    row.duration = std::max(row.duration, span);
  }
  return row;
}

void fill_latency_stats(PerftestResultRow& row, std::vector<double> us) {
  std::sort(us.begin(), us.end());
  const std::size_t n = us.size();
  row.t_min_us = us.front();
  row.t_max_us = us.back();
  // perftest's get_median: the middle sample, or the mean of the two middle ones for an even count.
  row.t_typical_us = n % 2 == 0 ? (us[n / 2 - 1] + us[n / 2]) / 2 : us[n / 2];
  double sum = 0;
  for (double v : us) sum += v;
  row.t_avg_us = sum / static_cast<double>(n);
  double var = 0;
  for (double v : us) var += (v - row.t_avg_us) * (v - row.t_avg_us);
  row.t_stdev_us = std::sqrt(var / static_cast<double>(n));
  auto pct = [&](double p) {
    const auto k = static_cast<std::size_t>(std::ceil(p * static_cast<double>(n)));
    return us[std::clamp<std::size_t>(k, 1, n) - 1];
  };
  row.p99_us = pct(0.99);
  row.p999_us = pct(0.999);
}

PerftestResultRow run_lat(const topo::Fabric& fabric, const routing::RoutingTables& tables,
                          const pkt::PacketConfig& cfg, const PerftestSpec& spec, std::uint64_t size) {
  const std::uint64_t n = perftest_iterations_for(spec, size);
  Simulation sim(spec.seed);
  pkt::PacketNetwork net(sim, fabric, tables, cfg);
  const Verb verb = verb_of(spec.tool);
  const bool read = verb == Verb::Read;

  std::vector<double> samples_us;
  samples_us.reserve(n);
  Time start;
  std::uint64_t messages = 0;
  PostClock clock(sim, spec, 2);
  auto post = [&](HcaIndex from, HcaIndex to) {
    MessageSpec m;
    m.src = from;
    m.dst = to;
    m.bytes = size;
    m.verb = verb;
    // One noise draw per sample: a read is one operation; a write/send ping-pong sample is RTT/2, so the
    // request carries twice the draw and the reply none.
    const bool request = from == spec.src;
    const Time when = clock.when(request ? 0 : 1, size, request ? (read ? 1 : 2) : 0);
    if (when == sim.now())
      net.post(m);
    else
      net.post_at(when, m);
    ++messages;
  };
  auto sample = [&](double us) {
    samples_us.push_back(us);
    if (samples_us.size() < n) {
      start = sim.now();
      post(spec.src, spec.dst);
    }
  };
  if (read) {
    net.on_acked([&](const MessageRecord&) { sample(to_us((sim.now() - start).count_ps())); });
  } else {
    net.on_delivered([&](const MessageRecord& rec) {
      if (rec.spec.dst == spec.dst)
        post(spec.dst, spec.src); // the server answers the client's message
      else
        sample(to_us((sim.now() - start).count_ps()) / 2); // one way = RTT / 2
    });
  }
  start = sim.now();
  post(spec.src, spec.dst);
  sim.run();
  if (samples_us.size() != n)
    throw std::logic_error("perftest: the packet engine stopped with " + std::to_string(samples_us.size()) +
                           " of " + std::to_string(n) + " latency iterations completed");

  PerftestResultRow row;
  row.bytes = size;
  row.iterations = n;
  row.iterations_per_qp = n;
  row.events = sim.total_events_executed();
  row.messages = messages;
  row.duration = sim.now();
  fill_latency_stats(row, std::move(samples_us));
  return row;
}

void validate(const PerftestSpec& spec, const routing::RoutingTables& tables) {
  const bool lat = calib::is_latency_tool(spec.tool);
  if (spec.sizes.empty()) throw InputError("perftest: no message size");
  for (std::uint64_t s : spec.sizes)
    if (s == 0) throw InputError("perftest: message size must be at least 1 byte (-s)");
  if (spec.iterations < 1) throw InputError("perftest: iterations must be at least 1 (-n)");
  if (spec.qps < 1) throw InputError("perftest: the number of QPs must be at least 1 (-q)");
  if (spec.tx_depth < 1) throw InputError("perftest: TX depth must be at least 1 (-t)");
  if (lat && spec.qps != 1) throw InputError("perftest: latency tests use one QP (-q applies to bw tests)");
  if (lat && spec.bidirectional)
    throw InputError("perftest: bidirectional (-b) is only available in bw tests, as in perftest");
  const auto n = tables.num_hcas();
  if (spec.src >= n || spec.dst >= n || spec.src == spec.dst)
    throw InputError("perftest: the two HCAs must be different HCAs of the fabric (src " +
                     std::to_string(spec.src) + ", dst " + std::to_string(spec.dst) + ", " +
                     std::to_string(n) + " HCAs)");
}

/// ftree when the fabric is a layered tree, else updn.
routing::RoutingTables route_for(const topo::Fabric& f) {
  const auto reg = routing::builtin_routing();
  try {
    return reg.get("ftree").factory(f, {});
  } catch (const InputError&) {
    return reg.get("updn").factory(f, {});
  }
}

} // namespace

std::vector<PerftestResultRow> run_perftest(const topo::Fabric& fabric, const routing::RoutingTables& tables,
                                            const pkt::PacketConfig& config, const PerftestSpec& spec) {
  validate(spec, tables);
  std::vector<PerftestResultRow> rows;
  rows.reserve(spec.sizes.size());
  for (std::uint64_t size : spec.sizes)
    rows.push_back(calib::is_latency_tool(spec.tool) ? run_lat(fabric, tables, config, spec, size)
                                                     : run_bw(fabric, tables, config, spec, size));
  return rows;
}

// Dinkelbach: start from t = f(0, n-1); find the pair minimising C[j] - P[i] - t (j - i + 1) in one pass
// (for each j, the best i <= j maximises P[i] - t i); while that minimum is negative, t = f(that pair).
// Each step strictly lowers t; it stops at the optimum after a few passes.
double perftest_min_time_per_message(const std::vector<Time>& posted, const std::vector<Time>& completed) {
  const std::size_t n = std::min(posted.size(), completed.size());
  if (n == 0) return 0;
  auto f = [&](std::size_t i, std::size_t j) {
    return static_cast<double>(completed[j].count_ps() - posted[i].count_ps()) /
           static_cast<double>(j - i + 1);
  };
  double t = f(0, n - 1);
  for (int pass = 0; pass < 100; ++pass) {
    double best_g = 0;
    std::size_t bi = 0, bj = 0;
    double max_h = -INFINITY; // max over i <= j of P[i] - t i
    std::size_t arg_h = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const double h = static_cast<double>(posted[j].count_ps()) - t * static_cast<double>(j);
      if (h > max_h) {
        max_h = h;
        arg_h = j;
      }
      const double g = static_cast<double>(completed[j].count_ps()) - t * static_cast<double>(j + 1) - max_h;
      if (g < best_g) {
        best_g = g;
        bi = arg_h;
        bj = j;
      }
    }
    if (best_g >= -1e-9 * std::max(1.0, t)) break;
    const double next = f(bi, bj);
    if (!(next < t)) break;
    t = next;
  }
  return t;
}

std::vector<std::uint64_t> perftest_all_sizes() {
  std::vector<std::uint64_t> s;
  for (std::uint64_t b = 2; b <= kPerftestMaxAllSize; b *= 2) s.push_back(b);
  return s;
}

std::uint64_t perftest_default_iterations(PerftestTool t) {
  return calib::is_latency_tool(t) ? 1000 : 5000;
}
std::uint64_t perftest_default_size(PerftestTool t) {
  return calib::is_latency_tool(t) ? 2 : 65536;
}
std::uint32_t perftest_default_tx_depth(PerftestTool t) {
  return calib::is_latency_tool(t) ? 1 : 128;
}

std::uint64_t perftest_iterations_for(const PerftestSpec& spec, std::uint64_t size) {
  if (spec.max_bytes_per_size == 0 || size == 0) return spec.iterations;
  std::uint64_t per_iteration = size * spec.qps; // one direction, all QPs
  if (calib::is_latency_tool(spec.tool) && verb_of(spec.tool) != Verb::Read) per_iteration = 2 * size;
  const std::uint64_t fit = spec.max_bytes_per_size / per_iteration;
  return std::min(spec.iterations, std::max(fit, kPerftestMinIterations));
}

std::string perftest_title(PerftestTool t, bool bidirectional) {
  std::string verb;
  switch (verb_of(t)) {
  case Verb::Send:
    verb = "Send";
    break;
  case Verb::Read:
    verb = "RDMA_Read";
    break;
  default:
    verb = "RDMA_Write";
    break;
  }
  return verb + (bidirectional ? " Bidirectional" : "") +
         (calib::is_latency_tool(t) ? " Latency Test" : " BW Test");
}

PerftestTool parse_perftest_tool(const std::string& name) {
  for (PerftestTool t : {PerftestTool::ib_write_bw, PerftestTool::ib_write_lat, PerftestTool::ib_send_bw,
                         PerftestTool::ib_send_lat, PerftestTool::ib_read_bw, PerftestTool::ib_read_lat})
    if (name == calib::to_string(t)) return t;
  throw InputError(
      "unknown perftest tool '" + name +
      "' (expected ib_write_bw, ib_write_lat, ib_send_bw, ib_send_lat, ib_read_bw or ib_read_lat)");
}

PerftestPath back_to_back_path(topo::LinkSpeed speed, double cable_m, const pkt::PacketConfig& base) {
  // At least 1 cm: each half of the cable then has a non-zero propagation delay (the engine stalls on
  // zero-delay cables, see docs/perftest.md).
  if (!(cable_m >= 0.01) || !std::isfinite(cable_m))
    throw InputError("--cable-m: cable length must be at least 0.01 m, got " + metres(cable_m));
  if (cable_m > 100000) // the generators' limit (100 km); beyond it the propagation alone is 0.5 ms per hop
    throw InputError("--cable-m: cable length must be at most 100,000 m, got " + metres(cable_m));
  PerftestPath p;
  auto add = [&](topo::NodeKind kind, const std::string& name, int radix, int tier, int host) {
    topo::Node n;
    n.kind = kind;
    n.name = name;
    n.radix = radix;
    n.tier = tier;
    n.host = host;
    return p.fabric.add_node(n);
  };
  const auto a = add(topo::NodeKind::Hca, "host-a", 1, 0, 0);
  const auto b = add(topo::NodeKind::Hca, "host-b", 1, 0, 1);
  const auto relay = add(topo::NodeKind::Switch, "cable-relay", 2, 1, -1);
  const topo::Medium medium = cable_m <= topo::kDacMaxLengthM ? topo::Medium::Dac : topo::Medium::Fiber;
  const topo::Link whole = topo::make_link({a, 1}, {b, 1}, speed, cable_m, medium);
  // Two halves whose propagation delays add up to the whole cable's, to the picosecond.
  topo::Link first = topo::make_link({a, 1}, {relay, 1}, speed, cable_m / 2, medium);
  topo::Link second = topo::make_link({relay, 2}, {b, 1}, speed, cable_m / 2, medium);
  first.latency = Time::ps(whole.latency.count_ps() / 2);
  second.latency = whole.latency - first.latency;
  p.fabric.add_link(first);
  p.fabric.add_link(second);
  p.fabric.name = "back-to-back";
  p.tables = route_for(p.fabric);
  p.config = base;
  p.config.switch_latency = Time::zero();
  p.src = *p.tables.hca_index(a);
  p.dst = *p.tables.hca_index(b);
  p.description = "back-to-back " + speed.to_string() + ", " + metres(cable_m) + " m " +
                  (medium == topo::Medium::Dac ? "DAC" : "fibre");
  return p;
}

PerftestPath fabric_path(topo::Fabric fabric, const std::string& a, const std::string& b,
                         const pkt::PacketConfig& base, const std::string& what) {
  auto hca = [&](const std::string& name) {
    const auto n = fabric.find_node(name);
    if (!n) throw InputError(what + ": no node named '" + name + "' in the fabric");
    if (fabric.node(*n).kind != topo::NodeKind::Hca)
      throw InputError(what + ": '" + name + "' is a " + topo::to_string(fabric.node(*n).kind) +
                       ", not an HCA (perftest runs between two HCAs)");
    if (fabric.links_of(*n).empty()) throw InputError(what + ": HCA '" + name + "' has no cable");
    return *n;
  };
  const topo::NodeId na = hca(a);
  const topo::NodeId nb = hca(b);
  if (na == nb) throw InputError(what + ": the two HCAs must differ (got '" + a + "' twice)");
  PerftestPath p;
  p.fabric = std::move(fabric);
  p.tables = route_for(p.fabric);
  p.src = *p.tables.hca_index(na);
  p.dst = *p.tables.hca_index(nb);
  if (!p.tables.reachable(p.src, p.dst) || !p.tables.reachable(p.dst, p.src))
    throw InputError(what + ": '" + a + "' and '" + b + "' cannot reach each other (" + p.tables.algorithm() +
                     " routing; different planes?)");
  p.config = base;
  const topo::Link& cable = p.fabric.link(p.fabric.links_of(na).front());
  p.config.switch_latency = pkt::default_switch_latency(topo::to_string(cable.speed.gen));
  p.config.num_vls = std::max(p.config.num_vls, p.tables.num_vls());
  const auto path = p.tables.route(p.src, p.dst);
  p.description = (p.fabric.name.empty() ? std::string("fabric") : p.fabric.name) + ", " + a + " -> " + b +
                  ": " + std::to_string(path.size()) + " cables, " + std::to_string(path.size() - 1) +
                  (path.size() == 2 ? " switch, " : " switches, ") + p.tables.algorithm() + " routing";
  return p;
}

} // namespace ibn::scen

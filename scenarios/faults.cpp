#include "scenarios/faults.hpp"

#include "sim/error.hpp"
#include "sim/rng.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace ibn::scen {

namespace {

struct KindName {
  FaultKind kind;
  const char* name;
};
constexpr KindName kKinds[] = {{FaultKind::LinkDown, "link_down"},
                               {FaultKind::LinkUp, "link_up"},
                               {FaultKind::SwitchDown, "switch_down"},
                               {FaultKind::SwitchUp, "switch_up"},
                               {FaultKind::Degrade, "degrade"}};

struct FecName {
  FecKind fec;
  const char* name;
  int n, k, t; // RS(n, k) over 10-bit symbols correcting t symbols
};
constexpr FecName kFecs[] = {{FecKind::None, "none", 514, 514, 0},
                             {FecKind::Rs528, "rs528", 528, 514, 7},
                             {FecKind::Rs544, "rs544", 544, 514, 15}};

constexpr double kCodewordDataBits = 514.0 * 10.0;

const FecName& fec_info(FecKind f) {
  for (const auto& e : kFecs)
    if (e.fec == f) return e;
  return kFecs[0];
}

/// The lower tier of a cable's two ends (0: an HCA's cable, 1: leaf-spine, 2: spine-core).
int cable_tier(const topo::Fabric& f, topo::LinkId l) {
  const auto& k = f.link(l);
  return std::min(f.node(k.a.node).tier, f.node(k.b.node).tier);
}

bool is_hca(const topo::Fabric& f, topo::NodeId n) {
  return f.node(n).kind == topo::NodeKind::Hca;
}

std::string link_name(const topo::Fabric& f, topo::LinkId l) {
  const auto& k = f.link(l);
  return f.node(k.a.node).name + ":" + std::to_string(k.a.port) + " (" + f.node(k.a.node).name + "/" +
         f.node(k.b.node).name + ")";
}

std::string fmt_us(double us) {
  std::ostringstream s;
  s << us << " us";
  return s.str();
}

/// "NODE:PORT" (the cable at that port) or "A/B" (the first cable between them, in A's port order). Names
/// may hold ':' and '/' themselves (an imported switch "MF0;sw-02:MQM9700/U1"): NODE:PORT is tried first,
/// then A/B at every '/'.
topo::LinkId find_link(const topo::Fabric& f, const std::string& text, const std::string& key) {
  const auto colon = text.rfind(':');
  const std::string ps = colon == std::string::npos ? std::string() : text.substr(colon + 1);
  const bool port_form =
      !ps.empty() && ps.size() <= 4 && ps.find_first_not_of("0123456789") == std::string::npos;
  if (port_form)
    if (const auto n = f.find_node(text.substr(0, colon))) {
      const auto l = f.link_at(*n, std::stoi(ps));
      if (!l) throw InputError(key + ": port " + ps + " of '" + f.node(*n).name + "' has no cable");
      return *l;
    }
  std::size_t slashes = 0;
  for (auto slash = text.find('/'); slash != std::string::npos;
       slash = text.find('/', slash + 1), ++slashes) {
    const auto a = f.find_node(text.substr(0, slash));
    const auto b = f.find_node(text.substr(slash + 1));
    if (!a || !b) continue;
    for (const auto l : f.links_of(*a))
      if (f.link(l).other(*a) == *b) return l;
    throw InputError(key + ": no cable between '" + f.node(*a).name + "' and '" + f.node(*b).name + "'");
  }
  if (const auto n = f.find_node(text))
    throw InputError(key + ": '" + f.node(*n).name +
                     "' is a node, not a cable: add :PORT, or /NODE for the cable to a neighbour");
  if (slashes == 1 && !port_form) { // the plain A/B form: name the side that is not a node
    const auto slash = text.find('/');
    const auto a = text.substr(0, slash);
    throw InputError(key + ": no node '" + (f.find_node(a) ? text.substr(slash + 1) : a) + "' in the fabric");
  }
  if (port_form) throw InputError(key + ": no node '" + text.substr(0, colon) + "' in the fabric");
  if (slashes == 0 && colon != std::string::npos)
    throw InputError(key + ": '" + ps + "' is not a port number");
  throw InputError(key + ": '" + text +
                   "' names no cable of the fabric (use \"NODE:PORT\" or \"NODE/NODE\")");
}

std::vector<topo::LinkId> links_of_tier(const topo::Fabric& f, int tier) {
  std::vector<topo::LinkId> out;
  for (topo::LinkId l = 0; l < f.num_links(); ++l)
    if (tier < 0 || cable_tier(f, l) == tier) out.push_back(l);
  return out;
}

std::vector<topo::NodeId> switches_of_tier(const topo::Fabric& f, int tier) {
  std::vector<topo::NodeId> out;
  for (const auto n : f.switches())
    if (f.node(n).kind == topo::NodeKind::Switch && f.node(n).tier == tier) out.push_back(n);
  return out;
}

/// `k` distinct elements of `from`, drawn in order (partial Fisher-Yates).
template <typename T> std::vector<T> draw(std::vector<T> from, std::size_t k, Rng& rng) {
  for (std::size_t i = 0; i < k; ++i) std::swap(from[i], from[i + rng.uniform_below(from.size() - i)]);
  from.resize(k);
  return from;
}

topo::LinkSpeed degraded(const topo::LinkSpeed& old, int width, const std::string& speed,
                         const std::string& key) {
  topo::LinkSpeed s = old;
  if (!speed.empty()) {
    if (speed.find_first_of("xX") != std::string::npos)
      s = topo::parse_link_speed(speed, key);
    else
      s.gen = topo::parse_generation(speed, key);
  }
  if (width > 0) s.width = width;
  if (s.width != 1 && s.width != 2 && s.width != 4 && s.width != 8 && s.width != 12)
    throw InputError(key + ": width " + std::to_string(s.width) + " is not 1, 2, 4, 8 or 12");
  // A degradation makes a cable slower: the same speed is no fault, a faster one is not a degradation.
  if (s == old)
    throw InputError(key + ": degrading a " + old.to_string() + " cable to " + s.to_string() +
                     " leaves it as it is (give fewer lanes or an older generation)");
  if (s.rate_bps() > old.rate_bps())
    throw InputError(key + ": " + s.to_string() + " is faster than the cable's " + old.to_string() +
                     " (a degraded cable trains to fewer lanes or an older generation)");
  return s;
}

} // namespace

std::string to_string(FaultKind k) {
  for (const auto& e : kKinds)
    if (e.kind == k) return e.name;
  return "?";
}

double fec_codeword_failure(double ber, FecKind fec) {
  if (!(ber > 0)) return 0.0;
  if (ber >= 1) return 1.0;
  const auto& f = fec_info(fec);
  if (fec == FecKind::None) return -std::expm1(kCodewordDataBits * std::log1p(-ber));
  const double ps = -std::expm1(10.0 * std::log1p(-ber)); // symbol error rate
  if (ps >= 1) return 1.0;
  const double lp = std::log(ps), lq = std::log1p(-ps);
  double sum = 0;
  for (int i = f.t + 1; i <= f.n; ++i)
    sum += std::exp(std::lgamma(f.n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(f.n - i + 1.0) + i * lp +
                    (f.n - i) * lq);
  return std::min(1.0, sum);
}

double post_fec_bit_error_rate(double ber, FecKind fec) {
  const double p = fec_codeword_failure(ber, fec);
  if (p >= 1) return 1.0;
  return -std::expm1(std::log1p(-p) / kCodewordDataBits);
}

double packet_loss_probability(double bit_error_rate, std::uint64_t wire_bytes) {
  if (!(bit_error_rate > 0)) return 0.0;
  if (bit_error_rate >= 1) return 1.0;
  return -std::expm1(8.0 * static_cast<double>(wire_bytes) * std::log1p(-bit_error_rate));
}

void refuse_dead_ber_links(const std::vector<double>& ber, std::uint64_t wire_bytes,
                           const topo::Fabric& fabric, const std::string& file) {
  for (topo::LinkId l = 0; l < ber.size(); ++l) {
    const double through = 1.0 - packet_loss_probability(ber[l], wire_bytes);
    if (!(ber[l] > 0) || through >= 1e-6) continue;
    const auto& lk = fabric.link(l);
    char b[96];
    std::snprintf(b, sizeof b, "%.3g (post-FEC bit-error rate %.3g)", through, ber[l]);
    throw InputError(file + ": key 'faults.ber': the cable " + fabric.node(lk.a.node).name + "/" +
                     fabric.node(lk.b.node).name + " delivers a full packet with probability " + b +
                     ": every QP crossing it would exhaust its retries, which the flow engine's "
                     "capacity-after-retransmissions model cannot run; use --engine packet, which reports "
                     "the failed QPs");
  }
}

void add_fault_keys(Schema& s) {
  using K = KeyType;
  using J = nlohmann::json;
  auto add = [&s](std::string path, K type, std::string unit, J def, std::string desc,
                  std::vector<std::string> choices = {}, double min = -1e300, double max = 1e300,
                  bool fill = true) {
    KeyDecl d{std::move(path),
              type,
              std::move(unit),
              std::move(def),
              std::move(desc),
              std::move(choices),
              min,
              max};
    d.fill_default = fill;
    s.add(std::move(d));
  };
  std::vector<std::string> kinds;
  for (const auto& k : kKinds) kinds.emplace_back(k.name);
  std::vector<std::string> fecs;
  for (const auto& f : kFecs) fecs.emplace_back(f.name);
  add("faults", K::Object, "", J::object(),
      "Faults and degraded links (docs/scenarios.md \"Faults\"); absent: none. Faults at t = 0 are applied "
      "before routing; later ones go to the engine (both engines).",
      {}, -1e300, 1e300, false);
  add("faults.events", K::ObjectArray, "", J::array(), "Timed faults, in any order.");
  add("faults.events[].time_us", K::Double, "us", 0.0, "When the fault happens (0: before routing).", {}, 0,
      1e12); // (Time holds up to 9.2e12 us)
  add("faults.events[].kind", K::String, "", "link_down", "What happens.", kinds);
  add("faults.events[].link", K::String, "", "",
      "The cable: \"NODE:PORT\" or \"NODE/NODE\" (the first cable between them); \"\" with `tier`: one drawn "
      "per "
      "seed.");
  add("faults.events[].switch", K::String, "", "",
      "The switch (switch_down/up); \"\" with `tier`: one drawn per seed.");
  add("faults.events[].tier", K::Int, "", -1,
      "Pick by tier when no name is given: cables by their lower end's tier (0 host-leaf, 1 leaf-spine, 2 "
      "spine-core), switches by theirs (1 leaf, 2 spine, 3 core).",
      {}, -1, 8);
  add("faults.events[].width", K::Int, "lanes", 0, "degrade: lanes of the cable after it (0 = keep).", {}, 0,
      12);
  add("faults.events[].speed", K::String, "", "",
      "degrade: generation (\"HDR\") or width and generation (\"2xHDR\").");
  add("faults.sm_sweep_delay_us", K::Double, "us", 100.0,
      "From a cable's state change (t > 0) to the recomputed routes in every switch (both engines).", {}, 0,
      1e12);
  add("faults.reroute", K::Bool, "", true,
      "Recompute routes around failures at t > 0 with the same algorithm (false: dead outputs drop).");
  add("faults.ber", K::ObjectArray, "", J::array(), "Pre-FEC bit-error rates per cable or tier.");
  add("faults.ber[].link", K::String, "", "", "The cable (\"NODE:PORT\" or \"NODE/NODE\"); \"\" = by tier.");
  add("faults.ber[].tier", K::Int, "", -1, "Every cable of this tier (-1 with no link: every cable).", {}, -1,
      8);
  add("faults.ber[].pre_fec_ber", K::Double, "per bit", 0.0, "Bit-error rate before FEC.", {}, 0, 0.5);
  add("faults.ber[].fec", K::String, "", "rs544",
      "FEC on the cable: rs544 = RS(544,514) KP4 (HDR, NDR), rs528 = RS(528,514) KR4 (EDR), none.", fecs);
  add("faults.random.links_down", K::Int, "", 0, "Cables of `link_tier` down, drawn per seed.", {}, 0, 1e7);
  add("faults.random.link_tier", K::Int, "", 1, "Tier of the drawn cables (1 = leaf-spine).", {}, 0, 8);
  add("faults.random.switches_down", K::Int, "", 0, "Switches of `switch_tier` down, drawn per seed.", {}, 0,
      1e7);
  add("faults.random.switch_tier", K::Int, "", 2, "Tier of the drawn switches (2 = spine).", {}, 1, 8);
  add("faults.random.degraded_fraction", K::Double, "", 0.0,
      "Fraction of the cables of `degraded_tier` degraded (rounded, at least one when > 0), drawn per seed.",
      {}, 0, 1);
  add("faults.random.degraded_tier", K::Int, "", -1, "Tier of the degraded cables (-1 = every cable).", {},
      -1, 8);
  add("faults.random.degraded_width", K::Int, "lanes", 2, "Lanes of a degraded cable (0 = keep).", {}, 0, 12);
  add("faults.random.degraded_speed", K::String, "", "", "Generation of a degraded cable (\"\" = keep).");
  add("faults.random.time_us", K::Double, "us", 0.0, "When the drawn faults happen (0: before routing).", {},
      0, 1e12); // (Time holds up to 9.2e12 us)
}

FaultSpec parse_faults(const nlohmann::json& e, const std::string& where) {
  FaultSpec s;
  if (!e.contains("faults")) return s;
  const auto& f = e.at("faults");
  s.given = true;
  s.sm_sweep_delay_us = f.value("sm_sweep_delay_us", 100.0);
  s.reroute = f.value("reroute", true);
  std::size_t i = 0;
  for (const auto& ev : f.value("events", nlohmann::json::array())) {
    const auto key = where + ": key 'faults.events[" + std::to_string(i++) + "]";
    FaultEventSpec x;
    x.time_us = ev.at("time_us");
    const std::string kind = ev.at("kind");
    for (const auto& k : kKinds)
      if (kind == k.name) x.kind = k.kind;
    x.link = ev.at("link");
    x.node = ev.at("switch");
    x.tier = ev.at("tier");
    x.width = ev.at("width");
    x.speed = ev.at("speed");
    const bool link_kind =
        x.kind == FaultKind::LinkDown || x.kind == FaultKind::LinkUp || x.kind == FaultKind::Degrade;
    if (link_kind && !x.node.empty())
      throw InputError(key + ".switch': " + kind + " names a cable, not a switch");
    if (!link_kind && !x.link.empty())
      throw InputError(key + ".link': " + kind + " names a switch, not a cable");
    if (link_kind && x.link.empty() && x.tier < 0)
      throw InputError(key + ".link': give the cable (\"NODE:PORT\" or \"NODE/NODE\") or a tier");
    if (!link_kind && x.node.empty() && x.tier < 0)
      throw InputError(key + ".switch': give the switch or a tier");
    if (x.kind == FaultKind::Degrade && x.width == 0 && x.speed.empty())
      throw InputError(key + "': degrade needs a width or a speed");
    if (x.kind != FaultKind::Degrade && (x.width != 0 || !x.speed.empty()))
      throw InputError(key + "': width and speed are for degrade");
    s.events.push_back(x);
  }
  i = 0;
  for (const auto& b : f.value("ber", nlohmann::json::array())) {
    BerSpec x;
    x.link = b.at("link");
    x.tier = b.at("tier");
    x.pre_fec_ber = b.at("pre_fec_ber");
    const std::string fec = b.at("fec");
    for (const auto& k : kFecs)
      if (fec == k.name) x.fec = k.fec;
    if (!x.link.empty() && x.tier >= 0)
      throw InputError(where + ": key 'faults.ber[" + std::to_string(i) +
                       "]': give a link or a tier, not both");
    s.ber.push_back(x);
    ++i;
  }
  if (f.contains("random")) {
    const auto& r = f.at("random");
    s.random.links_down = r.at("links_down");
    s.random.link_tier = r.at("link_tier");
    s.random.switches_down = r.at("switches_down");
    s.random.switch_tier = r.at("switch_tier");
    s.random.degraded_fraction = r.at("degraded_fraction");
    s.random.degraded_tier = r.at("degraded_tier");
    s.random.degraded_width = r.at("degraded_width");
    s.random.degraded_speed = r.at("degraded_speed");
    s.random.time_us = r.at("time_us");
  }
  return s;
}

FaultPlan plan_faults(const FaultSpec& spec, const topo::Fabric& f, std::uint64_t seed,
                      const std::string& where) {
  FaultPlan plan;
  Rng rng = Rng::for_stream(seed, "faults");
  auto add = [&](FaultAction a, double us) {
    a.at = Time::from_us(us);
    const std::string target = a.link != topo::kNoLink ? link_name(f, a.link) : f.node(a.node).name;
    a.what = to_string(a.kind) + " " + target +
             (a.kind == FaultKind::Degrade ? " to " + a.speed.to_string() : "") + " at " + fmt_us(us);
    plan.described.push_back(a.what);
    plan.actions.push_back(a);
  };
  std::size_t i = 0;
  for (const auto& ev : spec.events) {
    const auto key = where + ": key 'faults.events[" + std::to_string(i++) + "]";
    FaultAction a;
    a.kind = ev.kind;
    if (ev.kind == FaultKind::SwitchDown || ev.kind == FaultKind::SwitchUp) {
      if (!ev.node.empty()) {
        const auto n = f.find_node(ev.node);
        if (!n) throw InputError(key + ".switch': no node '" + ev.node + "' in the fabric");
        if (is_hca(f, *n)) throw InputError(key + ".switch': '" + ev.node + "' is an HCA, not a switch");
        a.node = *n;
      } else {
        const auto c = switches_of_tier(f, ev.tier);
        if (c.empty()) throw InputError(key + ".tier': no switch of tier " + std::to_string(ev.tier));
        a.node = c[rng.uniform_below(c.size())];
      }
    } else {
      if (!ev.link.empty()) {
        a.link = find_link(f, ev.link, key + ".link'");
      } else {
        const auto c = links_of_tier(f, ev.tier);
        if (c.empty()) throw InputError(key + ".tier': no cable of tier " + std::to_string(ev.tier));
        a.link = c[rng.uniform_below(c.size())];
      }
      if (ev.kind == FaultKind::Degrade)
        a.speed = degraded(f.link(a.link).speed, ev.width, ev.speed, key + "'");
    }
    add(a, ev.time_us);
  }
  const auto& r = spec.random;
  if (r.links_down) {
    const auto c = links_of_tier(f, r.link_tier);
    if (r.links_down > c.size())
      throw InputError(where + ": key 'faults.random.links_down': " + std::to_string(r.links_down) +
                       " cables asked, the fabric has " + std::to_string(c.size()) + " of tier " +
                       std::to_string(r.link_tier));
    for (const auto l : draw(c, r.links_down, rng)) {
      FaultAction a;
      a.kind = FaultKind::LinkDown;
      a.link = l;
      add(a, r.time_us);
    }
  }
  if (r.switches_down) {
    const auto c = switches_of_tier(f, r.switch_tier);
    if (r.switches_down > c.size())
      throw InputError(where + ": key 'faults.random.switches_down': " + std::to_string(r.switches_down) +
                       " switches asked, the fabric has " + std::to_string(c.size()) + " of tier " +
                       std::to_string(r.switch_tier));
    for (const auto n : draw(c, r.switches_down, rng)) {
      FaultAction a;
      a.kind = FaultKind::SwitchDown;
      a.node = n;
      add(a, r.time_us);
    }
  }
  if (r.degraded_fraction > 0) {
    const auto c = links_of_tier(f, r.degraded_tier);
    if (c.empty())
      throw InputError(where + ": key 'faults.random.degraded_tier': no cable of tier " +
                       std::to_string(r.degraded_tier));
    const auto k =
        std::max<std::size_t>(1, static_cast<std::size_t>(std::llround(r.degraded_fraction * c.size())));
    for (const auto l : draw(c, std::min(k, c.size()), rng)) {
      FaultAction a;
      a.kind = FaultKind::Degrade;
      a.link = l;
      a.speed =
          degraded(f.link(l).speed, r.degraded_width, r.degraded_speed, where + ": key 'faults.random'");
      add(a, r.time_us);
    }
  }
  std::stable_sort(plan.actions.begin(), plan.actions.end(),
                   [](const FaultAction& a, const FaultAction& b) { return a.at < b.at; });
  // An "up" of something not down then changes nothing: a typo'd name or time, refused rather than ignored.
  {
    std::vector<bool> link_down(f.num_links(), false), node_down(f.num_nodes(), false);
    for (const auto& a : plan.actions) {
      if (a.kind == FaultKind::LinkUp && !link_down[a.link])
        throw InputError(where + ": key 'faults': " + a.what +
                         ": the cable is not down then (no earlier link_down)");
      if (a.kind == FaultKind::SwitchUp && !node_down[a.node])
        throw InputError(where + ": key 'faults': " + a.what +
                         ": the switch is not down then (no earlier switch_down)");
      if (a.kind == FaultKind::LinkDown || a.kind == FaultKind::LinkUp)
        link_down[a.link] = a.kind == FaultKind::LinkDown;
      if (a.kind == FaultKind::SwitchDown || a.kind == FaultKind::SwitchUp)
        node_down[a.node] = a.kind == FaultKind::SwitchDown;
    }
  }
  i = 0;
  for (const auto& b : spec.ber) {
    const auto key = where + ": key 'faults.ber[" + std::to_string(i++) + "]";
    const double res = post_fec_bit_error_rate(b.pre_fec_ber, b.fec);
    if (plan.link_ber.empty()) plan.link_ber.assign(f.num_links(), 0.0);
    std::vector<topo::LinkId> ls;
    if (!b.link.empty())
      ls.push_back(find_link(f, b.link, key + ".link'"));
    else
      ls = links_of_tier(f, b.tier);
    if (ls.empty()) throw InputError(key + ".tier': no cable of tier " + std::to_string(b.tier));
    for (const auto l : ls) plan.link_ber[l] = res;
    std::ostringstream d;
    d << "ber " << b.pre_fec_ber << " pre-FEC -> " << res << " per bit after FEC on " << ls.size()
      << " cable(s)";
    plan.described.push_back(d.str());
  }
  return plan;
}

FaultedFabric apply_initial_faults(const topo::Fabric& f, const FaultPlan& plan, const std::string& where) {
  FaultedFabric out;
  std::vector<bool> failed(f.num_links(), false);
  std::vector<topo::LinkSpeed> speed(f.num_links());
  for (topo::LinkId l = 0; l < f.num_links(); ++l) speed[l] = f.link(l).speed;
  std::vector<bool> node_down_at0(f.num_nodes(), false);
  for (const auto& a : plan.actions) {
    if (a.at > Time::zero()) break;
    switch (a.kind) {
    case FaultKind::LinkDown:
    case FaultKind::LinkUp:
      failed[a.link] = a.kind == FaultKind::LinkDown;
      break;
    case FaultKind::SwitchDown:
    case FaultKind::SwitchUp:
      node_down_at0[a.node] = a.kind == FaultKind::SwitchDown;
      for (const auto l : f.links_of(a.node)) failed[l] = a.kind == FaultKind::SwitchDown;
      break;
    case FaultKind::Degrade:
      speed[a.link] = a.speed;
      break;
    }
  }
  for (topo::LinkId l = 0; l < f.num_links(); ++l) {
    if (!failed[l]) continue;
    const auto& k = f.link(l);
    for (const auto n : {k.a.node, k.b.node})
      if (is_hca(f, n))
        throw InputError(
            where + ": key 'faults': cable " + link_name(f, l) + " down from t = 0 cuts HCA '" +
            f.node(n).name +
            "' off the fabric; fail it at a time > 0 instead (its QPs then exhaust their retries, reported)");
  }
  std::vector<topo::LinkId> new_id(f.num_links(), topo::kNoLink);
  out.fabric.name = f.name;
  out.fabric.origin = f.origin;
  for (const auto& n : f.nodes()) out.fabric.add_node(n);
  for (topo::LinkId l = 0; l < f.num_links(); ++l) {
    if (failed[l]) {
      ++out.removed_links;
      continue;
    }
    topo::Link k = f.link(l);
    k.speed = speed[l];
    new_id[l] = out.fabric.add_link(k);
  }
  if (out.removed_links > 0) {
    // The faults at t = 0 must leave every HCA able to reach every other of its plane: routing would fail
    // later with a message that names no key.
    const auto hcas = out.fabric.hcas();
    const auto comp = out.fabric.components();
    std::map<int, topo::NodeId> first; // plane -> its first HCA
    for (const auto h : hcas) first.emplace(out.fabric.node(h).plane, h);
    for (const auto h : hcas)
      if (comp[h] != comp[first.at(out.fabric.node(h).plane)]) {
        std::string at0;
        for (const auto& a : plan.actions)
          if (a.at == Time::zero() && at0.size() < 300) at0 += (at0.empty() ? "" : "; ") + a.what;
        throw InputError(where + ": key 'faults': the faults from t = 0 split the fabric: HCA '" +
                         out.fabric.node(h).name + "' cannot reach HCA '" +
                         out.fabric.node(first[out.fabric.node(h).plane]).name +
                         "' (more cables or switches down than the topology has paths; draw fewer, or fail "
                         "them at a time > 0). Down from t = 0: " +
                         at0);
      }
  }
  for (const auto& a : plan.actions) {
    if (a.at == Time::zero()) continue;
    FaultAction b = a;
    if (a.link != topo::kNoLink) {
      b.link = new_id[a.link];
      if (b.link == topo::kNoLink)
        throw InputError(where + ": key 'faults': '" + a.what +
                         "' names a cable that is down from t = 0 (removed "
                         "before routing); fail it at a time > 0 instead");
    }
    if (a.node != topo::kNoNode && node_down_at0[a.node])
      throw InputError(where + ": key 'faults': '" + a.what +
                       "' names a switch that is down from t = 0 (removed "
                       "before routing); fail it at a time > 0 instead");
    out.timed.push_back(b);
  }
  if (!plan.link_ber.empty()) {
    out.link_ber.assign(out.fabric.num_links(), 0.0);
    for (topo::LinkId l = 0; l < f.num_links(); ++l)
      if (new_id[l] != topo::kNoLink) out.link_ber[new_id[l]] = plan.link_ber[l];
  }
  return out;
}

} // namespace ibn::scen

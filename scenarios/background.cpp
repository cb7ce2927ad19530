#include "scenarios/background.hpp"

#include "sim/error.hpp"
#include "sim/units.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

namespace ibn::scen {
namespace {

using nlohmann::json;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string prefixed(const std::string& where, const std::string& key) {
  return where.empty() ? key : where + "." + key;
}

std::string show(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

double number_at(const json& j, const std::string& path) {
  if (!j.is_number() || !std::isfinite(j.get<double>()))
    throw InputError(path + ": expected a number, got " + show(j));
  return j.get<double>();
}

std::uint64_t uint_at(const json& j, const std::string& path, std::uint64_t max) {
  if (j.is_number_unsigned() && j.get<std::uint64_t>() <= max) return j.get<std::uint64_t>();
  if (j.is_number_integer() && j.get<std::int64_t>() >= 0 &&
      static_cast<std::uint64_t>(j.get<std::int64_t>()) <= max)
    return static_cast<std::uint64_t>(j.get<std::int64_t>());
  throw InputError(path + ": expected an integer from 0 to " + std::to_string(max) + ", got " + show(j));
}

const std::string& string_at(const json& j, const std::string& path) {
  if (!j.is_string()) throw InputError(path + ": expected a string, got " + show(j));
  return j.get_ref<const std::string&>();
}

/// A uniformly random derangement of 0..n-1 (n >= 2) by rejection.
std::vector<std::uint32_t> derangement(std::uint32_t n, Rng& rng) {
  std::vector<std::uint32_t> p(n);
  for (;;) {
    for (std::uint32_t i = 0; i < n; ++i) p[i] = i;
    for (std::uint32_t i = n - 1; i > 0; --i) std::swap(p[i], p[rng.uniform_below(i + 1)]);
    bool ok = true;
    for (std::uint32_t i = 0; i < n && ok; ++i) ok = p[i] != i;
    if (ok) return p;
  }
}

} // namespace

std::string to_string(BackgroundPattern p) {
  switch (p) {
  case BackgroundPattern::Permutation:
    return "permutation";
  case BackgroundPattern::Incast:
    return "incast";
  case BackgroundPattern::Uniform:
    return "uniform";
  }
  return "?";
}

BackgroundPattern parse_background_pattern(const std::string& text, const std::string& what) {
  const std::string t = lower(text);
  if (t == "permutation") return BackgroundPattern::Permutation;
  if (t == "incast") return BackgroundPattern::Incast;
  if (t == "uniform" || t == "uniform-random" || t == "random") return BackgroundPattern::Uniform;
  throw InputError(what + ": unknown background pattern '" + text +
                   "' (expected permutation, incast or uniform)");
}

std::string to_string(GapDistribution g) {
  return g == GapDistribution::Fixed ? "fixed" : "exponential";
}

GapDistribution parse_gap_distribution(const std::string& text, const std::string& what) {
  const std::string t = lower(text);
  if (t == "exponential" || t == "poisson") return GapDistribution::Exponential;
  if (t == "fixed" || t == "constant") return GapDistribution::Fixed;
  throw InputError(what + ": unknown gap distribution '" + text + "' (expected exponential or fixed)");
}

void validate(const BackgroundTrafficSpec& s, const std::string& where) {
  auto fail = [&](const std::string& key, const std::string& msg) {
    throw InputError(prefixed(where, key) + ": " + msg);
  };
  if (!(s.load > 0 && s.load <= 1)) fail("load", "must be in (0, 1], got " + std::to_string(s.load));
  if (!(s.rate_gbps > 0) || !std::isfinite(s.rate_gbps))
    fail("rate_gbps", "must be a positive rate in Gb/s, got " + std::to_string(s.rate_gbps));
  if (s.message_bytes == 0) fail("message_bytes", "must be at least 1 byte");
  if (s.start < Time::zero()) fail("start_us", "must not be negative");
  if (s.stop <= s.start)
    fail("stop_us", "must be after start_us (" + std::to_string(s.start.to_us()) + " us), got " +
                        std::to_string(s.stop.to_us()) + " us");
  if (s.hcas.size() < 2)
    fail("hcas", "background traffic needs at least 2 HCAs, got " + std::to_string(s.hcas.size()));
  if (std::set<eng::HcaIndex>(s.hcas.begin(), s.hcas.end()).size() != s.hcas.size())
    fail("hcas", "an HCA is listed twice");
  if (!s.planes.empty() && s.planes.size() != s.hcas.size())
    fail("planes", "must be empty or give one plane per HCA (" + std::to_string(s.hcas.size()) + "), got " +
                       std::to_string(s.planes.size()));
  if (s.pattern == BackgroundPattern::Incast) {
    if (s.incast_receiver >= s.hcas.size())
      fail("incast_receiver", "position " + std::to_string(s.incast_receiver) + " is not below the " +
                                  std::to_string(s.hcas.size()) + " participants");
    if (s.incast_senders > s.hcas.size() - 1)
      fail("incast_senders", std::to_string(s.incast_senders) + " senders need " +
                                 std::to_string(s.incast_senders + 1) + " participants, got " +
                                 std::to_string(s.hcas.size()));
  }
}

BackgroundTrafficSpec background_from_json(const json& j, const std::string& path) {
  if (!j.is_object()) throw InputError(path + ": expected a JSON object, got " + show(j));
  static constexpr std::array<const char*, 12> kAllowed = {
      "name",     "pattern", "load",           "rate_gbps",       "message_bytes", "gaps",
      "start_us", "stop_us", "incast_senders", "incast_receiver", "qp_slot",       "sl"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find_if(kAllowed.begin(), kAllowed.end(), [&](const char* k) { return it.key() == k; }) ==
        kAllowed.end()) {
      std::string known;
      for (const char* k : kAllowed) known += (known.empty() ? "" : ", ") + std::string(k);
      throw InputError(prefixed(path, it.key()) + ": unknown key (allowed: " + known + ")");
    }
  if (!j.contains("pattern"))
    throw InputError(path + ": missing key 'pattern' (permutation, incast or uniform)");
  BackgroundTrafficSpec s;
  const auto at = [&](const char* k) { return prefixed(path, k); };
  s.pattern = parse_background_pattern(string_at(j["pattern"], at("pattern")), at("pattern"));
  if (j.contains("name")) s.name = string_at(j["name"], at("name"));
  if (j.contains("load")) s.load = number_at(j["load"], at("load"));
  if (j.contains("rate_gbps")) s.rate_gbps = number_at(j["rate_gbps"], at("rate_gbps"));
  if (j.contains("message_bytes")) {
    const json& v = j["message_bytes"];
    s.message_bytes = v.is_string() ? parse_size_bytes(v.get<std::string>(), at("message_bytes"))
                                    : uint_at(v, at("message_bytes"), std::uint64_t{1} << 40);
  }
  if (j.contains("gaps")) s.gaps = parse_gap_distribution(string_at(j["gaps"], at("gaps")), at("gaps"));
  if (j.contains("start_us")) s.start = Time::from_us(number_at(j["start_us"], at("start_us")));
  if (j.contains("stop_us")) s.stop = Time::from_us(number_at(j["stop_us"], at("stop_us")));
  if (j.contains("incast_senders"))
    s.incast_senders =
        static_cast<std::uint32_t>(uint_at(j["incast_senders"], at("incast_senders"), 1u << 30));
  if (j.contains("incast_receiver"))
    s.incast_receiver =
        static_cast<std::uint32_t>(uint_at(j["incast_receiver"], at("incast_receiver"), 1u << 30));
  if (j.contains("qp_slot"))
    s.qp_slot = static_cast<std::uint32_t>(uint_at(j["qp_slot"], at("qp_slot"), 1u << 30));
  if (j.contains("sl")) s.sl = static_cast<std::uint8_t>(uint_at(j["sl"], at("sl"), 15));
  // Values are checked by validate() once the caller has set the participants; the scalar ones now.
  if (!(s.load > 0 && s.load <= 1))
    throw InputError(at("load") + ": must be in (0, 1], got " + show(j["load"]));
  if (!(s.rate_gbps > 0)) throw InputError(at("rate_gbps") + ": must be positive");
  if (s.message_bytes == 0) throw InputError(at("message_bytes") + ": must be at least 1 byte");
  if (s.stop <= s.start) throw InputError(at("stop_us") + ": must be after start_us");
  return s;
}

double BackgroundStats::offered_gbps_per_sender(Time start, Time stop) const {
  if (senders == 0 || stop <= start) return 0;
  return static_cast<double>(bytes_posted) * 8.0 / (static_cast<double>(senders) * (stop - start).to_s()) *
         1e-9;
}

double BackgroundStats::delivered_gbps() const {
  if (messages_delivered == 0 || last_delivery <= first_post) return 0;
  return static_cast<double>(bytes_delivered) * 8.0 / (last_delivery - first_post).to_s() * 1e-9;
}

double BackgroundStats::latency_us(double p) const {
  if (latencies.empty()) return 0;
  std::vector<Time> v = latencies;
  std::sort(v.begin(), v.end());
  auto k = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
  k = std::clamp<std::size_t>(k, 1, v.size());
  return v[k - 1].to_us();
}

double BackgroundStats::mean_latency_us() const {
  if (latencies.empty()) return 0;
  long double sum = 0;
  for (const auto t : latencies) sum += static_cast<long double>(t.count_ps());
  return static_cast<double>(sum / static_cast<long double>(latencies.size())) * 1e-6;
}

json BackgroundStats::to_json() const {
  return json{{"messages_posted", messages_posted},
              {"bytes_posted", bytes_posted},
              {"messages_delivered", messages_delivered},
              {"bytes_delivered", bytes_delivered},
              {"delivered_gbps", delivered_gbps()},
              {"latency_us",
               {{"p50", latency_us(0.5)},
                {"p99", latency_us(0.99)},
                {"max", latency_us(1.0)},
                {"mean", mean_latency_us()}}}};
}

BackgroundDriver::BackgroundDriver(eng::Engine& engine, BackgroundTrafficSpec spec)
    : engine_(engine), spec_(std::move(spec)) {
  validate(spec_, spec_.name);
  for (const auto h : spec_.hcas)
    if (h >= engine_.num_hcas())
      throw InputError(spec_.name + ".hcas: HCA " + std::to_string(h) + " does not exist (the engine has " +
                       std::to_string(engine_.num_hcas()) + ")");
  mean_gap_ps_ = static_cast<double>(spec_.message_bytes) * 8.0 * 1e12 / (spec_.load * spec_.rate_gbps * 1e9);

  const auto n = static_cast<std::uint32_t>(spec_.hcas.size());
  auto plane = [&](std::uint32_t pos) { return spec_.planes.empty() ? 0 : spec_.planes[pos]; };
  std::map<int, std::vector<std::uint32_t>> by_plane; // plane -> positions
  for (std::uint32_t i = 0; i < n; ++i) by_plane[plane(i)].push_back(i);
  auto add_sender = [&](std::uint32_t pos) {
    Sender s{pos,
             Rng::for_stream(spec_.seed, spec_.name + "/gaps/" + std::to_string(pos)),
             Rng::for_stream(spec_.seed, spec_.name + "/dst/" + std::to_string(pos)),
             0.0,
             {}};
    senders_.push_back(std::move(s));
  };

  switch (spec_.pattern) {
  case BackgroundPattern::Permutation: {
    partners_.assign(n, 0);
    Rng rng = Rng::for_stream(spec_.seed, spec_.name + "/partners");
    for (const auto& [pl, members] : by_plane) {
      if (members.size() < 2)
        throw InputError(spec_.name + ": permutation needs at least 2 HCAs per plane; plane " +
                         std::to_string(pl) + " has 1 (HCA " + std::to_string(spec_.hcas[members[0]]) + ")");
      const auto d = derangement(static_cast<std::uint32_t>(members.size()), rng);
      for (std::size_t k = 0; k < members.size(); ++k) partners_[members[k]] = spec_.hcas[members[d[k]]];
    }
    for (std::uint32_t i = 0; i < n; ++i) add_sender(i);
    break;
  }
  case BackgroundPattern::Incast: {
    const std::uint32_t r = spec_.incast_receiver;
    const std::uint32_t count = spec_.incast_senders == 0 ? n - 1 : spec_.incast_senders;
    for (std::uint32_t k = 1; k <= count; ++k) {
      const std::uint32_t pos = (r + k) % n;
      if (plane(pos) != plane(r))
        throw InputError(spec_.name + ": incast sender HCA " + std::to_string(spec_.hcas[pos]) +
                         " is on plane " + std::to_string(plane(pos)) + ", the receiver HCA " +
                         std::to_string(spec_.hcas[r]) + " on plane " + std::to_string(plane(r)));
      add_sender(pos);
      senders_.back().candidates = {spec_.hcas[r]};
    }
    break;
  }
  case BackgroundPattern::Uniform:
    for (std::uint32_t i = 0; i < n; ++i) {
      const auto& members = by_plane[plane(i)];
      if (members.size() < 2)
        throw InputError(spec_.name + ": uniform traffic needs at least 2 HCAs per plane; plane " +
                         std::to_string(plane(i)) + " has 1 (HCA " + std::to_string(spec_.hcas[i]) + ")");
      add_sender(i);
      for (const auto m : members)
        if (m != i) senders_.back().candidates.push_back(spec_.hcas[m]);
    }
    break;
  }
  stats_.senders = static_cast<std::uint32_t>(senders_.size());
}

double BackgroundDriver::draw_gap(Rng& r) {
  return spec_.gaps == GapDistribution::Fixed ? mean_gap_ps_ : r.exponential(mean_gap_ps_);
}

void BackgroundDriver::start() {
  const double base = static_cast<double>(std::max(spec_.start, engine_.now()).count_ps());
  for (std::size_t i = 0; i < senders_.size(); ++i) {
    Sender& s = senders_[i];
    const double first =
        spec_.gaps == GapDistribution::Fixed ? s.gaps.uniform01() * mean_gap_ps_ : draw_gap(s.gaps);
    s.next_ps = base + first;
    const Time t = Time::ps(static_cast<std::int64_t>(std::llround(s.next_ps)));
    if (t < spec_.stop) engine_.call_at(t, [this, i] { arrival(i); });
  }
}

void BackgroundDriver::stop() { stopped_ = true; }

void BackgroundDriver::arrival(std::size_t i) {
  if (stopped_) return; // stop(): no more posts; messages in flight are still delivered
  Sender& s = senders_[i];
  eng::TransferSpec t;
  t.src = spec_.hcas[s.pos];
  t.dst = spec_.pattern == BackgroundPattern::Permutation
              ? partners_[s.pos]
              : s.candidates[s.candidates.size() == 1 ? 0 : s.dst.uniform_below(s.candidates.size())];
  t.bytes = spec_.message_bytes;
  t.qp_slot = spec_.qp_slot;
  t.sl = spec_.sl;
  const Time posted = engine_.now();
  ++stats_.messages_posted;
  stats_.bytes_posted += t.bytes;
  stats_.first_post = std::min(stats_.first_post, posted);
  stats_.last_post = std::max(stats_.last_post, posted);
  engine_.send(t, [this, posted, bytes = t.bytes](Time delivered) {
    ++stats_.messages_delivered;
    stats_.bytes_delivered += bytes;
    stats_.last_delivery = std::max(stats_.last_delivery, delivered);
    stats_.latencies.push_back(delivered - posted);
  });
  s.next_ps += draw_gap(s.gaps);
  const Time next = Time::ps(static_cast<std::int64_t>(std::llround(s.next_ps)));
  if (next < spec_.stop) engine_.call_at(std::max(next, engine_.now()), [this, i] { arrival(i); });
}

nlohmann::json background_result(const BackgroundDriver& d, const std::string& where, Time run_end,
                                 std::vector<std::string>& warnings) {
  const auto& spec = d.spec();
  if (d.stats().messages_posted == 0)
    warnings.push_back(where + ": no effect: it posted no message (start_us " +
                       nlohmann::json(spec.start.to_us()).dump() + ", the run ended at " +
                       std::to_string(run_end.to_us()) + " us)");
  return {{"name", spec.name},        {"pattern", to_string(spec.pattern)},
          {"load", spec.load},        {"message_bytes", spec.message_bytes},
          {"hcas", spec.hcas.size()}, {"stats", d.stats().to_json()}};
}

} // namespace ibn::scen

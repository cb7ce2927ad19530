// Scenario faults (scenarios/faults.hpp): the FEC/BER formula, the keys and their errors, the random draws
// per seed, what t = 0 does to the fabric, and the whatif --faults tokens.
#include "analysis/whatif.hpp"
#include "scenarios/faults.hpp"
#include "scenarios/scenario.hpp"
#include "sim/error.hpp"
#include "topology/generators.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

namespace {

using ibn::scen::FecKind;

nlohmann::json base_doc() {
  return {{"fabric",
           {{"generator", "fat-tree"},
            {"params",
             {{"tiers", 2}, {"radix", 8}, {"hosts", 8}, {"oversubscription", "1:1"}, {"rate", "NDR"}}}}},
          {"jobs", {{{"nodes", 2}, {"gpus_per_node", 1}, {"nics_per_node", 1}}}}};
}

ibn::topo::Fabric
small_tree() { // 2 leaves x 4 hosts, one spine with 4 cables to each: 8 host, 8 leaf-spine cables
  return ibn::topo::builtin_generators()
      .get("fat-tree")
      .factory(
          {{"tiers", "2"}, {"radix", "8"}, {"hosts", "8"}, {"oversubscription", "1:1"}, {"rate", "NDR"}});
}

std::string error_of(const nlohmann::json& doc) {
  try {
    (void)ibn::scen::make_scenario(doc, "s.json", "");
  } catch (const ibn::InputError& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("faults: RS-FEC codeword failure is the binomial tail, its leading term at a low BER") {
  // Leading term of P(X > t), X ~ Binomial(n, p_s): C(n, t+1) p_s^(t+1) (1 - p_s)^(n-t-1); the next term is
  // smaller by (n-t-1)/(t+2) * p_s/(1-p_s), ~0.3 % for RS(544,514) at BER 1e-5 (p_s ~ 1e-4).
  for (const auto& [fec, n, t] : {std::tuple{FecKind::Rs544, 544, 15}, std::tuple{FecKind::Rs528, 528, 7}}) {
    const double ber = 1e-5;
    const double ps = 1 - std::pow(1 - ber, 10);
    const double lead = std::exp(std::lgamma(n + 1.0) - std::lgamma(t + 2.0) - std::lgamma(n - t + 0.0) +
                                 (t + 1) * std::log(ps) + (n - t - 1) * std::log1p(-ps));
    const double p = ibn::scen::fec_codeword_failure(ber, fec);
    CHECK(p >= lead);
    CHECK(p <= lead * 1.01);
  }
  // More correction, fewer failures; a higher BER, more.
  CHECK(ibn::scen::fec_codeword_failure(1e-4, FecKind::Rs544) <
        ibn::scen::fec_codeword_failure(1e-4, FecKind::Rs528));
  CHECK(ibn::scen::fec_codeword_failure(2e-3, FecKind::Rs544) >
        ibn::scen::fec_codeword_failure(1e-3, FecKind::Rs544));
  CHECK(ibn::scen::fec_codeword_failure(0, FecKind::Rs544) == 0);
  // Without FEC the residual rate is the raw rate.
  CHECK(ibn::scen::post_fec_bit_error_rate(1e-7, FecKind::None) == doctest::Approx(1e-7).epsilon(1e-9));
  // The residual per-bit rate reproduces the codeword failure over a codeword's 5140 data bits: a packet of
  // 5140 bytes = 8 x 5140 bits (8 codewords) is lost with probability 1 - (1 - P_cw)^8.
  const double pcw = ibn::scen::fec_codeword_failure(1.5e-3, FecKind::Rs544);
  const double res = ibn::scen::post_fec_bit_error_rate(1.5e-3, FecKind::Rs544);
  CHECK(ibn::scen::packet_loss_probability(res, 5140) ==
        doctest::Approx(1 - std::pow(1 - pcw, 8)).epsilon(1e-9));
  // 1 - (1 - 1e-6)^8000 = 0.0079681...
  CHECK(ibn::scen::packet_loss_probability(1e-6, 1000) ==
        doctest::Approx(-std::expm1(8000 * std::log1p(-1e-6))));
}

TEST_CASE("faults: absent section leaves the effective configuration as it was, given, defaults filled") {
  const auto s = ibn::scen::make_scenario(base_doc(), "s.json", "");
  CHECK_FALSE(s.effective.contains("faults"));
  CHECK_FALSE(s.faults.given);
  const auto d = ibn::scen::make_scenario(ibn::scen::default_scenario_json(), "d", "");
  CHECK_FALSE(d.effective.contains("faults"));
  auto doc = base_doc();
  doc["faults"] = {{"events", {{{"link", "leaf-0/spine-0"}}}}};
  const auto f = ibn::scen::make_scenario(doc, "s.json", "");
  CHECK(f.faults.given);
  REQUIRE(f.faults.events.size() == 1);
  CHECK(f.effective.at("faults").at("sm_sweep_delay_us") == 100.0);
  CHECK(f.effective.at("faults").at("events").at(0).at("kind") == "link_down");
}

TEST_CASE("faults: bad keys name the key") {
  auto doc = base_doc();
  doc["faults"] = {{"events", {{{"time_us", -1.0}, {"link", "leaf-0/spine-0"}}}}};
  CHECK(error_of(doc).find("faults.events[0].time_us") != std::string::npos);
  doc["faults"] = {{"events", {{{"kind", "explode"}, {"link", "leaf-0/spine-0"}}}}};
  CHECK(error_of(doc).find("faults.events[0].kind") != std::string::npos);
  doc["faults"] = {{"events", {{{"kind", "degrade"}, {"link", "leaf-0:5"}}}}};
  CHECK(error_of(doc).find("degrade needs a width or a speed") != std::string::npos);
  doc["faults"] = {{"events", {{{"kind", "link_down"}}}}};
  CHECK(error_of(doc).find("faults.events[0].link") != std::string::npos);
  // Names are looked up on the fabric (build_world): an unknown one names the key.
  const auto f = small_tree();
  ibn::scen::FaultSpec spec;
  spec.events.push_back({0, ibn::scen::FaultKind::LinkDown, "leaf-9/spine-0", "", -1, 0, ""});
  try {
    (void)ibn::scen::plan_faults(spec, f, 1, "s.json");
    FAIL("no error");
  } catch (const ibn::InputError& e) {
    const std::string m = e.what();
    CHECK(m.find("faults.events[0].link") != std::string::npos);
    CHECK(m.find("leaf-9") != std::string::npos);
  }
  spec.events[0].link = "leaf-0:77";
  CHECK_THROWS_AS((void)ibn::scen::plan_faults(spec, f, 1, "s.json"), ibn::InputError);
}

TEST_CASE("faults: random draws are per seed, and t = 0 changes the fabric before routing") {
  const auto f = small_tree();
  ibn::scen::FaultSpec spec;
  spec.random.links_down = 2;
  spec.random.degraded_fraction = 0.25; // of every cable (16): 4 cables at 2x
  const auto a = ibn::scen::plan_faults(spec, f, 7, "s");
  const auto b = ibn::scen::plan_faults(spec, f, 7, "s");
  REQUIRE(a.actions.size() == 6);
  CHECK(a.described == b.described);
  bool differs = false;
  for (std::uint64_t seed = 8; seed < 16 && !differs; ++seed)
    differs = ibn::scen::plan_faults(spec, f, seed, "s").described != a.described;
  CHECK(differs);
  for (std::size_t i = 0; i < 2; ++i) { // the drawn links are leaf-spine cables
    const auto& l = f.link(a.actions[i].link);
    CHECK(std::min(f.node(l.a.node).tier, f.node(l.b.node).tier) == 1);
  }
  spec.random.degraded_fraction = 0;
  const auto plan = ibn::scen::plan_faults(spec, f, 7, "s");
  const auto ff = ibn::scen::apply_initial_faults(f, plan, "s");
  CHECK(ff.removed_links == 2);
  CHECK(ff.fabric.num_links() == f.num_links() - 2);
  CHECK(ff.timed.empty());
  // A host's cable down from t = 0 is refused (its host would be in no job's reach).
  ibn::scen::FaultSpec host;
  host.events.push_back({0, ibn::scen::FaultKind::LinkDown, "", "", 0, 0, ""});
  CHECK_THROWS_AS((void)ibn::scen::apply_initial_faults(f, ibn::scen::plan_faults(host, f, 1, "s"), "s"),
                  ibn::InputError);
  // Degrade at t = 0: the cable has the new speed; later faults keep their time.
  ibn::scen::FaultSpec deg;
  deg.events.push_back({0, ibn::scen::FaultKind::Degrade, "leaf-0:6", "", -1, 1, ""});
  deg.events.push_back({50, ibn::scen::FaultKind::LinkDown, "leaf-1:7", "", -1, 0, ""});
  const auto dp = ibn::scen::plan_faults(deg, f, 1, "s");
  const auto df = ibn::scen::apply_initial_faults(f, dp, "s");
  const auto l = f.link_at(*f.find_node("leaf-0"), f.link(dp.actions[0].link).a.port);
  REQUIRE(l);
  CHECK(df.fabric.link(*l).speed.width == 1);
  REQUIRE(df.timed.size() == 1);
  CHECK(df.timed[0].at == ibn::Time::from_us(50));
}

TEST_CASE("whatif --faults tokens") {
  using ibn::analysis::fault_token_json;
  CHECK(fault_token_json("none").empty());
  CHECK(fault_token_json("1-link") == nlohmann::json{{"random", {{"links_down", 1}, {"link_tier", 1}}}});
  CHECK(fault_token_json("2-link@spine-core").at("random").at("link_tier") == 2);
  CHECK(fault_token_json("1-switch").at("random").at("switch_tier") == 2);
  CHECK(fault_token_json("3-switch@core").at("random").at("switches_down") == 3);
  const auto d = fault_token_json("degraded-1pct:1xHDR").at("random");
  CHECK(d.at("degraded_fraction") == doctest::Approx(0.01));
  CHECK(d.at("degraded_width") == 1);
  CHECK(d.at("degraded_speed") == "HDR");
  CHECK(fault_token_json("degraded-0.5pct").at("random").at("degraded_fraction") == doctest::Approx(0.005));
  for (const auto* bad : {"banana", "0-link", "x-link", "1-link@moon", "degraded-pct", "degraded-150pct",
                          "degraded-1pct:3xHDR", "degraded-1pct:2xFOO", "1-cable"}) {
    INFO(bad);
    try {
      (void)fault_token_json(bad);
      FAIL("no error");
    } catch (const ibn::InputError& e) {
      CHECK(std::string(e.what()).find(std::string("'") + bad + "'") != std::string::npos);
    }
  }
}

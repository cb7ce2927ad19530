#include "fuzz/targets.hpp"

#include "calibration/fit.hpp"
#include "calibration/nccl_tests_parser.hpp"
#include "calibration/osu_parser.hpp"
#include "calibration/perftest_parser.hpp"
#include "scenarios/replay.hpp"
#include "scenarios/scenario.hpp"
#include "sim/error.hpp"
#include "sim/json_text.hpp"
#include "sim/units.hpp"
#include "topology/fabric_io.hpp"
#include "topology/generators.hpp"
#include "topology/ibnetdiscover.hpp"
#include "topology/link_speed.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <sstream>

namespace ibn::fuzz {
namespace {

template <class F>
void refused_ok(F&& f) {
  try {
    f();
  } catch (const InputError&) {
    // bad input refused: exit 2, the expected outcome
  }
}

std::string str(std::string_view d) { return std::string(d); }

void run_ibnetdiscover(std::string_view d) {
  refused_ok([&] {
    std::istringstream in(str(d));
    const auto r = topo::import_ibnetdiscover(in, "fuzz.txt");
    // What `topo import -o` then writes must be readable back (fabric JSON round trip).
    std::ostringstream js;
    topo::save_fabric_json(r.fabric, js);
    std::vector<std::string> warnings;
    topo::fabric_from_json(parse_json_text(js.str(), "fuzz.json"), "fuzz.json", &warnings);
  });
}

void run_perftest(std::string_view d) {
  refused_ok([&] {
    std::istringstream in(str(d));
    calib::parse_perftest(in, "fuzz.txt");
  });
  // `calibrate fit` on the same bytes: parse, fit, write the profile.
  refused_ok([&] {
    calib::FitOptions opt;
    const auto p = calib::fit_profile({{"fuzz.txt", str(d), 0}}, opt);
    (void)p.to_json().dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  });
}

void run_nccl_tests(std::string_view d) {
  refused_ok([&] {
    std::istringstream in(str(d));
    calib::parse_nccl_tests(in, "fuzz.out");
  });
}

void run_osu(std::string_view d) {
  // What `validate osu` reads before it simulates: every table, its launcher line, the run's JSON text.
  refused_ok([&] {
    std::istringstream in(str(d));
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& r : calib::parse_osu(in, "fuzz.txt")) {
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& row : r.rows)
        rows.push_back(
            {row.size_bytes, row.latency_us.value_or(0), row.bandwidth_mbps.value_or(0), row.line});
      runs.push_back({{"benchmark", r.benchmark},
                      {"kind", calib::to_string(r.kind)},
                      {"notes", r.warnings},
                      {"buffers", r.buffers},
                      {"launcher", r.launcher ? r.launcher->text : ""},
                      {"rows", rows}});
    }
    (void)runs.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  });
}

void run_nccl_log(std::string_view d) {
  refused_ok([&] {
    std::istringstream in(str(d));
    scen::parse_nccl_log(in, "fuzz.log");
  });
}

void run_trace(std::string_view d) {
  refused_ok([&] {
    std::istringstream in(str(d));
    scen::parse_trace_json(in, "fuzz.json");
  });
}

void run_scenario(std::string_view d) {
  refused_ok([&] { scen::make_scenario(parse_json_text(str(d), "fuzz.json"), "fuzz.json", "."); });
}

void run_fabric(std::string_view d) {
  refused_ok([&] {
    std::vector<std::string> warnings;
    const auto f = topo::fabric_from_json(parse_json_text(str(d), "fuzz.json"), "fuzz.json", &warnings);
    std::ostringstream out;
    topo::save_fabric_json(f, out);
  });
}

void run_set(std::string_view d) {
  // One `--set path=value` on the built-in scenario; several when the input has several lines.
  std::vector<std::string> sets;
  std::istringstream in(str(d));
  for (std::string line; std::getline(in, line);) sets.push_back(line);
  if (sets.empty()) sets.emplace_back();
  refused_ok([&] { scen::make_scenario(scen::default_scenario_json(), "fuzz", ".", sets); });
}

void run_units(std::string_view d) {
  // The first byte picks the parser, the rest is the text (so one corpus covers every unit parser).
  if (d.empty()) return;
  const std::string t(d.substr(1));
  switch (static_cast<unsigned char>(d[0]) % 9) {
  case 0: refused_ok([&] { parse_size_bytes(t, "--size"); }); break;
  case 1: refused_ok([&] { parse_plain_rate_bps(t, "--rate"); }); break;
  case 2: refused_ok([&] { parse_nonneg_double(t, "--cable-m"); }); break;
  case 3: refused_ok([&] { parse_positive_int(t, "--hosts"); }); break;
  case 4: refused_ok([&] { topo::parse_ratios(t, "--oversubscription"); }); break;
  case 5: refused_ok([&] { topo::parse_cable_lengths(t, "--cable-m"); }); break;
  case 6: refused_ok([&] { topo::parse_link_speed(t, "--rate"); }); break;
  case 7: refused_ok([&] { topo::parse_arrangement(t, "--arrangement"); }); break;
  default: { // a generator from "key=value,key=value" parameters (what a scenario's fabric.params gives)
    std::map<std::string, std::string> kv;
    std::istringstream in(t);
    for (std::string part; std::getline(in, part, ',');) {
      const auto eq = part.find('=');
      kv[part.substr(0, eq)] = eq == std::string::npos ? "" : part.substr(eq + 1);
    }
    refused_ok([&] {
      const auto gens = topo::builtin_generators();
      const std::string name = kv.count("gen") ? kv["gen"] : "fat-tree";
      kv.erase("gen");
      kv["max-hosts"] = "4096"; // keep each case small: the bound itself is what is exercised
      gens.get(name).factory(kv);
    });
  }
  }
}

} // namespace

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {
      {"ibnetdiscover", "ibnetdiscover / ibnetdiscover -p import, then the fabric JSON round trip",
       {"tests/data/ibnetdiscover", "tests/data/fuzz-regressions/ibnetdiscover"}, {}, run_ibnetdiscover},
      {"perftest", "perftest output parser and calibrate fit",
       {"tests/data/perftest", "tests/data/fuzz-regressions/perftest"}, {}, run_perftest},
      {"nccl-tests", "nccl-tests output parser",
       {"tests/data/nccl-tests", "tests/data/fuzz-regressions/nccl-tests"}, {}, run_nccl_tests},
      {"nccl-log", "NCCL INFO log parser (replay)",
       {"tests/data/nccl-logs", "tests/data/fuzz-regressions/nccl-log"}, {}, run_nccl_log},
      {"trace", "JSON replay traces",
       {"tests/data/fuzz-seeds/trace", "tests/data/fuzz-regressions/trace"}, {}, run_trace},
      {"scenario", "scenario JSON (schema, defaults, typed view)",
       {"scenarios/examples", "tests/data/fuzz-seeds/scenario", "tests/data/fuzz-regressions/scenario"}, {},
       run_scenario},
      {"fabric", "fabric JSON reader and writer",
       {"tests/data/fuzz-seeds/fabric", "tests/data/fuzz-regressions/fabric"}, {}, run_fabric},
      {"set", "--set path=value overrides on the built-in scenario",
       {"tests/data/fuzz-seeds/set", "tests/data/fuzz-regressions/set"}, {}, run_set},
      {"units", "sizes, rates, lengths, counts, ratios, cable lengths, link speeds, generator parameters",
       {"tests/data/fuzz-seeds/units", "tests/data/fuzz-regressions/units"}, {}, run_units},
      {"osu", "OSU micro-benchmarks and IMB-MPI1 output parser (validate osu)",
       {"tests/data/osu", "tests/data/fuzz-seeds/osu", "tests/data/fuzz-regressions/osu"}, {}, run_osu},
  };
  return all;
}

const Target* find_target(std::string_view name) {
  for (const auto& t : targets())
    if (name == t.name) return &t;
  return nullptr;
}

} // namespace ibn::fuzz

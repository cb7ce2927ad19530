// Switch latency through the binary (issue 16 item 4): a fabric generated with a switch model, ib_write_lat
// between hosts on the same leaf (1 switch) and across a spine (3 switches), and `calibrate fit` of the two
// outputs with their hop counts. Every cable is 3 m of DAC, so one extra hop each way is one switch plus one
// cable:
//   t_cross - t_same = 2 x (L_switch + 3 m x DAC propagation)      (one-way latencies, perftest's RTT/2)
//   fitted per-hop latency - cable = L_switch
// perftest prints microseconds with two decimals, so a single row is known to +-5 ns; the fit uses every
// row <= 64 B.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"
#include "topology/fabric.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>

using ibn::test::read_json_file;
using ibn::test::run_cli;
using ibn::test::scratch_dir;

namespace {
/// t_typical (us) of the 2-byte row of an ib_write_lat table.
double two_byte_row(const std::string& table) {
  std::istringstream in(table);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string bytes, iters, tmin, tmax, ttyp;
    if (row >> bytes >> iters >> tmin >> tmax >> ttyp && bytes == "2") return std::stod(ttyp);
  }
  return -1;
}
} // namespace

TEST_CASE("switch models: same leaf vs across a spine, and calibrate fit recovers the model's latency") {
  const double cable_ns =
      3.0 * static_cast<double>(ibn::topo::propagation_ps_per_m(ibn::topo::Medium::Dac)) / 1000.0;
  for (const auto& [model, latency_ns] : {std::pair{"quantum", 130.0}, std::pair{"spectrum-4", 300.0}}) {
    INFO(model);
    const auto dir = scratch_dir(std::string("switch-hops-") + model);
    const std::string fabric = (dir / "fabric.json").string();
    auto r = run_cli("topo generate fat-tree --tiers 2 --radix 8 --hosts 16 --rate NDR --switch-model " +
                     std::string(model) + " --cable-m host=3,leaf=3 -o " + fabric);
    REQUIRE(r.code == 0);
    const std::string same = (dir / "same-leaf.txt").string(), cross = (dir / "cross-spine.txt").string();
    // host-0 and host-1 share leaf-0; host-15 is on leaf-3, reached through a spine.
    r = run_cli("perftest ib_write_lat -a -n 100 --fabric " + fabric +
                " --pair host-0,host-1 2>/dev/null > " + same);
    REQUIRE(r.code == 0);
    r = run_cli("perftest ib_write_lat -a -n 100 --fabric " + fabric +
                " --pair host-0,host-15 2>/dev/null > " + cross);
    REQUIRE(r.code == 0);
    const double t1 = two_byte_row(ibn::test::read_text_file(same));
    const double t3 = two_byte_row(ibn::test::read_text_file(cross));
    REQUIRE(t1 > 0);
    REQUIRE(t3 > 0);
    // Each row is rounded to 10 ns: the difference is known to +-10 ns.
    CHECK(std::abs((t3 - t1) * 1000.0 - 2 * (latency_ns + cable_ns)) <= 10.0 + 1e-6);

    const std::string profile = (dir / "profile.json").string();
    r = run_cli("calibrate fit " + same + " " + cross + " --file-hops " + same + "=1 --file-hops " + cross +
                "=3 --cable-m 3 -o " + profile);
    INFO(r.out);
    REQUIRE(r.code == 0);
    const auto p = read_json_file(profile);
    CHECK(p.at("switch").at("latency").at("value").get<double>() ==
          doctest::Approx(latency_ns).epsilon(0.05));
  }
}

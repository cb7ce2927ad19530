// Profile JSON (round trip, key validation with JSON paths), apply() to the packet engine, host latency.
#include "calibration/fit.hpp"
#include "calibration/profile.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

using namespace ibn;
using namespace ibn::calib;

namespace {

std::string fixture(const std::string& name) {
  return ibn::test::read_text_file(std::string(IBNETSIM_TEST_DATA) + "/perftest/" + name);
}

Profile cx3_profile() {
  FitOptions opt;
  opt.link_rate_gbps = 32;
  opt.link_rate_source = "test";
  return fit_profile({{"bw.txt", fixture("cx3-mt4099-qdr40g-ib-ib_write_bw-a.txt"), 0},
                      {"lat.txt", fixture("cx3-mt4099-qdr40g-ib-ib_write_lat-a.txt"), 0}},
                     opt);
}

} // namespace

TEST_CASE("FNV-1a 64 reference values") {
  // Published FNV-1a 64 test vectors: "" -> cbf29ce484222325, "a" -> af63dc4c8601ec8c.
  CHECK(fnv1a64_hex("") == "fnv1a64:cbf29ce484222325");
  CHECK(fnv1a64_hex("a") == "fnv1a64:af63dc4c8601ec8c");
}

TEST_CASE("profile JSON round trip is exact") {
  const Profile p = cx3_profile();
  const auto j = p.to_json();
  const Profile q = Profile::from_json(j, "p.json");
  CHECK(q.to_json() == j);
  CHECK(q.latency.size() == p.latency.size());
  CHECK(q.nic_tx_latency == p.nic_tx_latency);
  CHECK(q.noise.segments.size() == p.noise.segments.size());
  // Every fitted parameter carries unit, R^2 and max residual.
  for (const auto& s : j["latency"]["segments"]) {
    CHECK(s["a"]["unit"] == "ns");
    CHECK(s["a"].contains("r2"));
    CHECK(s["b"].contains("max_residual"));
  }
  CHECK(j["bandwidth"]["B"]["unit"] == "Gb/s");
  CHECK(j["inputs"][0]["hash"].get<std::string>().rfind("fnv1a64:", 0) == 0);
}

TEST_CASE("profile loading names the JSON path of a bad key or value") {
  const auto good = cx3_profile().to_json();
  auto err = [&](auto mutate) {
    auto j = good;
    mutate(j);
    return test::error_of([&] { (void)Profile::from_json(j, "p.json"); });
  };
  CHECK(err([](auto& j) { j["colour"] = 1; }).find("p.json: $.colour: unknown key") != std::string::npos);
  CHECK(err([](auto& j) { j["device"]["speed"] = 1; }).find("$.device.speed: unknown key") !=
        std::string::npos);
  CHECK(err([](auto& j) {
          j["latency"]["segments"][0]["a"]["unit"] = "us";
        }).find("$.latency.segments[0].a.unit") != std::string::npos);
  CHECK(err([](auto& j) {
          j["latency"]["segments"][0]["extra"] = 0;
        }).find("$.latency.segments[0].extra: unknown key") != std::string::npos);
  CHECK(err([](auto& j) { j["device"]["mtu_bytes"] = 1500; }).find("$.device.mtu_bytes") !=
        std::string::npos);
  CHECK(err([](auto& j) { j["engine"]["nic_tx_latency_ns"] = -1; }).find("$.engine.nic_tx_latency_ns") !=
        std::string::npos);
  CHECK(err([](auto& j) { j.erase("engine"); }).find("$.engine: missing") != std::string::npos);
  CHECK(err([](auto& j) { j["noise"]["segments"][0]["quantiles"][1]["p"] = 0.0; }).find("must increase") !=
        std::string::npos);
  CHECK(err([](auto& j) { j["schema_version"] = 9; }).find("unsupported version 9") != std::string::npos);
  CHECK(test::error_of([] { (void)Profile::load("/nonexistent/p.json"); }).find("/nonexistent/p.json") !=
        std::string::npos);
}

TEST_CASE("apply() sets the engine's device knobs") {
  Profile p;
  p.nic_tx_latency = Time::ns(410);
  p.nic_rx_latency = Time::ns(420);
  p.switch_latency = Time::ns(130);
  p.mtu_bytes = 1024;
  p.link_layer = pkt::LinkLayer::RoCEv2;
  p.header_bytes = 82;
  p.hca_rate_gbps = 55.5;
  pkt::PacketConfig cfg;
  apply(p, cfg);
  CHECK(cfg.nic_tx_latency == Time::ns(410));
  CHECK(cfg.nic_rx_latency == Time::ns(420));
  CHECK(cfg.switch_latency == Time::ns(130));
  CHECK(cfg.mtu_bytes == 1024);
  CHECK(cfg.link_layer == pkt::LinkLayer::RoCEv2);
  CHECK(cfg.header_bytes == 82);
  CHECK(cfg.hca_rate_gbps == 55.5);
  CHECK_NOTHROW(cfg.validate());
}

TEST_CASE("host latency = fitted latency - sample median - engine one-way time, never negative") {
  Profile p;
  p.link_rate_gbps = 200; // 4x HDR
  p.mtu_bytes = 4096;
  p.header_bytes = 26;
  p.cable_m = 2;
  p.hops = 0;
  p.nic_tx_latency = Time::ns(300);
  p.nic_rx_latency = Time::ns(300);
  LatencySegment s;
  s.lo_bytes = 2;
  s.hi_bytes = 4096;
  s.a = FitParam{1000, "ns", 1, 0, "ns", 5};
  s.b = FitParam{0.5, "ns/B", 1, 0, "ns", 5};
  p.latency = {s};
  NoiseSegment n;
  n.lo_bytes = 2;
  n.hi_bytes = 4096;
  n.knots = {{0, 0}, {1, 50}};
  n.sample_median_ns = 20;
  p.noise.segments = {n};
  // engine(1000 B) = 600 + 2 m x 4.76 ns/m + (1000 + 26) x 8 / 200 ns = 600 + 9.52 + 41.04 = 650.56 ns.
  CHECK(p.engine_one_way_ns(1000) == doctest::Approx(650.56));
  // host(1000) = 1000 + 0.5 x 1000 - 20 - 650.56 = 829.44 ns.
  CHECK(p.host_latency(1000).to_ns() == doctest::Approx(829.44).epsilon(1e-6));
  p.nic_tx_latency = Time::us(2);
  CHECK(p.host_latency(2) == Time::zero());
}

TEST_CASE("engine link: the measured rate, else the smallest 4x link that carries B") {
  Profile p;
  p.link_rate_gbps = 32;
  CHECK(p.engine_link_speed().to_string() == "4xQDR");
  p.link_rate_gbps = 0;
  p.link_layer = pkt::LinkLayer::RoCEv2;
  p.header_bytes = 82;
  p.mtu_bytes = 1024;
  p.bw_rate = FitParam{52.5, "Gb/s", 1, 0, "%", 1};
  // 4xFDR carries 54.55 x 1024/1106 = 50.5 < 52.5 Gb/s of payload: the next one, 4xEDR.
  CHECK(p.engine_link_speed().to_string() == "4xEDR");
}

TEST_CASE("profile: the nccl section round-trips and is validated") {
  Profile p;
  NcclCostFit f;
  f.version = "2.22.3";
  f.protocol = "ll";
  f.base = {12.5, "us", 0.9, 1.5, "us", 10};
  f.net_step = {3.25, "us", 0.9, 1.5, "us", 10};
  f.base_fixed = true;
  f.max_bytes = 65536;
  f.sources = {"a.log (10 rows <= 64 KiB)"};
  p.nccl = f;
  const auto j = p.to_json();
  const auto q = Profile::from_json(j, "p.json");
  REQUIRE(q.nccl.has_value());
  CHECK(q.nccl->version == "2.22.3");
  CHECK(q.nccl->protocol == "ll");
  CHECK(q.nccl->base.value == 12.5);
  CHECK(q.nccl->net_step.value == 3.25);
  CHECK(q.nccl->base_fixed);
  CHECK(q.nccl->max_bytes == 65536);
  CHECK(q.nccl->sources == f.sources);
  CHECK(q.to_json() == j);
  auto bad = j;
  bad["nccl"]["protocol"] = "fast";
  auto e = test::error_of([&] { Profile::from_json(bad, "p.json"); });
  CHECK(e.find("$.nccl.protocol") != std::string::npos);
  bad = j;
  bad["nccl"]["net_step"]["unit"] = "ns";
  e = test::error_of([&] { Profile::from_json(bad, "p.json"); });
  CHECK(e.find("$.nccl.net_step.unit") != std::string::npos);
  bad = j;
  bad["nccl"]["extra"] = 1;
  e = test::error_of([&] { Profile::from_json(bad, "p.json"); });
  CHECK(e.find("$.nccl.extra") != std::string::npos);
}

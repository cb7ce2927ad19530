// Defects a user walking `ibnetsim experiment` found (2026-12-07), each with the case that showed it.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

/// Writes `def` as DIR/NAME.json and runs `experiment` on it into DIR/out (or `out` when given).
ibn::test::CliResult experiment(const fs::path& dir, const std::string& def, const std::string& out = "") {
  const auto file = dir / "def.json";
  std::ofstream(file) << def;
  return ibn::test::run_cli("experiment " + file.string() + " -o " +
                            (out.empty() ? (dir / "out").string() : out));
}

std::vector<std::string> lines_of(const fs::path& p) {
  std::istringstream in(ibn::test::read_text_file(p.string()));
  std::vector<std::string> v;
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

/// Two DCQCN senders on 40 Gb/s RoCEv2 + PFC, the second 100 us later: two_flows, scaled down.
const std::string kTwo = R"("senders": 2, "link": "4xFDR10", "start_us": [0, 100], "bytes_per_sender": "1M",
  "sample_us": 2, "bin_us": 20,
  "packet": {"link_layer": "rocev2", "flow_control": "pfc", "cc": "dcqcn", "dcqcn": {"profile": "paper"}})";

} // namespace

TEST_CASE("experiment walk 1: the run ends with the last acknowledged message, not an idle RC timer") {
  const auto dir = ibn::test::scratch_dir("exp-walk-end");
  const auto r = experiment(dir, "{\"name\": \"two\", " + kTwo + "}");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto sum = ibn::test::read_json_file((dir / "out" / "summary.json").string());
  const double end = sum["runs"][0]["end_us"].get<double>();
  // 2 MiB through one 39.75 Gb/s port take ~430 us; the idle ACK timer made it 4.3e6 us.
  CHECK(end > 400);
  CHECK(end < 2000);
  const auto q = lines_of(dir / "out" / "queue.csv");
  CHECK(q.size() < 1100); // one sample every 2 us until the end, not 2 M rows
  // Times have fixed decimals (6 significant digits repeated values once above 1e5 us).
  const std::regex t(R"(^[^,]+,\d+\.\d{6},.*$)");
  for (std::size_t i = 1; i < q.size(); ++i) REQUIRE(std::regex_match(q[i], t));
  // The last queue sample is at most one period before the end.
  const auto last = q.back();
  const double t_last = std::stod(last.substr(last.find(',') + 1));
  CHECK(t_last <= end);
  CHECK(t_last > end - 2.5);
}

TEST_CASE("experiment walk 2: a definition beyond the row bounds is refused up front with exit 2") {
  const auto dir = ibn::test::scratch_dir("exp-walk-bounds");
  const auto t0 = std::chrono::steady_clock::now();
  const auto late = experiment(dir, R"({"senders": 2, "link": "4xFDR10", "bytes_per_sender": "64K",
                                        "start_us": [100000000]})");
  INFO(late.out);
  CHECK(late.code == 2);
  CHECK(late.out.find("key $.start_us") != std::string::npos);
  CHECK(late.out.find("rows per file") != std::string::npos);
  const auto fine = experiment(dir, R"({"senders": 2, "link": "4xFDR10", "bytes_per_sender": "1G",
                                        "message_bytes": "1M", "sample_us": 0.01})");
  INFO(fine.out);
  CHECK(fine.code == 2);
  CHECK(fine.out.find("key $.sample_us") != std::string::npos);
  const auto bins = experiment(dir, R"({"senders": 2, "link": "4xFDR10", "bytes_per_sender": "1G",
                                        "message_bytes": "1M", "sample_us": 1000, "bin_us": 0.01})");
  CHECK(bins.code == 2);
  CHECK(bins.out.find("key $.bin_us") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3));
  CHECK(!fs::exists(dir / "out"));
  // The estimate is a lower bound (here the HCAs send at 0.1 Gb/s on a 40 Gb/s link): a run that passes the
  // bounds while it runs stops there with exit 2.
  const auto slow = experiment(dir, R"({"senders": 2, "link": "4xFDR10", "bytes_per_sender": "64K",
    "sample_us": 1000000, "bin_us": 0.001, "packet": {"hca_rate_gbps": 0.1}})");
  INFO(slow.out);
  CHECK(slow.code == 2);
  CHECK(slow.out.find("still running at 2500 us with 2 of 2 messages unacknowledged") != std::string::npos);
  // The user's case (1 ns samples of 2 x 64 KiB) fits now that the run ends with its traffic.
  const auto small = experiment(dir, R"({"name": "f", "senders": 2, "link": "4xFDR10",
                                         "bytes_per_sender": "64K", "sample_us": 0.001})");
  INFO(small.out);
  CHECK(small.code == 0);
}

TEST_CASE("experiment walk 3: -o naming a file or standard output is exit 2, files are replaced whole") {
  const auto dir = ibn::test::scratch_dir("exp-walk-out");
  const auto file = dir / "a-file";
  std::ofstream(file) << "keep\n";
  const auto r = experiment(dir, "{" + kTwo + "}", file.string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("is a file, not a folder") != std::string::npos);
  CHECK(ibn::test::read_text_file(file.string()) == "keep\n");
  const auto s = experiment(dir, "{" + kTwo + "}", "/dev/stdout");
  INFO(s.out);
  CHECK(s.code == 2);
  CHECK(s.out.find("standard output") != std::string::npos);
  // A CSV that is a symbolic link is replaced through it (the atomic writer), so its target gets the data.
  fs::create_directories(dir / "out");
  std::ofstream(dir / "target.csv") << "old\n";
  fs::create_symlink(dir / "target.csv", dir / "out" / "queue.csv");
  const auto ok = experiment(dir, "{" + kTwo + "}");
  REQUIRE(ok.code == 0);
  CHECK(fs::is_symlink(dir / "out" / "queue.csv"));
  CHECK(ibn::test::read_text_file((dir / "target.csv").string()).rfind("variant,t_us,queue_bytes\n", 0) == 0);
  for (const auto& e : fs::directory_iterator(dir / "out")) // no temporary file left
    CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
}

TEST_CASE("experiment walk 4: no throughput bin exceeds the line rate on two_flows") {
  const auto dir = ibn::test::scratch_dir("exp-walk-tput");
  const auto r = ibn::test::run_cli("experiment " + std::string(IBNETSIM_SOURCE_DIR) +
                                    "/scenarios/examples/cc/two_flows.json -o " + (dir / "out").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  const double line = 40; // 4x FDR10: 4 lanes of 10 Gb/s (data rate; the payload tops out near 39.75)
  std::map<std::string, double> per_bin;
  double max_sender = 0;
  const auto rows = lines_of(dir / "out" / "throughput.csv");
  REQUIRE(rows.size() > 100);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    std::istringstream row(rows[i]);
    std::string label, sender, t, g;
    std::getline(row, label, ',');
    std::getline(row, sender, ',');
    std::getline(row, t, ',');
    std::getline(row, g, ',');
    max_sender = std::max(max_sender, std::stod(g));
    per_bin[t] += std::stod(g);
  }
  double max_total = 0;
  for (const auto& [t, g] : per_bin) max_total = std::max(max_total, g);
  CHECK(max_sender <= line);
  CHECK(max_total <= line);
  CHECK(max_total > 0.8 * line); // the port is busy: the spreading did not flatten the traffic away
}

TEST_CASE("experiment walk 5: Jain and goodput are null, not 0, without an interval where all senders run") {
  const auto dir = ibn::test::scratch_dir("exp-walk-jain");
  const auto r =
      experiment(dir, R"({"name": "apart", "senders": 2, "link": "4xFDR10", "bytes_per_sender": "1M",
                                     "start_us": [0, 5000]})");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto sum = ibn::test::read_json_file((dir / "out" / "summary.json").string());
  CHECK(sum["runs"][0]["jain_second_half"].is_null());
  CHECK(sum["runs"][0]["bottleneck_gbps"].is_null());
  CHECK(r.out.find("n/a (no interval with every sender active)") != std::string::npos);
  // With overlap they are numbers.
  const auto both = experiment(dir, "{" + kTwo + "}");
  REQUIRE(both.code == 0);
  const auto s2 = ibn::test::read_json_file((dir / "out" / "summary.json").string());
  CHECK(s2["runs"][0]["jain_second_half"].get<double>() > 0.5);
  CHECK(s2["runs"][0]["bottleneck_gbps"].get<double>() > 20);
  CHECK(s2["runs"][0]["jain_note"].is_null());
  // Both senders active together, but one message each: the first delivery ends the window, nothing is
  // delivered inside its second half. The note says so instead of "no interval with every sender active".
  const auto one = experiment(dir, R"({"name": "one-message", "senders": 2, "link": "4xFDR10",
                                      "bytes_per_sender": "1M", "message_bytes": "1M"})");
  INFO(one.out);
  REQUIRE(one.code == 0);
  const auto s3 = ibn::test::read_json_file((dir / "out" / "summary.json").string());
  CHECK(s3["runs"][0]["jain_second_half"].is_null());
  CHECK(s3["runs"][0]["jain_note"].get<std::string>().find("no message delivered in the second half") == 0);
  CHECK(one.out.find("n/a (no message delivered in the second half") != std::string::npos);
}

TEST_CASE("experiment walk 6: SVG text is escaped, empty charts say no data, CSV fields are quoted") {
  const auto dir = ibn::test::scratch_dir("exp-walk-svg");
  const auto r =
      experiment(dir, R"({"name": "x<b>&y", "senders": 2, "link": "4xFDR10", "bytes_per_sender": "256K",
    "variants": [{"label": "a,\"b\""}, {"label": "c<d>"}]})");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto rates = ibn::test::read_text_file((dir / "out" / "rates.svg").string());
  const auto queue = ibn::test::read_text_file((dir / "out" / "queue.svg").string());
  CHECK(queue.find("x&lt;b&gt;&amp;y: bottleneck queue") != std::string::npos);
  CHECK(queue.find("x<b>") == std::string::npos);
  CHECK(queue.find("c&lt;d&gt;") != std::string::npos);
  // cc none: no rate trace, an empty chart that says so, no nan and no 1e+300.
  CHECK(rates.find("no data") != std::string::npos);
  CHECK(rates.find("nan") == std::string::npos);
  CHECK(rates.find("e+300") == std::string::npos);
  const auto q = lines_of(dir / "out" / "queue.csv");
  REQUIRE(q.size() > 2);
  CHECK(q[1].rfind("\"a,\"\"b\"\"\",", 0) == 0);
  // No name: no title starting with ':'.
  const auto n = experiment(dir, R"({"senders": 2, "link": "4xFDR10", "bytes_per_sender": "256K"})");
  REQUIRE(n.code == 0);
  const auto t = ibn::test::read_text_file((dir / "out" / "queue.svg").string());
  CHECK(t.find("font-size=\"13\">:") == std::string::npos);
  CHECK(t.find("font-size=\"13\">bottleneck queue") != std::string::npos);
}

TEST_CASE("experiment walk 7: errors name the key the user wrote") {
  const auto dir = ibn::test::scratch_dir("exp-walk-keys");
  const auto top = experiment(dir, R"({"senders": 2, "packet": {"cc": "bogus"},
                                       "variants": [{"label": "a"}, {"label": "b", "packet": {"mtu": 2048}}]})");
  INFO(top.out);
  CHECK(top.code == 2);
  CHECK(top.out.find("key $.packet.cc") != std::string::npos);
  CHECK(top.out.find("variants") == std::string::npos);
  const auto plain = experiment(dir, R"({"senders": 2, "packet": {"cc": "bogus"}})");
  CHECK(plain.code == 2);
  CHECK(plain.out.find("key $.packet.cc") != std::string::npos);
  CHECK(plain.out.find("variants[0]") == std::string::npos);
  const auto var = experiment(dir, R"({"senders": 2, "packet": {"cc": "dcqcn"},
                                       "variants": [{"label": "a"}, {"label": "b", "packet": {"cc": "bogus"}}]})");
  CHECK(var.code == 2);
  CHECK(var.out.find("key $.variants[1].packet.cc") != std::string::npos);
  const auto frac = experiment(dir, R"({"senders": 2, "bytes_per_sender": 1.5})");
  CHECK(frac.code == 2);
  CHECK(frac.out.find("key $.bytes_per_sender") != std::string::npos);
  CHECK(frac.out.find("message_bytes") == std::string::npos);
  const auto zero = experiment(dir, R"({"senders": 2, "message_bytes": "0"})");
  CHECK(zero.code == 2);
  CHECK(zero.out.find("key $.message_bytes: must be at least 1 byte") != std::string::npos);
  const auto small = experiment(dir, R"({"senders": 2, "bytes_per_sender": 1000})");
  CHECK(small.code == 2);
  CHECK(small.out.find("key $.bytes_per_sender") != std::string::npos);
}

TEST_CASE("experiment walk 8: non-integer senders, empty start_us, duplicate labels, impossible min rate") {
  const auto dir = ibn::test::scratch_dir("exp-walk-values");
  const auto s = experiment(dir, R"({"senders": 2.5})");
  CHECK(s.code == 2);
  CHECK(s.out.find("key $.senders: expected a whole number") != std::string::npos);
  const auto st = experiment(dir, R"({"senders": 2, "start_us": []})");
  CHECK(st.code == 2);
  CHECK(st.out.find("key $.start_us") != std::string::npos);
  const auto dup = experiment(dir, R"({"senders": 2, "variants": [{"label": "a"}, {"label": "a"}]})");
  CHECK(dup.code == 2);
  CHECK(dup.out.find("key $.variants[1].label") != std::string::npos);
  const auto rate = experiment(dir, R"({"senders": 2, "link": "4xFDR10",
    "packet": {"link_layer": "rocev2", "flow_control": "pfc", "cc": "dcqcn", "dcqcn": {"min_rate_mbps": 50000}}})");
  INFO(rate.out);
  CHECK(rate.code == 2);
  CHECK(rate.out.find("key $.packet.dcqcn.min_rate_mbps") != std::string::npos);
  CHECK(!fs::exists(dir / "out"));
  // DCQCN parameters with cc none: run, with a warning on stderr and in summary.json.
  const auto w = experiment(dir, R"({"senders": 2, "link": "4xFDR10", "bytes_per_sender": "128K",
    "packet": {"dcqcn": {"g": 0.01}}})");
  INFO(w.out);
  REQUIRE(w.code == 0);
  CHECK(w.out.find("warning: ") != std::string::npos);
  CHECK(w.out.find("key $.packet.dcqcn: ignored") != std::string::npos);
  const auto sum = ibn::test::read_json_file((dir / "out" / "summary.json").string());
  REQUIRE(sum.contains("warnings"));
  CHECK(sum["warnings"][0].get<std::string>().find("$.packet.dcqcn") != std::string::npos);
}

// Defects a walk through calibrate and topo as a new user found, each with the case that showed it.
#include "tests/apps/run_cli.hpp"
#include "tests/test_util.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::string kData = IBNETSIM_TEST_DATA;
const std::string kAllGather =
    kData + "/nccl-tests/h100-ndr200-ib-2node-8gpu-all_gather-snellius-odissei.log";
const std::string kWriteBw = kData + "/perftest/cx3-mt4099-qdr40g-ib-ib_write_bw-a.txt";
const std::string kWriteLat = kData + "/perftest/cx3-mt4099-qdr40g-ib-ib_write_lat-a.txt";

std::vector<std::string> lines_of(const std::string& path) {
  std::istringstream in(ibn::test::read_text_file(path));
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

void write_lines(const std::filesystem::path& p, const std::vector<std::string>& lines,
                 bool last_newline = true) {
  std::ofstream f(p, std::ios::binary);
  for (std::size_t i = 0; i < lines.size(); ++i)
    f << lines[i] << (i + 1 < lines.size() || last_newline ? "\n" : "");
}

/// 1-based number of the first line starting (after blanks) with `prefix`.
std::size_t line_starting(const std::vector<std::string>& lines, const std::string& prefix) {
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find_first_not_of(' ') != std::string::npos &&
        lines[i].compare(lines[i].find_first_not_of(' '), prefix.size(), prefix) == 0)
      return i + 1;
  return 0;
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

} // namespace

TEST_CASE("calibrate fit: an nccl-tests log cut mid-table or with a garbled row gets the nccl-tests error") {
  // Before: either file fell through to the perftest reader ("no perftest result table found") and the
  // nccl-tests reader's notes (where the table was cut) were lost.
  const auto dir = ibn::test::scratch_dir("calib-fix-nccl-cut");
  const auto all = lines_of(kAllGather);
  const std::size_t header = line_starting(all, "#       size");
  REQUIRE(header > 0);
  // Cut mid-row right after the table header: no row parses.
  std::vector<std::string> cut(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(header + 1));
  cut.push_back("         128             4     float    none      -1    16.59");
  const auto cut_log = dir / "cut.log";
  write_lines(cut_log, cut, false);
  auto r = ibn::test::run_cli("calibrate fit " + cut_log.string() + " -o " + (dir / "p.json").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(!has(r.out, "perftest"));
  CHECK(has(r.out, "no nccl-tests results table found"));
  // The reader's note names the file and the line of the cut row.
  CHECK(has(r.out, cut_log.string() + ":" + std::to_string(header + 2) + ": table truncated"));
  CHECK(has(r.out, "read as an nccl-tests log"));
  CHECK(!std::filesystem::exists(dir / "p.json"));

  // A garbled row inside the table: the reader's error at that line.
  std::vector<std::string> garbled = all;
  const std::size_t row = line_starting(all, "128 ");
  REQUIRE(row > header);
  garbled[row - 1].replace(garbled[row - 1].find("16.59"), 5, "16.5#");
  const auto bad_log = dir / "garbled.log";
  write_lines(bad_log, garbled);
  r = ibn::test::run_cli("calibrate fit " + bad_log.string() + " -o " + (dir / "p.json").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(!has(r.out, "perftest"));
  CHECK(has(r.out, bad_log.string() + ":" + std::to_string(row) + ":"));
  CHECK(has(r.out, "16.5#"));

  // A perftest file is still read as perftest.
  r = ibn::test::run_cli("calibrate fit " + kWriteBw + " --link-rate 4xQDR -o " + (dir / "ok.json").string());
  INFO(r.out);
  CHECK(r.code == 0);
}

TEST_CASE("perftest reader: a row with a 0-byte size or a negative value is an error naming file and line") {
  // Before: the row was read and the fit dropped it silently (sizes of 0 and bandwidths <= 0 are skipped).
  const auto dir = ibn::test::scratch_dir("calib-fix-perftest-rows");
  const auto bw = lines_of(kWriteBw);
  const std::size_t first = line_starting(bw, "2          20000");
  REQUIRE(first > 0);
  auto zero = bw;
  zero[first - 1].replace(zero[first - 1].find('2'), 1, "0");
  write_lines(dir / "zero.txt", zero);
  auto r =
      ibn::test::run_cli("calibrate fit " + (dir / "zero.txt").string() + " -o " + (dir / "p.json").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, (dir / "zero.txt").string() + ":" + std::to_string(first) + ": column '#bytes' is 0"));

  auto neg = bw;
  neg[first - 1].replace(neg[first - 1].find("9.78"), 4, "-9.78");
  write_lines(dir / "neg.txt", neg);
  r = ibn::test::run_cli("calibrate fit " + (dir / "neg.txt").string() + " -o " + (dir / "p.json").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, (dir / "neg.txt").string() + ":" + std::to_string(first) + ": column 'BW average"));
  CHECK(has(r.out, "is negative: '-9.78'"));

  const auto lat = lines_of(kWriteLat);
  const std::size_t lrow = line_starting(lat, "2 ");
  REQUIRE(lrow > 0);
  auto neg_lat = lat;
  neg_lat[lrow - 1].replace(neg_lat[lrow - 1].find("0.98"), 4, "-0.98"); // t_typical
  write_lines(dir / "neglat.txt", neg_lat);
  r = ibn::test::run_cli("calibrate fit " + (dir / "neglat.txt").string() + " -o " +
                         (dir / "p.json").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, (dir / "neglat.txt").string() + ":" + std::to_string(lrow) + ": column 't_typical"));
  CHECK(has(r.out, "is negative: '-0.98'"));
  CHECK(!std::filesystem::exists(dir / "p.json"));
}

TEST_CASE("calibrate fit, check --json and nvlink: each result carries a manifest") {
  const auto dir = ibn::test::scratch_dir("calib-fix-manifest");
  const auto version = ibn::test::run_cli("--version");
  REQUIRE(version.code == 0);
  std::string v = version.out;
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
  auto check_manifest = [&](const nlohmann::json& m, const std::string& command,
                            const std::vector<std::string>& inputs) {
    CHECK(m.at("tool") == "ibnetsim");
    CHECK(m.at("command") == command);
    CHECK(v.find(m.at("version").get<std::string>()) != std::string::npos);
    REQUIRE(m.at("inputs").size() == inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      CHECK(m.at("inputs")[i].at("file") == inputs[i]);
      const auto hash = m.at("inputs")[i].at("hash").get<std::string>();
      CHECK(hash.rfind("fnv1a64:", 0) == 0);
      CHECK(hash.size() == 8 + 16);
      CHECK(m.at("inputs")[i].at("bytes") == std::filesystem::file_size(inputs[i]));
    }
    CHECK(m.at("options").is_object());
  };

  const auto profile = (dir / "p.json").string();
  auto r = ibn::test::run_cli("calibrate fit " + kWriteBw + " " + kWriteLat +
                              " --link-rate 4xQDR --hops 1 -o " + profile);
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto p = ibn::test::read_json_file(profile);
  CHECK(p.at("schema_version") == 2);
  check_manifest(p.at("manifest"), "calibrate fit", {kWriteBw, kWriteLat});
  CHECK(p.at("manifest").at("options").at("link_rate") == "4xQDR");
  CHECK(p.at("manifest").at("options").at("hops") == 1);
  CHECK(p.at("manifest").at("options").at("cable_m") == "3");
  // The same file hash as the profile's inputs list.
  CHECK(p.at("manifest").at("inputs")[0].at("hash") == p.at("inputs")[0].at("hash"));

  // The profile with its manifest loads (check reads it), and so does a schema 1 profile without one.
  r = ibn::test::run_cli("calibrate check " + profile + " " + kWriteBw +
                         " --json --iters 20 --max-bytes-per-size 64K 2>/dev/null");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto c = nlohmann::json::parse(r.out);
  check_manifest(c.at("manifest"), "calibrate check", {profile, kWriteBw});
  CHECK(c.at("manifest").at("options").at("iters") == 20);
  CHECK(c.at("manifest").at("options").at("max_bytes_per_size") == 65536);
  CHECK(c.contains("rows"));
  auto old = p;
  old.erase("manifest");
  old["schema_version"] = 1;
  const auto old_path = (dir / "old.json").string();
  std::ofstream(old_path) << old.dump(2);
  r = ibn::test::run_cli("calibrate check " + old_path + " " + kWriteBw +
                         " --iters 5 --max-bytes-per-size 4K");
  INFO(r.out);
  CHECK(r.code == 0);
  // An unknown key inside the manifest is refused like any other.
  auto odd = p;
  odd["manifest"]["colour"] = "red";
  const auto odd_path = (dir / "odd.json").string();
  std::ofstream(odd_path) << odd.dump(2);
  r = ibn::test::run_cli("calibrate check " + odd_path + " " + kWriteBw + " --iters 5");
  CHECK(r.code == 2);
  CHECK(has(r.out, "$.manifest.colour"));

  const auto single = kData + "/nccl-tests/h100-1node-8gpu-nvlink-xxrjun-cluster01-single.log";
  const auto nv = (dir / "nv.json").string();
  r = ibn::test::run_cli("calibrate nvlink " + single + " --test all_gather_perf --max-bytes 64M -o " + nv);
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto n = ibn::test::read_json_file(nv);
  check_manifest(n.at("manifest"), "calibrate nvlink", {single});
  CHECK(n.at("manifest").at("options").at("tests") == nlohmann::json::array({"all_gather_perf"}));
  CHECK(n.at("manifest").at("options").at("max_bytes") == 64ull << 20);
  CHECK(n.contains("nvlink"));
}

TEST_CASE("calibrate fit: a single-node nccl-tests log beside multi-node ones is refused, naming it") {
  // Before: its rows entered the cost fit with no network step; beside the 2-node log they made two step
  // counts, so the base was fitted from the single-node rows alone (what the intra-node model misses).
  const auto dir = ibn::test::scratch_dir("calib-fix-single-node");
  const auto single = kData + "/nccl-tests/together-h100-1node-8gpu-nvlink-all_reduce_ring.out";
  const auto r =
      ibn::test::run_cli("calibrate fit " + kAllGather + " " + single + " -o " + (dir / "p.json").string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, single + ":"));
  CHECK(has(r.out, "ran on a single node"));
  CHECK(has(r.out, "calibrate nvlink " + single));
  CHECK(!std::filesystem::exists(dir / "p.json"));
}

TEST_CASE("topo export ibnetdiscover then import keeps cable lengths, media and switch models") {
  // Before: every cable came back as 3 m DAC or 30 m fibre, and switch models were lost (or re-inferred).
  const auto dir = ibn::test::scratch_dir("calib-fix-ibnd-roundtrip");
  const auto fab = (dir / "f.json").string(), txt = (dir / "f.txt").string(),
             back = (dir / "b.json").string();
  auto r = ibn::test::run_cli(
      "topo generate fat-tree --tiers 2 --radix 8 --hosts 16 --rate NDR "
      "--cable-m host=2.5,leaf=42.25 --switch-model leaf=quantum-2,spine=quantum-x800 -o " +
      fab);
  INFO(r.out);
  REQUIRE(r.code == 0);
  r = ibn::test::run_cli("topo export " + fab + " --format ibnetdiscover -o " + txt);
  REQUIRE(r.code == 0);
  r = ibn::test::run_cli("topo import ibnetdiscover " + txt + " -o " + back);
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto a = ibn::test::read_json_file(fab), b = ibn::test::read_json_file(back);
  // Links and nodes by name (the import orders them its own way).
  auto cables = [](const nlohmann::json& f) {
    std::map<std::string, std::string> out;
    for (const auto& l : f.at("links")) {
      std::string x = f.at("nodes")[l.at("a")[0].get<std::size_t>()].at("name").get<std::string>() + ":" +
                      std::to_string(l.at("a")[1].get<int>());
      std::string y = f.at("nodes")[l.at("b")[0].get<std::size_t>()].at("name").get<std::string>() + ":" +
                      std::to_string(l.at("b")[1].get<int>());
      if (y < x) std::swap(x, y);
      out[x + "-" + y] = l.at("length_m").dump() + " " + l.at("medium").get<std::string>();
    }
    return out;
  };
  auto models = [](const nlohmann::json& f) {
    std::map<std::string, std::string> out;
    for (const auto& n : f.at("nodes")) out[n.at("name")] = n.value("switch_model", std::string());
    return out;
  };
  const auto ca = cables(a), cb = cables(b);
  CHECK(ca.size() == 32);
  CHECK(ca == cb);
  std::size_t dac = 0, fibre = 0;
  for (const auto& [k, v] : cb) {
    (void)k;
    dac += v == "2.5 dac";
    fibre += v == "42.25 fiber";
  }
  CHECK(dac == 16);
  CHECK(fibre == 16);
  const auto ma = models(a);
  CHECK(ma == models(b));
  std::size_t with_model = 0;
  for (const auto& [k, v] : ma) with_model += !v.empty();
  CHECK(with_model == 6);
  // An unknown model in an annotation is refused with its line.
  std::string text = ibn::test::read_text_file(txt);
  const auto at = text.find("switch_model=\"quantum-x800\"");
  REQUIRE(at != std::string::npos);
  text.replace(at, 27, "switch_model=\"banana\"");
  std::ofstream(dir / "bad.txt") << text;
  r = ibn::test::run_cli("topo import ibnetdiscover " + (dir / "bad.txt").string() + " -o " +
                         (dir / "x.json").string());
  CHECK(r.code == 2);
  CHECK(has(r.out, "unknown switch model 'banana'"));
}

TEST_CASE("topo bom: free ports are the switch model's ports less the cabled ones") {
  // A radix-40 NDR fabric is priced as 64-port QM9700s (no 40-port NDR switch in the catalog): before, its
  // free ports were counted from the radix (40 - used) although 64 ports are bought.
  const auto dir = ibn::test::scratch_dir("calib-fix-bom-ports");
  const auto fab = (dir / "f.json").string();
  auto r = ibn::test::run_cli("topo generate fat-tree --tiers 2 --radix 40 --hosts 40 --rate NDR -o " + fab);
  REQUIRE(r.code == 0);
  r = ibn::test::run_cli("topo bom " + fab + " --json 2>/dev/null");
  INFO(r.out);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(has(j.at("ports_rule").get<std::string>(), "ports free = model ports - cabled ports"));
  for (const auto& t : j.at("by_tier")) {
    REQUIRE(t.at("switches_by_model").contains("qm9700"));
    const std::int64_t sw = t.at("switches");
    CHECK(t.at("ports") == 64 * sw);
    CHECK(t.at("ports_free") == 64 * sw - t.at("ports_used").get<std::int64_t>());
  }
  r = ibn::test::run_cli("topo bom " + fab);
  CHECK(has(r.out, "ports free = model ports - cabled ports"));
  // A model with fewer ports than a switch has cables is refused, naming the flag.
  const auto big = (dir / "big.json").string();
  REQUIRE(ibn::test::run_cli("topo generate fat-tree --tiers 2 --radix 64 --hosts 64 --rate NDR -o " + big)
              .code == 0);
  r = ibn::test::run_cli("topo bom " + big + " --switch qm8700");
  CHECK(r.code == 2);
  CHECK(has(r.out, "--switch qm8700: 40 ports"));
}

TEST_CASE("topo generate: --cable-m and --switch-model naming a tier twice are refused") {
  const auto dir = ibn::test::scratch_dir("calib-fix-repeated-tier");
  const std::string base =
      "topo generate fat-tree --tiers 2 --radix 8 --hosts 16 -o " + (dir / "f.json").string();
  auto r = ibn::test::run_cli(base + " --cable-m host=3,leaf=30,host=5");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, "--cable-m: tier 'host' is given twice ('host=3' and 'host=5')"));
  r = ibn::test::run_cli(base + " --switch-model leaf=quantum-2,spine=quantum-2,leaf=quantum");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, "--switch-model: tier 'leaf' is given twice ('leaf=quantum-2' and 'leaf=quantum')"));
  // The flag itself given twice.
  r = ibn::test::run_cli(base + " --cable-m host=3 --cable-m leaf=30");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, "--cable-m"));
  r = ibn::test::run_cli(base + " --switch-model quantum-2 --switch-model quantum");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(has(r.out, "--switch-model"));
  CHECK(!std::filesystem::exists(dir / "f.json"));
  r = ibn::test::run_cli(base + " --cable-m host=3,leaf=30 --switch-model leaf=quantum-2,spine=quantum-2");
  CHECK(r.code == 0);
}

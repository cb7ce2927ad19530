#pragma once
// `ibnetsim calibrate check`: re-runs every measured perftest test in the packet engine with a profile
// and compares measured with simulated values per size (docs/calibration.md).
//
// For each test section of each file: the same tool, sizes, QPs, TX depth, direction and MTU (from its
// header) run on two HCAs joined by the profile's link (calib::Profile::engine_link_speed), over
// (hops + 1) x cable_m of cable and one relay switch with hops x the profile's switch latency; the
// PacketConfig gets calib::apply(profile) and the perftest driver adds the profile's host latency, noise
// and post spacing (scenarios/perftest.hpp). Iterations are the file's, capped by CheckOptions.
//
// Rows: bw tests compare BW average (Gb/s); latency tests compare t_typical (metric "t_typical_us", the
// one the targets use) and also p99 and p99.9 ("p99_us", "p999_us": the noise model's tails).
// A size measured several times in one section (--run_infinitely, duplicated rows) is one row with the
// mean. error_pct = (simulated - measured) / measured x 100.
// Targets: median |error| <= 3 % over bw rows at >= 64 KiB; <= 5 % over t_typical rows at <= 4 KiB.
#include "calibration/profile.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ibn::scen {

struct CheckSource {
  std::string file;    ///< name for the report
  std::string content; ///< perftest output
};

struct CheckOptions {
  std::uint64_t max_iterations = 1000;          ///< per QP and size (the files ran up to 100000)
  std::uint64_t max_bytes_per_size = 16u << 20; ///< payload per size and direction (scenarios/perftest.hpp)
  std::uint64_t seed = 1;                       ///< Simulation seed (noise draws)
};

struct CheckRow {
  std::string file;
  std::string test;   ///< "ib_write_bw"
  std::string role;   ///< "client", "server", "unknown"
  std::string metric; ///< "bw_avg_gbps", "t_typical_us", "p99_us", "p999_us"
  std::uint64_t size_bytes = 0;
  double measured = 0, simulated = 0, error_pct = 0;
  std::uint64_t iterations = 0; ///< simulated iterations per QP
};

struct ErrorStats {
  std::size_t rows = 0;
  double median_abs_error_pct = 0, max_abs_error_pct = 0;
};

struct CheckTarget {
  std::string name; ///< "bw_ge_64KiB", "lat_le_4KiB"
  double target_pct = 0;
  ErrorStats stats;
  bool met() const { return stats.rows > 0 && stats.median_abs_error_pct <= target_pct; }
};

struct CheckReport {
  std::vector<CheckRow> rows;
  ErrorStats summary; ///< over the bw_avg_gbps and t_typical_us rows, all sizes
  std::vector<CheckTarget> targets;
  std::vector<std::string> warnings;
  std::string path; ///< the simulated path, one line
};

/// Runs the check. Throws InputError for unreadable input or a test this check cannot re-run.
CheckReport calibrate_check(const calib::Profile& profile, const std::vector<CheckSource>& sources,
                            const CheckOptions& opt);

/// Median and max of |error_pct| over `rows` selected by `pick`.
ErrorStats error_stats(const std::vector<CheckRow>& rows, bool (*pick)(const CheckRow&));
bool is_bw_target_row(const CheckRow& r);  ///< bw_avg_gbps at >= 64 KiB
bool is_lat_target_row(const CheckRow& r); ///< t_typical_us at <= 4 KiB

nlohmann::json to_json(const CheckReport& r);
std::string to_text(const CheckReport& r);

} // namespace ibn::scen

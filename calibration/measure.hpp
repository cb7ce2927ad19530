#pragma once
// `ibnetsim calibrate measure`: runs real perftest (Debian package `perftest`) between a server host and
// a client host, locally or over ssh, and saves the raw outputs and a manifest.json
// (docs/calibration.md step 1).
//
// Safety: every process is started with fork + execvp and an argv array; no local shell is involved,
// so host and device strings are never interpreted. ssh runs its remote command through the remote
// user's shell, so each remote argument is single-quoted (' -> '\'') and the whole command is passed
// as one argument after "--". Host names must not start with '-' (ssh would read an option) and must
// not contain whitespace or control characters; device names are checked the same way and must match
// [A-Za-z0-9_.:-]. Sizes, QP counts and ports are integers we format ourselves.
//
// Preflight (local mode): the sysfs root (default /sys/class/infiniband, overridable for tests) must
// list the device, and every requested tool must be on PATH; otherwise InputError (exit 2) with what was
// found. ssh mode asks each host the same two questions over ssh before running anything.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ibn::calib {

struct MeasureOptions {
  std::string server;            ///< host running the perftest server ("localhost" allowed locally)
  std::string client;            ///< host running the client; it connects to `server_address`
  std::string server_address;    ///< address the client connects to (default: `server`)
  std::string device = "mlx5_0"; ///< RDMA device (perftest -d)
  std::vector<std::string> tools{"ib_write_bw", "ib_write_lat"};
  std::vector<std::uint64_t> sizes; ///< empty: -a (2 .. 8 MiB)
  std::vector<int> qps{1};          ///< bw tests: one run per QP count (perftest -q)
  std::uint64_t iterations = 0;     ///< perftest -n; 0 = perftest's default
  bool ssh = false;                 ///< run each side through `ssh HOST`
  std::string ssh_program = "ssh";
  std::string out_dir;
  std::string sysfs_root = "/sys/class/infiniband";
  int port = 18515;                  ///< perftest -p (incremented per run)
  double server_start_delay_s = 1.0; ///< wait between starting the server and the client
  double timeout_s = 600;            ///< per run; the processes are killed after it
};

/// Throws InputError naming `flag` for an empty name, a leading '-', whitespace or control characters.
void check_host_name(const std::string& name, const std::string& flag);
/// Host rules plus only [A-Za-z0-9_.:-].
void check_device_name(const std::string& name, const std::string& flag);
/// POSIX shell single-quoting: abc -> 'abc', it's -> 'it'\''s'.
std::string shell_quote(const std::string& arg);

/// The perftest argv of one side (no host prefix): client when `connect_to` is non-empty.
std::vector<std::string> perftest_argv(const std::string& tool, const MeasureOptions& o, std::uint64_t size,
                                       int qps, int port, const std::string& connect_to);
/// The argv that runs `argv` on `host`: argv itself locally, else {ssh, -o, BatchMode=yes, host, --, quoted}.
std::vector<std::string> host_argv(const MeasureOptions& o, const std::string& host,
                                   const std::vector<std::string>& argv);

/// Local preflight: throws InputError (no RDMA device in sysfs_root, device missing, tool not on PATH).
void preflight_local(const MeasureOptions& o);

/// Runs everything, writes out_dir/<run>.server.txt, <run>.client.txt and manifest.json; returns the
/// manifest. Throws InputError for bad options or a failed preflight. An out_dir that exists must be empty
/// or a previous measure's: the files its manifest.json lists are removed first (so out_dir/*.client.txt
/// holds this run's outputs only); any other file in it is an InputError naming it.
nlohmann::json run_measure(const MeasureOptions& o);

} // namespace ibn::calib

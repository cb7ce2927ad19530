#include "calibration/measure.hpp"

#include "sim/atomic_file.hpp"
#include "sim/error.hpp"

#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace ibn::calib {
namespace {

namespace fs = std::filesystem;

std::string utc_now() {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool is_latency(const std::string& tool) {
  return tool.size() > 4 && tool.compare(tool.size() - 4, 4, "_lat") == 0;
}

/// An executable file called `name` in one of PATH's folders.
bool on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) dir = ".";
    const std::string f = dir + "/" + name;
    if (::access(f.c_str(), X_OK) == 0 && fs::is_regular_file(f)) return true;
  }
  return false;
}

struct Spawned {
  pid_t pid = -1;
  std::chrono::steady_clock::time_point start;
  std::string started_utc;
};

/// fork + execvp `argv` with stdout/stderr to files and stdin from /dev/null, in its own process group.
Spawned spawn(const std::vector<std::string>& argv, const std::string& out, const std::string& err) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int fo = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int fe = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fo < 0 || fe < 0) {
    if (fo >= 0) ::close(fo);
    if (fe >= 0) ::close(fe);
    throw InputError(out + ": cannot open for writing");
  }
  Spawned s;
  s.started_utc = utc_now();
  s.start = std::chrono::steady_clock::now();
  s.pid = ::fork();
  if (s.pid == 0) {
    ::setpgid(0, 0);
    const int fin = ::open("/dev/null", O_RDONLY);
    if (fin >= 0) ::dup2(fin, 0);
    ::dup2(fo, 1);
    ::dup2(fe, 2);
    ::execvp(args[0], args.data());
    const std::string msg = std::string("exec ") + args[0] + " failed\n";
    (void)!::write(2, msg.data(), msg.size());
    ::_exit(127);
  }
  ::close(fo);
  ::close(fe);
  if (s.pid < 0) throw std::runtime_error("fork failed");
  return s;
}

/// Waits for `s` at most until `deadline`; kills its process group after that. Exit code, or -signal,
/// or -1000 on timeout.
int wait_until(const Spawned& s, std::chrono::steady_clock::time_point deadline) {
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(s.pid, &status, WNOHANG);
    if (r == s.pid) break;
    if (r < 0) return -1;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(-s.pid, SIGTERM);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      ::kill(-s.pid, SIGKILL);
      ::waitpid(s.pid, &status, 0);
      return -1000;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return -1;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json side_json(const std::vector<std::string>& argv, const Spawned& s, int code,
                         const std::string& out, const std::string& err) {
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - s.start).count();
  return {{"argv", argv},
          {"started_utc", s.started_utc},
          {"seconds", secs},
          {"exit_code", code},
          {"timed_out", code == -1000},
          {"stdout", fs::path(out).filename().string()},
          {"stderr", fs::path(err).filename().string()}};
}

/// An -o folder that exists must be empty or hold a previous measure's outputs: the files its manifest.json
/// lists (raw outputs, version and preflight files, the manifest) are removed before this run writes, so
/// that `calibrate fit DIR/*.client.txt` reads this run's outputs only. Any other file is refused, naming it.
void clear_previous_measure(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  if (!fs::is_directory(dir, ec)) throw InputError("-o " + dir + ": exists and is not a folder");
  std::set<std::string> listed;
  const fs::path manifest_path = fs::path(dir) / "manifest.json";
  if (fs::is_regular_file(manifest_path, ec)) {
    nlohmann::json m;
    try {
      m = nlohmann::json::parse(slurp(manifest_path.string()));
    } catch (const nlohmann::json::exception&) {
    }
    if (m.is_object() && m.value("generator", std::string()) == "ibnetsim calibrate measure") {
      listed = {"manifest.json", "preflight.out", "preflight.err"};
      auto add = [&](const nlohmann::json& side, const char* key) {
        if (side.is_object() && side.contains(key) && side.at(key).is_string()) listed.insert(side.at(key));
      };
      for (const auto& r : m.value("runs", nlohmann::json::array()))
        for (const char* side : {"server", "client"})
          if (r.is_object() && r.contains(side)) add(r.at(side), "stdout"), add(r.at(side), "stderr");
      const auto versions = m.value("versions", nlohmann::json::object()); // items() of a temporary dangles
      for (const auto& [host, v] : versions.items()) {
        (void)v;
        listed.insert("version-" + host + ".txt");
      }
    }
  }
  std::vector<fs::path> stale;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!listed.count(name))
      throw InputError("-o " + dir + ": the folder holds " + name + ", which " +
                       (listed.empty() ? std::string("is not in a previous `calibrate measure` folder")
                                       : std::string("its manifest.json does not list")) +
                       "; give an empty or new folder (calibrate fit " + dir +
                       "/*.client.txt would read what is there)");
    stale.push_back(e.path());
  }
  for (const auto& p : stale)
    if (!fs::remove(p, ec) && ec)
      throw InputError("-o " + dir + ": cannot remove the previous measure's " + p.filename().string() +
                       ": " + ec.message());
}

} // namespace

void check_host_name(const std::string& name, const std::string& flag) {
  if (name.empty()) throw InputError(flag + ": empty host name");
  if (name.front() == '-')
    throw InputError(flag + ": host name '" + name + "' starts with '-' (it would be read as an option)");
  for (const unsigned char c : name)
    if (c <= 0x20 || c == 0x7f)
      throw InputError(flag + ": host name contains whitespace or a control character");
}

void check_device_name(const std::string& name, const std::string& flag) {
  check_host_name(name, flag);
  for (const unsigned char c : name)
    if (!(std::isalnum(c) || c == '_' || c == '.' || c == ':' || c == '-'))
      throw InputError(flag + ": device name '" + name + "' has a character outside [A-Za-z0-9_.:-]");
}

std::string shell_quote(const std::string& arg) {
  std::string q = "'";
  for (const char c : arg) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

std::vector<std::string> perftest_argv(const std::string& tool, const MeasureOptions& o, std::uint64_t size,
                                       int qps, int port, const std::string& connect_to) {
  std::vector<std::string> a{tool, "-d", o.device, "-p", std::to_string(port), "-F"};
  if (size == 0)
    a.push_back("-a");
  else
    a.insert(a.end(), {"-s", std::to_string(size)});
  if (!is_latency(tool)) {
    a.insert(a.end(), {"-q", std::to_string(qps), "--report_gbits"});
  }
  if (o.iterations > 0) a.insert(a.end(), {"-n", std::to_string(o.iterations)});
  if (!connect_to.empty()) a.push_back(connect_to);
  return a;
}

std::vector<std::string> host_argv(const MeasureOptions& o, const std::string& host,
                                   const std::vector<std::string>& argv) {
  if (!o.ssh) return argv;
  std::string remote;
  for (const auto& a : argv) remote += (remote.empty() ? "" : " ") + shell_quote(a);
  return {o.ssh_program, "-o", "BatchMode=yes", host, "--", remote};
}

void preflight_local(const MeasureOptions& o) {
  std::error_code ec;
  std::vector<std::string> found;
  if (fs::is_directory(o.sysfs_root, ec))
    for (const auto& e : fs::directory_iterator(o.sysfs_root, ec))
      found.push_back(e.path().filename().string());
  if (found.empty())
    throw InputError("calibrate measure: no RDMA device on this machine (" + o.sysfs_root +
                     " is missing or empty); run it on hosts with InfiniBand/RoCE adapters (rdma-core, "
                     "perftest), or use --ssh to reach them");
  bool has = false;
  std::string list;
  for (const auto& d : found) {
    has = has || d == o.device;
    list += (list.empty() ? "" : ", ") + d;
  }
  if (!has)
    throw InputError("--device: no RDMA device '" + o.device + "' in " + o.sysfs_root + " (found: " + list +
                     ")");
  for (const auto& t : o.tools)
    if (!on_path(t))
      throw InputError("calibrate measure: " + t +
                       " not found on PATH; install perftest (Debian/Ubuntu: apt-get install perftest)");
}

nlohmann::json run_measure(const MeasureOptions& o) {
  check_host_name(o.server, "--server");
  check_host_name(o.client, "--client");
  if (!o.server_address.empty()) check_host_name(o.server_address, "--server-address");
  check_device_name(o.device, "--device");
  if (o.out_dir.empty()) throw InputError("-o: an output folder is required");
  if (o.tools.empty()) throw InputError("--tools: at least one tool");
  for (const auto& t : o.tools)
    if (t != "ib_write_bw" && t != "ib_write_lat" && t != "ib_send_bw" && t != "ib_send_lat" &&
        t != "ib_read_bw" && t != "ib_read_lat")
      throw InputError("--tools: unknown tool '" + t +
                       "' (ib_write_bw, ib_write_lat, ib_send_bw, ib_send_lat, "
                       "ib_read_bw, ib_read_lat)");
  for (int q : o.qps)
    if (q < 1 || q > 16384) throw InputError("--qps: each QP count must be 1..16384");
  if (o.port < 1024 || o.port > 65000) throw InputError("--port: must be 1024..65000");

  if (!o.ssh) {
    preflight_local(o);
    clear_previous_measure(o.out_dir);
  } else {
    clear_previous_measure(o.out_dir);
    if (!on_path(o.ssh_program)) throw InputError("--ssh: " + o.ssh_program + " not found on PATH");
    for (const auto& host : {o.server, o.client}) {
      // One remote check per host: the device exists and every tool is installed.
      std::string remote = shell_quote("test") + " -e " + shell_quote(o.sysfs_root + "/" + o.device);
      for (const auto& t : o.tools) remote += " && command -v " + shell_quote(t) + " >/dev/null";
      const std::vector<std::string> argv{o.ssh_program, "-o", "BatchMode=yes", host, "--", remote};
      make_output_folder(o.out_dir);
      const std::string out = (fs::path(o.out_dir) / "preflight.out").string();
      const std::string err = (fs::path(o.out_dir) / "preflight.err").string();
      const Spawned s = spawn(argv, out, err);
      const int code = wait_until(s, std::chrono::steady_clock::now() + std::chrono::seconds(60));
      if (code != 0)
        throw InputError("calibrate measure: " + host + " has no RDMA device '" + o.device + "' under " +
                         o.sysfs_root + " or lacks perftest (" + o.tools.front() +
                         "...), or ssh failed (exit " + std::to_string(code) + "): " + slurp(err));
    }
  }

  make_output_folder(o.out_dir);
  nlohmann::json manifest;
  manifest["generator"] = "ibnetsim calibrate measure";
  manifest["started_utc"] = utc_now();
  manifest["options"] = {{"server", o.server},
                         {"client", o.client},
                         {"server_address", o.server_address.empty() ? o.server : o.server_address},
                         {"device", o.device},
                         {"tools", o.tools},
                         {"sizes", o.sizes},
                         {"qps", o.qps},
                         {"iterations", o.iterations},
                         {"ssh", o.ssh},
                         {"sysfs_root", o.sysfs_root}};
  // Versions: `TOOL --version` on each host (perftest prints "Version: ...").
  nlohmann::json versions = nlohmann::json::object();
  for (const auto& host : {o.server, o.client}) {
    const std::string out = (fs::path(o.out_dir) / ("version-" + host + ".txt")).string();
    const std::string err = out + ".err";
    const auto argv = host_argv(o, host, {o.tools.front(), "--version"});
    const Spawned s = spawn(argv, out, err);
    const int code = wait_until(s, std::chrono::steady_clock::now() + std::chrono::seconds(30));
    std::string v = slurp(out) + slurp(err);
    while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.pop_back();
    versions[host] = {{"argv", argv}, {"exit_code", code}, {"output", v}};
    std::error_code ec;
    fs::remove(err, ec);
  }
  manifest["versions"] = versions;

  nlohmann::json runs = nlohmann::json::array();
  int port = o.port;
  const std::vector<std::uint64_t> sizes = o.sizes.empty() ? std::vector<std::uint64_t>{0} : o.sizes;
  for (const auto& tool : o.tools) {
    const std::vector<int> qps_list = is_latency(tool) ? std::vector<int>{1} : o.qps;
    for (int q : qps_list)
      for (std::uint64_t size : sizes) {
        const std::string name = tool + (size ? "-s" + std::to_string(size) : std::string("-a")) +
                                 (is_latency(tool) ? "" : "-q" + std::to_string(q));
        const auto dir = fs::path(o.out_dir);
        const std::string so = (dir / (name + ".server.txt")).string(),
                          se = (dir / (name + ".server.err")).string();
        const std::string co = (dir / (name + ".client.txt")).string(),
                          ce = (dir / (name + ".client.err")).string();
        const auto sargv = host_argv(o, o.server, perftest_argv(tool, o, size, q, port, ""));
        const auto cargv = host_argv(
            o, o.client,
            perftest_argv(tool, o, size, q, port, o.server_address.empty() ? o.server : o.server_address));
        ++port;
        const auto deadline = std::chrono::steady_clock::now() +
                              std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
        const Spawned srv = spawn(sargv, so, se);
        std::this_thread::sleep_for(
            std::chrono::milliseconds(static_cast<long long>(o.server_start_delay_s * 1000)));
        const Spawned cli = spawn(cargv, co, ce);
        const int ccode = wait_until(cli, deadline);
        // The server ends by itself after the test; give it a few seconds past the client.
        const int scode =
            wait_until(srv, std::min(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(10)));
        runs.push_back({{"name", name},
                        {"tool", tool},
                        {"size_bytes", size},
                        {"all_sizes", size == 0},
                        {"qps", q},
                        {"server", side_json(sargv, srv, scode, so, se)},
                        {"client", side_json(cargv, cli, ccode, co, ce)}});
      }
  }
  manifest["runs"] = runs;
  manifest["finished_utc"] = utc_now();
  std::ofstream m(fs::path(o.out_dir) / "manifest.json");
  m << manifest.dump(2) << "\n";
  if (!m) throw InputError(o.out_dir + "/manifest.json: write failed");
  return manifest;
}

} // namespace ibn::calib

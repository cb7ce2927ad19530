// Naive reference for flow_scale_bench (issue 7 item 4): the same ring AllReduce written the way a SimGrid
// user would write it first — one s4u actor per rank, one mailbox comm per step per rank — on SimGrid's OWN
// fat-tree zone (create_fatTree_zone, D-mod-K routing) of the same shape as
// `ibnetsim topo generate fat-tree --tiers 3 --radix R --hosts N`. Reports figures, asserts nothing.
//
// Shape (radix R, k = R/2, N hosts, N/k^2 pods): PGFT(3; k, k, pods; 1, k, w3; 1, 1, p3) with
// cores = N/R, w3 = cores/k parents per spine and p3 = k/w3 parallel cables per spine-core pair: k hosts
// per leaf, k leaves and k spines per pod, 64-port cores — the same switch and cable counts as ours.
// Cluster zones take one bandwidth and one latency for every link: NDR data rate x MTU/(MTU+26) and
// switch latency 200 ns + 30 m of fibre (154 ns). Model CM02, cross-traffic off, TCP-gamma off.
//
// Ring: each rank, for 2(n-1) steps: put_async(S/n) to rank+1's mailbox, get() from its own, wait for
// its put. Completion = the clock when the last actor ends.
//
// --steps K runs only the first K of the 2(n-1) steps (as flow_scale_bench --steps K).
//
// Usage: flow_naive_reference --ranks N [--size-bytes S] [--radix R] [--steps K]   (one size per process)
#include <simgrid/s4u.hpp>

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace sg = simgrid::s4u;

namespace {

/// CPU seconds (user + system) this process has used: less sensitive than wall time to a loaded machine.
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double peak_rss_mib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args{argv[0],
                                "--cfg=network/model:CM02",
                                "--cfg=network/crosstraffic:0",
                                "--cfg=network/TCP-gamma:0",
                                "--cfg=contexts/stack-size:128",
                                "--log=root.thres:warning",
                                "--log=xbt_cfg.thres:warning"};
  unsigned long ranks = 4096, radix = 64, max_steps = 0;
  unsigned long long size = 64ull << 20;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--ranks" && i + 1 < argc)
      ranks = std::stoul(argv[++i]);
    else if (a == "--size-bytes" && i + 1 < argc)
      size = std::stoull(argv[++i]);
    else if (a == "--steps" && i + 1 < argc)
      max_steps = std::stoul(argv[++i]);
    else if (a == "--radix" && i + 1 < argc)
      radix = std::stoul(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s --ranks N [--size-bytes S] [--radix R] [--steps K]\n", argv[0]);
      return 2;
    }
  }
  const unsigned long k = radix / 2;
  if (ranks % (k * k) != 0 || (ranks / radix) % k != 0 || ranks / radix == 0) {
    std::fprintf(stderr, "ranks must be a multiple of (radix/2)^2 with N/radix a multiple of radix/2\n");
    return 2;
  }
  const unsigned long pods = ranks / (k * k), cores = ranks / radix, w3 = cores / k, p3 = k / w3;
  auto u = [](unsigned long v) { return static_cast<unsigned>(v); };

  std::vector<char*> av;
  for (auto& s : args) av.push_back(s.data());
  av.push_back(nullptr);
  int ac = static_cast<int>(args.size());
  const auto t0 = std::chrono::steady_clock::now();
  sg::Engine e(&ac, av.data());

  const double bw = 400e9 / 8 * 4096.0 / (4096 + 26); // bytes/s
  const double lat = 200e-9 + 30 * 5.13e-9;
  sg::ClusterCallbacks cb([](sg::NetZone* zone, const std::vector<unsigned long>&, unsigned long id) {
    sg::Host* h = zone->create_host("node-" + std::to_string(id), 1.0)->seal();
    return std::make_pair(h->get_netpoint(), nullptr);
  });
  sg::NetZone* zone = sg::create_fatTree_zone(
      "fattree", nullptr, sg::FatTreeParams(3, {u(k), u(k), u(pods)}, {1, u(k), u(w3)}, {1, 1, u(p3)}), cb,
      bw, lat, sg::Link::SharingPolicy::SPLITDUPLEX);
  zone->seal();
  e.seal_platform();
  const double t_platform = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::vector<sg::Host*> hosts(ranks);
  for (unsigned long i = 0; i < ranks; ++i) hosts[i] = sg::Host::by_name("node-" + std::to_string(i));
  std::vector<sg::Mailbox*> mb(ranks);
  for (unsigned long i = 0; i < ranks; ++i) mb[i] = sg::Mailbox::by_name("rank-" + std::to_string(i));
  const unsigned long full_steps = 2 * (ranks - 1);
  const unsigned long steps = max_steps > 0 && max_steps < full_steps ? max_steps : full_steps;
  const unsigned long long chunk = size / ranks;
  static int token = 0;
  for (unsigned long r = 0; r < ranks; ++r) {
    sg::Actor::create("rank-" + std::to_string(r), hosts[r], [&, r] {
      sg::Mailbox* next = mb[(r + 1) % ranks];
      sg::Mailbox* self = mb[r];
      for (unsigned long s = 0; s < steps; ++s) {
        sg::CommPtr put = next->put_async(&token, chunk);
        self->get<int>();
        put->wait();
      }
    });
  }
  const auto t1 = std::chrono::steady_clock::now();
  const double c1 = cpu_seconds();
  e.run();
  const double t_run = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  const double cpu_run = cpu_seconds() - c1;
  const double messages = static_cast<double>(ranks) * static_cast<double>(steps);
  if (steps != full_steps)
    std::printf("ran %lu of %lu steps; full ring extrapolated: %.0f s cpu\n", steps, full_steps,
                cpu_run * static_cast<double>(full_steps) / static_cast<double>(steps));
  std::printf(
      "naive s4u ring allreduce (SimGrid fatTree zone PGFT(3;%lu,%lu,%lu;1,%lu,%lu;1,1,%lu)): %6lu ranks, "
      "%llu B (chunk %llu B), %.0f messages: simulated %.4f ms, run wall %.2f s (cpu %.2f s) + %.2f s "
      "platform, "
      "%.0f msg/s, peak RSS %.0f MiB\n",
      k, k, pods, k, w3, p3, ranks, size, chunk, messages, sg::Engine::get_clock() * 1e3, t_run, cpu_run,
      t_platform, messages / t_run, peak_rss_mib());
  return 0;
}

// ns-3 reference for bench/packet_bench.cpp: the same fat-tree, rates, cable delays, paths, traffic pattern
// and bytes (testing/packet_scenario.hpp), simulated by ns-3 3.37 so both speeds can be compared side by side.
// Built only when ns-3 is installed (Debian: libns3-dev ns3 libgsl-dev; see docs/engine.md).
//
// Usage: ns3_reference [--pattern perm|ring] [--bytes B[K|M|G]] [--seed S] [--hosts N] [--routing dmodk|ecmp]
//                      [--del-ack N] [--del-ack-timeout-ns T] [--queue-packets Q] [--mss B]
// Prints a readable block and one "RESULT engine=ns3 ..." line (key=value) for bench/run_packet_vs_ns3.sh.
//
// Model choices (what makes it fair, and where it cannot be):
// - Links: PointToPoint, 400 Gb/s, delay 14.28 ns (host cables) and 153.9 ns (leaf-spine), as our cables.
//   Time resolution is set to picoseconds (ns-3's default, ns, would round the delays and the 82.8 ns
//   serialization time of a 4 KiB packet).
// - Transport: TCP (NewReno), BulkSend -> PacketSink, segment 4096 B payload, no timestamps: 4096 + 20 TCP
//   + 20 IP + 2 PPP = 4138 B on the wire, like our first packet of a WRITE (4096 + 26 + 16 RETH). The
//   receiver ACKs every --del-ack segments (default 16, like our ack_every_packets) or after
//   --del-ack-timeout-ns (default 2000 ns, about one RTT; the ns-3 default 200 ms would stall every window
//   smaller than 16 segments for 200 ms of simulated time). --mss changes the segment (and the device MTU
//   to MSS + 40): e.g. --mss 1448 --del-ack 2 is a typical Ethernet ns-3 set-up, which needs 2.8x the packets
//   for the same bytes (not the same scenario as ours: for context only).
// - Lossless-ish: ns-3 has no InfiniBand credits or PFC. The traffic-control layer (fq_codel, installed by
//   Ipv4AddressHelper) is removed and every device queue is a DropTail of --queue-packets (default 100,000),
//   so TCP's windows, not drops, bound the queues; drops are counted and reported (0 in the default runs).
//   Queues therefore grow beyond our 128 KiB credit buffers under the 4:1 uplinks; that changes the
//   simulated time, not the bytes moved.
// - Paths: --routing dmodk (default) installs static routes that are exactly ftree's D-mod-k paths (the leaf
//   sends destination d up cable d mod 4; the spine sends it down the parallel cable the destination's leaf
//   uses going up), via aggregated prefixes: host d on leaf L, up-cable k = d mod 4, j = (d mod 16) / 4 gets
//   10.L.(4k + j).1/30, so each (leaf, k) is one /22. --routing ecmp uses global routing with per-packet
//   random ECMP instead (TCP then sees reordering).
// - Events: Simulator::GetEventCount(); packet-hops: PhyTxBegin on every device (one trace call per hop).
// - The simulation stops when the last byte of the last flow reaches its sink (the simulated time reported).
#include "testing/packet_scenario.hpp"

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <time.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::uint64_t proc_status_bytes(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string k = std::string(key) + ":";
  while (std::getline(in, line))
    if (line.rfind(k, 0) == 0) return std::stoull(line.substr(k.size())) * 1024;
  return 0;
}

std::uint64_t parse_bytes(const std::string& s) {
  std::size_t pos = 0;
  const double v = std::stod(s, &pos);
  std::uint64_t mult = 1;
  if (pos < s.size()) {
    switch (s[pos]) {
    case 'K':
    case 'k':
      mult = 1ull << 10;
      break;
    case 'M':
    case 'm':
      mult = 1ull << 20;
      break;
    case 'G':
    case 'g':
      mult = 1ull << 30;
      break;
    default:
      throw std::invalid_argument("bad byte count '" + s + "'");
    }
  }
  return static_cast<std::uint64_t>(v * static_cast<double>(mult));
}

/// Counters the trace sinks write to (owned by main, passed as bound pointers).
struct Counters {
  std::uint64_t hops = 0;
  std::uint64_t drops = 0;
  std::uint64_t rx_bytes = 0;
  std::uint64_t expected = 0;
  ns3::Time last_rx;
};

void count_hop(Counters* c, ns3::Ptr<const ns3::Packet>) {
  ++c->hops;
}
void count_drop(Counters* c, ns3::Ptr<const ns3::Packet>) {
  ++c->drops;
}
void on_sink_rx(Counters* c, ns3::Ptr<const ns3::Packet> p, const ns3::Address&) {
  c->rx_bytes += p->GetSize();
  if (c->rx_bytes >= c->expected) {
    c->last_rx = ns3::Simulator::Now();
    ns3::Simulator::Stop();
  }
}

ns3::Ipv4Address addr(int a, int b, int c, int d) {
  return ns3::Ipv4Address(static_cast<std::uint32_t>(a) << 24 | static_cast<std::uint32_t>(b) << 16 |
                          static_cast<std::uint32_t>(c) << 8 | static_cast<std::uint32_t>(d));
}

int usage(const char* argv0) {
  std::fprintf(
      stderr,
      "usage: %s [--pattern perm|ring] [--bytes B[K|M|G]] [--seed S] [--hosts N] [--routing dmodk|ecmp] "
      "[--del-ack N] [--del-ack-timeout-ns T] [--queue-packets Q] [--mss B]\n",
      argv0);
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  using namespace ns3;
  std::string pattern = "perm", routing = "dmodk";
  std::uint64_t bytes = 4ull << 20, seed = 1;
  int hosts = 128;
  std::uint32_t del_ack = 16, queue_packets = 100000, mss = 4096;
  std::int64_t del_ack_timeout_ns = 2000;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      const bool has = i + 1 < argc;
      if (a == "--pattern" && has)
        pattern = argv[++i];
      else if (a == "--bytes" && has)
        bytes = parse_bytes(argv[++i]);
      else if (a == "--seed" && has)
        seed = std::stoull(argv[++i]);
      else if (a == "--hosts" && has)
        hosts = std::stoi(argv[++i]);
      else if (a == "--routing" && has)
        routing = argv[++i];
      else if (a == "--del-ack" && has)
        del_ack = static_cast<std::uint32_t>(std::stoul(argv[++i]));
      else if (a == "--del-ack-timeout-ns" && has)
        del_ack_timeout_ns = std::stoll(argv[++i]);
      else if (a == "--queue-packets" && has)
        queue_packets = static_cast<std::uint32_t>(std::stoul(argv[++i]));
      else if (a == "--mss" && has)
        mss = static_cast<std::uint32_t>(std::stoul(argv[++i]));
      else
        return usage(argv[0]);
    }
    if (routing != "dmodk" && routing != "ecmp") return usage(argv[0]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ns3_reference: %s\n", e.what());
    return 2;
  }
  ibn::bench::FatTreeShape shape;
  shape.hosts = hosts;
  const int L = shape.leaves(), S = shape.spines, U = shape.uplinks_per_leaf, HPL = shape.hosts_per_leaf;
  const int groups = HPL / U; // hosts of one leaf sharing an up-cable: third octets 4k .. 4k + groups - 1
  if (HPL % U != 0 || groups > 4 || U * 4 > 256 || L > 255) {
    std::fprintf(stderr, "ns3_reference: addressing supports at most 4 hosts per (leaf, up-cable)\n");
    return 2;
  }
  const std::vector<int> dst = ibn::bench::traffic(pattern, hosts, seed);

  Time::SetResolution(Time::PS);
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(del_ack));
  Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(NanoSeconds(del_ack_timeout_ns)));
  Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
  if (routing == "ecmp") Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", BooleanValue(true));

  NodeContainer host_nodes, leaf_nodes, spine_nodes;
  host_nodes.Create(static_cast<std::uint32_t>(hosts));
  leaf_nodes.Create(static_cast<std::uint32_t>(L));
  spine_nodes.Create(static_cast<std::uint32_t>(S));
  InternetStackHelper stack;
  Ipv4StaticRoutingHelper static_helper;
  Ipv4GlobalRoutingHelper global_helper;
  if (routing == "dmodk")
    stack.SetRoutingHelper(static_helper);
  else
    stack.SetRoutingHelper(global_helper);
  stack.Install(host_nodes);
  stack.Install(leaf_nodes);
  stack.Install(spine_nodes);

  PointToPointHelper p2p;
  p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(shape.rate_bps)));
  p2p.SetDeviceAttribute("Mtu", UintegerValue(mss + 40));
  p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
               QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queue_packets)));
  NetDeviceContainer all_devices;
  Ipv4AddressHelper ip;
  const Ipv4Mask p30("255.255.255.252");

  // Host cables: host h -> leaf h / HPL.
  std::vector<Ipv4Address> host_addr(static_cast<std::size_t>(hosts)),
      host_gw(static_cast<std::size_t>(hosts));
  p2p.SetChannelAttribute("Delay", TimeValue(PicoSeconds(shape.host_cable_ps)));
  for (int h = 0; h < hosts; ++h) {
    const int leaf = h / HPL, k = shape.up_cable(h), j = (h % HPL) / U;
    NetDeviceContainer d = p2p.Install(host_nodes.Get(static_cast<std::uint32_t>(h)),
                                       leaf_nodes.Get(static_cast<std::uint32_t>(leaf)));
    all_devices.Add(d);
    ip.SetBase(addr(10, leaf, 4 * k + j, 0), p30);
    Ipv4InterfaceContainer ifc = ip.Assign(d);
    host_addr[static_cast<std::size_t>(h)] = ifc.GetAddress(0);
    host_gw[static_cast<std::size_t>(h)] = ifc.GetAddress(1);
  }
  // Leaf up-cables: cable k of leaf L goes to spine k mod S (parallel index k / S), 172.16.L.4k/30.
  struct Up {
    Ptr<NetDevice> leaf_dev, spine_dev;
    Ipv4Address leaf_ip, spine_ip;
  };
  std::vector<Up> up(static_cast<std::size_t>(L * U));
  p2p.SetChannelAttribute("Delay", TimeValue(PicoSeconds(shape.leaf_cable_ps)));
  for (int l = 0; l < L; ++l)
    for (int k = 0; k < U; ++k) {
      NetDeviceContainer d = p2p.Install(leaf_nodes.Get(static_cast<std::uint32_t>(l)),
                                         spine_nodes.Get(static_cast<std::uint32_t>(k % S)));
      all_devices.Add(d);
      ip.SetBase(addr(172, 16, l, 4 * k), p30);
      Ipv4InterfaceContainer ifc = ip.Assign(d);
      up[static_cast<std::size_t>(l * U + k)] = {d.Get(0), d.Get(1), ifc.GetAddress(0), ifc.GetAddress(1)};
    }
  // No queue discs: the device DropTail queues are the only buffers (see the header comment).
  TrafficControlHelper tch;
  tch.Uninstall(all_devices);

  if (routing == "dmodk") {
    const Ipv4Mask group_mask(~std::uint32_t{0} << (8 + 2)); // /22: third octets 4k .. 4k + 3
    for (int h = 0; h < hosts; ++h) {
      Ptr<Node> n = host_nodes.Get(static_cast<std::uint32_t>(h));
      static_helper.GetStaticRouting(n->GetObject<Ipv4>())
          ->SetDefaultRoute(host_gw[static_cast<std::size_t>(h)], 1);
    }
    for (int l = 0; l < L; ++l) {
      Ptr<Ipv4> ipv4 = leaf_nodes.Get(static_cast<std::uint32_t>(l))->GetObject<Ipv4>();
      Ptr<Ipv4StaticRouting> rt = static_helper.GetStaticRouting(ipv4);
      for (int k = 0; k < U; ++k) {
        const Up& c = up[static_cast<std::size_t>(l * U + k)];
        const auto ifx = static_cast<std::uint32_t>(ipv4->GetInterfaceForDevice(c.leaf_dev));
        for (int other = 0; other < L; ++other)
          if (other != l) rt->AddNetworkRouteTo(addr(10, other, 4 * k, 0), group_mask, c.spine_ip, ifx);
      }
    }
    for (int s = 0; s < S; ++s) {
      Ptr<Ipv4> ipv4 = spine_nodes.Get(static_cast<std::uint32_t>(s))->GetObject<Ipv4>();
      Ptr<Ipv4StaticRouting> rt = static_helper.GetStaticRouting(ipv4);
      for (int l = 0; l < L; ++l)
        for (int k = s; k < U; k += S) {
          const Up& c = up[static_cast<std::size_t>(l * U + k)];
          const auto ifx = static_cast<std::uint32_t>(ipv4->GetInterfaceForDevice(c.spine_dev));
          rt->AddNetworkRouteTo(addr(10, l, 4 * k, 0), group_mask, c.leaf_ip, ifx);
        }
    }
  } else {
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  }

  Counters cnt;
  cnt.expected = bytes * static_cast<std::uint64_t>(hosts);
  for (std::uint32_t i = 0; i < all_devices.GetN(); ++i) {
    Ptr<PointToPointNetDevice> dev = DynamicCast<PointToPointNetDevice>(all_devices.Get(i));
    dev->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&count_hop, &cnt));
    dev->GetQueue()->TraceConnectWithoutContext("Drop", MakeBoundCallback(&count_drop, &cnt));
  }

  const std::uint16_t port = 5000;
  PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
  ApplicationContainer sinks = sink.Install(host_nodes);
  for (std::uint32_t i = 0; i < sinks.GetN(); ++i)
    sinks.Get(i)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&on_sink_rx, &cnt));
  sinks.Start(Seconds(0));
  ApplicationContainer senders;
  for (int h = 0; h < hosts; ++h) {
    BulkSendHelper bulk(
        "ns3::TcpSocketFactory",
        InetSocketAddress(host_addr[static_cast<std::size_t>(dst[static_cast<std::size_t>(h)])], port));
    bulk.SetAttribute("MaxBytes", UintegerValue(bytes));
    bulk.SetAttribute("SendSize", UintegerValue(16 * mss));
    senders.Add(bulk.Install(host_nodes.Get(static_cast<std::uint32_t>(h))));
  }
  senders.Start(Seconds(0));

  std::printf(
      "ns-3 %s: 2-tier fat-tree, %d hosts (%d per leaf), %d leaves, %d spines, %d up-cables per leaf, "
      "400 Gb/s, delays %.2f / %.2f ns; TCP NewReno MSS %u, delayed ACK %u / %lld ns, DropTail %u packets, "
      "routing %s\n",
      "3.37", hosts, HPL, L, S, U, static_cast<double>(shape.host_cable_ps) / 1e3,
      static_cast<double>(shape.leaf_cable_ps) / 1e3, mss, del_ack,
      static_cast<long long>(del_ack_timeout_ns), queue_packets, routing.c_str());
  std::printf("traffic: %s, seed %llu, flows checksum %016llx\n", pattern.c_str(),
              static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(ibn::bench::traffic_checksum(dst)));
  std::fflush(stdout);

  const double c0 = thread_cpu_seconds();
  const auto w0 = std::chrono::steady_clock::now();
  Simulator::Run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  const double cpu = thread_cpu_seconds() - c0;
  const std::uint64_t events = Simulator::GetEventCount();
  const std::uint64_t rss = proc_status_bytes("VmHWM");
  const bool complete = cnt.rx_bytes >= cnt.expected;
  Simulator::Destroy();

  const double mib = 1024.0 * 1024.0;
  std::printf("== ns-3: %s, %d hosts, %llu B per flow\n", pattern.c_str(), hosts,
              static_cast<unsigned long long>(bytes));
  std::printf("  simulated time (last byte)   %.3f us\n", cnt.last_rx.GetSeconds() * 1e6);
  std::printf("  payload delivered            %.1f MiB (%s), queue drops %llu\n",
              static_cast<double>(cnt.rx_bytes) / mib, complete ? "complete" : "INCOMPLETE",
              static_cast<unsigned long long>(cnt.drops));
  std::printf("  events executed              %llu\n", static_cast<unsigned long long>(events));
  std::printf("  packet-hops                  %llu (%.2f events per hop)\n",
              static_cast<unsigned long long>(cnt.hops),
              static_cast<double>(events) / static_cast<double>(cnt.hops));
  std::printf("  wall / thread CPU time       %.3f s / %.3f s\n", wall, cpu);
  std::printf("  events/s                     %.3f M\n", static_cast<double>(events) / wall * 1e-6);
  std::printf("  packet-hops/s                %.3f M\n", static_cast<double>(cnt.hops) / wall * 1e-6);
  std::printf("  simulated bytes / wall s     %.2f MB/s (CPU: %.2f MB/s)\n",
              static_cast<double>(cnt.rx_bytes) / wall * 1e-6,
              static_cast<double>(cnt.rx_bytes) / cpu * 1e-6);
  std::printf("  peak RSS                     %.1f MiB\n", static_cast<double>(rss) / mib);
  std::printf("RESULT engine=ns3 pattern=%s hosts=%d bytes=%llu routing=%s mss=%u del_ack=%u sim_us=%.3f "
              "events=%llu hops=%llu "
              "payload=%llu wall_s=%.6f cpu_s=%.6f events_per_s=%.0f hops_per_s=%.0f bytes_per_wall_s=%.0f "
              "bytes_per_cpu_s=%.0f peak_rss=%llu drops=%llu complete=%d\n",
              pattern.c_str(), hosts, static_cast<unsigned long long>(bytes), routing.c_str(), mss, del_ack,
              cnt.last_rx.GetSeconds() * 1e6, static_cast<unsigned long long>(events),
              static_cast<unsigned long long>(cnt.hops), static_cast<unsigned long long>(cnt.rx_bytes), wall,
              cpu, static_cast<double>(events) / wall, static_cast<double>(cnt.hops) / wall,
              static_cast<double>(cnt.rx_bytes) / wall, static_cast<double>(cnt.rx_bytes) / cpu,
              static_cast<unsigned long long>(rss), static_cast<unsigned long long>(cnt.drops),
              complete ? 1 : 0);
  return complete ? 0 : 3;
}

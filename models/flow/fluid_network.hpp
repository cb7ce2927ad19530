#pragma once
// FluidNetwork — the flow engine's own max-min fair fluid solver (docs/flow-engine.md, "Solvers").
//
// Links have a capacity (bytes per second); a flow crosses a set of links and has bytes to move. At every
// instant each flow's rate is the max-min fair allocation with equal weights over the links it crosses
// (progressive filling: the link with the smallest fair share left fixes its unfixed flows at that share,
// repeat), which is what SimGrid's CM02 model computes for latency-free actions (sharing penalty 1) without
// cross-traffic — the flow engine's SimGrid configuration (flow_engine.hpp). The starts and completions of
// one instant are solved together, once (as SimGrid solves once per time step), and only the connected
// components of flows (through shared links) that they touch are re-solved: flows elsewhere
// keep their rates and completion times, so the cost of an event follows its component, not the number of
// flows in flight, and only flows whose rate changed get a new completion time.
//
// Time is integer picoseconds. A flow's remaining bytes are brought up to date when its component is
// re-solved; its completion is last update + remaining / rate, rounded to the nearest picosecond (at least
// the update time). Every computation is deterministic: the same calls give the same results.
#include <cstdint>
#include <limits>
#include <queue>
#include <span>
#include <vector>

namespace ibn::flow {

class FluidNetwork {
 public:
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

  /// Links 0..n-1 with these capacities (bytes per second, > 0).
  explicit FluidNetwork(std::vector<double> capacity_bytes_per_s);

  /// Starts a flow of `bytes` (> 0) over `links` (indices, no repeats) at `now_ps` (not before an earlier
  /// call's time); returns its id (ids of completed flows are reused).
  std::uint32_t start(std::span<const std::uint32_t> links, double bytes, std::int64_t now_ps);
  /// The earliest completion time of a flow in progress, or kNever.
  std::int64_t next_completion();
  /// Completes every flow whose completion time is `t` (= next_completion()), appends their ids to `done`
  /// in increasing id order, and re-shares the capacity they leave.
  void complete(std::int64_t t, std::vector<std::uint32_t>& done);

  /// Bytes per second now (after the changes made at the current time are solved).
  double rate(std::uint32_t flow) {
    flush();
    return flows_[flow].rate;
  }
  std::size_t in_progress() const { return in_progress_; }
  std::uint64_t solves() const { return solves_; }             ///< solves (one per instant with changes)
  std::uint64_t flows_solved() const { return flows_solved_; } ///< flows re-rated, summed over solves

 private:
  struct Flow {
    std::vector<std::uint32_t> links;
    std::vector<std::uint32_t> pos;         ///< its index in each link's flow list
    double rem = 0, rate = 0, new_rate = 0; // new_rate: progressive filling's result
    std::int64_t last = 0, finish = kNever;
    std::uint32_t version = 0, mark = 0;
    bool active = false;
  };
  struct Link {
    double cap = 0;
    std::vector<std::uint32_t> flows;
    std::uint32_t mark = 0;
    double left = 0;           // progressive filling scratch
    std::uint32_t unfixed = 0; // progressive filling scratch
    std::uint32_t cpos = 0;    // its index in comp_links_
  };
  struct Due {
    std::int64_t t;
    std::uint32_t flow, version;
    bool operator>(const Due& o) const { return t != o.t ? t > o.t : flow > o.flow; }
  };

  /// Solves the changes made at pending_t_ (starts and completions at one time are solved together, once,
  /// before time moves on or a rate or completion is asked for).
  void flush();
  /// Re-solves the components of the flows on `seeds` (links) at `now`.
  void reshare(std::span<const std::uint32_t> seeds, std::int64_t now);
  void detach(std::uint32_t f);
  void fill(); ///< progressive filling over comp_links_ / comp_flows_ (into Flow::new_rate)
  static constexpr std::size_t kScanLinks = 16; ///< components up to this many links: no heap
  struct Share {
    double share;
    std::uint32_t cpos;
    bool operator>(const Share& o) const { return share != o.share ? share > o.share : cpos > o.cpos; }
  };
  std::vector<Share> heap_; // fill()'s min-heap of link shares (stale entries skipped)

  std::vector<Link> links_;
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_;
  std::priority_queue<Due, std::vector<Due>, std::greater<>> due_;
  std::uint32_t epoch_ = 0;
  std::vector<std::uint32_t> comp_links_, comp_flows_, stack_;
  std::vector<std::uint32_t> pending_; ///< links touched by changes at pending_t_ not solved yet
  std::int64_t pending_t_ = 0;
  std::size_t in_progress_ = 0;
  std::uint64_t solves_ = 0, flows_solved_ = 0;
};

} // namespace ibn::flow

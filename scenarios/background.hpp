#pragma once
// Background traffic: drivers that load a set of HCAs with messages on any eng::Engine, beside the jobs
// under study (DESIGN.md §5; docs/workloads.md "Background traffic").
//
// Patterns (`hcas` are the participants, in the given order):
// - permutation: every HCA sends to one fixed partner for the whole run. Partners form a derangement
//   (nobody sends to itself), drawn uniformly among derangements by rejection (shuffle until no fixed
//   point; expected e tries). Each HCA also receives from exactly one sender.
// - incast:      `incast_senders` senders (default: every other participant) all send to one receiver,
//   hcas[incast_receiver]; the senders are the participants after the receiver, wrapping around.
// - uniform:     every HCA picks a destination uniformly among the other participants for each message.
// With `planes` given (the plane of each participant), destinations are drawn only within the sender's
// plane (HCAs of different planes cannot reach each other); a plane with one HCA cannot host a
// permutation or uniform sender, and an incast sender on another plane than the receiver is an error.
//
// Offered load: every sender posts `message_bytes` messages with gaps whose mean is
//   mean_gap = message_bytes x 8 / (load x rate_gbps x 1e9) seconds,
// so its mean offered rate is load x rate_gbps (for incast: per sender; the receiver sees N times that).
// Gaps are exponential (a Poisson process, the default) or fixed. Arrivals form a renewal process that
// starts at `start`: the first post is at start + one gap drawn from the distribution for exponential
// gaps, and at start + U[0, mean_gap) for fixed gaps (a random phase so that senders are not in lock-step).
// Post times are accumulated in double picoseconds and rounded once each, so fixed gaps do not drift.
// A message is posted only if its post time is < stop; messages in flight at stop are still delivered
// and counted. Posting does not wait for deliveries (open loop): an overloaded network queues them.
//
// Determinism: all draws come from Rng::for_stream(seed, name + "/...") streams — the partners from
// "<name>/partners", the gaps of sender i from "<name>/gaps/<i>", the uniform destinations of sender i
// from "<name>/dst/<i>" — so a run is reproducible for a seed and adding a sender does not change the
// draws of another.
//
// Lifetime: the driver's callbacks refer to it; it must outlive engine.run(). Not copyable or movable.
#include "models/engine.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ibn::scen {

enum class BackgroundPattern { Permutation, Incast, Uniform };
std::string to_string(BackgroundPattern p);
/// "permutation", "incast", "uniform" (also "uniform-random"); InputError naming `what` otherwise.
BackgroundPattern parse_background_pattern(const std::string& text, const std::string& what);

enum class GapDistribution { Exponential, Fixed };
std::string to_string(GapDistribution g);
GapDistribution parse_gap_distribution(const std::string& text, const std::string& what);

struct BackgroundTrafficSpec {
  std::string name = "background"; ///< stream names and results
  BackgroundPattern pattern = BackgroundPattern::Permutation;
  std::vector<eng::HcaIndex> hcas;       ///< participants (at least 2, distinct)
  std::vector<int> planes;               ///< empty, or the plane of each participant
  double load = 0.5;                     ///< offered load per sender, fraction of rate_gbps, 0 < load <= 1
  double rate_gbps = 400;                ///< the HCA's link data rate in Gb/s (> 0)
  std::uint64_t message_bytes = 1 << 20; ///< size of every message (>= 1)
  GapDistribution gaps = GapDistribution::Exponential;
  Time start = Time::zero();         ///< first arrivals are drawn from here
  Time stop = Time::ms(1);           ///< no message is posted at or after this time (> start)
  std::uint32_t incast_senders = 0;  ///< incast: number of senders; 0 = every other participant
  std::uint32_t incast_receiver = 0; ///< incast: position of the receiver in `hcas`
  std::uint32_t qp_slot = 0;         ///< QP slot of the background connections
  std::uint8_t sl = 0;               ///< service level of the background traffic
  std::uint64_t seed = 1;            ///< scenario seed (streams are derived from seed and name)
};

/// Checks a spec; InputError naming the field (prefixed with `where`) on the first problem.
void validate(const BackgroundTrafficSpec& spec, const std::string& where);

/// Reads a spec from JSON (all keys optional except "pattern"; unknown keys are errors naming the path):
/// {"name", "pattern", "load", "rate_gbps", "message_bytes" (number or "64K"), "gaps" ("exponential"|
/// "fixed"), "start_us", "stop_us", "incast_senders", "incast_receiver", "qp_slot", "sl"}. Participants
/// (`hcas`, `planes`) and `seed` are set by the caller (from a placement and the scenario).
BackgroundTrafficSpec background_from_json(const nlohmann::json& j, const std::string& path);

struct BackgroundStats {
  std::uint64_t messages_posted = 0;
  std::uint64_t bytes_posted = 0;
  std::uint64_t messages_delivered = 0;
  std::uint64_t bytes_delivered = 0;
  Time first_post = Time::max();
  Time last_post = Time::zero();
  Time last_delivery = Time::zero();
  std::vector<Time> latencies; ///< post to delivery, in delivery order
  std::uint32_t senders = 0;

  /// Mean offered rate per sender over [start, stop): bytes_posted x 8 / (senders x (stop - start)).
  double offered_gbps_per_sender(Time start, Time stop) const;
  /// Delivered bytes x 8 / (last_delivery - first_post), all senders together; 0 before any delivery.
  double delivered_gbps() const;
  /// Latency percentile (nearest rank: sorted[ceil(p x n) - 1]) in microseconds; 0 without samples.
  double latency_us(double p) const;
  double mean_latency_us() const;
  /// {"messages_posted", "bytes_posted", "messages_delivered", "bytes_delivered", "delivered_gbps",
  ///  "latency_us": {"p50", "p99", "max", "mean"}}
  nlohmann::json to_json() const;
};

class BackgroundDriver {
 public:
  /// Validates the spec and draws the partners; nothing is scheduled until start().
  BackgroundDriver(eng::Engine& engine, BackgroundTrafficSpec spec);
  BackgroundDriver(const BackgroundDriver&) = delete;
  BackgroundDriver& operator=(const BackgroundDriver&) = delete;

  /// Schedules every sender's first arrival with engine.call_at() (at or after now()).
  void start();
  /// Posts nothing more from now on (pending arrivals are dropped when they come due); messages in flight
  /// are still delivered. For a stop time known only during the run (the end of the last job).
  void stop();

  const BackgroundTrafficSpec& spec() const { return spec_; }
  const BackgroundStats& stats() const { return stats_; }
  /// Permutation: the partner (an HCA) of each participant, by position in spec().hcas; empty otherwise.
  const std::vector<eng::HcaIndex>& partners() const { return partners_; }
  /// Mean gap between two posts of one sender, in picoseconds (rounded).
  Time mean_gap() const { return Time::ps(static_cast<std::int64_t>(mean_gap_ps_ + 0.5)); }

 private:
  struct Sender {
    std::uint32_t pos = 0; ///< position in spec.hcas
    Rng gaps;
    Rng dst;
    double next_ps = 0;                    ///< exact (unrounded) time of the next post
    std::vector<eng::HcaIndex> candidates; ///< uniform: possible destinations
  };
  void arrival(std::size_t s);
  double draw_gap(Rng& r);

  eng::Engine& engine_;
  bool stopped_ = false;
  BackgroundTrafficSpec spec_;
  double mean_gap_ps_ = 0;
  std::vector<eng::HcaIndex> partners_;
  std::vector<Sender> senders_;
  BackgroundStats stats_;
};

/// results.json's `background[]` entry of a driver after its run (name, pattern, load, message size, HCAs,
/// stats). A driver that posted no message (its start at or after `run_end`, when the last job stopped it)
/// adds a warning to `warnings`: "<where>: no effect: it posted no message (start_us S, the run ended at E
/// us)".
nlohmann::json background_result(const BackgroundDriver& d, const std::string& where, Time run_end,
                                 std::vector<std::string>& warnings);

} // namespace ibn::scen

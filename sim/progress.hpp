#pragma once
// Progress of long runs: per point of a study (or the one run of `run`), how far it is, as elapsed time,
// percentage and ETA on stderr.
//
// A ProgressBoard is an array of ProgressSlots in anonymous shared memory (mmap MAP_SHARED), so a point run
// in a forked child process (the flow engine: SimGrid is one per process) updates the same slot the parent
// reads; points run on threads use it the same way. Every field is a lock-free atomic, written by the run
// and read by the printer. The work of a point is `runs_total` runs (segments, scenarios'
// run.segment_iterations) of `run_total` units each (transfers delivered, warm-ups included); the fraction
// done is (runs_done + run_done / run_total) / runs_total. The ETA is elapsed x (1 - f) / (f - resumed /
// runs_total): segments read back from checkpoints (a resumed point) count as done but took none of the
// elapsed time.
//
// ProgressPrinter prints a running point's line first `first_s` after it started, then every `every_s`:
//   [2to1-static] 37% (segment 2/5), 12 s elapsed, ETA 20 s
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace ibn {

/// CLOCK_MONOTONIC in nanoseconds (the same clock in every process of the machine).
std::int64_t monotonic_ns();

struct ProgressSlot {
  std::atomic<std::int64_t> start_ns{0}; ///< when the point started; 0: not started
  std::atomic<std::int64_t> end_ns{0};   ///< when it finished; 0: not finished
  std::atomic<std::uint64_t> run_done{0}, run_total{0};
  std::atomic<std::uint32_t> runs_done{0}, runs_total{1};
  std::atomic<std::uint32_t> runs_resumed{0}; ///< runs read back from checkpoints (no time spent here)
  std::atomic<bool> open_ended{false};     ///< runs_total is a cap (--tail-precision), not a promise
  std::atomic<std::int64_t> printed_ns{0}; ///< the printer's: when it last printed this slot

  void start() { start_ns.store(monotonic_ns()); }
  void finish() { end_ns.store(monotonic_ns()); }
  /// Fraction of the point done, in [0, 1].
  double fraction() const;
};
static_assert(std::atomic<std::int64_t>::is_always_lock_free &&
                  std::atomic<std::uint64_t>::is_always_lock_free,
              "progress slots are shared between processes");

class ProgressBoard {
 public:
  explicit ProgressBoard(std::size_t slots);
  ~ProgressBoard();
  ProgressBoard(const ProgressBoard&) = delete;
  ProgressBoard& operator=(const ProgressBoard&) = delete;
  ProgressSlot& slot(std::size_t i) { return slots_[i]; }
  std::size_t size() const { return n_; }

 private:
  ProgressSlot* slots_ = nullptr;
  std::size_t n_ = 0, bytes_ = 0;
};

/// "37% (segment 2/5), 12 s elapsed, ETA 20 s" at time now_ns.
std::string progress_text(const ProgressSlot& s, std::int64_t now_ns);

/// Prints the lines of running slots (see the top of this file) through `out`. tick() does one pass; with
/// start_thread() a thread calls it every 200 ms until stop() (or destruction).
class ProgressPrinter {
 public:
  ProgressPrinter(ProgressBoard& board, std::vector<std::string> names,
                  std::function<void(const std::string&)> out, double first_s = 2, double every_s = 10);
  ~ProgressPrinter();
  ProgressPrinter(const ProgressPrinter&) = delete;
  ProgressPrinter& operator=(const ProgressPrinter&) = delete;
  void tick();
  void start_thread();
  void stop();

 private:
  ProgressBoard& board_;
  std::vector<std::string> names_;
  std::function<void(const std::string&)> out_;
  std::int64_t first_ns_, every_ns_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

} // namespace ibn

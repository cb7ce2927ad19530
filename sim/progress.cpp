#include "sim/progress.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <new>
#include <stdexcept>

namespace ibn {

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

double ProgressSlot::fraction() const {
  const double total = std::max<std::uint32_t>(1, runs_total.load());
  const auto t = run_total.load();
  const double in_run =
      t ? std::min(1.0, static_cast<double>(run_done.load()) / static_cast<double>(t)) : 0.0;
  return std::clamp((runs_done.load() + in_run) / total, 0.0, 1.0);
}

ProgressBoard::ProgressBoard(std::size_t slots)
    : n_(slots), bytes_(std::max<std::size_t>(1, slots) * sizeof(ProgressSlot)) {
  void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error("ProgressBoard: mmap failed");
  slots_ = static_cast<ProgressSlot*>(p);
  for (std::size_t i = 0; i < n_; ++i) new (&slots_[i]) ProgressSlot();
}

ProgressBoard::~ProgressBoard() {
  for (std::size_t i = 0; i < n_; ++i) slots_[i].~ProgressSlot();
  ::munmap(slots_, bytes_);
}

namespace {
std::string duration_text(double s) {
  char b[64];
  if (s < 100)
    std::snprintf(b, sizeof b, "%.0f s", s);
  else if (s < 6000)
    std::snprintf(b, sizeof b, "%d min %02d s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else
    std::snprintf(b, sizeof b, "%d h %02d min", static_cast<int>(s) / 3600, static_cast<int>(s) / 60 % 60);
  return b;
}
} // namespace

std::string progress_text(const ProgressSlot& s, std::int64_t now_ns) {
  const double f = s.fraction();
  const double elapsed = static_cast<double>(now_ns - s.start_ns.load()) / 1e9;
  std::string line = std::to_string(static_cast<int>(std::floor(f * 100))) + "%";
  if (const auto runs = s.runs_total.load(); runs > 1)
    line += " (segment " + std::to_string(std::min(runs, s.runs_done.load() + 1)) + "/" +
            (s.open_ended.load() ? "at most " : "") + std::to_string(runs) + ")";
  line += ", " + duration_text(elapsed) + " elapsed, ETA ";
  // The fraction this process did in `elapsed`: segments read back from checkpoints took no time here.
  const double f_here = f - static_cast<double>(s.runs_resumed.load()) / std::max(1u, s.runs_total.load());
  line += f_here > 0 ? duration_text(elapsed * (1 - f) / f_here) : std::string("unknown");
  if (s.open_ended.load()) line += " (at the cap)";
  return line;
}

ProgressPrinter::ProgressPrinter(ProgressBoard& board, std::vector<std::string> names,
                                 std::function<void(const std::string&)> out, double first_s, double every_s)
    : board_(board), names_(std::move(names)), out_(std::move(out)),
      first_ns_(static_cast<std::int64_t>(first_s * 1e9)),
      every_ns_(static_cast<std::int64_t>(every_s * 1e9)) {}

ProgressPrinter::~ProgressPrinter() {
  stop();
}

void ProgressPrinter::tick() {
  if (!out_) return;
  const auto now = monotonic_ns();
  for (std::size_t i = 0; i < board_.size(); ++i) {
    auto& s = board_.slot(i);
    const auto start = s.start_ns.load();
    if (start == 0 || s.end_ns.load() != 0 || now - start < first_ns_) continue;
    const auto last = s.printed_ns.load();
    if (last != 0 && now - last < every_ns_) continue;
    s.printed_ns.store(now);
    const std::string name = i < names_.size() && !names_[i].empty() ? "[" + names_[i] + "] " : "";
    out_(name + progress_text(s, now));
  }
}

void ProgressPrinter::start_thread() {
  if (thread_.joinable() || !out_) return;
  stop_ = false;
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      tick();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
}

void ProgressPrinter::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

} // namespace ibn

#include "sim/event_queue.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <limits>

namespace ibn {
namespace {

constexpr std::size_t kMinBuckets = 2;
constexpr int kInitialShift = 14; // 16.384 ns, about one 2 KiB packet at 1 Tb/s; re-estimated on resize
constexpr std::size_t kWidthSample = 25;

std::uint64_t as_u64(Time t) {
  return static_cast<std::uint64_t>(t.count_ps());
}

} // namespace

CalendarQueue::CalendarQueue() {
  resize(kMinBuckets);
}

void CalendarQueue::clear() {
  buckets_.clear();
  size_ = 0;
  shift_ = kInitialShift;
  resize(kMinBuckets);
}

void CalendarQueue::insert_sorted(const Event& e) {
  Bucket& b = buckets_[bucket_of(e.time)]; // pop() resets a bucket it empties: b.empty() == b.v.empty()
  if (b.v.empty() || !event_before(e, b.v.back())) {
    b.v.push_back(e); // the common case: not earlier than anything already in the bucket
    return;
  }
  const auto first = b.v.begin() + static_cast<std::ptrdiff_t>(b.head);
  b.v.insert(std::upper_bound(first, b.v.end(), e, event_before), e);
}

void CalendarQueue::push(const Event& e) {
  assert(e.time >= Time::zero() && "CalendarQueue needs non-negative times");
  insert_sorted(e);
  ++size_;
  // Invariant: no event is earlier than the start of the current bucket's window. Restore it if `e` is.
  const std::uint64_t width = std::uint64_t{1} << shift_;
  if (as_u64(e.time) < cur_top_ - width) {
    cur_ = bucket_of(e.time);
    cur_top_ = ((as_u64(e.time) >> shift_) + 1) << shift_;
  }
  if (size_ > 2 * buckets_.size()) resize(2 * buckets_.size());
}

const Event& CalendarQueue::top() {
  assert(size_ > 0);
  const std::uint64_t width = std::uint64_t{1} << shift_;
  // Scan at most one "year" (every bucket once) from the current bucket.
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    const Bucket& b = buckets_[cur_];
    if (!b.empty() && as_u64(b.front().time) < cur_top_) return b.front();
    cur_ = (cur_ + 1) & mask_;
    cur_top_ += width;
  }
  // Nothing due within a year (sparse far-future events): jump straight to the minimum.
  locate_min();
  return buckets_[cur_].front();
}

void CalendarQueue::locate_min() {
  const Event* best = nullptr;
  for (const auto& b : buckets_)
    if (!b.empty() && (best == nullptr || event_before(b.front(), *best))) best = &b.front();
  assert(best != nullptr);
  cur_ = bucket_of(best->time);
  cur_top_ = ((as_u64(best->time) >> shift_) + 1) << shift_;
}

Event CalendarQueue::pop() {
  top();
  Bucket& b = buckets_[cur_];
  const Event out = b.v[b.head++];
  if (b.empty()) {
    b.v.clear();
    b.head = 0;
  } else if (b.head > 32 && 2 * b.head > b.v.size()) { // drop the consumed prefix (amortised O(1))
    b.v.erase(b.v.begin(), b.v.begin() + static_cast<std::ptrdiff_t>(b.head));
    b.head = 0;
  }
  --size_;
  if (buckets_.size() > kMinBuckets && size_ < buckets_.size() / 2) resize(buckets_.size() / 2);
  return out;
}

int CalendarQueue::estimate_width_log2() const {
  // Brown's estimate: 3 x the mean gap between the earliest events, ignoring gaps over twice the mean.
  std::vector<Event> sample;
  sample.reserve(size_);
  for (const auto& b : buckets_)
    sample.insert(sample.end(), b.v.begin() + static_cast<std::ptrdiff_t>(b.head), b.v.end());
  if (sample.size() < 2) return shift_;
  const std::size_t k = std::min(sample.size(), kWidthSample);
  std::partial_sort(sample.begin(), sample.begin() + static_cast<std::ptrdiff_t>(k), sample.end(),
                    event_before);
  const double span = static_cast<double>((sample[k - 1].time - sample[0].time).count_ps());
  const double mean = span / static_cast<double>(k - 1);
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t i = 1; i < k; ++i) {
    const double gap = static_cast<double>((sample[i].time - sample[i - 1].time).count_ps());
    if (gap <= 2 * mean) {
      sum += gap;
      ++n;
    }
  }
  const double width = n > 0 ? 3 * sum / static_cast<double>(n) : 0.0;
  int s = 0;
  while (s < 62 && static_cast<double>(std::uint64_t{1} << s) < width) ++s;
  return s;
}

void CalendarQueue::resize(std::size_t nbuckets) {
  const int new_shift = size_ >= 2 ? estimate_width_log2() : shift_;
  std::vector<Bucket> old;
  old.swap(buckets_);
  buckets_.resize(nbuckets);
  mask_ = nbuckets - 1;
  shift_ = new_shift;
  for (const Bucket& b : old)
    for (std::size_t i = b.head; i < b.v.size(); ++i) insert_sorted(b.v[i]);
  if (size_ > 0) {
    locate_min();
  } else {
    cur_ = 0;
    cur_top_ = std::uint64_t{1} << shift_;
  }
}

// ------------------------------------------------------------------------------------------ WindowQueue

WindowQueue::WindowQueue() : buckets_(kBuckets), bits_(kWords, 0), nodes_(1) {
  nodes_[kSentinel].e.time = Time::ps(std::numeric_limits<std::int64_t>::min()); // before every event
}

void WindowQueue::clear() {
  std::fill(buckets_.begin(), buckets_.end(), Bucket{});
  std::fill(bits_.begin(), bits_.end(), 0);
  summary_ = 0;
  nodes_.resize(1); // keeps the sentinel
  free_ = kNil;
  min_slot_ = kFromHeap;
  min_key_ = kNoKey;
  cur_ = 0;
  size_ = 0;
  near_size_ = 0;
  far_.clear();
}

std::uint32_t WindowQueue::grow_nodes() {
  const auto n = static_cast<std::uint32_t>(nodes_.size());
  nodes_.emplace_back(); // its `next` is kNil: the free list stays empty once push takes it
  return n;
}

void WindowQueue::push_far(const Event& e) {
  far_.push(e);
  if (const unsigned __int128 k = event_key(e); k < min_key_) {
    min_key_ = k;
    min_slot_ = kFromHeap;
  }
}

void WindowQueue::insert_inside(const Event& e, std::size_t slot) {
  // Earlier than the bucket's last event: after the last node that is not later than it (before the head if
  // there is none), looking at no more than kMaxWalk nodes, else the heap takes it.
  Bucket& bk = buckets_[slot];
  std::uint32_t prev = kNil;
  std::uint32_t at = bk.head;
  for (int k = 0; !event_before(e, nodes_[at].e); ++k) {
    if (k == kMaxWalk) {
      push_far(e); // (not the smallest: at least kMaxWalk bucketed events come before it)
      return;
    }
    prev = at;
    at = nodes_[at].next; // not past the tail: e is earlier than the tail
  }
  const std::uint32_t n = free_ != kNil ? free_ : grow_nodes();
  free_ = nodes_[n].next;
  nodes_[n].e = e;
  nodes_[n].next = at;
  if (prev == kNil)
    bk.head = n;
  else
    nodes_[prev].next = n;
  ++near_size_;
  if (const unsigned __int128 k = event_key(e); k < min_key_) {
    min_key_ = k;
    min_slot_ = slot;
  }
}

Event WindowQueue::pop_far() {
  const Event out = far_.pop();
  // Move the window start up to this event (never back: bucketed events must stay inside the window).
  if (const std::int64_t b = bucket_index(out.time); b > cur_) {
    if (near_size_ == 0 || b - cur_ < static_cast<std::int64_t>(kBuckets)) cur_ = b;
  }
  locate();
  return out;
}

} // namespace ibn

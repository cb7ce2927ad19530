#pragma once
// Event queues for the packet engine: a priority queue of small POD events keyed by (time, seq).
//
// An Event is 24 bytes: time (integer ps), seq (a per-Simulation counter, unique and increasing in
// insertion order), target (a ComponentId, an index in the Simulation's component table) and tag (a small
// integer the target interprets). There are no closures and no heap allocation per event.
//
// Order: strictly by time, then by seq. Because seq grows with every insertion, events scheduled for the
// same picosecond pop in the order they were scheduled (FIFO), whatever the queue variant.
//
// Variants (same interface, all pop exactly the same sequence):
//   DaryHeap<2>   binary heap over a contiguous vector
//   DaryHeap<4>   4-ary heap (shallower; the four children of a node are adjacent in memory)
//   CalendarQueue Brown's calendar queue (buckets of width 2^k ps, resized as the queue grows/shrinks)
//   WindowQueue   fixed 0.5 ns buckets over the next 2.1 us (bitmap-indexed FIFO lists), a DaryHeap<4> for
//                 the rest
// `EventQueue` names the default, WindowQueue: on the packet engine's event mix it needs about 60 % of the
// 4-ary heap's instructions per event and far fewer mispredicted branches (docs/perf-log.md, "Packet engine
// speed"); like the heap it does not degrade when millisecond timers mix with nanosecond events (they stay
// in its heap). Above ~100k pending events its buckets get crowded and the 4-ary heap is faster.
// The queues know nothing of cancellation; Simulation does that lazily.
#include "sim/time.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ibn {

/// Index of an event target in a Simulation's component table.
using ComponentId = std::uint32_t;
/// Small integer meaning chosen by the target (e.g. "transmission done", "credit timer").
using EventTag = std::uint32_t;

struct Event {
  Time time;
  std::uint64_t seq = 0;
  ComponentId target = 0;
  EventTag tag = 0;
};
static_assert(sizeof(Event) == 24, "Event must stay a 24-byte POD");

/// The queue order: time first, then insertion sequence. Computed as one unsigned 128-bit comparison of
/// (time with its sign bit flipped, seq), which orders exactly like the pair and compiles without branches.
inline unsigned __int128 event_key(const Event& e) {
  const auto t = static_cast<std::uint64_t>(e.time.count_ps()) ^ (std::uint64_t{1} << 63);
  return (static_cast<unsigned __int128>(t) << 64) | e.seq;
}
inline bool event_before(const Event& a, const Event& b) {
  return event_key(a) < event_key(b);
}

/// A d-ary min-heap of Events over one contiguous vector (root at index 0, children of i at
/// Arity*i+1 .. Arity*i+Arity). push and pop are O(log_Arity n); both move a "hole" instead of swapping,
/// and pop picks the smallest child by a branch-free tournament (for Arity 2 and 4).
template <unsigned Arity> class DaryHeap {
  static_assert(Arity >= 2, "a heap needs at least two children per node");

 public:
  bool empty() const { return v_.empty(); }
  std::size_t size() const { return v_.size(); }
  void reserve(std::size_t n) { v_.reserve(n); }
  void clear() { v_.clear(); }
  /// The smallest event. Precondition: !empty().
  const Event& top() const { return v_.front(); }

  void push(const Event& e) {
    std::size_t hole = v_.size();
    v_.emplace_back();
    while (hole > 0) {
      const std::size_t parent = (hole - 1) / Arity;
      if (!event_before(e, v_[parent])) break;
      v_[hole] = v_[parent];
      hole = parent;
    }
    v_[hole] = e;
  }

  /// Removes and returns the smallest event. Precondition: !empty().
  Event pop() {
    const Event out = v_.front();
    const Event last = v_.back();
    v_.pop_back();
    if (!v_.empty()) sift_down(last);
    return out;
  }

 private:
  // Places `e` starting from a hole at the root.
  void sift_down(const Event& e) {
    const std::size_t n = v_.size();
    std::size_t hole = 0;
    for (;;) {
      const std::size_t first = hole * Arity + 1;
      if (first >= n) break;
      std::size_t best = first;
      if (first + Arity <= n) { // all children present: a branch-free tournament
        best = min_child(first);
      } else {
        for (std::size_t c = first + 1; c < n; ++c)
          if (event_before(v_[c], v_[best])) best = c;
      }
      if (!event_before(v_[best], e)) break;
      v_[hole] = v_[best];
      hole = best;
    }
    v_[hole] = e;
  }

  // Index of the smallest of the Arity children starting at `first`, compared pairwise
  // (a balanced tournament: shorter dependency chains than a linear scan; conditional moves, no branches).
  std::size_t min_child(std::size_t first) const {
    if constexpr (Arity == 2) {
      return first + static_cast<std::size_t>(event_before(v_[first + 1], v_[first]));
    } else if constexpr (Arity == 4) {
      const std::size_t a = first + static_cast<std::size_t>(event_before(v_[first + 1], v_[first]));
      const std::size_t b = first + 2 + static_cast<std::size_t>(event_before(v_[first + 3], v_[first + 2]));
      return event_before(v_[b], v_[a]) ? b : a;
    } else {
      std::size_t best = first;
      for (unsigned k = 1; k < Arity; ++k)
        if (event_before(v_[first + k], v_[best])) best = first + k;
      return best;
    }
  }

  std::vector<Event> v_;
};

using BinaryHeap = DaryHeap<2>;
using QuaternaryHeap = DaryHeap<4>;

/// Brown's calendar queue (CACM 31(10), 1988), with bucket widths restricted to powers of two so that
/// the bucket of a time is a shift and a mask. Each bucket is a vector sorted by (time, seq) with a head
/// index: pops advance the head, and the common push (not earlier than the bucket's last event, e.g.
/// same-time bursts) appends, so a bucket full of ties costs O(1) per operation. The bucket count
/// doubles above two events per bucket and halves below half an event per bucket; on each resize the
/// width is re-estimated from the spacing of the earliest events (3 x mean gap, outliers removed).
/// Accepts pushes at any time, including before the last popped event. Times must be >= 0.
class CalendarQueue {
 public:
  CalendarQueue();
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  void reserve(std::size_t) {}
  void clear();
  /// The smallest event. Precondition: !empty(). Not const: it advances the calendar to that event.
  const Event& top();
  void push(const Event& e);
  /// Removes and returns the smallest event. Precondition: !empty().
  Event pop();

  std::size_t bucket_count() const { return buckets_.size(); }
  int width_log2() const { return shift_; }

 private:
  struct Bucket {
    std::vector<Event> v; // sorted; live events are v[head..]
    std::size_t head = 0;
    bool empty() const { return head == v.size(); }
    const Event& front() const { return v[head]; }
  };
  std::size_t bucket_of(Time t) const {
    return static_cast<std::size_t>(static_cast<std::uint64_t>(t.count_ps()) >> shift_) & mask_;
  }
  void insert_sorted(const Event& e);
  void locate_min(); // points cur_/cur_top_ at the bucket holding the minimum
  void resize(std::size_t nbuckets);
  int estimate_width_log2() const;

  std::vector<Bucket> buckets_;
  std::size_t mask_ = 0;
  int shift_ = 0; // bucket width = 2^shift_ ps
  std::size_t size_ = 0;
  std::size_t cur_ = 0;       // bucket being scanned
  std::uint64_t cur_top_ = 0; // exclusive upper time bound (ps) of bucket cur_ in the current "year"
};

/// A window of fixed-width time buckets over the near future, and a 4-ary heap for everything else.
///
/// Packet simulations schedule nearly everything a few hundred nanoseconds ahead (serialization, cable,
/// switch latency) and a few timers far ahead (retransmission timeouts). The window covers
/// kBuckets x 2^kShift ps (4,096 x 0.512 ns = 2.1 us) from the bucket of the last popped event. An event
/// inside it goes into its bucket, a list of pooled nodes sorted by (time, seq): appended in the common case,
/// else inserted after a walk of at most kMaxWalk nodes. Every other event (beyond the window, before its
/// start, or deep inside a long bucket) goes to the heap. A bitmap of non-empty buckets, with a summary word
/// over it, finds the earliest bucket with two count-trailing-zeros; pop() takes the smaller of that bucket's
/// head and the heap's top. So near events cost O(1) to push and pop, and nothing is ever moved between the
/// two parts. Pops exactly the same sequence as the heaps: (time, seq) order.
///
/// The location of the smallest event (its bucket, or the heap) is kept up to date: pop() finds the next one,
/// and push() compares the new event with it, so top() is a load. push, top and pop are inline (they run
/// once or twice per simulated event); the rare paths (a walk inside a bucket, node pool growth) are not.
class WindowQueue {
 public:
  static constexpr int kShift = 9;              ///< bucket width 2^9 ps = 0.512 ns
  static constexpr std::size_t kBuckets = 4096; ///< window: 2.10 us
  WindowQueue();
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  void reserve(std::size_t n) { nodes_.reserve(n + 1); }
  void clear();
  /// The smallest event. Precondition: !empty().
  const Event& top() const {
    return min_slot_ == kFromHeap ? far_.top() : nodes_[buckets_[min_slot_].head].e;
  }
  /// event_key(top()), or the largest key when empty: one load instead of top()'s two.
  unsigned __int128 top_key() const { return min_key_; }

  [[gnu::always_inline]] void push(const Event& e) {
    ++size_;
    const std::int64_t b = bucket_index(e.time) - cur_;
    if (static_cast<std::uint64_t>(b) >= kBuckets) [[unlikely]] { // beyond the window or before its start
      push_far(e);
      return;
    }
    const std::size_t slot = static_cast<std::size_t>(b + cur_) & kMask;
    Bucket& bk = buckets_[slot];
    // An empty bucket's tail is the sentinel node, earlier than any event: the common case (appending) then
    // takes no data-dependent branch, whether the bucket was empty or not.
    const std::uint32_t tail = bk.tail;
    if (event_before(e, nodes_[tail].e)) [[unlikely]] {
      insert_inside(e, slot);
      return;
    }
    const std::uint32_t n = free_ != kNil ? free_ : grow_nodes();
    Node& node = nodes_[n];
    free_ = node.next;
    node.e = e;
    node.next = kNil;
    nodes_[tail].next = n; // (writes the sentinel's link when the bucket was empty; never read)
    const std::uint32_t was_empty = 0u - static_cast<std::uint32_t>(tail == kSentinel); // all ones or zero
    bk.head =
        (n & was_empty) | (bk.head & ~was_empty); // (a mask, not ?:, which compilers turn into a branch)
    bk.tail = n;
    set_bit(slot);
    ++near_size_;
    // The new event is the smallest if it is before the current smallest (min_key_ is the largest key when
    // the queue was empty).
    if (const unsigned __int128 k = event_key(e); k < min_key_) {
      min_key_ = k;
      min_slot_ = slot;
    }
  }

  /// Removes and returns the smallest event. Precondition: !empty().
  Event pop() {
    const std::size_t slot = min_slot_;
    --size_;
    if (slot == kFromHeap) [[unlikely]]
      return pop_far();
    Bucket& bk = buckets_[slot];
    const std::uint32_t n = bk.head;
    Node& node = nodes_[n];
    const Event out = node.e;
    const std::uint32_t next = node.next;
    const bool emptied = next == kNil;
    bk.head = next;
    bk.tail &= 0u - static_cast<std::uint32_t>(!emptied); // kSentinel (0) when it emptied
    // Clear the bucket's bit if it emptied, and the summary bit if its word did (no branch on either).
    std::uint64_t& word = bits_[slot >> 6];
    word &= ~(std::uint64_t{emptied} << (slot & 63));
    summary_ &= ~(std::uint64_t{word == 0} << (slot >> 6));
    node.next = free_;
    free_ = n;
    --near_size_;
    // The window now starts at this event's bucket (every bucketed event is at or after it).
    cur_ += static_cast<std::int64_t>((slot - (static_cast<std::size_t>(cur_) & kMask)) & kMask);
    if (emptied) {
      locate();
    } else {
      min_key_ = event_key(nodes_[next].e);
      if (!far_.empty() && event_key(far_.top()) < min_key_) [[unlikely]] {
        min_slot_ = kFromHeap;
        min_key_ = event_key(far_.top());
      }
    }
    return out;
  }

 private:
  static constexpr std::size_t kMask = kBuckets - 1;
  static constexpr std::size_t kWords = kBuckets / 64;
  static_assert(kWords <= 64, "the summary word has one bit per bitmap word");
  static constexpr std::uint32_t kNil = ~std::uint32_t{0};
  static constexpr int kMaxWalk = 8; // an out-of-order push walks at most this many nodes of its bucket
  struct Node {
    Event e;
    std::uint32_t next = kNil;
  };
  static constexpr std::uint32_t kSentinel = 0; // nodes_[0]: the tail of every empty bucket
  struct Bucket {
    std::uint32_t head = kNil;
    std::uint32_t tail = kSentinel;
  };
  static std::int64_t bucket_index(Time t) { return t.count_ps() >> kShift; } // floor, also for t < 0
  /// Slot of the earliest non-empty bucket; precondition: near_size_ > 0.
  std::size_t first_slot() const {
    // Circularly from the window start: the rest of its word, the later words, then (wrapping) the earlier
    // ones.
    const std::size_t s = static_cast<std::size_t>(cur_) & kMask;
    const std::size_t w = s >> 6;
    if (const std::uint64_t x = bits_[w] & (~std::uint64_t{0} << (s & 63)); x != 0)
      return (w << 6) + static_cast<std::size_t>(std::countr_zero(x));
    const std::uint64_t later = w == kWords - 1 ? 0 : summary_ & (~std::uint64_t{0} << (w + 1));
    const auto w2 = static_cast<std::size_t>(std::countr_zero(later != 0 ? later : summary_));
    return (w2 << 6) + static_cast<std::size_t>(std::countr_zero(bits_[w2]));
  }
  /// Sets min_slot_: the earliest bucketed event against the heap's top (kFromHeap also when all is empty).
  void locate() {
    if (near_size_ == 0) [[unlikely]] {
      min_slot_ = kFromHeap;
      min_key_ = far_.empty() ? kNoKey : event_key(far_.top());
      return;
    }
    min_slot_ = first_slot();
    min_key_ = event_key(nodes_[buckets_[min_slot_].head].e);
    if (!far_.empty() && event_key(far_.top()) < min_key_) [[unlikely]] {
      min_slot_ = kFromHeap;
      min_key_ = event_key(far_.top());
    }
  }
  void push_far(const Event& e);                        // into the heap, updating the minimum
  Event pop_far();                                      // the minimum is the heap's top
  void insert_inside(const Event& e, std::size_t slot); // e is earlier than the bucket's last event
  std::uint32_t grow_nodes();                           // a new node at the end of nodes_ (on the free list)
  void set_bit(std::size_t s) {
    bits_[s >> 6] |= std::uint64_t{1} << (s & 63);
    summary_ |= std::uint64_t{1} << (s >> 6);
  }

  std::vector<Bucket> buckets_; // slot = absolute bucket index mod kBuckets
  std::vector<std::uint64_t> bits_;
  std::uint64_t summary_ = 0;
  std::vector<Node> nodes_;
  std::uint32_t free_ = kNil; // free list of nodes_
  std::int64_t cur_ = 0; // bucket of the last popped event: bucketed events lie in [cur_, cur_ + kBuckets)
  std::size_t size_ = 0;
  std::size_t near_size_ = 0;
  DaryHeap<4> far_;
  // Where the smallest event is: a slot, or the heap (also when the queue is empty). Always up to date.
  static constexpr std::size_t kFromHeap = ~std::size_t{0};
  std::size_t min_slot_ = kFromHeap;
  static constexpr unsigned __int128 kNoKey = ~static_cast<unsigned __int128>(0);
  unsigned __int128 min_key_ = kNoKey; // event_key of the smallest event; kNoKey when empty
};

/// The queue Simulation uses. Chosen with bench/event_queue_bench.cpp and bench/packet_bench.cpp
/// (figures in docs/perf-log.md): the 4-ary heap is the fastest heap, the window queue is faster still on the
/// packet engine's event mix (most events less than a microsecond ahead, a few timers far ahead) and in
/// the hold benchmark up to 16k pending events.
using EventQueue = WindowQueue;

} // namespace ibn

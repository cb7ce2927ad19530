#include "models/flow/fluid_network.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ibn::flow {

FluidNetwork::FluidNetwork(std::vector<double> capacity_bytes_per_s) {
  links_.resize(capacity_bytes_per_s.size());
  for (std::size_t l = 0; l < links_.size(); ++l) {
    if (!(capacity_bytes_per_s[l] > 0) || !std::isfinite(capacity_bytes_per_s[l]))
      throw std::logic_error("FluidNetwork: link " + std::to_string(l) + " has no positive finite capacity");
    links_[l].cap = capacity_bytes_per_s[l];
  }
}

std::uint32_t FluidNetwork::start(std::span<const std::uint32_t> links, double bytes, std::int64_t now_ps) {
  if (!(bytes > 0)) throw std::logic_error("FluidNetwork::start: a flow needs bytes to move");
  if (links.empty()) throw std::logic_error("FluidNetwork::start: a flow needs a link");
  if (now_ps < pending_t_) throw std::logic_error("FluidNetwork::start: time went back");
  if (now_ps > pending_t_) flush();
  std::uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
  }
  Flow& f = flows_[id];
  f.links.assign(links.begin(), links.end());
  f.pos.resize(links.size());
  for (std::size_t k = 0; k < links.size(); ++k) {
    const std::uint32_t l = links[k];
    if (l >= links_.size()) throw std::logic_error("FluidNetwork::start: no link " + std::to_string(l));
    f.pos[k] = static_cast<std::uint32_t>(links_[l].flows.size());
    links_[l].flows.push_back(id);
  }
  f.rem = bytes;
  f.rate = 0;
  f.last = now_ps;
  f.finish = kNever;
  f.active = true;
  ++in_progress_;
  pending_t_ = now_ps;
  pending_.insert(pending_.end(), f.links.begin(), f.links.end());
  return id;
}

void FluidNetwork::flush() {
  if (pending_.empty()) return;
  reshare(pending_, pending_t_);
  pending_.clear();
}

std::int64_t FluidNetwork::next_completion() {
  flush();
  while (!due_.empty()) {
    const Due& d = due_.top();
    const Flow& f = flows_[d.flow];
    if (f.active && f.version == d.version) return d.t;
    due_.pop(); // superseded by a later solve, or its flow completed
  }
  return kNever;
}

void FluidNetwork::complete(std::int64_t t, std::vector<std::uint32_t>& done) {
  const std::size_t first = done.size();
  while (next_completion() == t) {
    done.push_back(due_.top().flow);
    due_.pop();
  }
  std::sort(done.begin() + static_cast<std::ptrdiff_t>(first), done.end());
  pending_t_ = t;
  for (std::size_t i = first; i < done.size(); ++i) {
    const std::uint32_t id = done[i];
    detach(id);
    Flow& f = flows_[id];
    f.active = false;
    f.rem = 0;
    ++f.version;
    --in_progress_;
    free_.push_back(id);
    pending_.insert(pending_.end(), f.links.begin(), f.links.end());
  }
}

void FluidNetwork::detach(std::uint32_t id) {
  Flow& f = flows_[id];
  for (std::size_t k = 0; k < f.links.size(); ++k) {
    auto& on = links_[f.links[k]].flows;
    const std::uint32_t at = f.pos[k];
    const std::uint32_t moved = on.back();
    on[at] = moved;
    on.pop_back();
    if (moved == id) continue;
    Flow& m = flows_[moved];
    for (std::size_t j = 0; j < m.links.size(); ++j)
      if (m.links[j] == f.links[k]) {
        m.pos[j] = at;
        break;
      }
  }
}

void FluidNetwork::reshare(std::span<const std::uint32_t> seeds, std::int64_t now) {
  // The component: every flow reachable from the seed links through shared links, and their links.
  ++epoch_;
  comp_links_.clear();
  comp_flows_.clear();
  stack_.clear();
  for (const std::uint32_t l : seeds)
    if (links_[l].mark != epoch_) {
      links_[l].mark = epoch_;
      comp_links_.push_back(l);
      stack_.push_back(l);
    }
  while (!stack_.empty()) {
    const std::uint32_t l = stack_.back();
    stack_.pop_back();
    for (const std::uint32_t id : links_[l].flows) {
      Flow& f = flows_[id];
      if (f.mark == epoch_) continue;
      f.mark = epoch_;
      comp_flows_.push_back(id);
      for (const std::uint32_t k : f.links)
        if (links_[k].mark != epoch_) {
          links_[k].mark = epoch_;
          comp_links_.push_back(k);
          stack_.push_back(k);
        }
    }
  }
  if (comp_flows_.empty()) return;
  fill();
  ++solves_;
  flows_solved_ += comp_flows_.size();
  // A flow whose rate did not change keeps its state and its queued completion; the others are brought up to
  // `now` at their old rate and get a new completion.
  for (const std::uint32_t id : comp_flows_) {
    Flow& f = flows_[id];
    if (f.new_rate == f.rate) continue;
    if (now > f.last) f.rem = std::max(0.0, f.rem - f.rate * static_cast<double>(now - f.last) * 1e-12);
    f.last = now;
    f.rate = f.new_rate;
    f.finish = now + std::max<std::int64_t>(0, std::llround(f.rem / f.rate * 1e12));
    ++f.version;
    due_.push(Due{f.finish, id, f.version});
  }
}

void FluidNetwork::fill() {
  // Progressive filling with a min-heap of the links' fair shares (left / unfixed flows). Fixing a flow at
  // the smallest share s takes s and one flow off each of its links, whose share (left - s) / (unfixed - 1)
  // is then at least what it was: a link's entry is pushed again after each change and an entry that no
  // longer equals its link's share is skipped. Ties: the link first in component order.
  if (comp_flows_.size() == 1) { // alone in its component: the smallest capacity on its way (same double)
    Flow& f = flows_[comp_flows_[0]];
    double share = links_[f.links[0]].cap;
    for (const std::uint32_t l : f.links) share = std::min(share, links_[l].cap);
    f.new_rate = share;
    return;
  }
  auto share_of = [](const Link& k) { return std::max(0.0, k.left) / k.unfixed; };
  for (std::uint32_t c = 0; c < comp_links_.size(); ++c) {
    Link& k = links_[comp_links_[c]];
    k.left = k.cap;
    k.unfixed = static_cast<std::uint32_t>(k.flows.size());
    k.cpos = c;
  }
  for (const std::uint32_t id : comp_flows_) flows_[id].new_rate = -1;
  std::size_t unfixed = comp_flows_.size();
  // A small component finds the smallest (share, component position) by a scan of its links each round:
  // the heap's choice without the heap (same order, same doubles).
  const bool scan = comp_links_.size() <= kScanLinks;
  // Fixes the unfixed flows of `best_link` at `share`; with the heap, re-queues the links they cross.
  auto fix = [&](std::uint32_t best_link, double share) {
    if (!(share > 0)) throw std::logic_error("FluidNetwork: max-min filling found no positive share");
    for (const std::uint32_t id : links_[best_link].flows) {
      Flow& f = flows_[id];
      if (f.new_rate >= 0) continue;
      f.new_rate = share;
      --unfixed;
      for (const std::uint32_t l : f.links) {
        Link& k = links_[l];
        k.left -= share;
        if (--k.unfixed > 0 && !scan && l != best_link) {
          heap_.push_back({share_of(k), k.cpos});
          std::push_heap(heap_.begin(), heap_.end(), std::greater<>{});
        }
      }
    }
  };
  if (scan) {
    while (unfixed > 0) {
      const Link* best = nullptr;
      std::uint32_t best_link = 0;
      double best_share = 0;
      for (const std::uint32_t l : comp_links_) {
        const Link& k = links_[l];
        if (k.unfixed == 0) continue;
        const double sh = share_of(k);
        if (best == nullptr || sh < best_share) {
          best = &k;
          best_link = l;
          best_share = sh;
        }
      }
      if (best == nullptr) throw std::logic_error("FluidNetwork: max-min filling ran out of links");
      fix(best_link, best_share);
    }
    return;
  }
  heap_.clear();
  for (std::uint32_t c = 0; c < comp_links_.size(); ++c)
    if (const Link& k = links_[comp_links_[c]]; k.unfixed > 0) heap_.push_back({share_of(k), c});
  std::make_heap(heap_.begin(), heap_.end(), std::greater<>{});
  while (unfixed > 0) {
    if (heap_.empty()) throw std::logic_error("FluidNetwork: max-min filling ran out of links");
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
    const Share top = heap_.back();
    heap_.pop_back();
    const Link& best = links_[comp_links_[top.cpos]];
    if (best.unfixed == 0 || share_of(best) != top.share) continue; // stale
    fix(comp_links_[top.cpos], top.share);
  }
}

} // namespace ibn::flow

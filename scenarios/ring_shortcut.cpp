#include "scenarios/ring_shortcut.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <utility>

namespace ibn::scen {

namespace {

constexpr std::int64_t kNoTime = -1;

double to_s(std::int64_t ps) {
  return static_cast<double>(ps) * 1e-12;
}
std::int64_t to_ps(double s) {
  return std::llround(s * 1e12);
}

/// NCCL's split of a chunk into slices (Builder::slices_of): count and the size of slice q.
struct SliceCut {
  std::uint64_t size = 0, count = 0;
  SliceCut(const RingPlan& p, std::uint64_t bytes) {
    if (bytes == 0) return;
    const std::uint64_t per = (bytes + p.slices_per_chunk - 1) / p.slices_per_chunk;
    size = std::max((per + 15) / 16 * 16, std::max<std::uint64_t>(1, p.slice / 32));
    count = (bytes + size - 1) / size;
  }
  std::uint64_t at(std::uint64_t bytes, std::uint64_t q) const { return std::min(size, bytes - q * size); }
};

} // namespace

std::unique_ptr<RingShortcut> RingShortcut::make(const RingPlan& plan, const JobLayout& layout,
                                                 flow::FlowEngine& engine, const ExecOptions& opt,
                                                 std::string& why_not) {
  why_not.clear();
  if (opt.noise || opt.on_transfer) {
    why_not = "calibrated noise or a transfer trace";
    return nullptr;
  }
  if (plan.window < plan.slices_per_chunk) {
    why_not = "a FIFO window shorter than a chunk's slices";
    return nullptr;
  }
  if (plan.ranks > layout.ranks() || layout.gpus_per_node == 0 ||
      plan.gpus_per_node != layout.gpus_per_node) {
    why_not = "the job's layout does not match the collective";
    return nullptr;
  }
  if (!takes_layout(layout.gpus_per_node)) {
    why_not = "more than one GPU per node (NVLink steps: not exact in every case)";
    return nullptr;
  }
  std::unique_ptr<RingShortcut> sc(new RingShortcut(plan, layout, engine, opt));
  const std::uint32_t nr = plan.ranks, nc = plan.channels, g = layout.gpus_per_node;
  sc->edge_pair_.assign(std::size_t{nc} * nr, -1);
  std::map<std::pair<eng::HcaIndex, eng::HcaIndex>, std::uint32_t> pair_of;
  std::unordered_map<std::uint32_t, std::uint32_t> link_owner; // directed link -> the pair using it
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> qp_edge; // (pair, channel) -> edge
  for (std::uint32_t c = 0; c < nc; ++c)
    for (std::uint32_t p = 0; p < nr; ++p) {
      const std::uint32_t e = c * nr + p;
      const std::uint32_t src = plan.orders[c][p], dst = plan.orders[c][(p + 1) % nr];
      const std::uint32_t sn = src / g, dn = dst / g;
      if (sn == dn) {
        sc->nvlink_edges_.push_back(e);
        continue;
      }
      const auto& snode = layout.nodes.at(sn);
      const auto& dnode = layout.nodes.at(dn);
      const auto nics = static_cast<std::uint32_t>(std::min(snode.size(), dnode.size()));
      const auto rail = static_cast<std::uint32_t>(plan.rails[c]) % nics;
      const auto key = std::make_pair(snode[rail], dnode[rail]);
      auto [it, fresh] = pair_of.try_emplace(key, static_cast<std::uint32_t>(sc->pairs_.size()));
      if (fresh) {
        Pair pr;
        pr.path = engine.static_path(key.first, key.second);
        for (const std::uint32_t d : pr.path.links) {
          if (!link_owner.try_emplace(d, static_cast<std::uint32_t>(sc->pairs_.size())).second) {
            why_not = "a fabric link carries the flows of two ring edges (HCA " + std::to_string(key.first) +
                      "->" + std::to_string(key.second) +
                      " and another pair): their sharing depends on timing";
            return nullptr;
          }
        }
        sc->pairs_.push_back(std::move(pr));
      }
      if (!qp_edge.try_emplace({it->second, c}, e).second) {
        why_not = "one QP would carry two ring edges";
        return nullptr;
      }
      sc->edge_pair_[e] = static_cast<std::int32_t>(it->second);
      sc->pairs_[it->second].edges.push_back(e);
    }
  // Twin channels (one class per (ring order, rail)): with one GPU per node and every chunk of every loop
  // full, channels with the same order and rail are the same flows on the same QPs' pair at the same times;
  // one of them is evaluated and counts for all (its flows weigh m in the pair's sharing).
  sc->chan_mult_.assign(nc, 1);
  bool all_full = g == 1;
  for (std::uint64_t grid = 0; all_full && grid < plan.bytes; grid += plan.loop_bytes()) {
    const std::uint64_t rem = plan.bytes - grid;
    all_full = plan.real_chunk(rem) * (plan.all_reduce() ? std::uint64_t{nc} * nr : nc) <= rem;
  }
  if (all_full)
    for (std::uint32_t c = 1; c < nc; ++c)
      for (std::uint32_t r = 0; r < c; ++r)
        if (sc->chan_mult_[r] > 0 && plan.orders[r] == plan.orders[c] &&
            plan.rails[r] % plan.nics_per_node == plan.rails[c] % plan.nics_per_node) {
          ++sc->chan_mult_[r];
          sc->chan_mult_[c] = 0;
          break;
        }
  for (auto& pr : sc->pairs_)
    std::erase_if(pr.edges, [&](std::uint32_t e) { return sc->chan_mult_[e / nr] == 0; });
  // Transfers per execution (closed form over the loops): per loop and channel, position p sends chunk
  // (p - s) mod n at step s; over 2(n-1) steps that is every chunk twice except chunks p+1 and p+2, over
  // n-1 steps every chunk once except chunk p+1.
  const bool ar = plan.all_reduce();
  for (std::uint64_t grid = 0; grid < plan.bytes; grid += plan.loop_bytes()) {
    const std::uint64_t rem = plan.bytes - grid, real = plan.real_chunk(rem);
    for (std::uint32_t c = 0; c < nc; ++c) {
      std::vector<std::uint64_t> cnt(nr);
      std::uint64_t sum = 0;
      for (std::uint32_t j = 0; j < nr; ++j) {
        const auto sz = plan.chunk_size(rem, real, c, j);
        cnt[j] = SliceCut(plan, sz).count;
        sum += cnt[j];
      }
      for (std::uint32_t p = 0; p < nr; ++p) {
        const std::uint64_t n_e =
            ar ? 2 * sum - cnt[(p + 1) % nr] - cnt[(p + 2) % nr] : sum - cnt[(p + 1) % nr];
        (sc->edge_pair_[c * nr + p] >= 0 ? sc->network_transfers_ : sc->nvlink_transfers_) += n_e;
      }
    }
  }
  return sc;
}

std::optional<Time> RingShortcut::run(Time now_t, const std::vector<Time>& ready_in) {
  const RingPlan& pl = plan_;
  const std::uint32_t nr = pl.ranks, nc = pl.channels, spc = pl.slices_per_chunk, W = pl.window;
  const std::size_t E = std::size_t{nc} * nr;
  const std::int64_t now = now_t.count_ps();
  const std::int64_t local = pl.step_overhead.count_ps(), net_local = pl.net_step_overhead.count_ps();
  std::vector<std::int64_t> ready(nr, now);
  for (std::uint32_t r = 0; r < nr && r < ready_in.size(); ++r) ready[r] = ready_in[r].count_ps();
  // DagExecutor::start: every rank waits the launch latency (NCCL's base cost) after it is ready.
  if (const std::int64_t launch = pl.launch_latency.count_ps(); launch > 0)
    for (auto& r : ready) r = std::max(r, now) + launch;
  const bool first_run = !counted_;
  // The same start offsets as the previous execution: the same execution shifted in time.
  std::vector<std::int64_t> key(nr);
  for (std::uint32_t r = 0; r < nr; ++r) key[r] = ready[r] - now;
  if (counted_ && key == last_key_) {
    for (const auto& pr : pairs_) engine_.account(pr.path, pr.payload, pr.wire, pr.messages);
    return Time::ps(now + last_duration_);
  }
  // Per edge e = c * nr + p (position p of channel c sending to p + 1): deliveries of the previous and the
  // current step per slice, posts of the current step, the FIFO window's deliveries, the QP's state.
  std::vector<std::int64_t> prev(E * spc, kNoTime), cur(E * spc, kNoTime), post(E * spc, 0);
  std::vector<std::uint8_t> cur_n(E, 0);
  std::vector<std::uint64_t> cur_bytes(E, 0); // the chunk sent at this step (its slices via SliceCut)
  std::vector<std::int64_t> lr(E, kNoTime);   // last delivery into position p of channel c
  std::vector<std::int64_t> win(E * W, 0);
  std::vector<std::uint64_t> win_count(E, 0);
  std::vector<std::int64_t> qp_free(E, 0), qp_last(E, 0);
  std::vector<std::int64_t> nv_free(nr, 0);
  std::vector<std::int64_t> stage_free(E, 0); // the channel's stage of the rank at position p of channel c
  // Per pair: the last bandwidth-phase end of its previous step. A flow of the next step that starts before
  // it would share the pair's bottleneck with the previous step's flows, which the per-step sharing below
  // does not follow: the execution is then not exact, run() returns nullopt.
  std::vector<std::int64_t> pair_end(pairs_.size(), 0);
  std::int64_t end = now;
  const std::int64_t nv_lat = opt_.nvlink_latency.count_ps();
  const double nv_Bps = opt_.nvlink_gbps * 1e9 / 8.0;

  // Scratch for the processor sharing of one pair.
  struct Item {
    std::uint32_t e, q;
    std::int64_t post;
    double work, rem;
    std::uint32_t mult; // flows it stands for (twin channels)
  };
  std::vector<Item> items;
  std::vector<std::size_t> head; // per edge of the pair: index of its next item
  struct Nv {
    std::int64_t post;
    std::uint32_t e, q;
  };
  std::vector<Nv> nv;

  const std::uint32_t nsteps = pl.steps();
  for (std::uint64_t grid = 0; grid < pl.bytes; grid += pl.loop_bytes()) {
    const std::uint64_t rem = pl.bytes - grid, real = pl.real_chunk(rem);
    const std::vector<std::int64_t> start_lr = lr;
    for (std::uint32_t s = 0; s < nsteps; ++s) {
      // Posts (DagExecutor::release): dependencies' deliveries + the step overhead (between nodes: the net
      // one), not before the rank is ready.
      for (std::uint32_t c = 0; c < nc; ++c) {
        if (chan_mult_[c] == 0) continue; // a twin of an earlier channel
        const auto& order = pl.orders[c];
        for (std::uint32_t p = 0; p < nr; ++p) {
          const std::size_t e = std::size_t{c} * nr + p;
          const std::uint32_t j = (p + nr - s % nr) % nr;
          const std::uint64_t bytes = pl.chunk_size(rem, real, c, j);
          const SliceCut cut(pl, bytes);
          cur_n[e] = static_cast<std::uint8_t>(cut.count);
          cur_bytes[e] = bytes;
          const std::size_t back = std::size_t{c} * nr + (p + nr - 1) % nr;
          for (std::uint32_t q = 0; q < cut.count; ++q) {
            std::int64_t dep = kNoTime;
            if (s == 0)
              dep = start_lr[e];
            else
              dep = prev[back * spc + q];
            if (win_count[e] + q >= W) dep = std::max(dep, win[e * W + (win_count[e] + q) % W]);
            const std::int64_t base = dep == kNoTime ? now : dep;
            std::int64_t at = std::max(base + (edge_pair_[e] >= 0 ? net_local : local), ready[order[p]]);
            if (pl.stage_gbps > 0) { // the channel's stage (DagExecutor::release), in step order
              at = std::max(at, stage_free[e]) +
                   channel_stage_pass(pl.wire(cut.at(bytes, q)), pl.stage_gbps).count_ps();
              stage_free[e] = at;
            }
            post[e * spc + q] = at;
          }
        }
      }
      // Network: per HCA pair, its channels' flows share the route's bottleneck C equally while active
      // (max-min on links no other pair uses), each QP sends its messages one after the other.
      for (std::size_t pi = 0; pi < pairs_.size(); ++pi) {
        Pair& pr = pairs_[pi];
        const double C = pr.path.bytes_per_s;
        const std::int64_t delay = pr.path.delay.count_ps();
        items.clear();
        for (const std::uint32_t e : pr.edges) {
          const SliceCut cut(pl, cur_bytes[e]);
          for (std::uint32_t q = 0; q < cur_n[e]; ++q) {
            const std::uint64_t payload = pl.wire(cut.at(cur_bytes[e], q));
            const auto wire = static_cast<double>(engine_.config().wire_bytes(payload));
            const std::uint32_t m = chan_mult_[e / nr];
            items.push_back({e, q, post[std::size_t{e} * spc + q], wire, wire, m});
            if (first_run) {
              pr.payload += m * payload;
              pr.wire += m * engine_.config().wire_bytes(payload);
              pr.messages += m;
            }
          }
        }
        if (items.empty()) continue;
        cells_ += items.size();
        for (const Item& it : items)
          if (std::max(it.post, qp_free[it.e]) < pair_end[pi]) return std::nullopt;
        // Fast path: one message per QP, all posted together on idle QPs, equal sizes: C / k each.
        bool same = true;
        for (const Item& it : items)
          same = same && it.q == 0 && cur_n[it.e] == 1 && it.post == items[0].post &&
                 it.work == items[0].work && qp_free[it.e] <= it.post;
        std::vector<std::int64_t>* out = &cur;
        auto finish = [&](const Item& it, std::int64_t bw_end) {
          const std::int64_t at = std::max(bw_end + delay, qp_last[it.e]);
          qp_last[it.e] = at;
          qp_free[it.e] = bw_end;
          pair_end[pi] = std::max(pair_end[pi], bw_end);
          (*out)[std::size_t{it.e} * spc + it.q] = at;
        };
        if (same) {
          double k = 0;
          for (const Item& it : items) k += it.mult;
          const std::int64_t bw_end = to_ps(to_s(items[0].post) + items[0].work / (C / k));
          for (const Item& it : items) finish(it, bw_end);
          continue;
        }
        // General case: processor sharing over the heads of the QPs (items are grouped by edge, in order).
        head.clear();
        std::vector<std::size_t> starts;
        for (std::size_t i = 0; i < items.size(); ++i)
          if (i == 0 || items[i].e != items[i - 1].e) starts.push_back(i);
        head = starts;
        std::vector<double> avail(starts.size());
        for (std::size_t h = 0; h < starts.size(); ++h)
          avail[h] = to_s(std::max(items[starts[h]].post, qp_free[items[starts[h]].e]));
        auto last_of = [&](std::size_t h) { return h + 1 < starts.size() ? starts[h + 1] : items.size(); };
        double t = *std::min_element(avail.begin(), avail.end());
        for (;;) {
          std::size_t active = 0;
          double next_arrival = INFINITY;
          for (std::size_t h = 0; h < starts.size(); ++h) {
            if (head[h] >= last_of(h)) continue;
            if (avail[h] <= t)
              active += items[head[h]].mult;
            else
              next_arrival = std::min(next_arrival, avail[h]);
          }
          if (active == 0) {
            if (next_arrival == INFINITY) break;
            t = next_arrival;
            continue;
          }
          const double rate = C / static_cast<double>(active);
          double dt_finish = INFINITY;
          std::size_t first_done = 0;
          for (std::size_t h = 0; h < starts.size(); ++h)
            if (head[h] < last_of(h) && avail[h] <= t && items[head[h]].rem / rate < dt_finish) {
              dt_finish = items[head[h]].rem / rate;
              first_done = h;
            }
          const double dt = std::min(dt_finish, next_arrival - t);
          const double t2 = t + dt;
          for (std::size_t h = 0; h < starts.size(); ++h) {
            if (head[h] >= last_of(h) || avail[h] > t) continue;
            Item& it = items[head[h]];
            it.rem -= rate * dt;
            if (h == first_done && dt == dt_finish) it.rem = 0;
            if (it.rem <= it.work * 1e-12) {
              const std::int64_t bw_end = to_ps(t2);
              finish(it, bw_end);
              ++head[h];
              if (head[h] < last_of(h)) avail[h] = std::max(t2, to_s(items[head[h]].post));
            }
          }
          t = t2;
        }
      }
      // NVLink copies: first come first served on the source GPU's egress (equal posts: emission order).
      if (!nvlink_edges_.empty()) {
        nv.clear();
        for (const std::uint32_t e : nvlink_edges_)
          for (std::uint32_t q = 0; q < cur_n[e]; ++q) nv.push_back({post[std::size_t{e} * spc + q], e, q});
        cells_ += nv.size();
        std::stable_sort(nv.begin(), nv.end(), [](const Nv& a, const Nv& b) { return a.post < b.post; });
        for (const Nv& x : nv) {
          const std::uint32_t c = x.e / nr, p = x.e % nr;
          const std::uint32_t src = pl.orders[c][p];
          const SliceCut cut(pl, cur_bytes[x.e]);
          const std::uint64_t bytes = pl.wire(cut.at(cur_bytes[x.e], x.q));
          const std::int64_t start = std::max(x.post, nv_free[src]);
          const std::int64_t w = Time::from_s(static_cast<double>(bytes) / nv_Bps).count_ps();
          nv_free[src] = start + w;
          cur[std::size_t{x.e} * spc + x.q] = start + w + nv_lat;
        }
      }
      // Deliveries: the FIFO windows, the last delivery into each position, the end.
      for (std::size_t e = 0; e < E; ++e) {
        const std::uint32_t n = cur_n[e];
        if (n == 0) continue;
        const std::size_t to = (e / nr) * nr + (e % nr + 1) % nr;
        for (std::uint32_t q = 0; q < n; ++q) {
          const std::int64_t d = cur[e * spc + q];
          win[e * W + (win_count[e] + q) % W] = d;
          end = std::max(end, d);
        }
        win_count[e] += n;
        lr[to] = cur[e * spc + n - 1];
      }
      std::swap(prev, cur);
    }
  }
  counted_ = true;
  last_key_ = std::move(key);
  last_duration_ = end - now;
  for (const auto& pr : pairs_) engine_.account(pr.path, pr.payload, pr.wire, pr.messages);
  return Time::ps(end);
}

} // namespace ibn::scen

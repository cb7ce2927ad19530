#!/usr/bin/env bash
# Fast-forward (packet.fast_forward, docs/engine.md "Fast-forward": period, fluid and repeat skips) side by
# side with the exact mode, through the product: the same `ibnetsim nccl-tests` command with the key off and
# on, alternately, and one table of wall time, peak RSS, engine events, p50, p99, what was skipped (periods,
# fluid skips, executions) and the ratios exact / fast-forward.
#
# Usage: bench/run_fast_forward.sh [--build-dir DIR] [--nodes N] [--gpus G] [--iters I] [--rounds R]
#                                  [-- extra nccl-tests arguments]
#   --nodes   nodes (default 16); --gpus GPUs per node (default 8); --iters nccl-tests -n (default 2)
#   --rounds  each mode runs R times, alternately (default 1); the table shows each mode's fastest round
#   after --, arguments replace the default workload "--algo ring --proto simple --channels 8"
# Example (issue 19's scale; the exact mode takes about 15 min and 2.2 GB):
#   bench/run_fast_forward.sh --nodes 128 --iters 20
# The machine is shared and noisy: compare the two modes within one run.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build="$here/build"
nodes=16
gpus=8
iters=2
rounds=1
workload=(--algo ring --proto simple --channels 8)
while [ $# -gt 0 ]; do
  case "$1" in
  --build-dir) build=$2; shift 2 ;;
  --nodes) nodes=$2; shift 2 ;;
  --gpus) gpus=$2; shift 2 ;;
  --iters) iters=$2; shift 2 ;;
  --rounds) rounds=$2; shift 2 ;;
  --) shift; workload=("$@"); break ;;
  -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
  *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
bin="$build/ibnetsim"
if [ ! -x "$bin" ]; then
  echo "missing $bin: cmake --build $build --target ibnetsim" >&2
  exit 1
fi
if [ ! -x /usr/bin/time ]; then
  echo "needs GNU time (/usr/bin/time: apt-get install time)" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmd=(nccl-tests all_reduce_perf -b 64M -e 64M -g "$gpus" --nodes "$nodes" -n "$iters" -w 0 -q "${workload[@]}")
echo "fast-forward vs exact — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command: ibnetsim ${cmd[*]} --set packet.fast_forward=false|true"

# best[mode] = "wall rss events p50 p99 periods" of the fastest round
declare -A best
for ((r = 0; r < rounds; ++r)); do
  for mode in false true; do
    out="$work/$mode"
    /usr/bin/time -f "%e %M" -o "$work/time" "$bin" "${cmd[@]}" --set packet.fast_forward=$mode -o "$out" >/dev/null
    read -r wall rss <"$work/time"
    figures=$(python3 - "$out/results.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
e = r["engine"]
c = r["collectives"][0]["completion_us"]
ff = e["counters"].get("fast_forward", {})
print(e["events"], c["p50"], c["p99"], ff.get("periods_skipped", 0), ff.get("fluid_skips", 0),
      ff.get("executions_skipped", 0))
PY
)
    line="$wall $rss $figures"
    if [ -z "${best[$mode]:-}" ] || awk -v a="$wall" -v b="${best[$mode]%% *}" 'BEGIN { exit !(a < b) }'; then
      best[$mode]=$line
    fi
  done
done

printf '%-14s %10s %10s %14s %14s %14s %8s %6s %6s\n' mode "wall (s)" "RSS (MB)" events "p50 (us)" "p99 (us)" \
  periods fluid execs
for mode in false true; do
  read -r wall rss events p50 p99 periods fluid execs <<<"${best[$mode]}"
  label=exact
  [ "$mode" = true ] && label=fast-forward
  printf '%-14s %10s %10.0f %14s %14s %14s %8s %6s %6s\n' "$label" "$wall" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" \
    "$events" "$p50" "$p99" "$periods" "$fluid" "$execs"
done
read -r w0 _ e0 p0 q0 _ _ _ <<<"${best[false]}"
read -r w1 _ e1 p1 q1 _ _ _ <<<"${best[true]}"
awk -v w0="$w0" -v w1="$w1" -v e0="$e0" -v e1="$e1" -v p0="$p0" -v p1="$p1" -v q0="$q0" -v q1="$q1" 'BEGIN {
  printf "exact / fast-forward: wall %.1fx, events %.1fx; p50 %+.4f %%, p99 %+.4f %%\n",
         w0 / w1, e0 / e1, (p1 / p0 - 1) * 100, (q1 / q0 - 1) * 100 }'

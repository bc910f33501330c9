#!/usr/bin/env bash
# What `zcap --top` costs the capture against `zcap --flows`: zcap's CPU (every thread of
# every zcap process: --top's socket-owner reader too, from /proc/PID/task/*/schedstat) per
# packet it captured, on the same UDP flood from the lab's sender (hping3), runs interleaved;
# --top in a 120x40 tmux session, as a person runs it. TRAFFIC `new-flows` (the default)
# rotates the source port, so that every packet opens a flow (a scan: the flow table fills,
# and each snapshot the view reads is as large as the table); `one-flow` keeps it.
# Usage: scripts/top-cost.sh [RUNS] [SECONDS] [new-flows|one-flow]; prints one line per run
# and the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
secs=${2:-8}
traffic=${3:-new-flows}
case $traffic in
  new-flows) keep=() ;;
  one-flow) keep=(-k) ;;
  *) echo "traffic: new-flows or one-flow" >&2; exit 2 ;;
esac
./scripts/deps.sh >/dev/null
cargo build --release -q -p zcap -p zcrx-bench
zcap=$PWD/target/release/zcap
./target/release/rxbench lab up >/dev/null
trap './target/release/rxbench lab down >/dev/null; tmux kill-session -t zcrx-top-cost 2>/dev/null || true' EXIT
a=zcrxbencha b=zcrxbenchb
iface=$(ip -n $b -o link show | awk -F': ' '/zx/ {print $2}' | cut -d@ -f1 | head -1)
dst=$(ip -n $b -4 -o addr show dev "$iface" | awk '{print $4}' | cut -d/ -f1)

cpu_ns() { # every zcap process's threads, ns of CPU
  local t=0 p
  for p in $(pgrep -x zcap || true); do
    for s in /proc/$p/task/*/schedstat; do t=$((t + $(cut -d' ' -f1 "$s" 2>/dev/null || echo 0))); done
  done
  echo $t
}

one() { # $1: flows | top
  local err=/tmp/zcrx-top-cost.err flags
  rm -f $err
  if [ "$1" = top ]; then flags="--top"; else flags="--flows"; fi
  tmux new-session -d -s zcrx-top-cost -x 120 -y 40 \
    "ip netns exec $b $zcap -i $iface -q $flags udp 2>$err >/dev/$( [ "$1" = top ] && echo tty || echo null)"
  sleep 2
  local c0 c1
  c0=$(cpu_ns)
  ip netns exec $a timeout "$secs" hping3 --udp --flood -q -d 22 -s 1024 "${keep[@]}" -p 5000 "$dst" >/dev/null 2>&1 || true
  sleep 1
  c1=$(cpu_ns)
  if [ "$1" = top ]; then tmux send-keys -t zcrx-top-cost q; else pkill -INT -x zcap || true; fi
  for _ in $(seq 50); do tmux has-session -t zcrx-top-cost 2>/dev/null || break; sleep 0.1; done
  tmux kill-session -t zcrx-top-cost 2>/dev/null || true
  local n
  n=$(awk '/packets captured/ {print $1}' $err | tail -1)
  echo "$1 $(( (c1 - c0) / (n > 0 ? n : 1) )) ns/packet, $n packets, $(awk '/dropped by kernel/ {print $1}' $err | tail -1) dropped by the kernel"
}

out=$(for r in $(seq "$runs"); do one flows; one top; done)
echo "$out"
for k in flows top; do
  v=$(echo "$out" | awk -v k=$k '$1 == k {print $2}' | sort -n)
  n=$(echo "$v" | wc -l)
  echo "$k ($traffic): median $(echo "$v" | sed -n "$(( (n + 1) / 2 ))p") ns/packet over $n runs (CPU $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1))"
done

#!/usr/bin/env bash
# What holds the receiving CPU when the receiving veth's queue overflows at rates far below
# what it takes: `rxbench generators` paced at RATE Mpps (xdp-live on CPU 0, the veth's NAPI
# thread on the last CPU, frames to a foreign MAC, nothing else receiving) under `perf record`
# of the veth's drops (xdp:xdp_devmap_xmit), its NAPI polls and the scheduler's switches;
# rx-stalls.py then lists each burst of drops with the longest time the NAPI thread went
# without polling and the task that held its CPU meanwhile. The same runs follow without perf,
# with the CPU shared and then kept for the receive path (`--isolate-rx-cpu on`: every other
# task that may run elsewhere moved off it, as `rxbench capacity` does by default), twice:
# the drops of each, side by side, with where rxbench placed the generator and the NAPI thread.
#
#   sudo scripts/rx-stalls.sh OUT_DIR [RATE_MPPS [RUNS]]
#
# Defaults: 0.3 Mpps, 20 runs of 0.5 s. /dev/cpu_dma_latency is held at 0 throughout (idle
# CPUs poll), as the capacity searches hold it. Needs perf (linux-perf) and python3. The
# record (hundreds of MB) is deleted once summarised.
set -euo pipefail
out=${1:?usage: rx-stalls.sh OUT_DIR [RATE_MPPS [RUNS]]}
rate=${2:-0.3}
runs=${3:-20}
here=$(cd "$(dirname "$0")/.." && pwd)
rxbench=${RXBENCH:-$here/target/release/rxbench}
cpu=$(($(nproc) - 1))
command -v perf >/dev/null || { echo "perf not found (apt-get install linux-perf)" >&2; exit 1; }
mkdir -p "$out"
exec 3>/dev/cpu_dma_latency
printf '\0\0\0\0' >&3
generators=("$rxbench" generators --rate "$rate" --runs "$runs" --seconds 0.5 --sizes 64
    --packets 10000)
perf record -q -k CLOCK_MONOTONIC -a -o "$out/perf.data" \
    -e xdp:xdp_devmap_xmit -e napi:napi_poll -e sched:sched_switch -e sched:sched_wakeup \
    -- "${generators[@]}" >"$out/traced.txt" 2>&1
perf script -i "$out/perf.data" -F cpu,time,event,trace,comm >"$out/perf.txt"
python3 "$here/scripts/rx-stalls.py" "$out/perf.txt" "$cpu" | tee "$out/bursts.txt"
rm -f "$out/perf.data" "$out/perf.txt"
# The xdp-live line of the table: frames dropped at b and the placement (`gen 0 napi 1`).
row() {
    local text
    text=$("${generators[@]}" --isolate-rx-cpu "$1" 2>&1) || { echo "$text" >&2; return 1; }
    grep ' xdp-live ' <<<"$text" | awk '{print "dropped", $(NF-4), "|", $(NF-3), $(NF-2), $(NF-1), $NF}'
}
echo "rate $rate Mpps, $runs runs of 0.5 s each: frames dropped at the receiving veth" >"$out/ab.txt"
for pass in 1 2; do
    for isolate in off on; do
        # An assignment, so that a failed run ends the script (set -e).
        r=$(row "$isolate")
        echo "pass $pass, --isolate-rx-cpu $isolate: $r" >>"$out/ab.txt"
    done
done
cat "$out/ab.txt"

#!/usr/bin/env bash
# What holds the receiving CPU when the receiving veth's queue overflows at rates far below
# what it takes: `rxbench generators` paced at RATE Mpps (xdp-live on CPU 0, the veth's NAPI
# thread on the last CPU, frames to a foreign MAC, nothing else receiving) under `perf record`
# of the veth's drops (xdp:xdp_devmap_xmit), its NAPI polls and the scheduler's switches;
# rx-stalls.py then lists each burst of drops with the longest time the NAPI thread went
# without polling and the task that held its CPU meanwhile. The same runs follow with every
# other task that may run elsewhere moved off that CPU (as `rxbench capacity` does by
# default; CPU sets restored at the end), without perf: the drops of each, side by side.
#
#   sudo scripts/rx-stalls.sh OUT_DIR [RATE_MPPS [RUNS]]
#
# Defaults: 0.3 Mpps, 20 runs of 0.5 s. /dev/cpu_dma_latency is held at 0 throughout (idle
# CPUs poll), as the capacity searches hold it. Needs perf (linux-perf) and python3.
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
perf script -i "$out/perf.data" -F cpu,time,event,trace,comm 2>/dev/null >"$out/perf.txt"
python3 "$here/scripts/rx-stalls.py" "$out/perf.txt" "$cpu" | tee "$out/bursts.txt"
# The record (hundreds of MB) is read: only its summary stays.
rm -f "$out/perf.data" "$out/perf.txt"
# Every task allowed elsewhere moved off the CPU; each one's list given back on exit.
declare -A was
restore() {
    for tid in "${!was[@]}"; do taskset -pc "${was[$tid]}" "$tid" >/dev/null 2>&1 || true; done
}
trap restore EXIT
others=$(seq -s, 0 $((cpu - 1)))
isolate() {
    for task in /proc/[0-9]*/task/[0-9]*; do
        tid=${task##*/}
        list=$(taskset -pc "$tid" 2>/dev/null | sed 's/.*: //') || continue
        [[ -n $list && -z ${was[$tid]:-} && $list != "$cpu" && $list != "$others" ]] || continue
        taskset -pc "$others" "$tid" >/dev/null 2>&1 && was[$tid]=$list || true
    done
}
drops() { grep xdp-live | awk '{print $(NF-4)}'; }
{
    echo "rate $rate Mpps, $runs runs of 0.5 s each: frames dropped at the receiving veth"
    for pass in 1 2; do
        echo "shared CPU $cpu:   $("${generators[@]}" 2>&1 | drops)"
        isolate
        echo "isolated CPU $cpu (${#was[@]} tasks moved): $("${generators[@]}" 2>&1 | drops)"
        restore
        was=()
    done
} | tee "$out/ab.txt"

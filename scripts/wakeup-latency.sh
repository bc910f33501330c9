#!/usr/bin/env bash
# The machine's own wake-up latency, the floor under every sniffer's latency figure:
# cyclictest (rt-tests, installed if missing) wakes a thread every millisecond and records how
# late it ran, with and without a /dev/cpu_dma_latency request of 0 (cyclictest holds one by
# default; --laptop leaves the idle states alone), at normal and at real-time priority.
# Percentiles from cyclictest's histogram (µs). At normal priority the default 50 µs timer
# slack is in the figure; a packet wake-up has none, so the SCHED_FIFO rows are the floor.
# Writes bench/results/<date>-<machine>/wakeup-latency-HHMM.txt.
# Run as root on an otherwise idle machine: ./scripts/wakeup-latency.sh
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cyclictest >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "wakeup-latency: cyclictest missing; run as root to install rt-tests" >&2
        exit 1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rt-tests >/dev/null
fi

loops=${LOOPS:-5000}
out="$(./scripts/results-dir.sh)/wakeup-latency-$(date -u +%H%M).txt"
percentiles() {
    awk '/^[0-9]/ { c[$1 + 0] = $2; n += $2 }
         END {
             s = 0
             for (i = 0; i < 100000; i++) {
                 s += c[i]
                 if (!a && s >= n * 0.5) { p50 = i; a = 1 }
                 if (!b && s >= n * 0.99) { p99 = i; b = 1 }
                 if (!d && s >= n * 0.999) { p999 = i; d = 1 }
             }
             printf "p50 %5d   p99 %5d   p99.9 %5d   (%d wake-ups)\n", p50, p99, p999, n
         }'
}

{
    echo "wake-up latency, cyclictest -i 1000 -l $loops, one thread, µs late; $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cpus, kernel $(uname -r)"
    echo "cpuidle driver: $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)"
    for prio in 0 50; do
        for idle in default capped; do
            flags=(-t1 -i 1000 -l "$loops" -q -h 100000)
            [ "$prio" -gt 0 ] && flags+=(-p "$prio")
            [ "$idle" = default ] && flags+=(--laptop)
            label="priority $([ "$prio" -gt 0 ] && echo "SCHED_FIFO $prio" || echo "normal      ")"
            label="$label, idle states $([ "$idle" = default ] && echo "as configured" || echo "cpu_dma_latency 0")"
            printf '%-62s %s\n' "$label" "$(cyclictest "${flags[@]}" 2>/dev/null | percentiles)"
        done
    done
} | tee "$out"

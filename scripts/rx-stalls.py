#!/usr/bin/env python3
"""Reads `perf script -F cpu,time,event,trace,comm` of a paced xdp-live run (see
rx-stalls.sh) and lists each burst of frames the receiving veth dropped (xdp:xdp_devmap_xmit
with drops) with the longest time its NAPI thread went without polling around it and the
task that held the receiving CPU from that last poll on; then how many bursts each task held.
The veth is the device polled most on RX_CPU. The task is the last one switched in on
RX_CPU up to 50 µs after the poll that opens the gap (the NAPI thread goes to sleep within
a few µs of its last poll); a gap in which no switch came that soon is put down to the NAPI
thread itself, as a vCPU that does not run at all would show.

    rx-stalls.py PERF_SCRIPT_TEXT RX_CPU
"""
import bisect
import collections
import re
import sys

LINE = re.compile(r"^\s*(.*?)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s?(.*)$")
NEXT = re.compile(r"next_comm=(.*?) next_pid=(\d+)")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    path, rx = sys.argv[1], int(sys.argv[2])
    drops, polls, switches = [], [], []
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            _, cpu, t, event, rest = m.groups()
            cpu, t = int(cpu), float(t)
            if event == "xdp:xdp_devmap_xmit":
                n = re.search(r"drops=(\d+)", rest)
                if n and int(n.group(1)) > 0:
                    drops.append((t, int(n.group(1))))
            elif cpu == rx and event == "napi:napi_poll":
                dev = re.search(r"for device (\S+)", rest)
                polls.append((t, dev.group(1) if dev else "?"))
            elif cpu == rx and event == "sched:sched_switch":
                n = NEXT.search(rest)
                if n:
                    switches.append((t, f"{n.group(1)} (pid {n.group(2)})"))
    drops.sort()
    devices = collections.Counter(d for _, d in polls)
    if not devices:
        sys.exit(f"no NAPI poll on CPU {rx} in {path}")
    veth = devices.most_common(1)[0][0]
    polls = sorted(t for t, d in polls if d == veth)
    switches.sort()
    switch_times = [s[0] for s in switches]
    # Bursts: drops less than 5 ms apart.
    bursts = []
    for t, n in drops:
        if bursts and t - bursts[-1][1] < 0.005:
            bursts[-1][1] = t
            bursts[-1][2] += n
        else:
            bursts.append([t, t, n])
    held = collections.Counter()
    print(f"{len(bursts)} bursts of drops, {sum(b[2] for b in bursts)} frames ({veth}'s NAPI polls on CPU {rx})")
    print("start (s)          frames  longest NAPI gap (ms)  task on CPU %d from the gap's start" % rx)
    for start, end, n in bursts:
        # From the last poll before the window, so that a window with no poll in it still
        # measures the gap it lies in.
        lo = max(bisect.bisect_left(polls, start - 0.005) - 1, 0)
        hi = bisect.bisect_right(polls, end + 0.001)
        gaps = [(polls[k + 1] - polls[k], polls[k]) for k in range(lo, min(hi, len(polls) - 1))]
        gap, since = max(gaps) if gaps else (0.0, start)
        i = bisect.bisect_right(switch_times, since + 0.00005) - 1
        task = switches[i][1] if i >= 0 else "?"
        held[task] += 1
        print(f"{start:17.6f}  {n:6d}  {gap * 1e3:21.3f}  {task}")
    print("\nbursts by the task holding the CPU:")
    for task, k in held.most_common():
        print(f"  {k:4d}  {task}")


if __name__ == "__main__":
    main()

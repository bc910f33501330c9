#!/usr/bin/env python3
"""Where each frame's receive time goes, mode against mode, from a profile-capacity.sh run.

    scripts/per-frame-profile.py OUT_DIR [--top N]

OUT_DIR holds what scripts/profile-capacity.sh left: one perf recording of the receiving CPU
per search (N-MODE.data, N-MODE.what) and rxbench's capacity.json. Each recording's samples
are divided by the frames its search's trials sent: the CPU's time per frame offered, by
command (the receiving veth's NAPI thread, zcap, tcpdump, idle) and, for the NAPI thread, by
kernel symbol. The searches of one mode are summed. With `rxbench capacity --loads` every
mode runs the same trials at the same rates, so the columns compare like with like; the
first mode (baseline-tx, the ceiling, when it was asked for) is the reference the last
column measures from.
"""
import argparse
import collections
import json
import pathlib
import re
import subprocess
import sys


def samples(data):
    """(comm, symbol) -> ns of CPU time, from `perf report` (cpu-clock: a sample's period)."""
    out = subprocess.run(
        ["perf", "report", "-i", str(data), "--no-children", "--sort", "comm,sym",
         "-F", "period,comm,sym", "-g", "none", "--stdio"],
        capture_output=True, text=True, check=True).stdout
    got = collections.Counter()
    for line in out.splitlines():
        m = re.match(r"\s*(\d+)\s+(.+?)\s+\[[.k]\]\s+(.*\S)", line)
        if m:
            got[(m.group(2), m.group(3))] += int(m.group(1))
    return got


def group(comm):
    if comm.startswith("napi/"):
        return "napi"
    if comm in ("zcap", "tcpdump", "swapper"):
        return comm
    return "other"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", type=pathlib.Path)
    ap.add_argument("--top", type=int, default=25, help="NAPI symbols shown (default 25)")
    a = ap.parse_args()
    report = json.loads((a.out_dir / "capacity.json").read_text())
    # (mode, size, flows, search) -> frames sent by the search's trials (each trial once:
    # the goals of one search share them).
    sent = {}
    for p in report.get("capacity", []):
        if p.get("trials_shared"):
            continue
        key = (p["mode"], p["frame_bytes"], p["flows"], p["search"])
        # The binary search's goals are searches of their own, one recording: add them up.
        sent[key] = sent.get(key, 0) + sum(t["sent"] for t in p["trials"])
    by_mode = collections.OrderedDict()
    for what in sorted(a.out_dir.glob("[0-9]*-*.what"), key=lambda w: int(w.name.split("-")[0])):
        line = what.read_text().strip()
        m = re.match(r"capacity: (.+) at (\d+) B, (\d+) flows, search (\d+)", line)
        data = what.with_suffix(".data")
        if not m or not data.exists() or data.stat().st_size == 0:
            print(f"skipped: {line or what.name} (no recording or not a fixed size)", file=sys.stderr)
            continue
        mode, size, flows, search = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)) - 1
        frames = sent.get((mode, size, flows, search))
        if not frames:
            print(f"skipped: {line} (no trials in capacity.json)", file=sys.stderr)
            continue
        acc = by_mode.setdefault((mode, size, flows), [collections.Counter(), 0])
        acc[0].update(samples(data))
        acc[1] += frames
    if not by_mode:
        sys.exit("nothing to compare: no recording matched capacity.json")
    modes = list(by_mode)
    per = {}
    for k in modes:
        got, frames = by_mode[k]
        groups = collections.Counter()
        napi = collections.Counter()
        for (comm, sym), ns in got.items():
            g = group(comm)
            groups[g] += ns
            if g == "napi":
                napi[sym] += ns
        per[k] = (frames, {g: v / frames for g, v in groups.items()},
                  {s: v / frames for s, v in napi.items()})
    ref = modes[0]
    names = [f"{m} ({s} B, {f} flows)" for m, s, f in modes]
    print("ns of the receiving CPU per frame sent, by command (samples x period / frames)")
    print("| | " + " | ".join(names) + " |")
    print("|---" * (len(modes) + 1) + "|")
    print("| frames | " + " | ".join(str(per[k][0]) for k in modes) + " |")
    for g in ("napi", "zcap", "tcpdump", "other", "swapper"):
        if any(per[k][1].get(g) for k in modes):
            print(f"| {g} | " + " | ".join(f"{per[k][1].get(g, 0):.1f}" for k in modes) + " |")
    print()
    print(f"the NAPI thread's kernel symbols (self), ns per frame; last column: the largest "
          f"mode's minus {names[0]}")
    total = collections.Counter()
    for k in modes:
        total.update(per[k][2])
    top = [s for s, _ in total.most_common(a.top)]
    print("| symbol | " + " | ".join(names) + " | most - first |")
    print("|---" * (len(modes) + 2) + "|")
    for s in top:
        vals = [per[k][2].get(s, 0.0) for k in modes]
        print(f"| {s} | " + " | ".join(f"{v:.1f}" for v in vals) +
              f" | {max(vals[1:], default=vals[0]) - vals[0]:+.1f} |")
    rest = [sum(v for s, v in per[k][2].items() if s not in top) for k in modes]
    print("| (the rest) | " + " | ".join(f"{v:.1f}" for v in rest) + " | |")
    for k in modes[1:]:
        diffs = [(s, per[k][2].get(s, 0.0) - per[ref][2].get(s, 0.0))
                 for s in set(per[k][2]) | set(per[ref][2])]
        moved = sorted(diffs, key=lambda x: -abs(x[1]))[:8]
        print(f"\n{k[0]} against {ref[0]}: NAPI {per[k][1].get('napi', 0) - per[ref][1].get('napi', 0):+.1f} ns a frame; "
              "the symbols that moved most: " + ", ".join(f"{s} {d:+.1f}" for s, d in moved))


if __name__ == "__main__":
    main()

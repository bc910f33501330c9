#!/bin/sh
# The flow table against hash maps (criterion), summarised into bench/results/<date>-<machine>/flowcache-bench-HHMM.txt:
# the median time of each benchmark and what it is per packet. Usage: scripts/flowcache-bench.sh
set -eu
cd "$(dirname "$0")/.."
filter='extract_track|extract_stream'
stamp=$(mktemp)
cargo bench -p zcrx-flowcache --bench flowcache -- "$filter"
out="$(./scripts/results-dir.sh)/flowcache-bench-$(date -u +%H%M).txt"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
{
  echo "# cargo bench -p zcrx-flowcache --bench flowcache -- '$filter'   $(date -u +%Y-%m-%dT%H:%M:%SZ), $cpu, $(nproc) CPUs, THP $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo n/a), criterion medians; baselines in the same run"
  STAMP="$stamp" python3 - <<'PY'
import json, os, pathlib
since = os.path.getmtime(os.environ["STAMP"])
for b in sorted(pathlib.Path("target/criterion").glob("extract_*/**/new/benchmark.json")):
    meta = json.loads(b.read_text())
    if not meta["full_id"].startswith(("extract_track/", "extract_stream/")):
        continue
    if (b.parent / "estimates.json").stat().st_mtime < since:
        continue  # not measured by this run
    est = json.loads((b.parent / "estimates.json").read_text())
    ns = est["median"]["point_estimate"]
    n = (meta.get("throughput") or {}).get("Elements", 1)
    print(f'{meta["full_id"]:<50} {ns / 1000:10.1f} us {n / ns * 1000:7.1f} M pkt/s {ns / n:8.2f} ns/pkt')
PY
} > "$out"
rm -f "$stamp"
cat "$out"

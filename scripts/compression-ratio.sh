#!/usr/bin/env bash
# The compression ratio of zcap's compressed files on real traffic: zcap captures the
# loopback while a Python HTTP server hands the text files under /usr/share/doc and
# /usr/share/common-licenses (up to 64 MiB; many of them already gzipped, as on any
# Debian machine) to a client (TCP handshakes, HTTP headers, text, ACKs), then
# writes that capture again as .gz, .zst (levels 1 and 3) and .lz4 and compares sizes and
# the time each took. Needs root (a capture). Usage: scripts/compression-ratio.sh [ZCAP]
set -euo pipefail
cd "$(dirname "$0")/.."
zcap=${1:-target/release/zcap}
[ -x "$zcap" ] || { echo "compression-ratio: $zcap not found (cargo build --release -p zcap)" >&2; exit 1; }
work=$(mktemp -d /var/tmp/zcrx-ratio.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
port=18080
python3 -m http.server --bind 127.0.0.1 --directory /usr/share "$port" >/dev/null 2>&1 &
sleep 1
"$zcap" -i lo -q -w "$work/real.pcap" "tcp port $port" 2>"$work/zcap.err" &
zpid=$!
sleep 1
python3 - "$port" <<'EOF'
import os, sys, urllib.request
port = sys.argv[1]
n, total = 0, 0
for top in ("doc", "common-licenses"):
    for root, _, files in os.walk("/usr/share/" + top):
        for f in sorted(files):
            path = os.path.join(root, f)
            if not os.path.isfile(path) or os.path.getsize(path) > 1 << 20:
                continue
            rel = os.path.relpath(path, "/usr/share")
            if total > 64 << 20:
                break
            try:
                total += len(urllib.request.urlopen(f"http://127.0.0.1:{port}/{rel}").read())
                n += 1
            except Exception:
                pass
print(f"compression-ratio: fetched {n} files, {total} bytes", file=sys.stderr)
EOF
sleep 1
kill -INT "$zpid"
wait "$zpid" || true
plain=$(stat -c %s "$work/real.pcap")
packets=$(grep -o '^[0-9]* packets captured' "$work/zcap.err" | cut -d' ' -f1)
echo "real capture: $packets packets, $plain bytes of pcap (loopback HTTP of text files)"
printf '%-10s %12s %8s %8s\n' format bytes ratio seconds
for spec in gzip:gz zstd:1:zst zstd:3:zst lz4:lz4; do
    ext=${spec##*:}
    how=${spec%:*}
    out="$work/real-${how/:/-}.pcap.$ext"
    start=$(date +%s.%N)
    "$zcap" -r "$work/real.pcap" --compress "$how" -w "$out" 2>/dev/null
    end=$(date +%s.%N)
    size=$(stat -c %s "$out")
    awk -v f="$how" -v s="$size" -v p="$plain" -v a="$start" -v b="$end" \
        'BEGIN { printf "%-10s %12d %8.2f %8.3f\n", f, s, p / s, b - a }'
done

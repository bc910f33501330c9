#!/usr/bin/env bash
# A soak of zcap's long-running mode: `zcap -i IF -C 1 -W 20 -z HOOK --flows --ipfix ...`
# against steady UDP traffic (256 flows, --pps packets a second) in a netns lab, sampling
# zcap's resident memory, open descriptors, threads and child processes every --every
# seconds. At the end it checks that all of them stayed flat after the warm-up (the first
# minute, or the first quarter of a shorter run), that the kernel dropped nothing, that every
# rotated file (gzipped by the hook) reads whole, and that the IPFIX collector received
# messages. Exit status 0 only when every check passes. Run as root.
#
#   sudo ./scripts/soak.sh [--seconds 1800] [--every 10] [--pps 10000] [--zcap PATH]
#
# CI runs `--seconds 60 --every 5` (capture/zcap/tests/soak.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=1800 every=10 pps=10000 zcap=""
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        --every) every=$2; shift 2 ;;
        --pps) pps=$2; shift 2 ;;
        --zcap) zcap=$2; shift 2 ;;
        *) echo "soak: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "$zcap" ]; then
    ./scripts/deps.sh
    cargo build -q --release -p zcap
    zcap=$PWD/target/release/zcap
fi
[ "$(id -u)" = 0 ] || { echo "soak: run as root (network namespaces, AF_PACKET)" >&2; exit 2; }

tag=$$
A=zsoaka$tag B=zsoakb$tag IA=zsa$tag IB=zsb$tag
work=$(mktemp -d /tmp/zcrx-soak.XXXXXX)
gen_pid="" col_pid="" zcap_pid=""
cleanup() {
    for p in $gen_pid $zcap_pid $col_pid; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    ip netns del "$A" 2>/dev/null || true
    ip netns del "$B" 2>/dev/null || true
    [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

ip netns add "$A"
ip netns add "$B"
ip link add "$IA" type veth peer name "$IB"
ip link set "$IA" netns "$A"
ip link set "$IB" netns "$B"
ip -n "$A" addr add 198.18.200.1/24 dev "$IA"
ip -n "$B" addr add 198.18.200.2/24 dev "$IB"
ip -n "$A" link set "$IA" up
ip -n "$B" link set "$IB" up
ip -n "$B" link set lo up

# The IPFIX collector: counts messages and bytes, writes them out when told to stop.
cat >"$work/collector.py" <<'EOF'
import signal, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 4739))
n = b = 0
def done(*_):
    open(sys.argv[1], "w").write(f"{n} {b}\n")
    sys.exit(0)
signal.signal(signal.SIGTERM, done)
while True:
    m = s.recv(65535)
    n += 1
    b += len(m)
EOF
ip netns exec "$B" python3 "$work/collector.py" "$work/collector.out" &
col_pid=$!

# The hook: gzip (forced: -W reuses names), and a line per run.
cat >"$work/hook.sh" <<EOF
#!/bin/sh
gzip -f "\$1" && echo "\$1" >> "$work/hooks.log"
EOF
chmod +x "$work/hook.sh"

# Steady traffic: 256 flows, paced in bursts of 100 packets.
cat >"$work/gen.py" <<'EOF'
import socket, sys, time
pps = int(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
payload = b"x" * 64
i = 0
t0 = time.monotonic()
while True:
    for _ in range(100):
        s.sendto(payload, ("198.18.200.2", 10000 + i % 256))
        i += 1
    ahead = t0 + i / pps - time.monotonic()
    if ahead > 0:
        time.sleep(ahead)
EOF

mkdir "$work/cap"
ip netns exec "$B" "$zcap" -i "$IB" -q -w "$work/cap/cap" -C 1 -W 20 -z "$work/hook.sh" \
    --flows --ipfix 127.0.0.1:4739 udp >"$work/zcap.out" 2>"$work/zcap.err" &
zcap_pid=$!
for _ in $(seq 100); do grep -q "listening on" "$work/zcap.err" && break; sleep 0.1; done
grep -q "listening on" "$work/zcap.err" || { cat "$work/zcap.err" >&2; exit 1; }
ip netns exec "$A" python3 "$work/gen.py" "$pps" &
gen_pid=$!

children() {
    local n=0 pp
    for s in /proc/[0-9]*/stat; do
        read -r _ _ _ pp _ 2>/dev/null <"$s" || continue
        [ "$pp" = "$1" ] && n=$((n + 1))
    done
    echo "$n"
}
echo "time_s rss_kib fds threads children" >"$work/samples"
start=$(date +%s)
while :; do
    now=$(( $(date +%s) - start ))
    [ -d "/proc/$zcap_pid" ] || { echo "soak: zcap exited early" >&2; cat "$work/zcap.err" >&2; exit 1; }
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$zcap_pid/status")
    threads=$(awk '/^Threads/ {print $2}' "/proc/$zcap_pid/status")
    fds=$(ls "/proc/$zcap_pid/fd" | wc -l)
    echo "$now $rss $fds $threads $(children "$zcap_pid")" >>"$work/samples"
    [ "$now" -ge "$seconds" ] && break
    sleep "$every"
done
kill "$gen_pid"; wait "$gen_pid" 2>/dev/null || true; gen_pid=""
sleep 0.5
kill -INT "$zcap_pid"
zcap_rc=0
wait "$zcap_pid" || zcap_rc=$?
zcap_pid=""
kill -TERM "$col_pid"; wait "$col_pid" 2>/dev/null || true; col_pid=""

fail=0
check() { if eval "$2"; then echo "ok:   $1"; else echo "FAIL: $1"; fail=1; fi; }
warm=$(( seconds / 4 < 60 ? seconds / 4 : 60 ))
read -r rss0 fds0 thr0 <<<"$(awk -v w="$warm" 'NR > 1 && $1 >= w {print $2, $3, $4; exit}' "$work/samples")"
read -r rss_max fds_max thr_max kids_max rss_end <<<"$(awk 'NR > 1 {
    if ($2 > r) r = $2; if ($3 > f) f = $3; if ($4 > t) t = $4; if ($5 > c) c = $5; e = $2 }
    END {print r, f, t, c, e}' "$work/samples")"
read -r rss_first <<<"$(awk 'NR == 2 {print $2}' "$work/samples")"
dropped=$(sed -n 's/^\([0-9]*\) packets dropped by kernel$/\1/p' "$work/zcap.err")
captured=$(sed -n 's/^\([0-9]*\) packets captured$/\1/p' "$work/zcap.err")
hooks=$(wc -l <"$work/hooks.log" 2>/dev/null || echo 0)
read -r ipfix_msgs ipfix_bytes <"$work/collector.out" || true
bad_files=0 files=0
for f in "$work"/cap/cap*; do
    files=$((files + 1))
    case "$f" in
        *.gz) gzip -t "$f" && zcat "$f" | "$zcap" -r - -q -w /dev/null 2>/dev/null || bad_files=$((bad_files + 1)) ;;
        *) "$zcap" -r "$f" -q -w /dev/null 2>/dev/null || bad_files=$((bad_files + 1)) ;;
    esac
done

echo "soak: $(date -u +%FT%TZ), $(lscpu | sed -n 's/^Model name: *//p') ($(nproc) vCPU), Linux $(uname -r)"
echo "soak: ${seconds} s at ${pps} packets/s over 256 flows; samples every ${every} s (warm-up ${warm} s):"
column -t "$work/samples" | sed 's/^/  /'
echo "soak: RSS ${rss_first} KiB at the first sample, ${rss0} after warm-up, ${rss_end} at the end, ${rss_max} at most"
echo "soak: descriptors ${fds0} after warm-up, ${fds_max} at most; threads ${thr0}, ${thr_max} at most; children at most ${kids_max}"
echo "soak: ${captured:-?} packets captured, ${dropped:-?} dropped by the kernel; ${hooks} files rotated and gzipped; ${files} files on disk (-W 20), ${bad_files} unreadable; ${ipfix_msgs} IPFIX messages (${ipfix_bytes} bytes) at the collector"
check "zcap exited 0 on SIGINT" '[ "$zcap_rc" = 0 ]'
check "RSS flat after warm-up (at most 8 MiB above)" '[ $((rss_max - rss0)) -le 8192 ]'
check "descriptors flat after warm-up" '[ "$fds_max" -le $((fds0 + 2)) ]'
check "threads flat after warm-up" '[ "$thr_max" -le "$thr0" ]'
check "at most 16 hooks at once" '[ "$kids_max" -le 16 ]'
check "no kernel drops" '[ "${dropped:-1}" = 0 ]'
check "packets captured" '[ "${captured:-0}" -gt 0 ]'
check "files rotated and gzipped" '[ "$hooks" -gt 0 ]'
check "every file reads whole" '[ "$bad_files" = 0 ]'
check "the collector received IPFIX" '[ "${ipfix_msgs:-0}" -gt 0 ]'
exit "$fail"

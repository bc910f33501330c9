#!/usr/bin/env bash
# A soak of the whole sensor: `zcap -i IF -C 1 -W 20 -z HOOK --flows --ipfix ... --metrics
# ... --web-config ... --pcap-over-ip ... (TLS, client certificates, an allow-list)` against
# steady UDP traffic (256 flows, --pps packets a second) in a netns lab, while a real
# Prometheus scrapes the metrics over TLS with basic auth, a PCAP-over-IP client reads the
# stream over mutual TLS (openssl s_client into zcap -r -), and hostile clients
# (scripts/hostile-clients.py: hundreds of idle connections, slow senders, an oversized
# header, garbage, a half TLS handshake, and connections from outside the allow-list) come
# every --hostile-every seconds. It samples zcap's resident memory, open descriptors,
# threads and processes (zcap's children and the hook runner's) every --every seconds. At
# the end it checks that all of them stayed flat after the warm-up (the first minute, or the
# first quarter of a shorter run) within the endpoints' bounds, that the kernel dropped
# nothing, that every rotated file (gzipped by the hook) reads whole, that the IPFIX
# collector received messages, that every Prometheus scrape succeeded and that the
# PCAP-over-IP client got every packet zcap captured. Exit status 0 only when every check
# passes. Run as root.
#
#   sudo ./scripts/soak.sh [--seconds 1800] [--every 10] [--pps 10000] [--hostile-every 60]
#                          [--zcap PATH]
#
# CI runs `--seconds 60 --every 5 --hostile-every 20` (zcap/tests/soak.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=1800 every=10 pps=10000 hostile_every=60 zcap=""
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        --every) every=$2; shift 2 ;;
        --pps) pps=$2; shift 2 ;;
        --hostile-every) hostile_every=$2; shift 2 ;;
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
gen_pid="" col_pid="" zcap_pid="" prom_pid="" client_pid="" hostile_pids=""
cleanup() {
    for p in $gen_pid $hostile_pids $client_pid $zcap_pid $col_pid $prom_pid; do kill "$p" 2>/dev/null || true; done
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

# TLS: a CA, the server's certificate (for 127.0.0.1) and a client's, all made here.
tls="$work/tls"
mkdir "$tls"
(
    cd "$tls"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj /CN=soak-ca -keyout ca.key -out ca.pem
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=zcap \
        -keyout server.key -out server.csr
    printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
        -extfile server.ext -out server.pem
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=soak-client \
        -keyout client.key -out client.csr
    # X.509 v3 with its purpose (webpki takes no v1 certificate).
    printf 'extendedKeyUsage=clientAuth\n' >client.ext
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
        -extfile client.ext -out client.pem
) >/dev/null 2>&1
# --metrics over TLS with basic auth, in the exporter toolkit's format.
password=soak-$tag
hash=$(python3 -W ignore -c "import crypt,sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))" "$password")
printf '%s\n' "tls_server_config:" "  cert_file: tls/server.pem" "  key_file: tls/server.key" \
    "  min_version: TLS12" "basic_auth_users:" "  prometheus: '$hash'" >"$work/web.yml"
promtool check web-config "$work/web.yml" >/dev/null
# Prometheus scrapes zcap every 5 s over TLS, with basic auth.
printf '%s\n' "global:" "  scrape_interval: 5s" "  scrape_timeout: 4s" "scrape_configs:" \
    "  - job_name: zcap" "    scheme: https" "    tls_config:" "      ca_file: $tls/ca.pem" \
    "    basic_auth:" "      username: prometheus" "      password: $password" \
    "    static_configs:" "      - targets: ['127.0.0.1:9128']" >"$work/prometheus.yml"

mkdir "$work/cap"
ip netns exec "$B" "$zcap" -i "$IB" -q -w "$work/cap/cap" -C 1 -W 20 -z "$work/hook.sh" \
    --flows --ipfix 127.0.0.1:4739 \
    --metrics 127.0.0.1:9128 --web-config "$work/web.yml" \
    --pcap-over-ip 127.0.0.1:57012 --pcap-over-ip-cert "$tls/server.pem" \
    --pcap-over-ip-key "$tls/server.key" --pcap-over-ip-client-ca "$tls/ca.pem" \
    --pcap-over-ip-allow 127.0.0.1/32 \
    udp >"$work/zcap.out" 2>"$work/zcap.err" &
zcap_pid=$!
for _ in $(seq 100); do grep -q "listening on" "$work/zcap.err" && break; sleep 0.1; done
grep -q "listening on" "$work/zcap.err" || { cat "$work/zcap.err" >&2; exit 1; }
ip netns exec "$B" prometheus --config.file="$work/prometheus.yml" \
    --storage.tsdb.path="$work/prom" --web.listen-address=127.0.0.1:9090 \
    >"$work/prometheus.log" 2>&1 &
prom_pid=$!
# The PCAP-over-IP client: mutual TLS, the stream counted by a second zcap reading it.
ip netns exec "$B" sh -c "openssl s_client -quiet -connect 127.0.0.1:57012 \
    -cert '$tls/client.pem' -key '$tls/client.key' -CAfile '$tls/ca.pem' \
    -verify_return_error </dev/null 2>'$work/s_client.err' \
    | '$zcap' -r - --count -q >'$work/client.count' 2>'$work/client.err'" &
client_pid=$!
sleep 2
ip netns exec "$A" python3 "$work/gen.py" "$pps" &
gen_pid=$!
# Hostile clients: at the metrics from another host's address (127.0.0.3: Prometheus
# scrapes from 127.0.0.1), at PCAP-over-IP from the allowed address (its client holds its
# connection already) and from one outside the allow-list (127.0.0.2).
hostile() {
    local log=$1
    shift
    ip netns exec "$B" python3 "$PWD/scripts/hostile-clients.py" --every "$hostile_every" \
        --hold $(( hostile_every / 3 )) "$@" >"$work/$log" 2>&1 &
    hostile_pids="$hostile_pids $!"
}
hostile hostile.log --idle 500 --slow 10 --source 127.0.0.3 127.0.0.1:9128
hostile hostile-pcap.log --idle 500 --slow 10 127.0.0.1:57012
hostile hostile-outside.log --idle 50 --slow 0 --source 127.0.0.2 127.0.0.1:57012

# The processes below zcap: its children (the hook runner) and theirs (the -z commands).
children() {
    local n=0 pp pid
    for s in /proc/[0-9]*/stat; do
        read -r pid _ _ pp _ 2>/dev/null <"$s" || continue
        [ "$pp" = "$1" ] && n=$((n + 1 + $(children "$pid")))
    done
    echo "$n"
}
echo "time_s rss_kib fds threads processes" >"$work/samples"
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
for p in $hostile_pids; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
hostile_pids=""
sleep 1
# Once the hostile clients have gone: what zcap holds.
fds_end=$(ls "/proc/$zcap_pid/fd" | wc -l)
thr_end=$(awk '/^Threads/ {print $2}' "/proc/$zcap_pid/status")
# Prometheus' record of the run, before zcap goes: every scrape up, how many.
prom_query() {
    ip netns exec "$B" curl -s --get 'http://127.0.0.1:9090/api/v1/query' \
        --data-urlencode "query=$1" |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "none")'
}
scrapes=$(prom_query "count_over_time(up{job=\"zcap\"}[${seconds}s])")
scrapes_down=$(prom_query "count_over_time((up{job=\"zcap\"} == 0)[${seconds}s:5s])")
[ "$scrapes_down" = none ] && scrapes_down=0
prom_captured=$(prom_query 'zcap_captured_packets_total')
kill -INT "$zcap_pid"
zcap_rc=0
wait "$zcap_pid" || zcap_rc=$?
zcap_pid=""
wait "$client_pid" 2>/dev/null || true; client_pid=""
kill -TERM "$prom_pid"; wait "$prom_pid" 2>/dev/null || true; prom_pid=""
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
client_count=$(sed -n 's/^\([0-9]*\) packets$/\1/p' "$work/client.count")
rounds=$(grep -c "^hostile: 127.0.0.1:9128" "$work/hostile.log" || true)
rounds_pcap=$(grep -c "^hostile: 127.0.0.1:57012" "$work/hostile-pcap.log" || true)
outside=$(grep -c "^hostile: " "$work/hostile-outside.log" || true)
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
echo "soak: descriptors ${fds0} after warm-up, ${fds_max} at most, ${fds_end} once the hostile clients left; threads ${thr0}, ${thr_max} at most, ${thr_end} at the end; processes below zcap at most ${kids_max}"
echo "soak: ${captured:-?} packets captured, ${dropped:-?} dropped by the kernel; ${hooks} files rotated and gzipped; ${files} files on disk (-W 20), ${bad_files} unreadable; ${ipfix_msgs} IPFIX messages (${ipfix_bytes} bytes) at the collector"
echo "soak: Prometheus: ${scrapes} scrapes over TLS with basic auth, ${scrapes_down} failed, zcap_captured_packets_total ${prom_captured} at the last; PCAP-over-IP client over mutual TLS: ${client_count:-?} packets"
echo "soak: hostile rounds: ${rounds} at the metrics, ${rounds_pcap} at PCAP-over-IP, ${outside} from outside the allow-list; the last of each:"
for f in hostile hostile-pcap hostile-outside; do
    grep "^hostile: 127" "$work/$f.log" | tail -1 | sed 's/^/  /'
done
echo "soak: zcap's closing lines:"
grep -v "listening on" "$work/zcap.err" | sed 's/^/  /'
# Bounds while hostile clients come and go: each endpoint's connections (8 by default: a
# descriptor each, and a thread each for --metrics).
check "zcap exited 0 on SIGINT" '[ "$zcap_rc" = 0 ]'
check "RSS flat after warm-up (at most 8 MiB above)" '[ $((rss_max - rss0)) -le 8192 ]'
check "descriptors within the endpoints' bounds (at most 16 above warm-up)" '[ "$fds_max" -le $((fds0 + 16)) ]'
check "descriptors and threads back once the hostile clients left" '[ "$fds_end" -le $((fds0 + 2)) ] && [ "$thr_end" -le "$thr0" ]'
check "threads within the metrics bound (at most 8 above warm-up)" '[ "$thr_max" -le $((thr0 + 8)) ]'
check "at most the hook runner and 16 hooks below zcap" '[ "$kids_max" -le 17 ]'
check "every Prometheus scrape succeeded" '[ "$scrapes_down" = 0 ] && [ "${scrapes%.*}" -ge $(( seconds / 5 / 2 )) ]'
check "the PCAP-over-IP client got every packet captured" '[ "${client_count:-x}" = "${captured:-y}" ]'
check "hostile clients came every round" '[ "$rounds" -ge $(( seconds / hostile_every )) ] && [ "$rounds_pcap" -ge $(( seconds / hostile_every )) ] && [ "$outside" -ge 1 ]'
check "no kernel drops" '[ "${dropped:-1}" = 0 ]'
check "packets captured" '[ "${captured:-0}" -gt 0 ]'
check "files rotated and gzipped" '[ "$hooks" -gt 0 ]'
check "every file reads whole" '[ "$bad_files" = 0 ]'
check "the collector received IPFIX" '[ "${ipfix_msgs:-0}" -gt 0 ]'
exit "$fail"

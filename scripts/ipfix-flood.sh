#!/usr/bin/env bash
# A flow flood through zcap's IPFIX export into a real collector: N distinct flows (default
# 1 000 000, one packet each) in a pcap, `zcap -r --ipfix` to nfdump's nfcapd on loopback,
# then nfdump counts what nfcapd stored, for biflows and for one-direction records with
# interfaces. Prints records/s exported (zcap's wall time) and
# whether every flow arrived. Run as root (installs nfdump if missing).
#
#   sudo ./scripts/ipfix-flood.sh [FLOWS]
set -euo pipefail
cd "$(dirname "$0")/.."
flows=${1:-1000000}
./scripts/deps.sh
cargo build -q --release -p zcap
cargo build -q --release --example flow_flood_pcap --features test-support
work=$(mktemp -d /tmp/zcrx-ipfix-flood.XXXXXX)
nfcapd_pid=
trap 'kill $nfcapd_pid 2>/dev/null || true; rm -rf "$work"' EXIT
./target/release/examples/flow_flood_pcap "$work/flood.pcap" "$flows"
echo "date: $(date -u +%FT%TZ)  cpu: $(lscpu | sed -n 's/^Model name: *//p') ($(nproc) vCPU)  kernel: $(uname -r)"
echo "net.core.rmem_max: $(cat /proc/sys/net/core/rmem_max)"
echo "flows in pcap: $flows"
# Each layout in turn, on the same capture: biflows (the default), and one record per
# direction with the interfaces (--ipfix-uniflow --ipfix-ifindex: what GoFlow2 and akvorado
# take). Each flow has one packet: one record either way.
for layout in biflow uniflow; do
    case $layout in
        biflow) extra=() ;;
        uniflow) extra=(--ipfix-uniflow --ipfix-ifindex 3:0) ;;
    esac
    rm -rf "$work/nfcapd"; mkdir "$work/nfcapd"
    port=$(( 40000 + RANDOM % 20000 ))
    # nfcapd asks for a 64 MiB socket buffer; the kernel grants at most net.core.rmem_max.
    nfcapd -b 127.0.0.1 -p "$port" -B 67108864 -w "$work/nfcapd" >"$work/nfcapd.log" 2>&1 &
    nfcapd_pid=$!
    for _ in $(seq 50); do ss -Hlun "sport = :$port" | grep -q . && break; sleep 0.1; done
    start=$(date +%s.%N)
    ./target/release/zcap -r "$work/flood.pcap" --ipfix "127.0.0.1:$port" "${extra[@]}" 2>"$work/zcap.err"
    end=$(date +%s.%N)
    sleep 1
    kill -TERM $nfcapd_pid; wait $nfcapd_pid || true
    stored=$(nfdump -R "$work/nfcapd" -q -o 'fmt:%pr' | wc -l)
    exported=$(sed -n 's/^\([0-9]*\) flows exported in \([0-9]*\) IPFIX messages$/\1 \2/p' "$work/zcap.err")
    read -r nexp nmsg <<<"$exported"
    secs=$(echo "$end - $start" | bc -l)
    printf '%s: zcap: %d records exported in %d IPFIX messages in %.2f s (%.0f records/s, whole run incl. reading the pcap)\n' \
        "$layout" "$nexp" "$nmsg" "$secs" "$(echo "$nexp / $secs" | bc -l)"
    echo "$layout: nfcapd stored: $stored records ($(( nexp - stored )) missing)"
done

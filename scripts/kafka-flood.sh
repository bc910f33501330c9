#!/usr/bin/env bash
# A flow flood through zcap's Kafka export: N distinct flows (default 1 000 000, one packet
# each) in a pcap, `zcap -r --kafka` to nisshi on loopback (scripts/broker.sh), as JSON
# records and as goflow2 messages, each alone and also sent as IPFIX to nfcapd in the same
# run; then a consumer counts what the broker holds and nfdump what nfcapd stored. Prints records/s
# published (zcap's wall time, the relay's last flush included) and whether every record
# arrived. IPFIX goes out twice: in messages of the default size (a 1500-byte path's) and
# of 65000 bytes (`--ipfix-message-size`, as for a collector on the same host: loopback's
# MTU is 64 KiB). On loopback the sender's system time includes the collector's receive
# path (the kernel delivers in the sender's context), which a NIC's send does not.
# Run as root (installs what is missing).
#
#   sudo ./scripts/kafka-flood.sh [FLOWS]
set -euo pipefail
cd "$(dirname "$0")/.."
flows=${1:-1000000}
./scripts/deps.sh >/dev/null
nisshi=$(./scripts/broker.sh)
cargo build -q --release -p zcap --features kafka
cargo build -q --release --example flow_flood_pcap --features test-support
work=$(mktemp -d /tmp/zcrx-kafka-flood.XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
./target/release/examples/flow_flood_pcap "$work/flood.pcap" "$flows" >/dev/null
echo "date: $(date -u +%FT%TZ)  cpu: $(lscpu | sed -n 's/^Model name: *//p') ($(nproc) vCPU)  kernel: $(uname -r)"
echo "flows in pcap: $flows; broker: nisshi (memory storage) on loopback; with IPFIX: to nfcapd in the same run"
for run in json json+ipfix json+ipfix64k goflow2 goflow2+ipfix goflow2+ipfix64k; do
    format=${run%%+*}
    ipfix=()
    case $run in
    *+ipfix) ipfix=(--ipfix "127.0.0.1:$(( 50000 + RANDOM % 10000 ))") ;;
    *+ipfix64k) ipfix=(--ipfix "127.0.0.1:$(( 50000 + RANDOM % 10000 ))" --ipfix-message-size 65000) ;;
    esac
    port=$(( 40000 + RANDOM % 10000 )); nport=${ipfix[1]:-}; nport=${nport#127.0.0.1:}
    (cd "$work" && exec "$nisshi" broker --listener-url "tcp://127.0.0.1:$port" \
        --advertised-listener-url "tcp://127.0.0.1:$port" --storage-engine memory://nisshi/ \
        >"$work/broker.log" 2>&1) &
    pids+=($!)
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
    "$nisshi" topic create flood --partitions 4 --broker "tcp://127.0.0.1:$port" >/dev/null
    rm -rf "$work/nfcapd"; mkdir "$work/nfcapd"
    if [ -n "$nport" ]; then
        nfcapd -b 127.0.0.1 -p "$nport" -B 67108864 -w "$work/nfcapd" >"$work/nfcapd.log" 2>&1 &
        pids+=($!)
        for _ in $(seq 50); do ss -Hlun "sport = :$nport" | grep -q . && break; sleep 0.1; done
    fi
    broker_pid=$(pgrep -f "listener-url tcp://127.0.0.1:$port" | head -1)
    broker_before=$(awk '{print $14 + $15}' "/proc/$broker_pid/stat")
    start=$(date +%s.%N)
    /usr/bin/time -o "$work/time" -f '%U %S' \
        ./target/release/zcap -r "$work/flood.pcap" -q --kafka "127.0.0.1:$port" --kafka-topic flood \
        --kafka-format "$format" "${ipfix[@]}" 2>"$work/zcap.err"
    end=$(date +%s.%N)
    broker_cpu=$(( $(awk '{print $14 + $15}' "/proc/$broker_pid/stat") - broker_before ))
    read -r user sys <"$work/time"
    hz=$(getconf CLK_TCK)
    published=$(sed -n 's/^\([0-9]*\) flow records published.*/\1/p' "$work/zcap.err")
    lost=$(sed -n 's/.*(\([0-9]*\) lost:.*/\1/p' "$work/zcap.err")
    secs=$(echo "$end - $start" | bc -l)
    printf '%s: zcap: %d records published to Kafka (%d lost) in %.2f s: %.0f records/s\n' \
        "$run" "$published" "$lost" "$secs" "$(echo "$published / $secs" | bc -l)"
    printf '%s: CPU: zcap and its relay %.2f s (%.2f us a record), the broker %.2f s, in %.2f s on %d vCPU\n' \
        "$run" "$(echo "$user + $sys" | bc -l)" "$(echo "($user + $sys) * 1000000 / $published" | bc -l)" \
        "$(echo "$broker_cpu / $hz" | bc -l)" "$secs" "$(nproc)"
    # The consumer's own count: a goflow2 message's bytes may hold newlines.
    held=$(python3 scripts/kafka-consume.py --brokers "127.0.0.1:$port" --topic flood \
        --timeout 600 --idle 5 2>&1 >/dev/null | sed -n 's/^kafka-consume: \([0-9]*\) messages read$/\1/p')
    echo "$run: the broker holds $held messages ($(( published - held )) missing)"
    sleep 1
    kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; pids=()
    if [ -n "$nport" ]; then
        stored=$(nfdump -R "$work/nfcapd" -q -o 'fmt:%pr' | wc -l)
        echo "$run: nfcapd stored $stored IPFIX records ($(( flows - stored )) missing)"
    fi
done

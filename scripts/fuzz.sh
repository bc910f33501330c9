#!/usr/bin/env bash
# cargo-fuzz targets of zcrx (fuzz/): the flow-cache extraction on every link type
# (extract), the pcap/pcapng reader (capture_file), the TPACKET_V3 block walker
# (block_walker), zcap's offline path, a file in and JSON out (zcap_offline), its printer of
# tcpdump's lines at every verbosity (zcap_print), and the
# names parsers of flowcache (names_tls, names_quic, names_dns, names_http, names_reassembly),
# and the IPFIX decoder, names templates included (ipfix_decode).
#
#   scripts/fuzz.sh smoke [SECS]   each target SECS seconds (default 30) from the committed
#                                  corpus, into a scratch copy (CI: scripts/test.sh)
#   scripts/fuzz.sh run SECS [T..] long runs that grow fuzz/corpus/T (then: cmin)
#   scripts/fuzz.sh cmin [T..]     minimise the committed corpora
#   scripts/fuzz.sh seed           write the seed corpora from the test frames
#
# Needs a nightly toolchain and cargo-fuzz; without them it says so and exits 0 (a
# stable-only machine skips fuzzing), except under CI=true where nightly is expected.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGETS=(extract capture_file block_walker zcap_offline zcap_print names_tls names_quic names_dns names_http names_reassembly ipfix_decode)
RSS_MB=2048

skip() {
    if [ "${CI:-}" = "true" ]; then
        echo "fuzz: $1 (CI=true: fuzzing must run here)" >&2
        exit 1
    fi
    echo "fuzz: SKIPPED, $1" >&2
    exit 0
}
command -v rustup >/dev/null 2>&1 && rustup toolchain list | grep -q '^nightly' \
    || skip "no nightly toolchain (rustup toolchain install nightly)"
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz" >&2
    cargo install --locked cargo-fuzz >/dev/null 2>&1 || skip "cargo install cargo-fuzz failed"
fi

mode="${1:-smoke}"
shift || true
case "$mode" in
seed)
    (cd fuzz && cargo +nightly run --release --bin seeds)
    ;;
smoke)
    secs="${1:-30}"
    (cd fuzz && cargo +nightly fuzz build -O >/dev/null)
    for t in "${TARGETS[@]}"; do
        # Fuzz into a scratch copy: the committed corpus stays as it is.
        scratch=$(mktemp -d)
        cp -r "fuzz/corpus/$t/." "$scratch/"
        echo "fuzz: $t for ${secs}s from $(ls "$scratch" | wc -l) inputs" >&2
        # cargo fuzz exits non-zero on a crash, leak, timeout or RSS overrun: that status,
        # not grep's, decides (pipefail), and the run fails.
        if ! (cd fuzz && cargo +nightly fuzz run -O "$t" "$scratch" -- \
            -max_total_time="$secs" -rss_limit_mb=$RSS_MB -timeout=10 -print_final_stats=1 \
            2>&1 | { grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|==|SUMMARY|thread|ERROR|error)' || true; }); then
            rm -rf "$scratch"
            echo "fuzz: $t FAILED (a crash, leak, timeout or RSS overrun; its input is in fuzz/artifacts/$t/)" >&2
            exit 1
        fi
        rm -rf "$scratch"
    done
    echo "fuzz: ${#TARGETS[@]} targets ran ${secs}s each with no crash" >&2
    ;;
run)
    secs="${1:?seconds}"
    shift
    [ $# -gt 0 ] || set -- "${TARGETS[@]}"
    (cd fuzz && cargo +nightly fuzz build -O >/dev/null)
    for t in "$@"; do
        (cd fuzz && cargo +nightly fuzz run -O "$t" -- -max_total_time="$secs" \
            -rss_limit_mb=$RSS_MB -timeout=10 -print_final_stats=1) >"target/fuzz-$t.log" 2>&1
        echo "fuzz: $t: $(grep -E 'stat::number_of_executed_units' "target/fuzz-$t.log")" >&2
    done
    ;;
cmin)
    [ $# -gt 0 ] || set -- "${TARGETS[@]}"
    for t in "$@"; do
        (cd fuzz && cargo +nightly fuzz cmin -O "$t" -- -rss_limit_mb=$RSS_MB)
    done
    ;;
*)
    echo "usage: scripts/fuzz.sh smoke [SECS] | run SECS [TARGET..] | cmin [TARGET..] | seed" >&2
    exit 2
    ;;
esac

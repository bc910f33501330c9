#!/usr/bin/env bash
# The main job: rxbench with its defaults (256 UDP flows; 64, 512 and 1400-byte frames; every
# receive mode; then a copy sweep). It builds its own netns lab. Run as root. Arguments are
# passed to rxbench, e.g. `--quick`, `--wide` (the main table with every column),
# `--json out.json --svg plots/`, or `copy`.
# `demo.sh saturation [ARGS]` runs the saturation study (rxbench saturation, about three hours
# with the MLRsearch defaults and IMIX; `--searches 1` about one), then rxbench tcp-rx, and writes their JSON,
# markdown and SVG into today's bench/results/<date>-<machine>/.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
# zcap is built too: `rxbench sniff` runs it from beside rxbench.
cargo build --release --locked -p zcrx-bench -p zcap
if [ "${1:-}" = saturation ]; then
    out=$(./scripts/results-dir.sh)
    echo "saturation: writing $out/saturation.{json,md,txt} and $out/saturation-svg/" >&2
    ./target/release/rxbench "$@" --json "$out/saturation.json" \
        --markdown "$out/saturation.md" --svg "$out/saturation-svg" | tee "$out/saturation.txt"
    status=${PIPESTATUS[0]}
    [ "$status" = 0 ] || exit "$status"
    # TCP receive, recv against TCP_ZEROCOPY_RECEIVE at 1 to 1000 connections and 4 KiB to
    # 1 MiB reads (rxbench tcp-rx's defaults, 2 s a point: about a minute).
    echo "saturation: writing $out/tcp-rx.{json,md,txt} and $out/tcp-rx-svg/" >&2
    ./target/release/rxbench tcp-rx --json "$out/tcp-rx.json" \
        --markdown "$out/tcp-rx.md" --svg "$out/tcp-rx-svg" | tee "$out/tcp-rx.txt"
    exit "${PIPESTATUS[0]}"
fi
exec ./target/release/rxbench "$@"

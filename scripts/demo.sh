#!/usr/bin/env bash
# The main job: rxbench with its defaults (256 UDP flows; 64, 512 and 1400-byte frames; every
# receive mode; then a copy sweep). It builds its own netns lab. Run as root. Arguments are
# passed to rxbench, e.g. `--quick`, `--json out.json --svg plots/`, or `copy`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
# zcap is built too: `rxbench sniff` runs it from beside rxbench.
cargo build --release --locked -p zcrx-bench -p zcap
exec ./target/release/rxbench "$@"

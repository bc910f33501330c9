#!/usr/bin/env bash
# The main job. Until rxbench lands (issue 6) it builds a netns lab, sends frames over 256
# UDP flows with the TX ring and dumps them from a TPACKET_V3 ring. Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
cargo run --release --locked --example ring_dump -- --lab "${1:-20}"

#!/usr/bin/env bash
# The test command: installs what is missing, then format, lint and every test of the
# workspace. Run as root: the AF_PACKET and netns tests need it, and with CI=true they
# fail instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
cargo fmt --all --check
cargo clippy --workspace --all-targets --all-features --locked -- -D warnings
cargo test --workspace --all-targets --all-features --locked
cargo test --workspace --doc --all-features --locked

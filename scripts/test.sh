#!/usr/bin/env bash
# The test command: installs what is missing, then format, lint and every test of the
# workspace, the packaging of every published crate, the loom models of the ring's block
# life cycle, the ring/pipeline/copy tests under AddressSanitizer, and a short run of every
# fuzz target. Run as root: the AF_PACKET
# and netns tests need it, and with CI=true they fail instead of skipping (so do the
# nightly-only steps).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
cargo fmt --all --check
rustfmt --edition 2021 --check fuzz/seeds.rs fuzz/fuzz_targets/*.rs
cargo clippy --workspace --all-targets --all-features --locked -- -D warnings
cargo test --workspace --all-targets --all-features --locked
cargo test --workspace --doc --all-features --locked
echo "== packaging: every published crate packs and builds from its package" >&2
cargo package --workspace --exclude zcrx-bench --locked
echo "== loom models of the block life cycle" >&2
./scripts/loom.sh
echo "== AddressSanitizer: ring, pipeline and copy tests" >&2
./scripts/asan.sh
echo "== fuzz smoke run (30 s per target)" >&2
./scripts/fuzz.sh smoke 30
echo "== portable fallback (the non-x86 code paths, built and tested on x86)" >&2
RUSTFLAGS="--cfg zcrx_portable -D warnings" CARGO_TARGET_DIR=target/portable \
    cargo test --locked -p zcrx-capture --lib --test copy
RUSTFLAGS="--cfg zcrx_portable -D warnings" CARGO_TARGET_DIR=target/portable \
    cargo build --locked --workspace --all-features
echo "== aarch64 (a target without the x86 routines): clippy, and tests under qemu-user" >&2
./scripts/cross.sh

#!/usr/bin/env bash
# Loom models of the ring's block life cycle (ring/src/lifecycle.rs): every interleaving of
# the takers, lessees, the re-arm and a "kernel" thread, up to a preemption bound of 3.
# Built in its own target directory: `--cfg loom` changes every crate's build.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTFLAGS="--cfg loom ${RUSTFLAGS:-}"

CARGO_TARGET_DIR=target/loom cargo test -p zcrx-ring --lib --release --locked -- loom_ --nocapture "$@"

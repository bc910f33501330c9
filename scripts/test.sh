#!/usr/bin/env bash
# The test command: installs what is missing, then format, lint and every test of the
# workspace, the examples that run on lo, the docs (also as docs.rs builds them), the
# published API against its baseline release (cargo-semver-checks), the packaging of every
# published crate (cargo publish --dry-run), zcap's Debian package (built, installed,
# checked, removed), the loom models of the ring's block life cycle, the ring/pipeline/copy
# tests under AddressSanitizer, and a short run of every fuzz target. Run as root: the
# AF_PACKET and netns tests need it, and with CI=true they fail instead of skipping (so do
# the nightly-only steps).
set -euo pipefail
cd "$(dirname "$0")/.."
# In CI the checkout is thrown away afterwards and the disk is shared: no incremental caches,
# line tables only as debug info, and each side build's target directory goes once its step
# has passed. Locally they stay, to make the next run fast.
if [[ "${CI:-}" == true ]]; then
    export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=line-tables-only
fi
done_with() {
    [[ "${CI:-}" == true ]] && rm -rf "$@"
    echo "test.sh: $(df -h --output=avail . | tail -1 | tr -d ' ') free on the checkout's disk" >&2
}
done_with
./scripts/deps.sh
echo "== the Kafka-compatible broker of docs/scale-out's test: built once, then cached" >&2
./scripts/broker.sh >/dev/null
cargo fmt --all --check
rustfmt --edition 2021 --check fuzz/seeds.rs fuzz/fuzz_targets/*.rs
cargo clippy --workspace --all-targets --all-features --locked -- -D warnings
cargo test --workspace --all-targets --all-features --locked
cargo test --workspace --doc --all-features --locked
echo "== examples that run on lo: the ring on tokio, a spawned pipeline, flows counted in the kernel" >&2
cargo run --locked -q -p zcrx-ring --features tokio --example async_rx
cargo run --locked -q --example pipeline_spawn
cargo run --locked -q --example kernel_flows
echo "== rustdoc's lints: intra-doc links resolve, public docs link no private item" >&2
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features --locked
echo "== the docs as docs.rs builds them: nightly, --cfg docsrs (feature labels), every feature" >&2
RUSTDOCFLAGS="--cfg docsrs -D warnings" CARGO_TARGET_DIR=target/docsrs \
    cargo +nightly doc --workspace --exclude zcrx-bench --exclude zcap --no-deps --all-features --locked
done_with target/docsrs
echo "== the published API against v0.1.0 (cargo-semver-checks)" >&2
./scripts/semver.sh v0.1.0
done_with target/semver-checks
echo "== publishing: every published crate packs and builds from its package (cargo publish --dry-run)" >&2
# Cargo verifies each package against the others through a temporary local registry, and
# treats those like any registry crate: immutable per version. An unpacked copy under
# CARGO_HOME, or a build of it in the target directory, left by an earlier run of the same
# version is reused as is, stale. So: our crates' unpacked copies go (they never come from
# crates.io), and the verification builds in a target directory of its own, made afresh.
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
rm -rf "$cargo_home"/registry/src/*/zcrx-* "$cargo_home"/registry/src/*/zcap-* \
    "$cargo_home"/registry/cache/*/zcrx-* "$cargo_home"/registry/cache/*/zcap-* \
    target/package-check
CARGO_TARGET_DIR=target/package-check \
    cargo publish --dry-run --workspace --exclude zcrx-bench --locked --allow-dirty
done_with target/package-check
echo "== the Debian package of zcap: built (release), installed with dpkg -i, checked, removed" >&2
deb=$(./scripts/deb.sh --out target/deb)
./scripts/deb-check.sh "$deb"
done_with target/deb target/release
echo "== loom models of the block life cycle" >&2
./scripts/loom.sh
done_with target/loom
echo "== AddressSanitizer: ring, pipeline and copy tests" >&2
./scripts/asan.sh
done_with target/asan
echo "== fuzz smoke run (30 s per target)" >&2
./scripts/fuzz.sh smoke 30
done_with fuzz/target
echo "== portable fallback (the non-x86 code paths, built and tested on x86)" >&2
RUSTFLAGS="--cfg zcrx_portable -D warnings" CARGO_TARGET_DIR=target/portable \
    cargo test --locked -p zcrx-capture --lib --test copy
RUSTFLAGS="--cfg zcrx_portable -D warnings" CARGO_TARGET_DIR=target/portable \
    cargo build --locked --workspace --all-features
done_with target/portable
echo "== aarch64 (a target without the x86 routines): clippy, and tests under qemu-user" >&2
./scripts/cross.sh
done_with target/aarch64

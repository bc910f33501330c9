#!/usr/bin/env bash
# The workspace on a target other than x86-64 (aarch64): checked and clippy-clean with all
# features (zcap's `kafka` but, which needs the target's OpenSSL), and the portable tests (flow cache, synthetic ring, leases, copy routines,
# pipeline, faults) run under qemu-user. Installs the aarch64 std (rustup), a cross linker
# and qemu-user when missing; where that is impossible it skips with a message, except under
# CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."
T=aarch64-unknown-linux-gnu
skip() {
    if [ "${CI:-}" = "true" ]; then
        echo "cross: $1 (CI=true: the aarch64 build must run)" >&2
        exit 1
    fi
    echo "cross: SKIPPED, $1" >&2
    exit 0
}
command -v rustup >/dev/null 2>&1 || skip "no rustup to add the $T standard library"
rustup target list --installed | grep -qx "$T" || rustup target add "$T" >/dev/null 2>&1 \
    || skip "rustup target add $T failed"
if ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || ! command -v qemu-aarch64 >/dev/null 2>&1; then
    [ "$(id -u)" -eq 0 ] || skip "gcc-aarch64-linux-gnu and qemu-user are missing (run as root to install)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq gcc-aarch64-linux-gnu qemu-user >/dev/null \
        || skip "could not install gcc-aarch64-linux-gnu qemu-user"
fi
export CARGO_TARGET_DIR=target/aarch64
# The full copy sweep runs natively; under emulation the short one.
export ZCRX_SHORT_SWEEP=1
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
cargo clippy --locked --target "$T" --workspace --exclude zcap --all-targets --all-features -- -D warnings
# zcap's `kafka` feature builds librdkafka against the target's OpenSSL, which this machine
# has for x86-64 only: zcap is linted for the target without it.
cargo clippy --locked --target "$T" -p zcap --all-targets -- -D warnings
cargo test --locked --target "$T" -p zcrx-flowcache --lib --test static_frames --test table
# share_count_overflow_aborts re-executes its own binary, which qemu-user cannot do without
# binfmt_misc; it runs natively in the main pass.
cargo test --locked --target "$T" -p zcrx-ring --lib --test synthetic --test leases -- \
    --skip share_count_overflow_aborts
cargo test --locked --target "$T" -p zcrx-capture --lib --test copy --test pipeline --test faults
# qemu-user does not emulate bpf(2) (ENOSYS): the kernel-flows tests that load a program or
# make a map run natively in the main pass.
cargo test --locked --target "$T" -p zcrx-kflows --lib -- \
    --skip test::a_refused_program_keeps_the_verifiers_log \
    --skip test::batch_reads_match_reads_by_key \
    --skip test::the_program_puts_each_key_in_the_shard_user_space_names \
    --skip test::the_verifier_takes_both_hooks_programs
echo "cross: $T checked, clippy-clean and tested under qemu-user" >&2

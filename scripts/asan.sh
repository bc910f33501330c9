#!/usr/bin/env bash
# The ring, pipeline and copy tests under AddressSanitizer (nightly `-Zsanitizer=address`):
# the code that reads kernel ring memory through raw pointers, hands blocks between threads
# and copies with SIMD. Needs a nightly toolchain; a stable-only machine skips with a
# message, except under CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! (command -v rustup >/dev/null 2>&1 && rustup toolchain list | grep -q '^nightly'); then
    if [ "${CI:-}" = "true" ]; then
        echo "asan: no nightly toolchain (CI=true: the sanitizer run must happen)" >&2
        exit 1
    fi
    echo "asan: SKIPPED, no nightly toolchain (rustup toolchain install nightly)" >&2
    exit 0
fi
host=$(rustc +nightly -vV | sed -n 's/^host: //p')
# --target keeps the sanitizer flags off build scripts and proc macros.
export RUSTFLAGS="-Zsanitizer=address -Cdebug-assertions=on ${RUSTFLAGS:-}"
export RUSTDOCFLAGS="-Zsanitizer=address"
# allocator_may_return_null: the huge-ring test expects try_reserve to fail, not an abort.
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:${ASAN_OPTIONS:-}"
export CARGO_TARGET_DIR=target/asan
# The copy sweep over every length x alignment already ran unsanitized; here the short one.
export ZCRX_SHORT_SWEEP=1
cargo +nightly test --locked --target "$host" -p zcrx-ring --lib --tests "$@"
cargo +nightly test --locked --target "$host" -p zcrx-capture --lib \
    --test pipeline --test copy --test faults --test live "$@"

#!/usr/bin/env bash
# The published crates' API against a baseline release (default v0.1.0): cargo-semver-checks
# builds both with rustdoc's JSON output and fails on a change that breaks what the version
# number promises (a removed item, a changed signature, an exhaustive type made
# non-exhaustive, ...). Installs cargo-semver-checks when it is missing. The baseline is the
# tag, or in a checkout without tags the commit whose message carries the trailer
# `API-Baseline: TAG`.
#
#   ./scripts/semver.sh [TAG]
set -euo pipefail
cd "$(dirname "$0")/.."
baseline=${1:-v0.1.0}
version=0.51.0
if ! cargo semver-checks --version 2>/dev/null | grep -q " $version\$"; then
    echo "semver: installing cargo-semver-checks $version" >&2
    cargo install --locked cargo-semver-checks --version "$version"
fi
rev=$(git rev-parse -q --verify "$baseline^{commit}" 2>/dev/null \
    || git log -1 --format=%H --grep="^API-Baseline: $baseline\$" 2>/dev/null || true)
if [ -z "$rev" ]; then
    echo "semver: neither a tag $baseline nor a commit with 'API-Baseline: $baseline' in this checkout (git fetch --tags)" >&2
    exit 1
fi
echo "semver: the API against $baseline ($rev)" >&2
cargo semver-checks --workspace --exclude zcap --exclude zcrx-bench --all-features --baseline-rev "$rev"

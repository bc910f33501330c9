#!/usr/bin/env bash
# Builds the Kafka-compatible broker zcap's Kafka tests publish to, once, and caches it:
# nisshi (the tansu broker's new name, Apache-2.0, a Rust crate on crates.io: no Java, no
# container), with its in-memory storage engine and its SQLite one (libsql: the engine that
# keeps SCRAM users, for the SASL test). Prints the binary's path. A second run finds the
# cached binary and builds nothing.
#
#   ZCRX_CACHE   where the build is cached (default ~/.cache/zcrx)
set -euo pipefail

version=0.8.1
cache=${ZCRX_CACHE:-$HOME/.cache/zcrx}
root="$cache/nisshi-$version-libsql"
bin="$root/bin/nisshi"
if [ ! -x "$bin" ]; then
    mkdir -p "$cache"
    started=$(date +%s)
    # The lockfile the crate was published with, its memory and SQLite engines (no
    # PostgreSQL client built), at low priority beside whatever else runs.
    # It needs a newer compiler than the workspace's stable one: the nightly the fuzz and
    # sanitizer runs use.
    nice -n 10 cargo +nightly install nisshi --version "$version" --locked \
        --no-default-features --features dynostore,libsql --root "$root.partial" >&2
    mv "$root.partial" "$root"
    echo "broker.sh: nisshi $version built in $(( $(date +%s) - started )) s, cached in $root" >&2
fi
echo "$bin"

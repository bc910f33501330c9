#!/usr/bin/env bash
# The pipeline's criterion bench, this checkout against an older revision built beside it,
# in interleaved runs (old, new, old, new, ...) so that both see the same minutes of a shared
# machine. Prints criterion's time, the stage's own ns/packet (the STAGE lines) and, for
# zero-copy delivery, the wall time per packet net of each run's set-up (the NET lines) per run.
#
#   scripts/pipeline-ab.sh REV [RUNS] [FILTER]
#   scripts/pipeline-ab.sh HEAD~3 3 'pipeline/zerocopy/64B/1c'
set -euo pipefail
rev=${1:?usage: pipeline-ab.sh REV [RUNS] [FILTER]}
runs=${2:-3}
filter=${3:-pipeline/zerocopy/64B/}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/pipeline-ab.XXXXXX)
trap 'git -C "$root" worktree remove --force "$work/src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

git -C "$root" worktree add --detach -q "$work/src" "$rev"
bench_exe() { # dir target-dir: the bench binary's path, built
    (cd "$1" && CARGO_TARGET_DIR="$2" cargo bench -p zcrx-capture --bench pipeline --no-run \
        --message-format=json 2>/dev/null) |
        sed -n 's/.*"executable":"\([^"]*pipeline-[^"]*\)".*/\1/p' | tail -1
}
old=$(bench_exe "$work/src" "$work/target")
new=$(bench_exe "$root" "$root/target")
[ -x "$old" ] && [ -x "$new" ] || { echo "building the benches failed" >&2; exit 1; }
echo "pipeline A/B on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cpus, $(date -u +%FT%TZ)"
echo "old = $(git -C "$root" rev-parse --short "$rev"), new = $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo ' + uncommitted changes')"
for i in $(seq "$runs"); do
    for side in old new; do
        exe=${!side}
        echo "== $side run $i"
        "$exe" --bench "$filter" --noplot 2>&1 | grep -E '^pipeline|time:|^STAGE|^NET' | grep -v '%'
    done
done

#!/usr/bin/env bash
# Prints (and creates) the folder for today's benchmark results:
# bench/results/<date>-<machine>/, the date in UTC, the machine named by its CPU model and
# CPU count (e.g. bench/results/2026-12-02-intel-xeon-2vcpu). Scripts that record a run
# write there; see bench/results/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
model=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- || true)
slug=$(printf '%s' "${model:-unknown cpu}" \
    | sed -E 's/\((R|TM|tm)\)//g; s/ (CPU|Processor|[0-9]+-Core)\b//g; s/@.*//' \
    | tr '[:upper:]' '[:lower:]' | tr -cs 'a-z0-9' '-' | sed -E 's/^-+|-+$//g')
dir="bench/results/$(date -u +%F)-${slug}-$(nproc)vcpu"
mkdir -p "$dir"
echo "$dir"

#!/usr/bin/env bash
# Profiles the receiving CPU during each search of `rxbench capacity`: `perf record -C CPU -g`
# starts when rxbench announces a search ("capacity: MODE at ...") and stops at the next
# announcement or at the end, one perf.data per search, then prints where each search's
# samples went (by command, the kernel symbols of the NAPI thread, and what zcap or tcpdump
# spent their time inside), and (scripts/per-frame-profile.py, from the capacity.json it has
# rxbench write unless --json is given) each mode's ns per frame by command and NAPI symbol.
# With --loads every mode runs the same trials at the same rates: a differential profile.
#
#   sudo scripts/profile-capacity.sh OUT_DIR [rxbench capacity options...]
#
# e.g. sudo scripts/profile-capacity.sh /tmp/prof --modes "" --kernel-flows --sizes 64 \
#        --flows 4096 --searches 1 --losses 0.1
#      sudo scripts/profile-capacity.sh /tmp/prof --modes baseline-tx --kernel-flows \
#        --sizes 64 --flows 256 --searches 3 --loads 0.5,1.0 --seconds 2
# Needs perf (linux-perf); CPU defaults to the last one (where rxbench pins the receiving
# NAPI thread and the receivers), PROFILE_CPU overrides it. A recording ends while the next
# search starts (perf writes its file after the signal), so each file may hold that search's
# first moments; a search that fails still leaves the recordings before it summarised.
set -euo pipefail
out=${1:?usage: profile-capacity.sh OUT_DIR [rxbench capacity options...]}
shift
here=$(cd "$(dirname "$0")/.." && pwd)
rxbench=${RXBENCH:-$here/target/release/rxbench}
cpu=${PROFILE_CPU:-$(($(nproc) - 1))}
command -v perf >/dev/null || { echo "perf not found (apt-get install linux-perf)" >&2; exit 1; }
mkdir -p "$out"
perf_pid=
stop() {
    if [[ -n $perf_pid ]]; then
        kill -INT "$perf_pid" 2>/dev/null || true
        wait "$perf_pid" 2>/dev/null || true
        perf_pid=
    fi
}
n=0
status=0
# The per-frame summary divides each recording by its search's frames: rxbench's JSON.
json=()
case " $* " in
    *" --json "* | *" --json="*) echo "--json given: no per-frame summary (it reads $out/capacity.json)" >&2 ;;
    *) json=(--json "$out/capacity.json") ;;
esac
"$rxbench" capacity "$@" "${json[@]}" 2>&1 >"$out/capacity.txt" | {
while IFS= read -r line; do
    echo "$line" >&2
    if [[ $line == capacity:\ *\ at\ * ]]; then
        stop
        n=$((n + 1))
        name=$(echo "${line#capacity: }" | sed 's/ at .*//; s/[^A-Za-z0-9._-]/_/g')
        echo "$line" >"$out/$n-$name.what"
        perf record -q -e cpu-clock -C "$cpu" -g -o "$out/$n-$name.data" \
            >/dev/null 2>"$out/$n-$name.perf.err" &
        perf_pid=$!
    fi
done
stop
} || status=$?
if [[ $status != 0 ]]; then
    echo "rxbench capacity ended with status $status: the searches recorded so far follow" >&2
fi
# The summaries cut perf's output short (`head`): no pipefail from here on.
set +o pipefail
for w in "$out"/[0-9]*-*.what; do
    [[ -e $w ]] || continue
    base=${w%.what}
    d=$base.data
    if [[ ! -s $d ]]; then
        echo "$(cat "$w"): no recording ($(tr '\n' ' ' <"$base.perf.err"))" >&2
        continue
    fi
    {
        cat "$base.what"
        echo "== CPU $cpu by command"
        perf report -i "$d" --no-children --sort comm --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -8
        echo "== the NAPI thread's kernel symbols (self)"
        perf report -i "$d" --no-children --comm "$(perf report -i "$d" --no-children --sort comm --stdio 2>/dev/null | grep -oE 'napi/[^ ]+' | head -1)" \
            --sort sym --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -30
        for receiver in zcap tcpdump; do
            perf report -i "$d" --no-children --sort comm --stdio 2>/dev/null | grep -qE "% +$receiver *$" || continue
            echo "== $receiver's time, by what it was inside (children, top 15)"
            perf report -i "$d" --children --comm "$receiver" --sort sym -g none --stdio 2>/dev/null \
                | grep -E '^ +[0-9]' | head -15
        done
    } >"$base.txt"
    cat "$base.txt"
done
if [[ -s $out/capacity.json ]] && command -v python3 >/dev/null; then
    "$here/scripts/per-frame-profile.py" "$out" | tee "$out/per-frame.md"
fi
exit "$status"

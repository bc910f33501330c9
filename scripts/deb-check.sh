#!/usr/bin/env bash
# Installs the Debian package of zcap as a user gets it (dpkg -i), checks what it installed,
# then removes and purges it and checks that nothing of it is left:
#   scripts/deb-check.sh DEB          (DEB from scripts/deb.sh; run as root)
# Checked: zcap --version; the libraries it links are there; systemd-analyze verify of the
# unit, template and an instance (offline too: systemd need not be PID 1); man finds and
# renders the page, groff without warnings; the bash, zsh and fish completions load and
# offer --version; zcap -r reads a pcap file; after dpkg -r the package's files are gone,
# after dpkg -P its state, its enabled instances, every file named zcap* under /usr, /lib,
# /etc and /var that was not there before, and no account was made or left.
# The machine is left as found, on failure too: the package is purged on exit. It refuses to
# run where zcap is installed as a package, or where the package would overwrite files or
# state it did not make (a zcap from scripts/install-zcap.sh under /usr/local is fine).
set -euo pipefail
if [ $# -ne 1 ]; then
    echo "deb-check: usage: scripts/deb-check.sh DEB (see the script's header)" >&2
    exit 2
fi
deb=$(realpath -m "$1")
fail() {
    echo "deb-check: FAIL: $*" >&2
    exit 1
}
[ "$(id -u)" -eq 0 ] || fail "run as root: it installs and purges the package"
[ -f "$deb" ] || fail "no package file $deb"
[ "$(dpkg-deb -f "$deb" Package)" = zcap ] || fail "$deb is not the zcap package"
upstream=$(dpkg-deb -f "$deb" Version | sed 's/-[^-]*$//')

# man renders the page, zsh and fish load the completions (scripts/deps.sh installs them as
# well); systemd-analyze verifies the unit.
need_apt=()
command -v man >/dev/null 2>&1 || need_apt+=(man-db)
command -v zsh >/dev/null 2>&1 || need_apt+=(zsh)
command -v fish >/dev/null 2>&1 || need_apt+=(fish)
command -v systemd-analyze >/dev/null 2>&1 || need_apt+=(systemd)
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "deb-check: installing ${need_apt[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# What is there before: nothing of zcap's package may be, and what else is stays.
status=$(dpkg-query -W -f='${db:Status-Status}' zcap 2>/dev/null || true)
if [ -n "$status" ] && [ "$status" != not-installed ]; then
    fail "the zcap package is on this machine ($status); this check installs and purges its own, so remove that one first (dpkg -P zcap)"
fi
while read -r path; do
    path="${path#.}"
    if [ -e "$path" ] || [ -L "$path" ]; then
        fail "$path exists and belongs to no package zcap; dpkg -i would overwrite it"
    fi
done < <(dpkg-deb --fsys-tarfile "$deb" | tar -t | grep -v '/$')
for state in /var/lib/zcap /var/lib/private/zcap; do
    if [ -e "$state" ] || [ -L "$state" ]; then
        fail "$state exists (captures of a zcap@ service?); purging the package would delete it"
    fi
done
named_zcap() { { find -H /usr /lib /etc /var -name 'zcap*' 2>/dev/null || true; } | sort; }
accounts() { getent passwd | cut -d: -f1 | sort; getent group | cut -d: -f1 | sort; }
work=$(mktemp -d "${TMPDIR:-/tmp}/deb-check.XXXXXX")
named_zcap > "$work/zcap-before"
accounts > "$work/accounts-before"

# man-db keeps the page it formatted for a pipe (systemd-analyze verify runs man zcap) in
# /var/cache/man; no package removes its cat pages (man-db's cron expires them), so the check
# takes away those it made.
drop_cat_pages() {
    named_zcap | comm -13 "$work/zcap-before" - | sed -n '\|^/var/cache/man/.*/zcap\.1|p' \
        | xargs -r -d '\n' rm -f
}
installed=
cleanup() {
    local rc=$? status
    status=$(dpkg-query -W -f='${db:Status-Status}' zcap 2>/dev/null || true)
    if [ -n "$installed" ] && [ -n "$status" ] && [ "$status" != not-installed ]; then
        echo "deb-check: purging the package it installed" >&2
        dpkg -P zcap >/dev/null 2>&1 || echo "deb-check: dpkg -P zcap failed; purge it by hand" >&2
    fi
    [ -z "$installed" ] || drop_cat_pages
    rm -rf "$work"
    exit "$rc"
}
trap cleanup EXIT

echo "== dpkg -i $deb" >&2
installed=yes
dpkg -i "$deb" > "$work/dpkg-i.log" 2>&1 || { cat "$work/dpkg-i.log" >&2; fail "dpkg -i failed (above)"; }
[ "$(dpkg-query -W -f='${db:Status-Status}' zcap)" = installed ] || fail "dpkg -i left zcap not installed"

echo "== the binary" >&2
# /usr/bin/zcap by its path: a zcap of install-zcap.sh in /usr/local may come first on PATH.
version=$(/usr/bin/zcap --version) || fail "/usr/bin/zcap --version exited $?"
[[ "$version" == *" $upstream"* ]] || fail "/usr/bin/zcap --version says '$version', not $upstream"
if ldd /usr/bin/zcap | grep 'not found' >&2; then
    fail "libraries of /usr/bin/zcap missing (above): Depends lacks their packages"
fi
printf '%b' \
    '\xd4\xc3\xb2\xa1\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x00\x00' \
    '\x01\x00\x00\x00\x00\xf1\x53\x65\x00\x00\x00\x00\x2e\x00\x00\x00\x2e\x00\x00\x00' \
    '\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00\x45\x00\x00\x20\x00\x01' \
    '\x00\x00\x40\x11\xf6\xc8\xc0\x00\x02\x01\xc0\x00\x02\x02\x9c\x40\x27\x0f\x00\x0c' \
    '\x00\x00\x7a\x63\x61\x70' > "$work/udp.pcap" # one UDP packet, 192.0.2.1:40000 > 192.0.2.2:9999
read_back=$(/usr/bin/zcap -n -r "$work/udp.pcap" 2>&1) || { echo "$read_back" >&2; fail "zcap -r failed (above)"; }
[[ "$read_back" == *"192.0.2.1.40000 > 192.0.2.2.9999"*"UDP, length 4"* ]] \
    || fail "zcap -n -r of one UDP packet printed: $read_back"

echo "== the unit" >&2
unit=/lib/systemd/system/zcap@.service
grep -q '^ExecStart=/usr/bin/zcap ' "$unit" || fail "$unit does not start /usr/bin/zcap"
# verify loads the template as an instance and checks ExecStart's binary and the man page
# of Documentation=; it needs no running systemd.
for name in "$unit" zcap@eth0.service; do
    if ! out=$(systemd-analyze verify "$name" 2>&1) || [ -n "$out" ]; then
        echo "$out" >&2
        fail "systemd-analyze verify $name (above)"
    fi
done

echo "== the man page" >&2
page=/usr/share/man/man1/zcap.1.gz
man -aw zcap | grep -qxF "$page" || fail "man -aw zcap does not list $page: $(man -aw zcap 2>&1)"
rendered=$(MANPAGER=cat MANWIDTH=80 man -l "$page" 2>&1) || fail "man -l $page exited $?"
head -n 3 <<< "$rendered" | grep -q '^NAME' || fail "man zcap shows no NAME section first: $(head -n 3 <<< "$rendered")"
grep -A1 '^NAME' <<< "$rendered" | grep -q 'zcap' || fail "man zcap's NAME section does not name zcap"
warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null) || true
[ -z "$warnings" ] || fail "groff warns on $page: $warnings"

echo "== the completions" >&2
bash_file=/usr/share/bash-completion/completions/zcap
bash -n "$bash_file" || fail "$bash_file does not parse"
function=$(sed -nE 's/^[[:space:]]*complete -F ([^ ]+) .* zcap$/\1/p' "$bash_file" | head -1)
[ -n "$function" ] || fail "$bash_file registers no function for zcap (complete -F NAME ... zcap)"
# Called as bash calls it on TAB: COMP_* set, arguments the command, the word, the one before.
offered=$(bash --norc --noprofile -c "source $bash_file
    COMP_WORDS=(zcap --ver); COMP_CWORD=1; COMP_LINE='zcap --ver'; COMP_POINT=10
    $function zcap --ver zcap; printf '%s\n' \"\${COMPREPLY[@]}\"") \
    || fail "bash completion $function failed"
grep -qx -- '--version' <<< "$offered" || fail "bash completes 'zcap --ver' to: $offered"
if [ -f /usr/share/bash-completion/bash_completion ]; then
    # bash-completion's loader finds the file by the command's name, as on TAB.
    bash --norc --noprofile -c 'source /usr/share/bash-completion/bash_completion
        __load_completion zcap && complete -p zcap' >/dev/null 2>&1 \
        || fail "bash-completion's loader does not load zcap's completion"
fi
zsh_file=/usr/share/zsh/vendor-completions/_zcap
zsh -n "$zsh_file" || fail "$zsh_file does not parse"
zsh -c '(( ${fpath[(I)/usr/share/zsh/vendor-completions]} ))' \
    || fail "zsh's fpath lacks /usr/share/zsh/vendor-completions"
head -n 1 "$zsh_file" | grep -q '^#compdef zcap' || fail "$zsh_file does not start with #compdef zcap"
fish_file=/usr/share/fish/vendor_completions.d/zcap.fish
fish -n "$fish_file" || fail "$fish_file does not parse"
# fish finds the file in its vendor directory by the command's name; its own state goes to
# the scratch directory, not root's home.
offered=$(HOME="$work" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" \
    fish -c "complete -C 'zcap --vers'") || fail "fish complete -C failed"
grep -q -- '^--version' <<< "$offered" || fail "fish completes 'zcap --vers' to: $offered"

echo "== systemctl enable zcap@lo.service (the purge must take its link away)" >&2
systemctl enable zcap@lo.service > "$work/enable.log" 2>&1 \
    || { cat "$work/enable.log" >&2; fail "systemctl enable zcap@lo.service failed (above)"; }
[ -L /etc/systemd/system/multi-user.target.wants/zcap@lo.service ] \
    || fail "systemctl enable zcap@lo.service made no link in multi-user.target.wants"

echo "== dpkg -r zcap" >&2
dpkg-query -L zcap | while read -r path; do [ -d "$path" ] || echo "$path"; done > "$work/files"
[ -s "$work/files" ] || fail "dpkg -L zcap lists no files"
dpkg -r zcap > "$work/dpkg-r.log" 2>&1 || { cat "$work/dpkg-r.log" >&2; fail "dpkg -r zcap failed (above)"; }
while read -r path; do
    [ ! -e "$path" ] && [ ! -L "$path" ] || fail "$path is still there after dpkg -r zcap"
done < "$work/files"

echo "== dpkg -P zcap" >&2
dpkg -P zcap > "$work/dpkg-P.log" 2>&1 || { cat "$work/dpkg-P.log" >&2; fail "dpkg -P zcap failed (above)"; }
status=$(dpkg-query -W -f='${db:Status-Status}' zcap 2>/dev/null || true)
[ -z "$status" ] || [ "$status" = not-installed ] || fail "zcap is '$status' after dpkg -P"
drop_cat_pages
named_zcap | comm -13 "$work/zcap-before" - > "$work/zcap-left"
if [ -s "$work/zcap-left" ]; then
    cat "$work/zcap-left" >&2
    # Made since the check began: taken away, so the machine is as it was.
    xargs -r -d '\n' rm -rf < "$work/zcap-left"
    fail "the purge left files named zcap* (above; now removed)"
fi
if ! accounts | diff "$work/accounts-before" - >&2; then
    fail "users or groups differ after the purge from before the install (above)"
fi
echo "deb-check: $deb installs, works and leaves nothing behind" >&2

#!/usr/bin/env bash
# Installs zcap with its man page and shell completions (cargo install places binaries only):
#   scripts/install-zcap.sh [--prefix DIR] [--bin ZCAP]
# --prefix: where to install (default /usr/local: DIR/bin, DIR/share/man/man1,
#   DIR/share/bash-completion/completions, DIR/share/zsh/site-functions,
#   DIR/share/fish/vendor_completions.d).
# --bin: a zcap binary already built; the man page and completions are generated from it and
#   nothing is compiled (the tests use this). Without it: cargo install --path zcap.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=/usr/local
bin=
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="$2"; shift 2 ;;
        --bin) bin="$2"; shift 2 ;;
        *) echo "install-zcap: unknown argument $1 (see the script's header)" >&2; exit 2 ;;
    esac
done
if [ -z "$bin" ]; then
    ./scripts/deps.sh
    cargo install --locked --path zcap --root "$prefix"
    bin="$prefix/bin/zcap"
fi
man1="$prefix/share/man/man1"
bash_dir="$prefix/share/bash-completion/completions"
zsh_dir="$prefix/share/zsh/site-functions"
fish_dir="$prefix/share/fish/vendor_completions.d"
mkdir -p "$man1" "$bash_dir" "$zsh_dir" "$fish_dir"
"$bin" --generate man > "$man1/zcap.1"
"$bin" --generate complete-bash > "$bash_dir/zcap"
"$bin" --generate complete-zsh > "$zsh_dir/_zcap"
"$bin" --generate complete-fish > "$fish_dir/zcap.fish"
echo "install-zcap: $bin, $man1/zcap.1, completions for bash, zsh and fish under $prefix/share" >&2

//! The man page and the shell completions zcap generates (`--generate`) from the definitions
//! `--help` is made of: man renders the page, each shell loads its completion script and
//! completes an option, and the install script puts all of them where those tools look.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{stderr, tmp, zcap, ZCAP};
use zcrx_ring::lab::Need;

/// `zcap --generate KIND` into `path`.
fn generate(kind: &str, path: &Path) {
    let o = zcap(&["--generate", kind]);
    assert!(o.status.success(), "--generate {kind}: {}", stderr(&o));
    assert!(!o.stdout.is_empty(), "--generate {kind} printed nothing");
    std::fs::write(path, &o.stdout).unwrap();
}

/// Runs `shell -c script` and returns its standard output.
fn shell(shell: &str, script: &str) -> String {
    let o = Command::new(shell).args(["-c", script]).output().unwrap();
    assert!(o.status.success(), "{shell} -c {script}: {}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The text of `section` of a rendered man page, its lines joined by single spaces.
fn section(page: &str, section: &str) -> String {
    page.lines()
        .skip_while(|l| l.trim() != section)
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn man_renders_the_page_with_its_synopsis_and_options() {
    zcrx_ring::require!(Need::Tool("man"));
    let page = tmp("zcap.1");
    generate("man", &page);
    let o = Command::new("man")
        .args(["-P", "cat", "-l"])
        .arg(&page)
        .env("MANWIDTH", "100")
        .output()
        .unwrap();
    assert!(o.status.success(), "man -l: {}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS"] {
        assert!(
            text.lines().any(|l| l.trim() == section),
            "no {section} in\n{text}"
        );
    }
    assert!(text.contains("--shards"), "{text}");
    // tcpdump's SYNOPSIS: the plain flags in one bracket, each option with its value's name.
    let synopsis = section(&text, "SYNOPSIS");
    let plain = synopsis
        .strip_prefix("zcap [-")
        .and_then(|s| s.split(']').next())
        .unwrap_or_else(|| panic!("no bracket of plain flags first: {synopsis}"));
    for flag in "AenqUvx#".chars() {
        assert!(
            plain.contains(flag),
            "-{flag} not in [-{plain}]: {synopsis}"
        );
    }
    for option in [
        "[-c N]",
        "[-i IFACE]",
        "[-r FILE]",
        "[-w FILE]",
        "[-s SNAPLEN]",
        "[-Q in|out|inout]",
        "[--pcapng]",
        "[--pcap-over-ip [ADDR:]PORT|unix:PATH]",
        "[FILTER...]",
    ] {
        assert!(synopsis.contains(option), "no {option} in {synopsis}");
    }
    assert!(
        !synopsis.contains(" ]") && !synopsis.contains("[-n]"),
        "a plain flag apart, or an option without its value's name: {synopsis}"
    );
    assert!(
        text.contains("a tcpdump-compatible zero-copy sniffer"),
        "{text}"
    );
    let o = zcap(&["--generate", "pdf"]);
    assert!(!o.status.success(), "an unknown kind is refused");
    assert!(stderr(&o).contains("complete-bash"), "{}", stderr(&o));
}

#[test]
fn bash_completes_sh_to_shards() {
    let script = tmp("zcap.bash");
    generate("complete-bash", &script);
    let out = shell(
        "bash",
        &format!(
            "source {}; COMP_WORDS=(zcap --sh); COMP_CWORD=1; COMP_LINE='zcap --sh'; \
             COMP_POINT=${{#COMP_LINE}}; _zcap zcap --sh zcap; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        ),
    );
    assert_eq!(out.lines().collect::<Vec<_>>(), ["--shards"], "{out}");
}

#[test]
fn zsh_loads_its_completion_function() {
    zcrx_ring::require!(Need::Tool("zsh"));
    let script = tmp("_zcap");
    generate("complete-zsh", &script);
    // Loaded after compinit, the script registers _zcap for zcap (compdef).
    let out = shell(
        "zsh",
        &format!(
            "autoload -U compinit && compinit -u -D && source {} && print -r -- $_comps[zcap]",
            script.display()
        ),
    );
    assert_eq!(out.trim(), "_zcap", "{out}");
}

#[test]
fn fish_completes_sh_to_shards_and_knows_every_short_option() {
    zcrx_ring::require!(Need::Tool("fish"));
    let script = tmp("zcap.fish");
    generate("complete-fish", &script);
    let out = shell(
        "fish",
        &format!("source {} && complete -C 'zcap --sh'", script.display()),
    );
    assert!(out.starts_with("--shards\t"), "{out}");
    // `-#` is quoted for fish (a bare # starts a comment there).
    let out = shell(
        "fish",
        &format!("source {} && complete -C 'zcap -'", script.display()),
    );
    assert!(out.lines().any(|l| l.starts_with("-#\t")), "{out}");
}

#[test]
fn install_script_puts_the_page_and_completions_where_the_tools_look() {
    let prefix = tmp("prefix");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/install-zcap.sh");
    let o = Command::new(script)
        .args(["--bin", ZCAP, "--prefix"])
        .arg(&prefix)
        .output()
        .unwrap();
    assert!(o.status.success(), "install-zcap.sh: {}", stderr(&o));
    for file in [
        "share/man/man1/zcap.1",
        "share/bash-completion/completions/zcap",
        "share/zsh/site-functions/_zcap",
        "share/fish/vendor_completions.d/zcap.fish",
    ] {
        let text = std::fs::read_to_string(prefix.join(file)).unwrap();
        assert!(text.contains("shards"), "{file}: {text}");
    }
}

//! `--generate KIND`: the man page and the shell completion scripts, from the definitions
//! `--help` is made of.

use std::io::{self, Write};

use clap_complete::Shell;

use super::flags::command;

/// `--generate KIND`: the man page or a shell's completion script, written to `out`.
pub(crate) fn generate(kind: &str, out: &mut dyn Write) -> io::Result<()> {
    let mut cmd = command();
    let shell = match kind {
        "man" => return man(cmd, out),
        "complete-bash" => Shell::Bash,
        "complete-zsh" => Shell::Zsh,
        "complete-fish" => Shell::Fish,
        _ => unreachable!("clap admits only the kinds above"),
    };
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "zcap", &mut script);
    if shell == Shell::Fish {
        // clap_complete writes `-#` (tcpdump's packet numbers) as `-s #`, which fish reads as
        // a comment: quote it.
        let text = String::from_utf8_lossy(&script).replace(" -s # ", " -s '#' ");
        return out.write_all(text.as_bytes());
    }
    out.write_all(&script)
}

/// clap_mangen's page with a SYNOPSIS as tcpdump's reads: the plain one-letter flags in one
/// bracket, then each option with its value's name.
fn man(cmd: clap::Command, out: &mut dyn Write) -> io::Result<()> {
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut page)?;
    let page = String::from_utf8(page).map_err(io::Error::other)?;
    let mut lines = page.lines();
    for line in lines.by_ref() {
        writeln!(out, "{line}")?;
        if line == ".SH SYNOPSIS" {
            break;
        }
    }
    // Left-adjusted, and no option split by hyphenation (`\\%` before each bracket).
    writeln!(out, ".na\n{}\n.ad", synopsis(cmd))?;
    let mut rest = lines.skip_while(|l| !l.starts_with(".SH "));
    // clap_mangen titles the text after the options EXTRA: it is what zcap decodes.
    rest.try_for_each(|line| match line {
        ".SH EXTRA" => writeln!(out, ".SH PROTOCOLS"),
        _ => writeln!(out, "{line}"),
    })
}

/// The SYNOPSIS line in roff: `zcap [-AenqUvx...] [-B KiB] [-c N] ... [--pcapng] ...
/// [FILTER...]`. Short options sorted as tcpdump sorts them (by letter, the lower case
/// first, `#` last), then the long-only ones in the order `--help` lists them; a bracket
/// never breaks across lines.
fn synopsis(mut cmd: clap::Command) -> String {
    cmd.build();
    let key = |c: char| (c == '#', c.to_ascii_lowercase(), c.is_ascii_uppercase());
    let value = |a: &clap::Arg| match a.get_value_names() {
        Some(names) => names
            .iter()
            .map(|n| n.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        None => a.get_id().as_str().to_uppercase(),
    };
    let args: Vec<&clap::Arg> = cmd.get_arguments().filter(|a| !a.is_hide_set()).collect();
    let mut plain: Vec<char> = args
        .iter()
        .filter(|a| !a.get_action().takes_values())
        .filter_map(|a| a.get_short())
        .collect();
    plain.sort_by_key(|&c| key(c));
    let mut valued: Vec<(char, String)> = args
        .iter()
        .filter(|a| a.get_action().takes_values() && !a.is_positional())
        .filter_map(|a| Some((a.get_short()?, value(a))))
        .collect();
    valued.sort_by_key(|&(c, _)| key(c));
    let mut s = format!(
        "\\fBzcap\\fR [\\fB\\-{}\\fR]",
        plain
            .iter()
            .map(|&c| escape(&c.to_string()))
            .collect::<String>()
    );
    for (c, v) in valued {
        s += &format!(" \\%[\\fB\\-{c}\\fR\\ \\fI{}\\fR]", escape(&v));
    }
    for a in args.iter().filter(|a| a.get_short().is_none()) {
        let Some(long) = a.get_long() else {
            continue;
        };
        s += &format!(" \\%[\\fB\\-\\-{}\\fR", escape(long));
        if a.get_action().takes_values() {
            s += &format!("\\ \\fI{}\\fR", escape(&value(a)));
        }
        s += "]";
    }
    for a in args.iter().filter(|a| a.is_positional()) {
        s += &format!(" \\%[\\fI{}\\fR...]", escape(&value(a)));
    }
    s
}

/// Text as roff prints it literally (a hyphen as `\-`, which man keeps as typed).
fn escape(text: &str) -> String {
    text.replace('\\', "\\e").replace('-', "\\-")
}

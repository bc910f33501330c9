//! Where packets go from the command line: `-w` with its rotation (`-C`, `-G`, `-W`, `-z`)
//! and compression, or lines and JSON with their time stamps (`-t`) and detail.

use anyhow::{bail, Result};
use std::io::IsTerminal as _;
use zcrx_capture::pcapfile::Format;

use super::flags::Args;
use crate::compress::Compression;
use crate::output::{Destination, SinkConfig, TextStyle};
use crate::print::{Detail, Stamp};
use crate::rotate::{parse_size, Rotation};

/// The time stamp style (-t count and precision), or what is wrong with it.
pub(super) fn stamp(args: &Args) -> Result<Stamp> {
    if args.ts_format > 5 {
        bail!(
            "-{}: at most five t (-ttttt)",
            "t".repeat(args.ts_format.into())
        );
    }
    let nano = match (args.time_stamp_precision.as_deref(), args.micro, args.nano) {
        (Some("nano"), false, _) | (None, false, true) => true,
        (Some("micro"), _, false) | (None, _, false) => false,
        (Some(p), _, _) if p != "micro" && p != "nano" => {
            bail!("--time-stamp-precision {p:?}: micro or nano")
        }
        _ => bail!("--micro and --nano (or a different --time-stamp-precision) exclude each other"),
    };
    Ok(Stamp {
        format: args.ts_format,
        nano,
    })
}

/// Where packets go: `-w` (with its rotation and compression), lines or JSON, or nowhere
/// when flows are the output.
pub(super) fn sink(args: &Args, stamp: Stamp) -> Result<SinkConfig> {
    let exports = args.exports();
    let to = match args.write.as_deref() {
        Some("-") => Destination::Stdout,
        Some(path) => Destination::File(path.to_string()),
        // The flows are the output: the flow table, the export, or the view.
        None if args.flows || exports || args.count_only || args.top => Destination::Discard,
        None if args.json => Destination::Json,
        None => Destination::Text,
    };
    Ok(SinkConfig {
        rotation: rotation(args)?,
        to,
        format: if args.pcapng {
            Format::PcapNg
        } else {
            Format::Pcap
        },
        packet_buffered: args.packet_buffered,
        style: TextStyle {
            stamp,
            number: args.number,
            lengths: args.compat.lengths,
            // A file is read as fast as it can be: its lines go out in large writes (as
            // tcpdump's stdio does, but to a terminal) unless -l or -U asks for each line at
            // once. Live lines go out a block at a time, as the blocks come.
            block_buffered: args.read.is_some()
                && !args.line_buffered
                && !args.packet_buffered
                && !std::io::stdout().is_terminal(),
            line_buffered: args.line_buffered || args.packet_buffered,
            print_too: args.print,
            detail: Detail {
                link: args.link_header,
                verbose: args.verbose,
                hex: args.hex,
                hex_ascii: args.hex_ascii,
                ascii: args.ascii,
                quiet: args.quiet,
                absolute: args.absolute,
                names: !args.numeric,
                no_checksums: args.compat.no_checksums,
                short_names: args.compat.short_names,
                // A file has no interface: with -r, -f changes nothing (as in tcpdump).
                local_v4: match args.iface.as_deref() {
                    Some(i) if args.compat.foreign_numeric => {
                        crate::dissect::resolve::local_network(i)
                    }
                    _ => None,
                },
            },
        },
    })
}

/// `-C`, `-G`, `-W`, `-z` and `--compress`, with tcpdump's checks and messages.
pub(super) fn rotation(args: &Args) -> Result<Rotation> {
    let to_file = matches!(args.write.as_deref(), Some(w) if w != "-");
    let size = args.file_size.as_deref().map(parse_size).transpose()?;
    if size.is_some() && !to_file {
        bail!("-C cannot be used without -w FILE");
    }
    if args.rotate_seconds.is_some() && !to_file {
        bail!("-G cannot be used without -w FILE");
    }
    if args.file_count.is_some() && size.is_none() && args.rotate_seconds.is_none() {
        bail!("-W needs -C or -G");
    }
    if args.post_rotate.is_some() && (size.is_none() && args.rotate_seconds.is_none()) {
        bail!("-z cannot be used without -w and (-C or -G)");
    }
    let compress = match (&args.compress, args.write.as_deref()) {
        (Some(_), Some("-")) => bail!(
            "--compress writes files; compress standard output with the compressor (zcap -w - | zstd > FILE.zst)"
        ),
        (Some(_), None) => bail!("--compress cannot be used without -w FILE"),
        (Some(c), _) => Some(Compression::parse(c)?),
        (None, Some(w)) if w != "-" => Compression::from_name(w),
        _ => None,
    };
    Ok(Rotation {
        size,
        count: args.file_count,
        seconds: args.rotate_seconds,
        post: args.post_rotate.clone(),
        packet_buffered: args.packet_buffered,
        compress,
        lossless: args.read.is_some(),
    })
}

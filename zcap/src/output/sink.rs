//! The sink a capture writes to: what the command line asks for ([`SinkConfig`]), the sink
//! it opens ([`Sink`]), and standard output for capture files.

use std::io::Write;

use anyhow::Result;
use zcrx_capture::pcapfile::{Format, PacketRecord, SaveError, SaveFile, Taken};

use crate::print;
use crate::rotate::{Files, Rotation};

/// Where packets go.
pub(crate) enum Sink {
    /// A pcap or pcapng file, or a rotated series of them.
    File(Box<Files>),
    /// pcap or pcapng on standard output (`-w -`).
    Stdout(SaveFile<StdoutWriter>),
    /// One line per packet, like `tcpdump -n -q`.
    Text,
    /// One JSON object per packet.
    Json,
    /// Nothing per packet (`--flows` only shows the flow table).
    Discard,
}

impl Sink {
    /// [`SaveFile::write_many`] on the file or standard output (the short path of one
    /// capture file).
    #[inline]
    pub(super) fn write_many<'a>(
        &mut self,
        records: impl Iterator<Item = PacketRecord<'a>>,
        taken: &mut Taken,
    ) -> Result<(), SaveError> {
        match self {
            Sink::File(files) => files.write_many(records, taken),
            Sink::Stdout(save) => save.write_many(records, taken),
            _ => unreachable!("Plain::Save is for files and standard output"),
        }
    }
}

/// How text lines look: time stamps, packet numbers, and whether lines are printed beside
/// a file written with `-w` (`--print`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TextStyle {
    pub(crate) stamp: print::Stamp,
    pub(crate) number: bool,
    /// `--lengths`: `caplen N len M` before each line.
    pub(crate) lengths: bool,
    /// Lines gathered and written in large writes (else each line is written at once).
    pub(crate) block_buffered: bool,
    /// `-l` or `-U`: each line written at once, never gathered.
    pub(crate) line_buffered: bool,
    pub(crate) print_too: bool,
    pub(crate) detail: print::Detail,
}

/// Where the packets of a capture go (see [`Sink`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Destination {
    /// `-w FILE`.
    File(String),
    /// `-w -`.
    Stdout,
    /// Lines as tcpdump prints them.
    Text,
    /// `--json`.
    Json,
    /// Nothing per packet: the flows are the output (`--flows`, `--ipfix`, `--count`).
    Discard,
}

/// The sink a capture asks for: where packets go, as what, rotated how, and how its text
/// lines look.
#[derive(Debug, Clone)]
pub(crate) struct SinkConfig {
    pub(crate) to: Destination,
    /// `--pcapng` or pcap.
    pub(crate) format: Format,
    /// `-C`, `-G`, `-W`, `-z`, compression (for `-w FILE`).
    pub(crate) rotation: Rotation,
    /// `-U`: every record handed over as it is written.
    pub(crate) packet_buffered: bool,
    pub(crate) style: TextStyle,
}

/// The sink `config` asks for, for packets of `linktype` cut at `snaplen` (a file is
/// created now).
pub(crate) fn open_sink(config: &SinkConfig, linktype: u32, snaplen: u32) -> Result<Sink> {
    Ok(match &config.to {
        Destination::Stdout => Sink::Stdout(crate::rotate::new_save(
            StdoutWriter,
            config.format,
            linktype,
            snaplen,
            config.packet_buffered,
        )),
        Destination::File(path) => Sink::File(Box::new(Files::create(
            path,
            config.rotation.clone(),
            config.format,
            linktype,
            snaplen,
        )?)),
        Destination::Text => Sink::Text,
        Destination::Json => Sink::Json,
        Destination::Discard => Sink::Discard,
    })
}

/// Standard output for capture files: what the capture file's own buffer hands over goes
/// straight to the file descriptor in one write(2) (std's stdout is line-buffered, which
/// would hold binary records back until a newline byte passes, or split them in two writes).
pub(crate) struct StdoutWriter;

impl Write for StdoutWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        loop {
            match nix::unistd::write(std::io::stdout(), buf) {
                Err(nix::errno::Errno::EINTR) => continue,
                r => return crate::rotate::written(r.map_err(std::io::Error::from)),
            }
        }
    }
    /// One writev(2) for the record headers and the frames `SaveFile::write_many` hands
    /// over in place (the default would make a write(2) of each piece).
    fn write_vectored(&mut self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
        loop {
            match nix::sys::uio::writev(std::io::stdout(), bufs) {
                Err(nix::errno::Errno::EINTR) => continue,
                r => return crate::rotate::written(r.map_err(std::io::Error::from)),
            }
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

//! The values the options take, parsed and range-checked by clap: durations or `off`, `on`/`off`,
//! frame sizes or `imix`, read sizes, counts and reals in ranges, workload and mode names.

use std::ops::RangeInclusive;
use std::sync::OnceLock;

use clap::builder::{PossibleValue, PossibleValuesParser, RangedU64ValueParser, TypedValueParser};
use clap::ValueEnum;

use crate::measure::instructions::WORKLOADS;
use crate::measure::run::Mode;

/// `--hold-cpu-link`: the longest wait for the near state, or `off` (`None`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HoldLink(pub Option<std::time::Duration>);

pub(super) fn hold_seconds(v: &str) -> Result<HoldLink, String> {
    match v.trim() {
        "off" => Ok(HoldLink(None)),
        s => s
            .parse::<f64>()
            .ok()
            .filter(|s| (0.0..=3600.0).contains(s))
            .map(|s| HoldLink(Some(std::time::Duration::from_secs_f64(s))))
            .ok_or_else(|| format!("{v:?}: seconds (0 to 3600) or `off`")),
    }
}

/// `on` or `off`.
pub(super) fn on_off(v: &str) -> Result<bool, String> {
    match v.trim() {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("{v:?}: `on` or `off`")),
    }
}

/// `--cpu-dma-latency`: µs to hold /dev/cpu_dma_latency at, or `off` (`None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaLatency(pub Option<u32>);

pub(super) fn dma_latency(v: &str) -> Result<DmaLatency, String> {
    match v.trim() {
        "off" => Ok(DmaLatency(None)),
        us => us
            .parse::<u32>()
            .ok()
            .filter(|&us| us <= i32::MAX as u32)
            .map(|us| DmaLatency(Some(us)))
            .ok_or_else(|| format!("{v:?}: µs (0 to {}) or `off`", i32::MAX)),
    }
}

/// A frame size (60..=1514) or `imix` ([`crate::measure::capacity::IMIX`]).
#[derive(Clone)]
pub(super) struct SizeOrImix;

impl TypedValueParser for SizeOrImix {
    type Value = usize;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<usize, clap::Error> {
        if value == "imix" {
            return Ok(crate::measure::capacity::IMIX);
        }
        if value.to_str().is_some_and(|v| v.parse::<u64>().is_ok()) {
            return count(60..=1514).parse_ref(cmd, arg, value);
        }
        Err(clap::Error::raw(
            clap::error::ErrorKind::InvalidValue,
            format!(
                "invalid value '{}' for '--sizes': a frame size (60..=1514) or imix\n",
                value.to_string_lossy()
            ),
        )
        .with_cmd(cmd))
    }
}

/// `--method`'s values.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchKind {
    /// IETF BMWG's MLRsearch.
    Mlr,
    /// The binary search of RFC 2544.
    Binary,
}

/// A read size: a page multiple from 4 KiB to 64 MiB, bytes or with k (KiB) or m (MiB).
pub(super) fn read_size(s: &str) -> Result<usize, String> {
    let t = s.trim().to_ascii_lowercase();
    let (digits, unit) = match t.strip_suffix('k') {
        Some(d) => (d, 1 << 10),
        None => match t.strip_suffix('m') {
            Some(d) => (d, 1 << 20),
            None => (t.as_str(), 1),
        },
    };
    let n: usize = digits
        .parse()
        .map_err(|_| format!("{s:?} is not a size (bytes, or with k or m)"))?;
    let v = n
        .checked_mul(unit)
        .ok_or_else(|| format!("{s:?} is too large"))?;
    if !(4096..=64 << 20).contains(&v) || v % 4096 != 0 {
        return Err(format!(
            "{s:?} is not a multiple of 4096 from 4k to 64m (the zero-copy mapping is whole pages)"
        ));
    }
    Ok(v)
}

/// The frame sizes of lab traffic a generator sends: Ethernet frames without their FCS,
/// from the 60-byte minimum to a 1500-byte MTU's 1514.
#[derive(clap::Args, Debug)]
pub struct FrameSizes {
    /// Frame sizes.
    #[arg(
        long,
        value_delimiter = ',',
        default_values_t = [64usize, 512, 1400],
        value_parser = count(60..=1514)
    )]
    pub sizes: Vec<usize>,
}

/// A count within `range`: clap's integer parser, for a `usize` argument.
pub(super) fn count(range: RangeInclusive<u64>) -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::new().range(range)
}

/// A real number within `range` (seconds, rates, percentages); the message names the range
/// as clap's integer parser does.
pub(super) fn real(range: RangeInclusive<f64>) -> impl TypedValueParser<Value = f64> {
    move |s: &str| -> Result<f64, String> {
        let v: f64 = s.parse().map_err(|e| format!("{e}"))?;
        if range.contains(&v) {
            Ok(v)
        } else {
            Err(format!("{v} is not in {}..={}", range.start(), range.end()))
        }
    }
}

/// The workloads' names, each with what it measures; without the ones that run another
/// program (`zcap-writer` counts zcap itself) for `rxbench workload`.
pub(super) fn workloads(all: bool) -> PossibleValuesParser {
    PossibleValuesParser::new(
        WORKLOADS
            .iter()
            .filter(|(name, _)| all || *name != "zcap-writer")
            .map(|&(name, what)| PossibleValue::new(name).help(what)),
    )
}

/// Modes by [`Mode::name`], as `--modes` takes them.
impl ValueEnum for Mode {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: OnceLock<Vec<Mode>> = OnceLock::new();
        ALL.get_or_init(Mode::all)
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        // clap's names are `&'static str`: each mode's name is made once, and kept.
        static NAMES: OnceLock<Vec<(Mode, &'static str)>> = OnceLock::new();
        let names = NAMES.get_or_init(|| {
            Mode::all()
                .into_iter()
                .map(|m| (m, &*Box::leak(m.name().into_boxed_str())))
                .collect()
        });
        let &(_, name) = names.iter().find(|(m, _)| m == self)?;
        Some(PossibleValue::new(name))
    }
}

/// `capacity --modes`: a mode by name, or `""` for none (with `--sniffers`).
#[derive(Clone)]
pub(super) struct ModeOrNone;

impl TypedValueParser for ModeOrNone {
    type Value = Option<Mode>;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Option<Mode>, clap::Error> {
        if value.is_empty() {
            return Ok(None);
        }
        clap::builder::EnumValueParser::<Mode>::new()
            .parse_ref(cmd, arg, value)
            .map(Some)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            Mode::value_variants()
                .iter()
                .filter_map(ValueEnum::to_possible_value),
        ))
    }
}

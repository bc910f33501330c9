//! rxbench's command line (clap): the top-level options, the main run's arguments, and one
//! struct of arguments per sub-command. Every range and every closed set of names is checked
//! here, at parse time (clap's usage error, exit status 2); what relates two arguments or
//! needs the run (root, the TX ring's largest frame) is checked by the sub-command's module
//! under `commands/`.

mod capacity;
mod command;
mod tools;
mod values;

pub use capacity::{
    CapacityArgs, GeneratorsArgs, SaturationArgs, SearchArgs, SniffArgs, SnifferArgs, Traffic,
};
pub use command::{Cli, Cmd, RunArgs};
pub use tools::{
    CopyArgs, DrainArgs, InstructionsArgs, LabAction, LabArgs, PrintFileArgs, RemapArgs, SweepArgs,
    TableArgs, TcpRxArgs,
};
pub use values::{DmaLatency, FrameSizes, HoldLink, SearchKind};

#[cfg(test)]
mod test {
    use clap::{CommandFactory, Parser, ValueEnum};

    use super::{Cli, Cmd};
    use crate::measure::run::Mode;

    #[test]
    fn the_definitions_hold_and_every_default_is_within_its_range() {
        Cli::command().debug_assert();
        // clap checks default values as it parses: each sub-command's defaults pass.
        Cli::try_parse_from(["rxbench"]).expect("the main run's defaults");
        for sub in Cli::command().get_subcommands() {
            let name = sub.get_name();
            let args: &[&str] = match name {
                "lab" => &["up"],
                "workload" => &["stage", "1"],
                _ => &[],
            };
            let cli = Cli::try_parse_from(["rxbench", name].iter().chain(args))
                .unwrap_or_else(|e| panic!("rxbench {name}: {e}"));
            assert!(cli.cmd.is_some(), "{name}");
        }
    }

    #[test]
    fn the_receiving_cpu_is_isolated_unless_told_off() {
        let isolate =
            |args: &[&str]| match Cli::try_parse_from(["rxbench", "capacity"].iter().chain(args))
                .map(|c| c.cmd)
            {
                Ok(Some(Cmd::Capacity(a))) => Ok(a.search.isolate_rx_cpu),
                Ok(other) => panic!("{other:?}"),
                Err(e) => Err(e.to_string()),
            };
        assert_eq!(isolate(&[]), Ok(true));
        assert_eq!(isolate(&["--isolate-rx-cpu", "on"]), Ok(true));
        assert_eq!(isolate(&["--isolate-rx-cpu", "off"]), Ok(false));
        let refused = isolate(&["--isolate-rx-cpu", "true"]).unwrap_err();
        assert!(refused.contains("`on` or `off`"), "{refused}");
    }

    #[test]
    fn the_cpu_link_is_held_for_half_a_minute_unless_told_otherwise() {
        let hold =
            |args: &[&str]| match Cli::try_parse_from(["rxbench", "capacity"].iter().chain(args))
                .map(|c| c.cmd)
            {
                Ok(Some(Cmd::Capacity(a))) => Ok(a.search.hold_cpu_link.0),
                Ok(other) => panic!("{other:?}"),
                Err(e) => Err(e.to_string()),
            };
        let secs = |s: f64| Ok(Some(std::time::Duration::from_secs_f64(s)));
        assert_eq!(hold(&[]), secs(30.0));
        assert_eq!(hold(&["--hold-cpu-link", "60"]), secs(60.0));
        assert_eq!(hold(&["--hold-cpu-link", "2.5"]), secs(2.5));
        assert_eq!(hold(&["--hold-cpu-link", "off"]), Ok(None));
        for bad in ["-1", "nan", "forever", "3601"] {
            let refused = hold(&[&format!("--hold-cpu-link={bad}")]).unwrap_err();
            assert!(
                refused.contains("seconds (0 to 3600) or `off`"),
                "{refused}"
            );
        }
    }

    #[test]
    fn every_mode_is_taken_by_its_name() {
        for mode in Mode::all() {
            assert_eq!(Mode::from_str(&mode.name(), false), Ok(mode));
        }
        let cli = Cli::try_parse_from(["rxbench", "capacity", "--modes", ""]).unwrap();
        match cli.cmd {
            Some(Cmd::Capacity(a)) => assert_eq!(a.modes, [None]),
            other => panic!("{other:?}"),
        }
    }
}

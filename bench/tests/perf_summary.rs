//! `perf-summary`: the summary table committed in `docs/PERFORMANCE.md` is the one that
//! `bench/results` gives, and `--check` notices a table that is not.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The committed performance page.
fn performance_md() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/PERFORMANCE.md")
}

fn perf_summary(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perf-summary"))
        .args(args)
        .output()
        .expect("run perf-summary")
}

/// A copy of the committed page in this test's own file (tests run in parallel).
fn copy_of_page(name: &str) -> PathBuf {
    let path =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}.md", std::process::id()));
    std::fs::copy(performance_md(), &path).expect("copy docs/PERFORMANCE.md");
    path
}

#[test]
fn committed_summary_is_what_the_results_give() {
    let page = performance_md();
    let out = perf_summary(&["--check".as_ref(), page.as_os_str()]);
    assert!(
        out.status.success(),
        "docs/PERFORMANCE.md's summary is stale (regenerate it with \
         `cargo run -p zcrx-bench --bin perf-summary -- --write docs/PERFORMANCE.md`):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn check_detects_a_changed_table_and_write_restores_it() {
    let page = copy_of_page("perf-summary-changed");
    let text = std::fs::read_to_string(&page).unwrap();
    let begin = text.find("<!-- summary:begin -->").expect("begin marker");
    let first = "| capacity, 64 B";
    let row = text[begin..].find(first).expect("the 64-byte capacity row") + begin + first.len();
    let changed = format!("{}, edited by hand{}", &text[..row], &text[row..]);
    std::fs::write(&page, &changed).unwrap();

    let out = perf_summary(&["--check".as_ref(), page.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "--check must fail on a changed table: {stderr}"
    );
    assert!(
        stderr.contains("- | capacity, 64 B, edited by hand"),
        "the old line is shown: {stderr}"
    );
    assert!(
        stderr.contains("+ | capacity, 64 B, 256 flows"),
        "the new line is shown: {stderr}"
    );

    let out = perf_summary(&["--write".as_ref(), page.as_os_str()]);
    assert!(
        out.status.success(),
        "--write: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&page).unwrap(),
        text,
        "--write puts back the committed page"
    );
    std::fs::remove_file(&page).ok();
}

#[test]
fn check_refuses_a_page_without_markers() {
    let page = copy_of_page("perf-summary-unmarked");
    let text = std::fs::read_to_string(&page).unwrap();
    std::fs::write(&page, text.replace("<!-- summary:end -->", "")).unwrap();
    let out = perf_summary(&["--check".as_ref(), page.as_os_str()]);
    assert!(
        !out.status.success(),
        "a page without its end marker cannot be checked"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("summary:end"));
    std::fs::remove_file(&page).ok();
}

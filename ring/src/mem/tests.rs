use super::*;

/// Leaking leases by the billion must not wrap the share count (the
/// next drop would hand the block back under live references). The guard aborts, as
/// `Arc::clone` does; an abort can only be watched from outside, so the test re-runs
/// itself as a child process.
#[test]
fn share_count_overflow_aborts() {
    const CHILD: &str = "ZCRX_SHARE_OVERFLOW_CHILD";
    if std::env::var_os(CHILD).is_some() {
        let ring = crate::SyntheticRing::builder()
            .block_size(4096)
            .build([crate::Frame::new(vec![0u8; 60])])
            .unwrap();
        let block = ring.next_block().unwrap();
        // As if MAX_SHARES - 1 leases had been made and forgotten (mem::forget).
        ring.map().states[0].set_shares_for_test(MAX_SHARES);
        let one_more = block.lease(); // the guard aborts here
        std::mem::forget(one_more);
        // Unguarded, the count wraps: show the damage a real leak would do.
        let extra = u32::MAX - MAX_SHARES;
        for _ in 0..extra {
            std::mem::forget(block.lease());
        }
        drop(block);
        eprintln!(
            "wrapped: blocks_held={} with {extra} forgotten leases",
            ring.map().blocks_held()
        );
        std::process::exit(0);
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "mem::tests::share_count_overflow_aborts",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGABRT),
        "the share count overflowed without aborting: {:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

//! Errors a person can act on: the capability, the interface or the field is named.

use std::time::Duration;
use zcrx_ring::{RingError, RxRing, TxRing};

/// Runs `f` on a thread whose effective capability set lacks CAP_NET_RAW (capabilities are
/// per thread on Linux), so this works as root too.
fn without_net_raw<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        s.spawn(|| {
            caps::drop(None, caps::CapSet::Effective, caps::Capability::CAP_NET_RAW)
                .expect("drop CAP_NET_RAW");
            assert!(!zcrx_ring::has_cap_net_raw());
            f()
        })
        .join()
        .unwrap()
    })
}

#[test]
fn missing_privilege_names_the_capability_and_interface() {
    let err = without_net_raw(|| RxRing::builder("lo").build().unwrap_err());
    assert!(matches!(err, RingError::Permission { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("CAP_NET_RAW") && msg.contains("\"lo\""),
        "{msg}"
    );
    let err = without_net_raw(|| TxRing::builder("lo").build().unwrap_err());
    assert!(err.to_string().contains("CAP_NET_RAW"), "{err}");
}

#[test]
fn unknown_interface_is_named() {
    let err = RxRing::builder("zcrx-nosuch9").build().unwrap_err();
    assert!(
        matches!(&err, RingError::NoSuchInterface { iface } if iface == "zcrx-nosuch9"),
        "{err:?}"
    );
    assert!(err.to_string().contains("zcrx-nosuch9"));
}

#[test]
fn invalid_geometry_names_the_field() {
    let cases: Vec<(Setter, &str)> = vec![
        (Box::new(|b| b.block_size(3000)), "block_size"),
        (Box::new(|b| b.block_size(0)), "block_size"),
        (Box::new(|b| b.block_size(3 * 4096)), "block_size"),
        (Box::new(|b| b.block_count(0)), "block_count"),
        (Box::new(|b| b.frame_size(17)), "frame_size"),
        (Box::new(|b| b.frame_size(8 << 20)), "frame_size"),
        (
            Box::new(|b| b.block_timeout(Duration::ZERO)),
            "block_timeout",
        ),
        (
            Box::new(|b| b.block_timeout(Duration::from_secs(100))),
            "block_timeout",
        ),
        (Box::new(|b| b.snaplen(0)), "snaplen"),
        (Box::new(|b| b.filter(Vec::new())), "filter"),
    ];
    for (set, field) in cases {
        let err = set(RxRing::builder("lo")).build().unwrap_err();
        match &err {
            RingError::InvalidConfig { field: f, .. } => assert_eq!(*f, field, "{err}"),
            other => panic!("expected InvalidConfig for {field}, got {other:?}"),
        }
        assert!(err.to_string().contains(field));
    }
    let err = TxRing::builder("lo").frame_size(24).build().unwrap_err();
    assert!(err.to_string().contains("frame_size"), "{err}");
}

type Setter = Box<dyn Fn(zcrx_ring::RxRingBuilder) -> zcrx_ring::RxRingBuilder>;

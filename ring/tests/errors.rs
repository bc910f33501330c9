//! Errors a person can act on: the capability, the interface or the field is named.

use std::time::Duration;
use zcrx_ring::{RingError, RxRing, Setting, TxRing};

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
fn a_name_no_interface_can_have_is_a_mistake_in_the_name() {
    for name in ["", "a-name-of-16-byte", "eth0/1", "eth 0", "eth0:1", ".."] {
        let err = RxRing::builder(name).build().unwrap_err();
        assert_eq!(err.setting(), Some(Setting::Interface), "{name:?}: {err:?}");
        assert!(
            err.to_string().contains("is not an interface name"),
            "{name:?}: {err}"
        );
    }
    // At the limit (15 bytes): a name, only missing.
    let err = RxRing::builder("zcrx-nosuch-15b").build().unwrap_err();
    assert!(matches!(err, RingError::NoSuchInterface { .. }), "{err:?}");
}

#[test]
fn invalid_geometry_names_the_field() {
    let cases: Vec<(Setter, Setting)> = vec![
        (Box::new(|b| b.block_size(3000)), Setting::BlockSize),
        (Box::new(|b| b.block_size(0)), Setting::BlockSize),
        (Box::new(|b| b.block_size(3 * 4096)), Setting::BlockSize),
        (Box::new(|b| b.block_count(0)), Setting::BlockCount),
        (Box::new(|b| b.frame_size(17)), Setting::FrameSize),
        (Box::new(|b| b.frame_size(8 << 20)), Setting::FrameSize),
        (
            Box::new(|b| b.block_timeout(Duration::ZERO)),
            Setting::BlockTimeout,
        ),
        (
            Box::new(|b| b.block_timeout(Duration::from_secs(100))),
            Setting::BlockTimeout,
        ),
        (Box::new(|b| b.snaplen(0)), Setting::Snaplen),
        (Box::new(|b| b.filter(Vec::new())), Setting::Filter),
    ];
    for (set, field) in cases {
        let err = set(RxRing::builder("lo")).build().unwrap_err();
        match &err {
            RingError::InvalidConfig { setting, .. } => assert_eq!(*setting, field, "{err}"),
            other => panic!("expected InvalidConfig for {field}, got {other:?}"),
        }
        assert_eq!(err.setting(), Some(field));
        assert!(err.to_string().contains(field.name()), "{err}");
    }
    let err = TxRing::builder("lo").frame_size(24).build().unwrap_err();
    assert_eq!(err.setting(), Some(Setting::FrameSize), "{err}");
    assert!(err.to_string().contains("frame_size"), "{err}");
}

type Setter = Box<dyn Fn(zcrx_ring::RxRingBuilder) -> zcrx_ring::RxRingBuilder>;

//! `zcrx_flowcache::names` HTTP/1.x: the first request and response, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zcrx_flowcache::names::{HttpRequest, HttpResponse};

fuzz_target!(|data: &[u8]| {
    if let Ok(r) = HttpRequest::parse(data) {
        assert!(!r.method.is_empty() && r.minor_version <= 1);
        // Names are never longer than the bytes they came from.
        assert!(r.method.len() + r.path.len() <= data.len());
    }
    if let Ok(r) = HttpResponse::parse(data) {
        assert!(r.status <= 999);
    }
});

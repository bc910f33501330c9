//! The TPACKET_V3 block walker over arbitrary block bytes: every offset and length the
//! "kernel" wrote is checked; a bad header is an error, never a panic or a read outside
//! the block.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zcrx_ring::BlockView;

fuzz_target!(|data: &[u8]| {
    let Ok(view) = BlockView::parse(data) else {
        return;
    };
    let base = data.as_ptr() as usize;
    let mut n = 0u32;
    for p in view.packets() {
        let Ok(p) = p else {
            break;
        };
        let start = p.data().as_ptr() as usize - base;
        assert_eq!(start, p.offset_in_block() as usize);
        assert!(start + p.data().len() <= data.len());
        assert!(start + p.data().len() <= view.blk_len() as usize);
        n += 1;
    }
    assert!(n <= view.num_packets());
});

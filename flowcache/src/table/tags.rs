/// Slots per set: the 16 tag bytes one SSE2 compare matches.
pub(super) const WAYS: usize = 16;

/// The tag of a free slot: occupied slots' tags have the high bit set.
pub(super) const EMPTY: u8 = 0;

#[cfg(all(target_arch = "x86_64", target_feature = "sse2", not(zcrx_portable)))]
mod imp {
    use safe_arch::{cmp_eq_mask_i8_m128i, m128i, move_mask_i8_m128i, set_splat_i8_m128i};

    #[inline(always)]
    pub(in crate::table) fn matching(set: &[u8; super::WAYS], tag: u8) -> u32 {
        let v = m128i::from(*set);
        move_mask_i8_m128i(cmp_eq_mask_i8_m128i(v, set_splat_i8_m128i(tag as i8))) as u32
    }

    /// Occupied tags have the high bit set: movemask collects exactly those.
    #[inline(always)]
    pub(in crate::table) fn free(set: &[u8; super::WAYS]) -> u32 {
        !(move_mask_i8_m128i(m128i::from(*set)) as u32) & 0xffff
    }
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2", not(zcrx_portable))))]
mod imp {
    const LOW_BYTES: u128 = u128::MAX / 0xff; // 0x0101...01
    const HIGH_BITS: u128 = LOW_BYTES * 0x80;
    const LOW7: u128 = LOW_BYTES * 0x7f;

    /// 0x80 in every zero byte of `x`, 0 elsewhere, exactly (no borrow between bytes).
    #[inline(always)]
    fn zero_bytes(x: u128) -> u128 {
        !(((x & LOW7) + LOW7) | x | LOW7)
    }

    /// Bit 7 of byte `i` of `x` (its only bits) moved to bit `i`: the multiply puts
    /// byte `k`'s bit at 56 + k of each half, and no two partial products overlap.
    #[inline(always)]
    fn gather(x: u128) -> u32 {
        const MAGIC: u64 = 0x0102_0408_1020_4080;
        let half = |h: u64| ((h >> 7).wrapping_mul(MAGIC) >> 56) as u32;
        half(x as u64) | half((x >> 64) as u64) << 8
    }

    #[inline(always)]
    pub(in crate::table) fn matching(set: &[u8; super::WAYS], tag: u8) -> u32 {
        gather(zero_bytes(
            u128::from_le_bytes(*set) ^ (LOW_BYTES * u128::from(tag)),
        ))
    }

    #[inline(always)]
    pub(in crate::table) fn free(set: &[u8; super::WAYS]) -> u32 {
        gather(!u128::from_le_bytes(*set) & HIGH_BITS)
    }
}

pub(in crate::table) use imp::{free, matching};

/// The lowest way in a non-empty mask.
#[inline(always)]
pub(in crate::table) fn way(mask: u32) -> usize {
    mask.trailing_zeros() as usize
}

const _: () = assert!(WAYS == 16);

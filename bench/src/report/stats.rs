//! Statistics over rounds: medians, paired ratios, a reproducible round order. A leaf module:
//! the measuring modules and the report both use it.

/// The median (upper median for an even count). Panics on an empty vector.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// The median over rounds of `a[i] / b[i]` (two contenders measured in the same rounds).
pub fn paired(a: &[f64], b: &[f64]) -> f64 {
    median(a.iter().zip(b).map(|(x, y)| x / y).collect())
}

/// The indices `0..n` in an order that differs from round to round (a Fisher-Yates shuffle
/// seeded by the round): no contender always runs right after the same other one (a
/// rotation would keep, say, the routine after the non-temporal one always after it, paying
/// for the caches it left cold).
pub fn shuffled(n: usize, round: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut x = (round as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for i in (1..n).rev() {
        x ^= x >> 29;
        x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x ^= x >> 32;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    order
}

//! One sort for the whole crate. Every `sort_by` of its own element type compiles a copy
//! of the standard sort (~5 kB of wasm each); these go through one copy, sorting positions.

use std::cmp::Ordering;

/// The positions `0..n` in the order `cmp` puts them, ties in position order.
fn order(n: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut positions: Vec<usize> = (0..n).collect();
    positions.sort_unstable_by(|&a, &b| cmp(a, b).then(a.cmp(&b)));
    positions
}

/// `v.sort_by(cmp)`: the same stable sort.
pub fn sort_by<T>(v: &mut Vec<T>, cmp: impl Fn(&T, &T) -> Ordering) {
    if v.len() < 2 {
        return;
    }
    let order = order(v.len(), &|a, b| cmp(&v[a], &v[b]));
    let mut items: Vec<Option<T>> = std::mem::take(v).into_iter().map(Some).collect();
    v.extend(order.into_iter().filter_map(|i| items[i].take()));
}

#[cfg(test)]
mod tests {
    #[test]
    fn sorts_as_the_standard_stable_sort() {
        let mut seed = 3u64;
        for len in 0..200 {
            let v: Vec<(u8, usize)> = (0..len)
                .map(|i| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((seed >> 60) as u8, i)
                })
                .collect();
            let mut want = v.clone();
            want.sort_by_key(|a| a.0);
            let mut got = v;
            super::sort_by(&mut got, |a, b| a.0.cmp(&b.0));
            assert_eq!(got, want);
        }
    }
}

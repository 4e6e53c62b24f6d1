// SPDX-License-Identifier: BSD-2-Clause
// hog.rs - a Rust host for tests/e2e/host_rust.sh, using the system allocator (the default):
// a function keeping 64 MiB of Vecs live, threads with their own allocations, a HashMap.
use std::collections::HashMap;
use std::thread;

#[inline(never)]
fn rust_hog(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| vec![(i & 0xff) as u8; 1 << 20]).collect()
}

#[inline(never)]
fn rust_map(n: usize) -> HashMap<usize, String> {
    (0..n).map(|i| (i, format!("value-{}", i))).collect()
}

fn main() {
    let kept = rust_hog(64);
    let map = rust_map(20000);
    let handles: Vec<_> = (0..8)
        .map(|t| thread::spawn(move || { let v: Vec<u64> = (0..100000).map(|x| x * t).collect(); v.iter().sum::<u64>() }))
        .collect();
    let s: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    let total: usize = kept.iter().map(|v| v.len()).sum();
    println!("kept {} map {} threads {}", total, map.len(), s);
    std::process::exit(6);
}

// SPDX-License-Identifier: BSD-2-Clause
// rust_jemalloc - allocates from two functions of its own through a statically linked,
// _rjem_-prefixed jemalloc (the #[global_allocator] below calls _rjem_mallocx/_rjem_sdallocx,
// like tikv-jemallocator): hog_rust keeps 24 x 1 MiB live, churn_rust allocates and frees
// 64 x 256 KiB. Prints "ready", waits for the file named by its first argument (if any) to
// exist, then exits with the hog still live (forgotten), so a final dump shows it.
use std::alloc::{GlobalAlloc, Layout};

struct Jemalloc;

unsafe impl GlobalAlloc for Jemalloc {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        jemalloc_sys::mallocx(l.size(), align_flags(l)) as *mut u8
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        jemalloc_sys::sdallocx(p as *mut _, l.size(), align_flags(l))
    }
}

fn align_flags(l: Layout) -> i32 {
    if l.align() <= 16 { 0 } else { l.align().trailing_zeros() as i32 }
}

#[global_allocator]
static GLOBAL: Jemalloc = Jemalloc;

#[inline(never)]
fn hog_rust(n: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut v: Vec<u8> = Vec::with_capacity(1 << 20);
        v.resize(1 << 20, i as u8);
        out.push(v);
    }
    out
}

#[inline(never)]
fn churn_rust(n: usize) -> usize {
    let mut total = 0;
    for i in 0..n {
        let mut v: Vec<u8> = Vec::with_capacity(256 << 10);
        v.resize(256 << 10, i as u8);
        total += v[i] as usize;
    }
    total
}

fn main() {
    let hog = hog_rust(24);
    let c = churn_rust(64);
    println!("ready {} {}", hog.len(), c);
    if let Some(wait) = std::env::args().nth(1) {
        while !std::path::Path::new(&wait).exists() {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    std::mem::forget(hog);
}

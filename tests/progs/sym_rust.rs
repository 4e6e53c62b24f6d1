// SPDX-License-Identifier: BSD-2-Clause
// sym_rust.rs - a tiny Rust program for tests/e2e/sym_rust.sh: a free function, a generic
// method in a nested module and main, each allocating. The test builds it with legacy and v0
// symbol mangling and checks the demangled names (legacy hashes dropped, as rustfilt does).
mod inner {
    pub struct Holder<T> {
        pub v: Vec<T>,
    }
    impl<T: Clone> Holder<T> {
        #[inline(never)]
        pub fn grow(&mut self, x: T) {
            self.v.push(x)
        }
    }
}

#[inline(never)]
fn alloc_here(n: usize) -> Vec<u64> {
    vec![7u64; n]
}

fn main() {
    let v = alloc_here(std::env::args().count() * 10);
    let mut h = inner::Holder { v: Vec::new() };
    h.grow(v.len());
    println!("{}", h.v.len());
}

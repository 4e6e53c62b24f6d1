# SPDX-License-Identifier: BSD-2-Clause
# tests/e2e/lib/rustjem.sh - builds tests/progs/rust_jemalloc (a Rust program whose global
# allocator is a statically linked _rjem_ jemalloc with profiling) once, offline, from the
# crates Debian's librust-jemalloc-sys-dev installs under /usr/share/cargo/registry, into
# $ROOT/build/rust_jemalloc (kept across test runs: the first build takes about a minute and a
# half). Sourced; sets RUSTJEM to the binary, or exits 77 when cargo or the crates are missing.
# Asserts nothing.
rustjem_build() {
	local reg=/usr/share/cargo/registry out=${HEAPTAP_BUILD:-$ROOT/build}/rust_jemalloc
	command -v cargo >/dev/null || { echo "skip: cargo not installed"; exit 77; }
	ls -d "$reg"/jemalloc-sys-* >/dev/null 2>&1 || { echo "skip: librust-jemalloc-sys-dev not installed"; exit 77; }
	RUSTJEM=$out/target/release/rust_jemalloc
	mkdir -p "$out/src"
	(
		flock 9
		if [ ! -x "$RUSTJEM" ] || [ "$ROOT/tests/progs/rust_jemalloc/src/main.rs" -nt "$RUSTJEM" ]; then
			cp "$ROOT/tests/progs/rust_jemalloc/Cargo.toml" "$out/"
			cp "$ROOT/tests/progs/rust_jemalloc/src/main.rs" "$out/src/"
			cargo build -q --release --offline --manifest-path "$out/Cargo.toml" \
				--config "source.crates-io.replace-with=\"debian\"" \
				--config "source.debian.directory=\"$reg\"" >"$out/build.log" 2>&1 ||
				{ echo "cargo build failed:"; tail -20 "$out/build.log"; exit 1; }
		fi
	) 9>"$out/.lock" || exit 1
	[ -x "$RUSTJEM" ] || { echo "no $RUSTJEM"; exit 1; }
}
rustjem_build

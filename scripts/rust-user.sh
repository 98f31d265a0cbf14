#!/bin/bash
# The user-space Rust crate (user/rust/): built with Debian's cargo-web and
# rustc-web, offline (no dependency outside the directory).
#
#   rust-user.sh guest <guest_bin dir>   the guest programs, static: the
#       test program rust_uintr into tests/, the examples into samples/
#       as rust_<name>
#   rust-user.sh test <outdir>           host checks as TAP in
#       <outdir>/host-rust-user.tap: unit and doc tests, clippy and rustc
#       warnings as errors, rustfmt, and no `unsafe` outside the crate's
#       raw modules (sys.rs, handler.rs)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
ws=$top/user/rust
export CARGO_TARGET_DIR=${UINTR_BUILD_DIR:-$top/build}/rust-user
export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
export CARGO_HOME=$CARGO_TARGET_DIR/cargo-home
cargo=/usr/bin/cargo
target=x86_64-unknown-linux-gnu

guest() {
	local bin=$1 rel=$CARGO_TARGET_DIR/$target/release
	RUSTFLAGS="-C target-feature=+crt-static -D warnings" \
		"$cargo" build -q --offline --locked --release --target $target \
		--manifest-path "$ws/Cargo.toml" --bins --examples || return 1
	mkdir -p "$bin/tests" "$bin/samples"
	install -m 755 "$rel/rust_uintr" "$bin/tests/rust_uintr"
	for ex in "$ws"/uintr/examples/*.rs; do
		name=$(basename "$ex" .rs)
		install -m 755 "$rel/examples/$name" "$bin/samples/rust_$name"
	done
}

test_host() {
	local out=$1 tap=$1/host-rust-user.tap n=0 bad=0 log
	mkdir -p "$out"
	log=$(mktemp)
	trap 'rm -f "$log"' RETURN
	result() {	# result <ok?> <description>: one TAP line, the log if not
		n=$((n + 1))
		if [ "$1" = 0 ]; then
			echo "ok $n $2"
		else
			bad=1
			echo "not ok $n $2"
			sed 's/^/# /' "$log"
		fi
	}
	{
		RUSTFLAGS="-D warnings" RUSTDOCFLAGS="-D warnings" \
			"$cargo" test -q --offline --locked --manifest-path "$ws/Cargo.toml" \
			-p uintr > "$log" 2>&1
		result $? "user/rust: unit and doc tests (cargo test)"
		grep -E '^test result:' "$log" | sed 's/^/# /'
		if [ -x /usr/bin/cargo-clippy ]; then
			"$cargo" clippy -q --offline --locked --manifest-path "$ws/Cargo.toml" \
				--all-targets -- -D warnings -D clippy::undocumented_unsafe_blocks > "$log" 2>&1
			result $? "user/rust: clippy -D warnings"
		else
			n=$((n + 1)); echo "ok $n user/rust: clippy # SKIP no rust-web-clippy"
		fi
		local rustfmt
		rustfmt=$(command -v rustfmt || ls "${HOME:-/root}"/.cargo/bin/rustfmt 2>/dev/null || true)
		if [ -n "$rustfmt" ]; then
			find "$ws" -name '*.rs' -not -path '*/target/*' -print0 |
				xargs -0 "$rustfmt" --edition 2021 --color never --check > "$log" 2>&1
			result $? "user/rust: rustfmt-clean"
		else
			n=$((n + 1)); echo "ok $n user/rust: rustfmt # SKIP no rustfmt"
		fi
		# unsafe only in the raw modules; samples and tests forbid it.
		grep -rn --include='*.rs' -E '\bunsafe\b' "$ws" |
			grep -v -E '^[^:]*/uintr/src/(sys|handler)\.rs:' |
			grep -v -E '^[^:]*:[0-9]+:\s*(//|#!\[forbid\(unsafe_code\)\])' > "$log"
		[ ! -s "$log" ]
		result $? "user/rust: no unsafe outside sys.rs and handler.rs"
		local missing=0
		for f in "$ws"/guest-tests/src/main.rs "$ws"/uintr/examples/*.rs; do
			grep -q '^#!\[forbid(unsafe_code)\]' "$f" || { echo "$f" >> "$log"; missing=1; }
		done
		result $missing "user/rust: every sample and test forbids unsafe_code"
		echo "1..$n"
	} > "$tap"
	return $bad
}

case ${1:-} in
guest) guest "$2" ;;
test) test_host "$2" ;;
*) echo "usage: $0 guest <guest_bin> | test <outdir>" >&2; exit 2 ;;
esac

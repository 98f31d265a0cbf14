#!/bin/bash
# The make variables every kernel build of this project passes: clang and
# LLVM, no local version, Debian's rustc/rustdoc/clippy-driver (not a
# rustup toolchain in PATH) with its std sources, and the bindgen shim.  One per line, for the Makefile ($(shell ...)) and for
# scripts (mapfile -t vars < <(kbuild-vars.sh)).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
rust_lib_src=$(ls -d /usr/src/rustc-*/library 2>/dev/null | sort | tail -1)
printf '%s\n' LLVM=1 LOCALVERSION= RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc \
	CLIPPY_DRIVER=/usr/bin/clippy-driver \
	"RUST_LIB_SRC=$rust_lib_src" "BINDGEN=$top/scripts/bindgen-wrapper"

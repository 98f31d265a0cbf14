#!/bin/bash
# Install the Debian packages the build needs, when any is missing.
# Idempotent and non-interactive: an up-to-date machine costs one dpkg query.
set -euo pipefail

pkgs=(
	linux-source-6.12
	rustc-web rust-web-src bindgen cargo-web rust-web-clippy
	clang lld llvm
	gcc make bc flex bison cpio rsync git kmod
	libelf-dev libssl-dev dwarves python3
	qemu-system-x86 busybox-static groff-base gnuplot-nox python3-docutils
	liburing-dev
)

"$(dirname "$0")/apt-install.sh" deps "${pkgs[@]}"

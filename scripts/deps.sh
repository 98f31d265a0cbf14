#!/bin/bash
# Install the Debian packages the build needs, when any is missing.
# Idempotent and non-interactive: an up-to-date machine costs one dpkg query.
set -euo pipefail

pkgs=(
	linux-source-6.12
	rustc-web rust-web-src bindgen
	clang lld llvm
	gcc make bc flex bison cpio rsync git kmod
	libelf-dev libssl-dev dwarves python3
	qemu-system-x86 busybox-static groff-base gnuplot-nox python3-docutils
)

missing=()
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

echo "deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: not root, cannot install: ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"

#!/bin/bash
# Build Bochs 3.0, whose Sapphire Rapids CPU model implements User Interrupts
# in its interpreter, with this project's fixes (bochs/patches/*.patch).
# usage: scripts/bochs-build.sh
#
# The binary is cached in $UINTR_BUILD_DIR/bochs/<key>/bochs (default
# build/bochs/...), <key> being a hash of the source tarball, the patches and
# the build recipe below; a cache hit costs about a second.  The path of the
# binary is the last line on stdout (progress goes to stderr) and is also
# written to $UINTR_BUILD_DIR/bochs/current.
#
# Source: Debian 13's orig tarball of bochs 3.0+dfsg, found through apt with
# a private source list (the system's sources stay untouched) and checked
# against the SHA-256 below; a copy kept in $UINTR_BUILD_DIR/bochs/ is reused.
# Installs the missing build dependencies with apt-get (needs root then).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
self=$top/scripts/$(basename "$0")
out=${UINTR_BUILD_DIR:-$top/build}/bochs
start=$(date +%s)

say() { echo "bochs-build: $*" >&2; }

# >>> recipe: everything from here to "<<< recipe" is part of the cache key.
orig=bochs_3.0+dfsg.orig.tar.xz
orig_sha256=78f6c73d4a6472d5130a87ab9dc306d02c7c71ed8e25b3a8ef642e2a7acd282b
srcdir=bochs-3.0
debian_src="deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main"
build_pkgs=(g++ make patch xz-utils libncurses-dev curl ca-certificates debian-archive-keyring)
# --with-term needs ncurses; --disable-show-ips: the IPS report deadlocks
# with logging in busy runs.
configure_opts=(
	--enable-x86-64 --enable-smp --enable-cpu-level=6
	--enable-uintr --enable-avx --enable-evex --enable-amx --enable-cet
	--enable-protection-keys --enable-all-optimizations
	--enable-pci --enable-cdrom --disable-usb --disable-plugins
	--with-nogui --with-term --disable-show-ips
)
build_bochs() { # <source dir> <log>
	(
		cd "$1"
		for p in "$top"/bochs/patches/*.patch; do
			[ -e "$p" ] || continue
			echo "=== patch $(basename "$p")"
			patch -p1 --forward --batch < "$p"
		done
		echo "=== configure ${configure_opts[*]}"
		./configure "${configure_opts[@]}"
		echo "=== make -j$(nproc)"
		make -j"$(nproc)"
	) > "$2" 2>&1
}
# <<< recipe

key=$(
	{
		echo "$orig_sha256"
		sed -n '/^# >>> recipe/,/^# <<< recipe/p' "$self"
		for p in "$top"/bochs/patches/*.patch; do
			[ -e "$p" ] || continue
			echo "=== $(basename "$p")"
			cat "$p"
		done
	} | sha256sum | cut -c1-16
)
bin=$out/$key/bochs

if [ -x "$bin" ]; then
	say "cached $bin ($(($(date +%s) - start)) s)"
	echo "$bin" > "$out/current"
	echo "$bin"
	exit 0
fi

mkdir -p "$out"
# One build at a time per build directory.
exec 9> "$out/.lock"
flock 9
if [ -x "$bin" ]; then # built by whoever held the lock
	echo "$bin" > "$out/current"
	echo "$bin"
	exit 0
fi

"$top/scripts/apt-install.sh" bochs-build "${build_pkgs[@]}"

sha_ok() { [ -f "$1" ] && [ "$(sha256sum < "$1" | cut -d' ' -f1)" = "$orig_sha256" ]; }

tarball=$out/$orig
if ! sha_ok "$tarball"; then
	# apt with a private source list, lists and cache: finds the pool URL of
	# the orig tarball without touching the system's apt state.
	apt_dir=$out/apt
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
	echo "$debian_src" > "$apt_dir/sources.list"
	apt_opts=(
		-o Dir::Etc::sourcelist="$apt_dir/sources.list"
		-o Dir::Etc::sourceparts=-
		-o Dir::State::Lists="$apt_dir/lists"
		-o Dir::Cache="$apt_dir/cache"
		-o APT::Sandbox::User=root
	)
	say "looking up the bochs source package (Debian trixie)"
	apt-get "${apt_opts[@]}" -q update >&2
	# Lines: 'URL' NAME SIZE SHA256:HASH
	uri=$(apt-get "${apt_opts[@]}" source --print-uris bochs |
		awk -v f="$orig" '$2 == f { gsub("\047", "", $1); print $1; exit }')
	if [ -z "$uri" ]; then
		say "no $orig in Debian trixie any more"
		exit 1
	fi
	say "fetching $uri"
	curl -fsSL --retry 3 -o "$tarball.tmp" "$uri"
	if ! sha_ok "$tarball.tmp"; then
		say "$uri: SHA-256 is not $orig_sha256"
		rm -f "$tarball.tmp"
		exit 1
	fi
	mv "$tarball.tmp" "$tarball"
	rm -rf "$apt_dir"
fi

work=$out/src-$key
log=$out/build-$key.log
rm -rf "$work"
mkdir -p "$work"
tar --no-same-owner -xJf "$tarball" -C "$work"
say "building in $work (log: $log)"
if ! build_bochs "$work/$srcdir" "$log"; then
	tail -n 40 "$log" >&2
	say "build failed, see $log"
	exit 1
fi

mkdir -p "$out/$key"
install -m 0755 "$work/$srcdir/bochs" "$bin.tmp"
mv "$bin.tmp" "$bin"
{
	echo "source: $orig sha256 $orig_sha256"
	echo "patches:"
	for p in "$top"/bochs/patches/*.patch; do
		[ -e "$p" ] && echo "  $(basename "$p") $(sha256sum < "$p" | cut -c1-16)"
	done
	echo "configure: ${configure_opts[*]}"
	echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) in $(($(date +%s) - start)) s"
} > "$out/$key/build-info"
rm -rf "$work"
echo "$bin" > "$out/current"
say "built $bin in $(($(date +%s) - start)) s"
echo "$bin"

#!/bin/bash
# make series-check: the series as a user applies it, with no other script
# of this project in the way.  A fresh tree from Debian's 6.12 tarball in
# its own git repository, `git am` of patches/ in the order of
# patches/series, then a build of vmlinux after each patch in the normal
# configuration, each incremental on the one before.  Fails on the first
# patch that does not apply, does not build, or adds a warning (the ones
# vanilla 6.12 gives with this toolchain are listed in
# config/vanilla-warnings).
#
# usage: series-check.sh [first [to]]
#   build after patches first..to only (default 1..last); every patch is
#   still applied by git am.  `series-check.sh last` builds the complete
#   series only.
# The tree and objects live in build/series-check/, rebuilt from scratch on
# every run.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${UINTR_BUILD_DIR:-$top/build}
tarball=${UINTR_KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
work=$build/series-check
src=$work/linux
obj=$work/obj
mapfile -t kvars < <("$top/scripts/kbuild-vars.sh")
jobs=${JOBS:-$(nproc)}

die() { echo "series-check: $*" >&2; exit 1; }
kgit() { git -C "$src" -c user.name=series-check -c user.email=series-check@localhost "$@"; }

t0=$SECONDS
rm -rf "$work"
mkdir -p "$src"
tar -xf "$tarball" -C "$src" --strip-components=1
kgit init -q
kgit add -A -f
kgit commit -q -m "Debian linux-source-6.12 (vanilla)"
kgit tag vanilla

mapfile -t patches < <(sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$/d' "$top/patches/series")
[ ${#patches[@]} -gt 0 ] || die "patches/series names no patch"
kgit am -q "${patches[@]/#/$top/patches/}" || die "git am failed (see $src)"
mapfile -t commits < <(kgit rev-list --reverse vanilla..HEAD)
echo "series-check: ${#commits[@]} patches applied by git am in $(( SECONDS - t0 )) s"

# Seconds, before any build: at every patch, (1) the Rust entry points
# that the C glue declares in asm/uintr.h are exactly those the crate
# defines (entry.rs), and (2) every C name the series adds that the crate
# reaches through `bindings::` exists by then (vanilla names need no
# check).  What the builds below would find only at link time, or minutes
# into a rebuild.
tc=$SECONDS
series_c_names() { # commit: identifiers in the C side of the series at commit
	kgit diff vanilla "$1" -- . ':!arch/x86/kernel/uintr' |
		sed -n 's/^+//p' | { grep -o '[A-Za-z_][A-Za-z0-9_]*' || true; } | sort -u
}
crate_bindings() { # commit
	{ kgit grep -h -o 'bindings::[A-Za-z0-9_]*' "$1" -- arch/x86/kernel/uintr || true; } |
		sed 's/.*bindings:://; s/^uintr_emulation_//' | sort -u
}
# The names the crate uses that only the series defines.
final_names=$(series_c_names HEAD)
own=()
for name in $(crate_bindings HEAD); do
	grep -qx -e "$name" -e "rust_helper_$name" <<<"$final_names" || continue
	kgit grep -q -w -e "$name" -e "rust_helper_$name" vanilla -- \
		include arch/x86/include rust/helpers || own+=("$name")
done
for (( i = 1; i <= ${#commits[@]}; i++ )); do
	c=${commits[i - 1]}
	declared=$(kgit show "$c:arch/x86/include/asm/uintr.h" 2>/dev/null |
		grep -o 'uintr_rust_[a-z0-9_]*' | sort -u || true)
	defined=$(kgit show "$c:arch/x86/kernel/uintr/entry.rs" 2>/dev/null |
		grep -o 'uintr_rust_[a-z0-9_]*' | sort -u || true)
	[ "$declared" = "$defined" ] ||
		die "patch $i: asm/uintr.h and entry.rs disagree: $(diff <(echo "$declared") <(echo "$defined") | grep '^[<>]' | tr '\n' ' ')"
	used=$(crate_bindings "$c")
	names_now=$(series_c_names "$c")
	for name in "${own[@]}"; do
		grep -qx "$name" <<<"$used" || continue
		# Rust helpers are bound without their rust_helper_ prefix.
		grep -qx -e "$name" -e "rust_helper_$name" <<<"$names_now" ||
			die "patch $i: the crate uses bindings::$name before the series defines it"
	done
done
echo "series-check: entry points and bindings agree at every patch ($(( SECONDS - tc )) s)"

# Seconds too: the crate forms the layers its root lists at every patch
# (scripts/crate-layers.py, which make host-test runs on the last one).
tc=$SECONDS
layers=$work/layers
for (( i = 1; i <= ${#commits[@]}; i++ )); do
	c=${commits[i - 1]}
	kgit cat-file -e "$c:arch/x86/kernel/uintr/uintr.rs" 2>/dev/null || continue
	rm -rf "$layers"
	mkdir -p "$layers"
	kgit archive "$c" arch/x86/kernel/uintr | tar -x -C "$layers"
	python3 "$top/scripts/crate-layers.py" "$layers/arch/x86/kernel/uintr" > "$layers.log" ||
		die "patch $i: the crate does not form its layers: $(grep '^crate-layers:' "$layers.log" | tr '\n' ' ')"
done
rm -rf "$layers" "$layers.log"
echo "series-check: the crate forms its layers at every patch ($(( SECONDS - tc )) s)"

first=${1:-1}
[ "$first" = last ] && first=${#commits[@]}
[[ "$first" =~ ^[0-9]+$ ]] && [ "$first" -ge 1 ] && [ "$first" -le ${#commits[@]} ] ||
	die "first must be 1..${#commits[@]} or last"
to=${2:-${#commits[@]}}
[[ "$to" =~ ^[0-9]+$ ]] && [ "$to" -ge "$first" ] && [ "$to" -le ${#commits[@]} ] ||
	die "to must be $first..${#commits[@]}"

# The normal configuration, made where every option exists (the tip); each
# step starts from it, olddefconfig dropping what that step lacks.
UINTR_KERNEL_SRC=$src "$top/scripts/kconfig.sh" "$obj" make "${kvars[@]}"
cp "$obj/.config" "$work/full.config"

allowed=$(sed -e '/^#/d' -e '/^$/d' "$top/config/vanilla-warnings")
for (( i = first; i <= to; i++ )); do
	c=${commits[i - 1]}
	subject=$(kgit log -1 --format=%s "$c")
	ts=$SECONDS
	kgit checkout -q "$c"
	cp "$work/full.config" "$obj/.config"
	make -s -C "$src" O="$obj" "${kvars[@]}" olddefconfig >/dev/null
	log=$work/build-$(printf %04d "$i").log
	if ! make -s -C "$src" O="$obj" "${kvars[@]}" -j"$jobs" vmlinux >"$log" 2>&1; then
		tail -20 "$log" >&2
		die "patch $i/${#commits[@]} does not build: $subject (log: $log)"
	fi
	new=$(grep -i 'warning' "$log" | sed -E 's/\+0x[0-9a-f]+/+X/g' |
		grep -v -E -e "$allowed" || true)
	if [ -n "$new" ]; then
		echo "$new" >&2
		die "patch $i/${#commits[@]} adds warnings: $subject (log: $log)"
	fi
	echo "series-check: [$i/${#commits[@]}] $subject: built in $(( SECONDS - ts )) s"
done
echo "series-check: done in $(( SECONDS - t0 )) s"

#!/bin/bash
# Pack the guest initramfs: busybox-static, guest/init, qemu-exit and the
# test, sample and benchmark programs already built into $guest_bin.
# usage: mkinitramfs.sh <gen_init_cpio> <guest_bin dir> <output .cpio.gz>
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
gen=$1
bin=$2
out=$3
busybox=/bin/busybox

list=$(mktemp)
trap 'rm -f "$list"' EXIT
{
	for d in /bin /sbin /dev /proc /sys /tmp /tests /samples /bench /root; do
		echo "dir $d 0755 0 0"
	done
	echo "nod /dev/console 0600 0 0 c 5 1"
	echo "nod /dev/null 0666 0 0 c 1 3"
	echo "file /init $top/guest/init 0755 0 0"
	echo "file /bin/busybox $busybox 0755 0 0"
	for applet in $($busybox --list); do
		[ "$applet" = busybox ] && continue
		echo "slink /bin/$applet busybox 0777 0 0"
	done
	echo "file /bin/qemu-exit $bin/qemu-exit 0755 0 0"
	for kind in tests samples bench; do
		: > "$bin/$kind.list"
		for f in "$bin/$kind"/*; do
			[ -x "$f" ] || continue
			echo "file /$kind/$(basename "$f") $f 0755 0 0"
			basename "$f" >> "$bin/$kind.list"
		done
		echo "file /$kind/list $bin/$kind.list 0644 0 0"
	done
} > "$list"

"$gen" "$list" | gzip -1 > "$out.tmp"
mv "$out.tmp" "$out"

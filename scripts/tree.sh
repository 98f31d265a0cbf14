#!/bin/bash
# Prepare the patched kernel source tree: $UINTR_BUILD_DIR/linux.
#
# The tree is Debian's linux-source-6.12 tarball, committed once to a local
# git repository (tag "vanilla").  The series in patches/series is applied
# to a scratch index, never to the work tree directly; only the files whose
# content differs from what the tree holds now are rewritten.  So a changed
# patch rebuilds what it touches, an unchanged series rebuilds nothing, and
# a removed patch leaves no stale file behind.
#
# The series carries the Rust crate (arch/x86/kernel/uintr/) and the UAPI
# header; rust/uintr/ and uapi/linux/uintr.h are their copies, where they
# are edited (scripts/export-patches.sh folds an edit into the series).
# The build fails when a copy and the series disagree, unless
# UINTR_DEV_OVERLAY=1: then the copies are built instead (for quick edits
# before an export), with a warning.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${UINTR_BUILD_DIR:-$top/build}
src=$build/linux
tarball=${UINTR_KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
crate_dir=arch/x86/kernel/uintr
uapi_header=include/uapi/linux/uintr.h

die() { echo "tree: $*" >&2; exit 1; }

git_src() { git -C "$src" -c user.name=uintr -c user.email=uintr@localhost "$@"; }

extract() {
	[ -f "$tarball" ] || die "$tarball is missing (make deps)"
	echo "tree: extracting $(basename "$tarball")"
	rm -rf "$src.tmp"
	mkdir -p "$src.tmp"
	tar -xf "$tarball" -C "$src.tmp" --strip-components=1
	git -C "$src.tmp" init -q
	git -C "$src.tmp" add -A -f
	git -C "$src.tmp" -c user.name=uintr -c user.email=uintr@localhost \
		commit -q -m "Debian linux-source-6.12 (vanilla)"
	git -C "$src.tmp" tag vanilla
	git -C "$src.tmp" rev-parse 'vanilla^{tree}' > "$src.tmp/.git/uintr-applied-tree"
	mv "$src.tmp" "$src"
}

# Build the tree object of vanilla + series in a scratch index.
series_tree() {
	local idx=$src/.git/uintr-series-index p
	rm -f "$idx"
	GIT_INDEX_FILE=$idx git_src read-tree vanilla
	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		[ -f "$top/patches/$p" ] || die "patches/series names $p, which does not exist"
		GIT_INDEX_FILE=$idx git_src apply --cached --whitespace=nowarn \
			"$top/patches/$p" >&2 ||
			die "patch does not apply: patches/$p"
	done < "$top/patches/series"
	GIT_INDEX_FILE=$idx git_src write-tree
	rm -f "$idx"
}

# Writes a file of tree $1 into the work tree unless it is already there.
write_blob() {
	local file=$src/$2
	if git_src cat-file blob "$1:$2" | cmp -s - "$file"; then
		return 0
	fi
	mkdir -p "$(dirname "$file")"
	git_src cat-file blob "$1:$2" > "$file"
	if [ "$(git_src ls-tree "$1" -- "$2" | cut -d' ' -f1)" = 100755 ]; then
		chmod +x "$file"
	fi
}

apply_series() {
	local old new status path
	old=$(cat "$src/.git/uintr-applied-tree")
	new=$(series_tree)
	[ "$old" = "$new" ] && return 0
	echo "tree: applying patches/series"
	git_src diff --no-renames --name-status -z "$old" "$new" |
	while IFS= read -r -d '' status && IFS= read -r -d '' path; do
		case "$status" in
		D) rm -f "$src/$path" ;;
		*) write_blob "$new" "$path" ;;
		esac
	done
	echo "$new" > "$src/.git/uintr-applied-tree"
}

# The crate and the UAPI header as the series has them, by content: a
# file an overlay changed is restored, one the series lacks removed.
restore_component() {
	local tree path
	tree=$(cat "$src/.git/uintr-applied-tree")
	git_src ls-tree -r --name-only "$tree" -- "$crate_dir" "$uapi_header" |
	while IFS= read -r path; do
		write_blob "$tree" "$path"
	done
	if [ -d "$src/$crate_dir" ]; then
		(cd "$src" && find "$crate_dir" -type f ! -name '.*' ! -name '*.o' \
			! -name '*.cmd' ! -name '*.orig' -print) |
		while IFS= read -r path; do
			[ -n "$(git_src ls-tree --name-only "$tree" -- "$path")" ] ||
				rm -f "$src/$path"
		done
	fi
}

# The copies (rust/uintr/, uapi/linux/uintr.h) agree with the series.
copies_agree() {
	diff -r -q -x '*.orig' "$top/rust/uintr" "$src/$crate_dir" >&2 &&
		cmp "$top/uapi/linux/uintr.h" "$src/$uapi_header" >&2
}

# Build the copies instead of the series' files, by content.
overlay_copies() {
	rsync -rc --delete --exclude='*.orig' "$top/rust/uintr/" "$src/$crate_dir/"
	cmp -s "$top/uapi/linux/uintr.h" "$src/$uapi_header" ||
		cp "$top/uapi/linux/uintr.h" "$src/$uapi_header"
}

[ -d "$src/.git" ] || extract
# Trees extracted before the series carried the crate excluded it from git.
sed -i "\#^/$crate_dir/\$#d;\#^/$uapi_header\$#d" "$src/.git/info/exclude"
apply_series
restore_component
if [ "${UINTR_DEV_OVERLAY:-0}" = 1 ]; then
	copies_agree 2>/dev/null ||
		echo "tree: UINTR_DEV_OVERLAY=1: building rust/uintr/ and uapi/ as edited, not as in patches/" >&2
	overlay_copies
elif ! copies_agree; then
	die "rust/uintr/ or uapi/linux/uintr.h differs from the series in patches/: run scripts/export-patches.sh (or build the edit with UINTR_DEV_OVERLAY=1)"
fi

#!/bin/bash
# Prepare the patched kernel source tree: $UINTR_BUILD_DIR/linux.
#
# The tree is Debian's linux-source-6.12 tarball, committed once to a local
# git repository (tag "vanilla").  The series in patches/series is applied
# to a scratch index, never to the work tree directly; only the files whose
# content differs from what the tree holds now are rewritten.  So a changed
# patch rebuilds what it touches, an unchanged series rebuilds nothing, and
# a removed patch leaves no stale file behind.  rust/uintr/ and the UAPI
# header are synced the same way (by content, not by time stamp).
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
	printf '/%s/\n/%s\n' "$crate_dir" "$uapi_header" >> "$src.tmp/.git/info/exclude"
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

# Copy by content: files whose bytes did not change keep their time stamp.
sync_component() {
	mkdir -p "$src/$crate_dir"
	rsync -rc --delete --exclude='*.orig' "$top/rust/uintr/" "$src/$crate_dir/"
	if ! cmp -s "$top/uapi/linux/uintr.h" "$src/$uapi_header"; then
		cp "$top/uapi/linux/uintr.h" "$src/$uapi_header"
	fi
}

[ -d "$src/.git" ] || extract
apply_series
sync_component

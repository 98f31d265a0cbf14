#!/bin/bash
# Regenerate patches/ from a kernel git tree whose branch holds the series
# as commits on top of the "vanilla" tag (see README: working on the C glue).
#
# The series is the whole feature: the C glue, the Rust crate
# (arch/x86/kernel/uintr/) and the UAPI header.  rust/uintr/ and
# uapi/linux/uintr.h are copies of the last two, where they are edited and
# host-tested.  Before exporting, the copies and the branch are reconciled
# against the series in patches/ (the last export):
#   - changed in the copies only: the change is folded into the series,
#     each file into the commit that last touched it (a new file into the
#     one that last touched its folder);
#   - changed on the branch only: the copies are updated;
#   - changed on both sides, differently: refused.
# scripts/tree.sh fails the build when the copies and patches/ disagree.
# usage: export-patches.sh [tree] [branch]   (default: build/wt, series)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:-${UINTR_BUILD_DIR:-$top/build}/wt}
branch=${2:-series}
# copy in this repository : path in the kernel tree
mirrors=("rust/uintr:arch/x86/kernel/uintr" "uapi/linux/uintr.h:include/uapi/linux/uintr.h")

die() { echo "export-patches: $*" >&2; exit 1; }
kgit() { git -C "$tree" "$@"; }

[ "$(kgit symbolic-ref --short HEAD)" = "$branch" ] ||
	die "$tree is not on branch $branch"
kgit diff --quiet HEAD -- || die "$tree has uncommitted changes"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The tree of vanilla + patches/ (the last export), built in a scratch index.
exported_tree() {
	local p
	export GIT_INDEX_FILE=$tmp/index
	kgit read-tree vanilla
	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		kgit apply --cached --whitespace=nowarn "$top/patches/$p" ||
			die "patches/$p does not apply"
	done < "$top/patches/series"
	kgit write-tree
	unset GIT_INDEX_FILE
}

# same_files a b: the file or folder a has the same content as b.
same_files() {
	if [ -d "$1" ] || [ -d "$2" ]; then
		diff -r -q -x '*.orig' "$1" "$2" >/dev/null 2>&1
	else
		cmp -s "$1" "$2"
	fi
}

mkdir -p "$tmp/exported"
exported=$(exported_tree)
for m in "${mirrors[@]}"; do
	[ -z "$(kgit ls-tree --name-only "$exported" -- "${m#*:}")" ] ||
		kgit archive "$exported" -- "${m#*:}" | tar -x -C "$tmp/exported"
done

fold=()
for m in "${mirrors[@]}"; do
	copy=$top/${m%%:*} kpath=${m#*:}
	old=$tmp/exported/$kpath new=$tree/$kpath
	if same_files "$copy" "$old"; then
		same_files "$new" "$old" && continue
		echo "export-patches: $kpath changed on $branch: updating ${m%%:*}"
		if [ -d "$new" ]; then
			rsync -rc --delete --exclude='*.orig' "$new/" "$copy/"
		else
			cp "$new" "$copy"
		fi
	elif same_files "$new" "$old" || same_files "$new" "$copy"; then
		fold+=("$m")
	else
		die "${m%%:*} and $kpath on $branch both changed since the last export"
	fi
done

# Fold the edited copies into the commits that last touched each file.
if [ ${#fold[@]} -gt 0 ]; then
	for m in "${fold[@]}"; do
		copy=$top/${m%%:*} kpath=${m#*:}
		if [ -d "$copy" ]; then
			mkdir -p "$tree/$kpath"
			rsync -rc --delete --exclude='*.orig' "$copy/" "$tree/$kpath/"
		else
			cp "$copy" "$tree/$kpath"
		fi
		kgit add -A -f -- "$kpath"
	done
	declare -A paths_of=()
	while IFS= read -r path; do
		target=$(kgit log -1 --format=%H vanilla..HEAD -- "$path")
		[ -n "$target" ] || target=$(kgit log -1 --format=%H vanilla..HEAD -- "$(dirname "$path")")
		[ -n "$target" ] || die "no commit of the series touches $(dirname "$path")"
		paths_of[$target]+="$path"$'\n'
	done < <(kgit diff --cached --name-only)
	for target in "${!paths_of[@]}"; do
		mapfile -t paths < <(printf '%s' "${paths_of[$target]}")
		echo "export-patches: folding ${paths[*]} into $(kgit log -1 --format=%s "$target")"
		kgit commit -q --fixup="$target" -- "${paths[@]}"
	done
	GIT_SEQUENCE_EDITOR=true kgit rebase -q -i --autosquash vanilla
fi

out=$tmp/out
kgit format-patch -q --no-signature --zero-commit --no-numbered vanilla.."$branch" -o "$out"
# An empty context line is a lone space in format-patch's output: trailing
# whitespace to every whitespace check.  git am (git apply) and patch(1)
# take a truly empty line as the same context line.
sed -i '/^diff --git /,$ s/^ $//' "$out"/*.patch
# The cover letter (0000-cover-letter.patch) is not a patch of the series:
# it stays, and scripts/cover-letter.sh rewrites it below.
find "$top/patches" -maxdepth 1 -name '*.patch' ! -name '0000-cover-letter.patch' -delete
cp "$out"/*.patch "$top/patches/"
{
	echo "# Patch series against Debian linux-source-6.12, applied in order."
	echo "# (0000-cover-letter.patch is the series' cover letter, not a patch.)"
	(cd "$top/patches" && ls ./*.patch | sed 's|^\./||' | grep -v '^0000-cover-letter\.patch$')
} > "$top/patches/series"
"$top/scripts/cover-letter.sh" "$tree"
for p in "$top"/patches/[0-9]*.patch; do
	case $p in */0000-cover-letter.patch) continue ;; esac
	# FILE_PATH_CHANGES, UNKNOWN_COMMIT_ID: see scripts/host-tests.sh.
	perl "$tree/scripts/checkpatch.pl" --no-tree -q \
		--ignore FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID "$p" ||
		echo "checkpatch: $p" >&2
done

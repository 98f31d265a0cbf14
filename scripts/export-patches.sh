#!/bin/bash
# Regenerate patches/ from a kernel git tree whose branch holds the series
# as commits on top of the "vanilla" tag (see README: working on the C glue).
# usage: export-patches.sh [tree] [branch]   (default: build/wt, series)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:-${UINTR_BUILD_DIR:-$top/build}/wt}
branch=${2:-series}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
git -C "$tree" format-patch -q --no-signature --zero-commit --no-numbered vanilla.."$branch" -o "$out"
rm -f "$top"/patches/*.patch
cp "$out"/*.patch "$top/patches/"
{
	echo "# Patch series against Debian linux-source-6.12, applied in order."
	(cd "$top/patches" && ls ./*.patch | sed 's|^\./||')
} > "$top/patches/series"
for p in "$top"/patches/*.patch; do
	perl "$tree/scripts/checkpatch.pl" --no-tree -q "$p" || echo "checkpatch: $p" >&2
done

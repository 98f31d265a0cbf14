#!/bin/bash
# Generate the guest .config in the object directory given as $1:
# tinyconfig + config/guest.config + Kconfig.fragment (+ config/debug.config
# for FLAVOR=debug; config/disabled.config instead of Kconfig.fragment for
# FLAVOR=disabled; config/rt.config on top for FLAVOR=rt; then
# $UINTR_EXTRA_FRAGMENTS), merged with the kernel's
# merge_config.sh.  Fails when an option we asked for did not survive
# olddefconfig.  The tree is build/linux, or $UINTR_KERNEL_SRC.
# Regenerates only when an input (fragments or the patched
# tree's Kconfig files) changed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${UINTR_BUILD_DIR:-$top/build}
src=${UINTR_KERNEL_SRC:-$build/linux}
obj=$1
flavor=${FLAVOR:-normal}
shift
kmake=("$@")

case "$flavor" in
normal) fragments=("$top/config/guest.config" "$top/Kconfig.fragment") ;;
debug) fragments=("$top/config/guest.config" "$top/Kconfig.fragment" "$top/config/debug.config") ;;
disabled) fragments=("$top/config/guest.config" "$top/config/disabled.config") ;;
rt) fragments=("$top/config/guest.config" "$top/Kconfig.fragment" "$top/config/rt.config") ;;
*) echo "kconfig: unknown flavor $flavor" >&2; exit 1 ;;
esac
# More fragments on top (scripts/config-matrix.sh), space-separated.
read -r -a extra <<< "${UINTR_EXTRA_FRAGMENTS:-}"
fragments+=("${extra[@]}")

# The tree's content: the series tree.sh applied, or the commit checked out.
tree_id() { cat "$src/.git/uintr-applied-tree" 2>/dev/null || git -C "$src" rev-parse 'HEAD^{tree}'; }
stamp=$( { cat "${fragments[@]}"; tree_id; echo "${kmake[*]}"; } | sha256sum | cut -d' ' -f1)
if [ -f "$obj/.config" ] && [ "$(cat "$obj/.uintr-config-stamp" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi

echo "kconfig: generating $obj/.config ($flavor)"
mkdir -p "$obj"
"${kmake[@]}" -C "$src" O="$obj" tinyconfig >/dev/null
(cd "$src" && scripts/kconfig/merge_config.sh -m -O "$obj" "$obj/.config" "${fragments[@]}" >/dev/null)
"${kmake[@]}" -C "$src" O="$obj" olddefconfig >/dev/null

# Every option we set must be in the final config with the value we gave
# (when fragments disagree, the later one wins, as in merge_config.sh).
bad=0
while IFS=' ' read -r src line; do
	case "$line" in
	CONFIG_*=n) want="# ${line%=n} is not set" ;;
	*) want=$line ;;
	esac
	if ! grep -qxF -- "$want" "$obj/.config"; then
		opt=${want#\# }; opt=${opt%% *}; opt=${opt%%=*}
		got=$(grep -E "^(# )?${opt}[= ]" "$obj/.config" || echo "(absent)")
		echo "kconfig: $src: wanted '$want', got '$got'" >&2
		bad=1
	fi
done < <(for f in "${fragments[@]}"; do
		sed -nE 's/^(CONFIG_[A-Za-z0-9_]+=.*|# CONFIG_[A-Za-z0-9_]+ is not set)$/\1/p' "$f" |
		sed "s|^|$(basename "$f") |"
	done | awk '{ l = $0; sub(/^[^ ]+ /, "", l); o = l; sub(/^# /, "", o); sub(/[= ].*/, "", o);
		last[o] = $0; if (!(o in seen)) { seen[o] = 1; order[++n] = o } }
		END { for (i = 1; i <= n; i++) print last[order[i]] }')
[ $bad = 0 ] || { echo "kconfig: options did not survive olddefconfig" >&2; exit 1; }
echo "$stamp" > "$obj/.uintr-config-stamp"

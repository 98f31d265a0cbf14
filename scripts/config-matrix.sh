#!/bin/bash
# make config-matrix: build configurations a user may have that make check
# never boots, and fail on the first that does not build:
#   fred-off  X86_FRED=y with CONFIG_X86_USER_INTERRUPTS=n: the FRED
#             system-vector table must not take the UINTR vectors
#   fred-on   X86_FRED=y with the feature
#   rt        PREEMPT_RT=y with the feature (its locks taken in hard
#             interrupt context and under the runqueue lock are raw)
#   arm64     an arm64 kernel with Rust: bindings_helper.h is compiled for
#             every architecture, and asm/uintr.h exists on x86 only
# x86 jobs build the directories the series touches (arch/x86/entry,
# arch/x86/kernel with the crate, kernel/); arm64 builds the kernel crate,
# whose bindings come from bindings_helper.h.  Each job keeps its object
# directory (build/obj-matrix-<job>), so a second run is incremental.
# usage: config-matrix.sh [job...]   (default: all)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${UINTR_BUILD_DIR:-$top/build}
src=$build/linux
mapfile -t kvars < <("$top/scripts/kbuild-vars.sh")
jobs=${JOBS:-$(nproc)}
frag=$(mktemp -d)
trap 'rm -rf "$frag"' EXIT
echo "CONFIG_X86_FRED=y" > "$frag/fred.config"
echo "CONFIG_PREEMPT_RT=y" > "$frag/rt.config"

# x86_job name flavor fragment target...
x86_job() {
	local name=$1 flavor=$2 fragment=$frag/$3.config obj=$build/obj-matrix-$1
	shift 3
	FLAVOR=$flavor UINTR_EXTRA_FRAGMENTS=$fragment \
		"$top/scripts/kconfig.sh" "$obj" make "${kvars[@]}"
	make -s -C "$src" O="$obj" "${kvars[@]}" -j"$jobs" "$@"
}

arm64_job() {
	local obj=$build/obj-matrix-arm64
	local -a kmake=(make -s -C "$src" O="$obj" ARCH=arm64 "${kvars[@]}")

	if [ ! -f "$obj/.config" ]; then
		mkdir -p "$obj"
		"${kmake[@]}" tinyconfig >/dev/null
		"$src/scripts/config" --file "$obj/.config" -e RUST
		"${kmake[@]}" olddefconfig >/dev/null
	fi
	grep -qx 'CONFIG_RUST=y' "$obj/.config" || {
		echo "config-matrix: arm64: CONFIG_RUST did not survive olddefconfig" >&2
		return 1
	}
	"${kmake[@]}" -j"$jobs" prepare
	"${kmake[@]}" -j"$jobs" rust/
}

run() {
	local name=$1 t0=$SECONDS
	shift
	echo "config-matrix: $name"
	if "$@"; then
		echo "config-matrix: $name built in $(( SECONDS - t0 )) s"
	else
		echo "config-matrix: $name FAILED" >&2
		return 1
	fi
}

"$top/scripts/tree.sh"
selected=("$@")
[ ${#selected[@]} -gt 0 ] || selected=(fred-off fred-on rt arm64)
for job in "${selected[@]}"; do
	case "$job" in
	fred-off) run fred-off x86_job fred-off disabled fred arch/x86/entry/ arch/x86/kernel/ kernel/ ;;
	fred-on) run fred-on x86_job fred-on normal fred arch/x86/entry/ arch/x86/kernel/ kernel/ ;;
	rt) run rt x86_job rt normal rt arch/x86/kernel/ kernel/ ;;
	arm64) run arm64 arm64_job ;;
	*) echo "config-matrix: unknown job $job" >&2; exit 2 ;;
	esac
done

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
#   lint      W=1, CLIPPY=1, kernel-doc, rustfmtcheck and htmldocs over
#             what the series adds (see lint_job)
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

# The series' own files with the checks a maintainer runs: W=1 (extra C
# warnings and kernel-doc) on every C file it touches, CLIPPY=1 on the
# crate, kernel-doc -Wall on its new headers, `make rustfmtcheck`, and the
# HTML documentation of Documentation/arch/x86.  The configuration is the
# debug one (kmemleak) with FRED, so that every C file the series touches
# is compiled.  Not rust/helpers/*.c: they are included by rust/helpers.c,
# and W=1 flags every helper of vanilla 6.12 alike (no prototypes: only
# Rust calls them).  Objects are removed before each check so that a
# second run reports again.
lint_job() {
	local obj=$build/obj-matrix-lint log=$build/obj-matrix-lint/lint.log
	local -a kmake=(make -s -C "$src" O="$obj" "${kvars[@]}" -j"$jobs")
	local -a c_objs headers

	"$top/scripts/apt-install.sh" config-matrix rust-web-clippy python3-sphinx || return 1
	FLAVOR=debug UINTR_EXTRA_FRAGMENTS=$frag/fred.config \
		"$top/scripts/kconfig.sh" "$obj" make "${kvars[@]}"
	"${kmake[@]}" prepare || return 1
	"${kmake[@]}" rust/ || return 1
	mapfile -t c_objs < <(sed -n 's|^+++ b/\(.*\)\.c$|\1.o|p' "$top"/patches/*.patch |
		grep -v '^rust/helpers/' | sort -u)
	mapfile -t headers < <(grep -h -B1 '^new file mode' "$top"/patches/*.patch |
		awk '/^diff /{ sub("^b/", "", $4); print $4 }' | grep '\.h$' | sort -u)
	(cd "$obj" && rm -f "${c_objs[@]}" arch/x86/kernel/uintr/*.o)
	: > "$log"
	"${kmake[@]}" W=1 "${c_objs[@]}" 2>> "$log"
	"${kmake[@]}" W=1 CLIPPY=1 arch/x86/kernel/uintr/ 2>> "$log"
	(cd "$src" && scripts/kernel-doc -none -Wall "${headers[@]}") 2>> "$log"
	"${kmake[@]}" rustfmtcheck >> "$log" 2>&1
	"${kmake[@]}" SPHINXDIRS=arch/x86 htmldocs > "$obj/htmldocs.log" 2>&1 || {
		cat "$obj/htmldocs.log" >> "$log"
		echo "htmldocs: failed" >> "$log"
	}
	# Sphinx's warnings, but not its note that graphviz is not installed.
	grep -E 'WARNING|ERROR' "$obj/htmldocs.log" | grep -v 'dot(1) not found' >> "$log" || true
	if [ -s "$log" ]; then
		cat "$log" >&2
		return 1
	fi
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
[ ${#selected[@]} -gt 0 ] || selected=(fred-off fred-on rt arm64 lint)
for job in "${selected[@]}"; do
	case "$job" in
	fred-off) run fred-off x86_job fred-off disabled fred arch/x86/entry/ arch/x86/kernel/ kernel/ ;;
	fred-on) run fred-on x86_job fred-on normal fred arch/x86/entry/ arch/x86/kernel/ kernel/ ;;
	rt) run rt x86_job rt normal rt arch/x86/kernel/ kernel/ ;;
	arm64) run arm64 arm64_job ;;
	lint) run lint lint_job ;;
	*) echo "config-matrix: unknown job $job" >&2; exit 2 ;;
	esac
done

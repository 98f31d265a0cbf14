#!/bin/bash
# Host unit tests of the pure modules of the Rust component: every file of
# rust/uintr/ with a `#[cfg(test)]` module is compiled on its own as a test
# crate (rustc --test, kernel lints as errors) and run; results are written
# as TAP to <outdir>/host-<module>.tap for scripts/harness.py.  Also checks
# that the crate is rustfmt-clean (kernel .rustfmt.toml), that every patch
# of the series passes checkpatch.pl, that the crate forms the layers its
# root lists, that the cover letter is current, that the man pages render
# without a groff warning and that the kernel documentation the series adds
# (Documentation/**/*.rst) builds without a docutils warning.
# usage: host-tests.sh <outdir>
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$1
rustc=${RUSTC:-/usr/bin/rustc}
mkdir -p "$out"
rm -f "$out"/host-*.tap

# dead_code is allowed: standalone, a module lacks its in-kernel callers
# (the kernel build, with -Dwarnings, checks for dead code).
lints=(-Dwarnings -Adead_code -Dunsafe_op_in_unsafe_fn -Wmissing_docs -Wunreachable_pub
	-Wrust_2018_idioms -Dnon_ascii_idents)

status=0
for src in "$top"/rust/uintr/*.rs; do
	grep -q '#\[cfg(test)\]' "$src" || continue
	name=$(basename "$src" .rs)
	bin=$out/host-$name
	tap=$out/host-$name.tap
	if ! "$rustc" --edition=2021 --test "${lints[@]}" -o "$bin" "$src" > "$bin.build.log" 2>&1; then
		cat "$bin.build.log" >&2
		printf '1..1\nnot ok 1 %s: does not compile as a host test crate\n' "$name" > "$tap"
		status=1
		continue
	fi
	"$bin" --test-threads=2 2>&1 | awk -v mod="$name" '
		/^test .* \.\.\. / {
			n++
			name = $2
			if ($NF == "ok") print "ok " n " " mod "::" name
			else if ($NF == "ignored") print "ok " n " " mod "::" name " # SKIP ignored"
			else { print "not ok " n " " mod "::" name; bad = 1 }
			next
		}
		{ print "# " $0 }
		END { print "1.." n }' > "$tap"
	rc=${PIPESTATUS[0]}
	if [ "$rc" != 0 ] && ! grep -q '^not ok' "$tap"; then
		echo "not ok 0 $name: test binary exited with status $rc" >> "$tap"
	fi
	grep -q '^not ok' "$tap" && status=1
done

# rustfmt, with the kernel's configuration, over the whole crate.
fmt_tap=$out/host-rustfmt.tap
rustfmt=$(command -v rustfmt || ls "${HOME:-/root}"/.cargo/bin/rustfmt 2>/dev/null || true)
config=${UINTR_BUILD_DIR:-$top/build}/linux/.rustfmt.toml
if [ -z "$rustfmt" ] || [ ! -f "$config" ]; then
	printf '1..1\nok 1 rustfmt # SKIP no rustfmt or no kernel tree\n' > "$fmt_tap"
elif "$rustfmt" --edition 2021 --config-path "$config" --check "$top"/rust/uintr/*.rs > "$out/rustfmt.diff" 2>&1; then
	printf '1..1\nok 1 rust/uintr is rustfmt-clean\n' > "$fmt_tap"
else
	{ echo "1..1"; echo "not ok 1 rust/uintr is rustfmt-clean"; sed 's/^/# /' "$out/rustfmt.diff"; } > "$fmt_tap"
	status=1
fi

# checkpatch on every patch of the series (read from stdin: given a path
# that git tracks, checkpatch would check the .patch as a source file).
# FILE_PATH_CHANGES ("added file(s), does MAINTAINERS need updating?") is
# checkpatch's guess from the patch alone: it fires for every patch that
# adds a crate file under arch/x86/kernel/uintr/.  It is replaced by the
# exact check below: each file a patch adds is covered by an F: line of
# MAINTAINERS that this patch or an earlier one added.
# UNKNOWN_COMMIT_ID: the tree is Debian's tarball, without upstream
# history, so a Fixes: tag's commit cannot be looked up here; the tag's
# form (12 digits, the quoted subject) is still checked.
cp_tap=$out/host-checkpatch.tap
checkpatch=${UINTR_BUILD_DIR:-$top/build}/linux/scripts/checkpatch.pl
if [ ! -f "$checkpatch" ]; then
	printf '1..1\nok 1 checkpatch # SKIP no kernel tree\n' > "$cp_tap"
else
	n=0
	mapfile -t series < <(sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$/d' \
		-e "s|^|$top/patches/|" "$top/patches/series")
	{
		for patch in "${series[@]}"; do
			n=$((n + 1))
			name=$(basename "$patch")
			if report=$(perl "$checkpatch" --no-tree -q \
				--ignore FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID - < "$patch" 2>&1); then
				echo "ok $n $name"
			else
				echo "not ok $n $name"
				printf '%s\n' "$report" | sed 's/^/# /'
			fi
		done
		n=$((n + 1))
		# Entries of vanilla MAINTAINERS count too (rust/ is the Rust
		# maintainers'), as patch 0.
		vanilla_maintainers=$out/MAINTAINERS.vanilla
		git -C "${UINTR_BUILD_DIR:-$top/build}/linux" show vanilla:MAINTAINERS \
			> "$vanilla_maintainers" 2>/dev/null || : > "$vanilla_maintainers"
		if uncovered=$(awk -v vanilla="$vanilla_maintainers" '
			FILENAME == vanilla { if (/^F:\t/) pat[substr($0, 4)] = 0; next }
			FNR == 1 { patch++ }
			/^diff --git / { file = $4; sub(/^b\//, "", file); next }
			file == "MAINTAINERS" && /^\+F:\t/ { pat[substr($0, 5)] = patch; next }
			/^new file mode/ { added[file] = patch; from[file] = FILENAME }
			END {
				for (f in added) {
					ok = 0
					for (q in pat)
						if (pat[q] <= added[f] &&
						    (q == f || (q ~ /\/$/ && index(f, q) == 1)))
							ok = 1
					if (!ok)
						print from[f] ": " f
				}
			}' "$vanilla_maintainers" "${series[@]}") && [ -z "$uncovered" ]; then
			echo "ok $n every added file is in MAINTAINERS when it is added"
		else
			echo "not ok $n every added file is in MAINTAINERS when it is added"
			printf '%s\n' "$uncovered" | sed 's/^/# /'
		fi
		echo "1..$n"
	} > "$cp_tap"
	grep -q '^not ok' "$cp_tap" && status=1
fi
# The crate's layers (the list at the top of uintr.rs): no module reaches
# a higher layer, none is in a cycle.
layers_tap=$out/host-layers.tap
if report=$(python3 "$top/scripts/crate-layers.py" "$top/rust/uintr" 2>&1); then
	{ echo "1..1"; printf '%s\n' "$report" | sed 's/^/# /'; echo "ok 1 rust/uintr forms its layers"; } > "$layers_tap"
else
	{ echo "1..1"; printf '%s\n' "$report" | sed 's/^/# /'; echo "not ok 1 rust/uintr forms its layers"; } > "$layers_tap"
	status=1
fi

# The cover letter lists the series as it is (subjects, diffstat).
cover_tap=$out/host-cover-letter.tap
if [ ! -d "${UINTR_BUILD_DIR:-$top/build}/linux/.git" ]; then
	printf '1..1\nok 1 cover letter # SKIP no kernel tree\n' > "$cover_tap"
elif report=$("$top/scripts/cover-letter.sh" --check 2>&1); then
	printf '1..1\nok 1 patches/0000-cover-letter.patch is current\n' > "$cover_tap"
else
	{ echo "1..1"; echo "not ok 1 patches/0000-cover-letter.patch is current"; printf '%s\n' "$report" | sed 's/^/# /'; } > "$cover_tap"
	status=1
fi

# Man pages: groff with every warning enabled must have nothing to say.
man_tap=$out/host-man.tap
n=0
{
	for page in "$top"/man/man*/*.[0-9]; do
		[ -e "$page" ] || continue
		n=$((n + 1))
		name=${page#"$top"/}
		if report=$(groff -man -ww -z "$page" 2>&1) && [ -z "$report" ]; then
			echo "ok $n $name renders without warnings"
		else
			echo "not ok $n $name renders without warnings"
			printf '%s\n' "$report" | sed 's/^/# /'
		fi
	done
	echo "1..$n"
} > "$man_tap"
grep -q '^not ok' "$man_tap" && status=1

# Kernel documentation: every .rst file the series creates, as synced into
# the kernel tree, must build with plain docutils without a warning (so no
# Sphinx-only roles or directives in them).
rst_tap=$out/host-rst.tap
tree=${UINTR_BUILD_DIR:-$top/build}/linux
docutils_py=
for py in python3 /usr/bin/python3; do
	if "$py" -c 'import docutils' 2> /dev/null; then
		docutils_py=$py
		break
	fi
done
mapfile -t rst_files < <(cat "$top"/patches/*.patch 2> /dev/null |
	sed -n 's|^ create mode [0-7]* \(Documentation/.*\.rst\)$|\1|p' | sort -u)
if [ ${#rst_files[@]} -eq 0 ]; then
	printf '1..1\nok 1 rst # SKIP the series adds no .rst file\n' > "$rst_tap"
elif [ ! -d "$tree" ]; then
	printf '1..1\nok 1 rst # SKIP no kernel tree\n' > "$rst_tap"
elif [ -z "$docutils_py" ]; then
	printf '1..1\nok 1 rst # SKIP no python3 docutils (apt-get install python3-docutils)\n' > "$rst_tap"
else
	n=0
	{
		for doc in "${rst_files[@]}"; do
			n=$((n + 1))
			if [ ! -f "$tree/$doc" ]; then
				echo "not ok $n $doc builds without docutils warnings"
				echo "# missing from $tree (tree not synced with patches/?)"
			elif report=$("$docutils_py" -m docutils --halt=warning --report=warning \
					"$tree/$doc" /dev/null 2>&1) && [ -z "$report" ]; then
				echo "ok $n $doc builds without docutils warnings"
			else
				echo "not ok $n $doc builds without docutils warnings"
				printf '%s\n' "$report" | sed 's/^/# /'
			fi
		done
		echo "1..$n"
	} > "$rst_tap"
	grep -q '^not ok' "$rst_tap" && status=1
fi
exit $status

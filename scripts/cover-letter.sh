#!/bin/bash
# Write patches/0000-cover-letter.patch, the series' cover letter, laid out
# as `git format-patch --cover-letter --zero-commit --no-signature` lays
# it out (the options scripts/export-patches.sh exports the series with):
#
#   - From: the first patch's From: header, Date: the last patch's (so a
#     rerun on the same series writes the same file);
#   - Subject: "[PATCH 00/NN] " and the first line of
#     patches/cover-letter.txt, NN the number of patches that
#     patches/series names, folded at 78 columns as git folds a subject;
#   - the body: patches/cover-letter.txt from its third line on;
#   - the shortlog: "Author (n):", then each patch's subject (from its
#     Subject: header, unfolded and decoded, "[PATCH ...]" stripped)
#     indented by two and wrapped at 72 columns as git shortlog -w does;
#   - the diffstat and summary of the whole series against the kernel
#     tree's "vanilla" tag (Debian's 6.12 tarball), from the tree of
#     vanilla + patches/series built in a scratch index (as scripts/tree.sh
#     does), so neither the tree's work tree nor its index is touched.
#
# Building the series' tree applies every patch (seconds here, up to a
# minute on a busy machine); its id is kept in the kernel tree's git
# directory, keyed by vanilla and the content of the series, so that a
# rerun on an unchanged series does not apply it again.
#
# usage: cover-letter.sh [--check] [tree]
#   tree: a kernel git tree with the "vanilla" tag (default
#   $UINTR_BUILD_DIR/linux, UINTR_BUILD_DIR defaulting to build/).
#   --check: write nothing; fail when patches/0000-cover-letter.patch is
#   not what this script would write now (a diff is shown).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
patches=$top/patches
text=$patches/cover-letter.txt
cover=$patches/0000-cover-letter.patch
check=0

die() { echo "cover-letter: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
	case "$1" in
	--check) check=1; shift ;;
	-h|--help) sed -n '/^# usage:/,/^set /{/^set /d; s/^# \{0,1\}//; p}' "$0"; exit 0 ;;
	-*) die "unknown option $1 (usage: cover-letter.sh [--check] [tree])" ;;
	*) break ;;
	esac
done
[ $# -le 1 ] || die "usage: cover-letter.sh [--check] [tree]"
src=${1:-${UINTR_BUILD_DIR:-$top/build}/linux}

kgit() { git -C "$src" "$@"; }

[ -d "$src" ] || die "no kernel tree at $src: run \`make tree\`"
kgit rev-parse -q --verify 'vanilla^{tree}' > /dev/null 2>&1 ||
	die "$src has no \"vanilla\" tag: run \`make tree\`"
[ -f "$text" ] || die "${text#"$top"/} is missing"

# LC_ALL=C: byte order and byte lengths, whatever the caller's locale.
export LC_ALL=C

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The patches of the series, in order (as scripts/tree.sh reads it).
series=()
while read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	[ "$p" != 0000-cover-letter.patch ] ||
		die "patches/series names the cover letter, which is no patch"
	[ -f "$patches/$p" ] || die "patches/series names $p, which does not exist"
	series+=("$p")
done < "$patches/series"
nr=${#series[@]}
[ "$nr" -gt 0 ] || die "patches/series names no patch"

# header FILE NAME: header NAME of a mail, with its continuation lines.
header() {
	awk -v name="$2" '
		/^$/ { exit }
		/^[ \t]/ { if (found) print; next }
		{ found = (index($0, name ": ") == 1) }
		found { print }
	' "$1"
}

# The cover letter's subject and body.
txt=${text#"$top"/}
subject=$(head -n 1 "$text")
[ -n "$subject" ] || die "$txt: the first line is the subject, and it is empty"
[ -z "$(sed -n 2p "$text")" ] ||
	die "$txt: the second line must be blank (subject, blank line, body)"
if printf '%s' "$subject" | grep -q '[^ -~]'; then
	die "$txt: the subject must be printable ASCII (it would need RFC 2047)"
fi
awk 'NR > 2 && length($0) > 72 && !/:\/\// {
	printf "cover-letter: warning: %s:%d is longer than 72 columns\n", FILENAME, NR
}' "$text" >&2

# Authors and subjects, decoded and unfolded by git mailinfo (-b: strip
# only the bracketed prefixes that say PATCH).  One line per patch:
# author, tab, subject.
for p in "${series[@]}"; do
	git mailinfo -b "$tmp/msg" "$tmp/patch" < "$patches/$p" > "$tmp/info" ||
		die "patches/$p: git mailinfo cannot read it"
	author=$(sed -n 's/^Author: //p' "$tmp/info")
	title=$(sed -n 's/^Subject: //p' "$tmp/info")
	if [ -z "$author" ] || [ -z "$title" ]; then
		die "patches/$p has no author or no subject"
	fi
	printf '%s\t%s\n' "$author" "$title"
done > "$tmp/shortlog.in"

from=$(header "$patches/${series[0]}" From)
date=$(header "$patches/${series[nr - 1]}" Date)
[ -n "$from" ] || die "patches/${series[0]} has no From: header"
[ -n "$date" ] || die "patches/${series[nr - 1]} has no Date: header"

# The commits had non-ASCII text if format-patch gave their mails a MIME
# charset; then (or with a non-ASCII cover letter) format-patch gives the
# cover letter the same headers.
mime=0
for p in "${series[@]}"; do
	if [ -n "$(header "$patches/$p" Content-Transfer-Encoding)" ]; then
		mime=1
		break
	fi
done
! grep -q '[^[:print:][:space:]]' "$text" || mime=1

# The tree of vanilla + series, from the cache when the series is the same.
series_tree() {
	local p
	export GIT_INDEX_FILE=$tmp/index
	kgit read-tree vanilla
	for p in "${series[@]}"; do
		kgit apply --cached --whitespace=nowarn "$patches/$p" >&2 ||
			die "patch does not apply: patches/$p"
	done
	kgit write-tree
	unset GIT_INDEX_FILE
}
# In the common git directory: a worktree (build/wt) shares the cache.
gitdir=$(cd "$src" && cd "$(git rev-parse --git-common-dir)" && pwd)
cache=$gitdir/uintr-cover-letter-tree
key=$({
	kgit rev-parse 'vanilla^{tree}'
	for p in "${series[@]}"; do
		printf '%s\n' "$p"
		sha256sum < "$patches/$p"
	done
} | sha256sum | cut -d' ' -f1)
tree=
if [ -f "$cache" ] && [ "$(cut -d' ' -f1 "$cache")" = "$key" ]; then
	tree=$(cut -d' ' -f2 "$cache")
	kgit cat-file -e "$tree^{tree}" 2> /dev/null || tree=
fi
if [ -z "$tree" ]; then
	echo "cover-letter: applying patches/series to vanilla in a scratch index" >&2
	tree=$(series_tree)
	echo "$key $tree" > "$cache"
fi

# wrap WIDTH INDENT1 INDENT2: each line of stdin wrapped as git's
# strbuf_add_wrapped_text() wraps it (git shortlog -w, and the Subject:
# of a mail, whose first line starts -INDENT1 columns in, after text).
wrap() {
	awk -v width="$1" -v in1="$2" -v in2="$3" '
	function spaces(n,    s) { s = ""; while (n-- > 0) s = s " "; return s }
	{
		n = split($0, word, / /)
		if (in1 < 0) { line = ""; col = -in1 } else { line = spaces(in1); col = in1 }
		first = 1
		for (i = 1; i <= n; i++) {
			len = length(word[i])
			if (first && in1 < 0 && col + len > width) {
				# Not even the first word fits after the text before it.
				print line
				line = spaces(in2) word[i]; col = in2 + len
			} else if (first) {
				line = line word[i]; col += len
			} else if (col + 1 + len <= width) {
				line = line " " word[i]; col += 1 + len
			} else {
				print line
				line = spaces(in2) word[i]; col = in2 + len
			}
			first = 0
		}
		print line
	}'
}

# The shortlog as format-patch's cover letter has it: authors in byte
# order, each with its subjects in the order of the series.
shortlog() {
	local author count
	cut -f1 "$tmp/shortlog.in" | sort -u | while IFS= read -r author; do
		count=$(awk -F'\t' -v a="$author" '$1 == a' "$tmp/shortlog.in" | wc -l)
		printf '%s (%d):\n' "$author" "$count"
		awk -F'\t' -v a="$author" '$1 == a { sub(/^[^\t]*\t/, ""); print }' \
			"$tmp/shortlog.in" | wrap 72 2 4
		echo
	done
}

prefix=$(printf '[PATCH %0*d/%d] ' "${#nr}" 0 "$nr")
{
	echo "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"
	printf '%s\n' "$from"
	printf '%s\n' "$date"
	printf '%s\n' "$subject" | wrap 78 "-$(( ${#prefix} + 9 ))" 1 |
		sed "1s|^|Subject: $prefix|"
	if [ "$mime" = 1 ]; then
		echo "MIME-Version: 1.0"
		echo "Content-Type: text/plain; charset=UTF-8"
		echo "Content-Transfer-Encoding: 8bit"
	fi
	echo
	# The body, without trailing blank lines.
	tail -n +3 "$text" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
	echo
	shortlog
	# format-patch: --stat at its mail width (72), --summary, renames on.
	kgit -c core.quotePath=true diff --no-color --no-ext-diff -M \
		--stat=72 --summary vanilla "$tree"
	echo
} > "$tmp/cover"

name=${cover#"$top"/}
if [ "$check" = 1 ]; then
	if ! cmp -s "$tmp/cover" "$cover"; then
		diff -u --label "$name" --label "$name (now)" "$cover" "$tmp/cover" 2> /dev/null |
			head -n 40 >&2 || true
		die "$name is not current: run scripts/cover-letter.sh"
	fi
	echo "cover-letter: $name is current"
elif cmp -s "$tmp/cover" "$cover"; then
	echo "cover-letter: $name unchanged"
else
	cp "$tmp/cover" "$cover"
	echo "cover-letter: wrote $name ($nr patches)"
fi

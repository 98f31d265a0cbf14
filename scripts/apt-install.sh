#!/bin/bash
# Install the named Debian packages that are missing: as root, with
# apt-get, non-interactive.  An up-to-date machine costs one dpkg query.
# Messages go to stderr, prefixed with WHO.
# usage: apt-install.sh WHO PACKAGE...
set -euo pipefail

who=$1
shift
missing=()
for p in "$@"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "$who: installing ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
	echo "$who: not root, cannot install: ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
apt-get install -y -q --no-install-recommends "${missing[@]}" >&2

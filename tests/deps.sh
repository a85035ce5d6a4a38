#!/usr/bin/env bash
# Install the Debian packages poolscope needs (apt, as root).
#   tests/deps.sh PKG...           install all of them
#   tests/deps.sh --check PKG...   install only the missing ones; quiet when none is missing
set -euo pipefail
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
missing=()
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ $check = 1 ] && [ ${#missing[@]} = 0 ]; then exit 0; fi
[ $check = 1 ] || missing=("$@")
if [ "$(id -u)" != 0 ]; then
	echo "poolscope deps: missing Debian packages: ${missing[*]} (run 'make deps' as root)" >&2
	exit 1
fi
echo "poolscope deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# smbd must not start from the package's postinst: tests start their own private servers.
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

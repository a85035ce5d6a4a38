#!/usr/bin/env bash
# Install the Debian packages poolscope needs (apt, as root).
#   tests/deps.sh PKG...           install all of them
#   tests/deps.sh --check PKG...   install only the missing ones; quiet when none is missing
#   tests/deps.sh --ksmbd-tools DIR
#                                  unpacks Debian's ksmbd-tools into DIR (not installed: the
#                                  package conflicts with samba, which the tests also need)
set -euo pipefail
if [ "${1:-}" = "--ksmbd-tools" ]; then
	dir=${2:?usage: tests/deps.sh --ksmbd-tools DIR}
	[ -x "$dir/usr/sbin/ksmbd.mountd" ] && exit 0
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	if ! (cd "$tmp" && apt-get download ksmbd-tools >/dev/null 2>&1); then
		apt-get update -qq && (cd "$tmp" && apt-get download ksmbd-tools >/dev/null) ||
			{ echo "poolscope deps: cannot download ksmbd-tools" >&2; exit 1; }
	fi
	mkdir -p "$dir"
	dpkg-deb -x "$tmp"/ksmbd-tools_*.deb "$dir"
	echo "poolscope deps: ksmbd-tools unpacked into $dir" >&2
	exit 0
fi
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

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The ksmbd path of the test server, without the kernel module: tests/smbserver.sh writes
# ksmbd.conf and the user database with ksmbd-tools (ksmbd.addshare / ksmbd.adduser parse and
# rewrite what we wrote, so a key they do not know or a malformed section fails here), for the
# netns (veth interface, port 445) and loopback (lo, port 4450) layouts.
set -u
cd "${PS_SRCDIR:-.}"
kt=${PS_KSMBD_TOOLS:-${O:-.output}/ksmbd-tools}
[ -x "$kt/usr/sbin/ksmbd.adduser" ] || { echo "FAIL: ksmbd-tools not unpacked in $kt (make deps)"; exit 1; }
tmp=$(mktemp -d /tmp/ps-ksmbdcfg.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for mode in netns loopback; do
	d=$tmp/$mode
	if [ $mode = loopback ]; then
		tests/smbserver.sh ksmbd-config "$d" --loopback || fail "ksmbd-config $mode"
		iface=lo port=4450
	else
		tests/smbserver.sh ksmbd-config "$d" || fail "ksmbd-config $mode"
		iface=psveth0s port=445
	fi
	conf=$d/ksmbd.conf
	get() { sed -n "s/^[[:space:]]*$1 = //p" "$conf" | head -1; }
	[ "$(get interfaces)" = "$iface" ] || fail "$mode: interfaces '$(get interfaces)' != $iface"
	[ "$(get 'tcp port')" = "$port" ] || fail "$mode: tcp port '$(get 'tcp port')' != $port"
	[ "$(get 'bind interfaces only')" = yes ] || fail "$mode: not bound to the interface only"
	grep -q '^\[share\]' "$conf" || fail "$mode: no [share] section"
	[ "$(get path)" = "$d/share" ] || fail "$mode: share path '$(get path)'"
	[ "$(get 'valid users')" = root ] || fail "$mode: valid users"
	grep -Eq '^root:[A-Za-z0-9+/]{22}==$' "$d/ksmbdpwd.db" || fail "$mode: user database: $(cat "$d/ksmbdpwd.db")"
	echo "ok $mode: $(grep -c . "$conf") config lines, user root in ksmbdpwd.db"
done
echo ok

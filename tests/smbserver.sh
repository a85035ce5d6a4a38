#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The private SMB test server of poolscope: a Samba smbd (Debian's 4.17) with its own smb.conf
# and state/lock/private/cache/pid/log dirs under one directory, one user with a password, one
# share holding a test file pinned in page cache (mmap+mlock: DAMON evicts it otherwise), bound
# to loopback or - the default - inside a network-namespace pair joined by veth, so that client
# and server traffic crosses a real network stack. Uses ksmbd instead when the kernel has it.
#
#   tests/smbserver.sh start [--loopback] [--size 1G] [--port N]   prints the env (KEY=VALUE)
#   tests/smbserver.sh stop      kills by pid file, then anything left in the namespaces
#   tests/smbserver.sh status
#
# Env: PS_SMB_DIR (default /tmp/poolscope-smb), PS_PIN (the pspin helper; default
# $O/tests/live/pspin), PS_SMB_PASS. Traffic stays on 127.0.0.1 or inside psrv0/pscli0.
set -u
DIR=${PS_SMB_DIR:-/tmp/poolscope-smb}
O=${O:-.output}
PIN=${PS_PIN:-$O/tests/live/pspin}
NS_SRV=psrv0 NS_CLI=pscli0 VETH_S=psveth0s VETH_C=psveth0c
SRV_IP=10.201.7.1 CLI_IP=10.201.7.2
USER_NAME=root PASS=${PS_SMB_PASS:-pspass}

die() { echo "smbserver: $*" >&2; exit 1; }

ksmbd_present() { [ -e /sys/class/ksmbd-control ] || [ -e /sys/module/ksmbd ]; }

killpidfile() { # $1 = pid file
	local pid
	[ -f "$1" ] || return 0
	pid=$(cat "$1" 2>/dev/null)
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
	fi
	rm -f "$1"
}

do_stop() {
	local pids
	killpidfile "$DIR/run/smbd.pid.ps"
	killpidfile "$DIR/run/pin.pid"
	# smbd children and anything else still inside our namespaces
	for ns in $NS_SRV $NS_CLI; do
		if ip netns list 2>/dev/null | grep -qw "$ns"; then
			pids=$(ip netns pids "$ns" 2>/dev/null)
			[ -n "$pids" ] && kill -TERM $pids 2>/dev/null && sleep 0.5
			pids=$(ip netns pids "$ns" 2>/dev/null)
			[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
			ip netns del "$ns" 2>/dev/null
		fi
	done
	# loopback mode: smbd children of ours, found by our config path
	if [ -f "$DIR/etc/smb.conf" ]; then
		pids=$(pgrep -f -- "-s $DIR/etc/smb.conf" 2>/dev/null)
		[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
	fi
	ip link del $VETH_S 2>/dev/null
	rm -rf "$DIR/run" "$DIR/etc" "$DIR/lock" "$DIR/state" "$DIR/cache" "$DIR/private" "$DIR/log"
	return 0
}

do_status() {
	local up=0
	if [ -f "$DIR/run/smbd.pid.ps" ] && kill -0 "$(cat "$DIR/run/smbd.pid.ps")" 2>/dev/null; then
		echo "smbd running (pid $(cat "$DIR/run/smbd.pid.ps"))"; up=1
	else
		echo "smbd not running"
	fi
	ip netns list 2>/dev/null | grep -w -e $NS_SRV -e $NS_CLI | sed 's/^/netns /'
	[ -f "$DIR/env" ] && [ $up = 1 ] && cat "$DIR/env"
	[ $up = 1 ]
}

do_start() {
	local mode=netns size=1G port=445 bytes
	while [ $# -gt 0 ]; do
		case "$1" in
		--loopback) mode=loopback; port=${port/#445/4450};;
		--netns) mode=netns;;
		--size) size=$2; shift;;
		--port) port=$2; shift;;
		*) die "unknown option '$1' (start [--loopback|--netns] [--size 1G] [--port N])";;
		esac
		shift
	done
	[ "$(id -u)" = 0 ] || die "must run as root (namespaces, smbd, mlock)"
	if ksmbd_present; then
		echo "smbserver: ksmbd present in this kernel, but ksmbd-tools wiring is not implemented; using Samba" >&2
	fi
	command -v smbd >/dev/null || die "smbd not found (apt-get install samba)"
	command -v smbpasswd >/dev/null || die "smbpasswd not found (apt-get install samba-common-bin)"
	[ -x "$PIN" ] || die "$PIN: pin helper not built (make builds it; or set PS_PIN)"
	bytes=$(numfmt --from=iec "${size^^}" 2>/dev/null) || die "--size '$size': expected e.g. 1G"
	[ "$bytes" -ge 65536 ] || die "--size '$size': at least 64K"
	do_stop
	trap 'do_stop; exit 1' INT TERM HUP
	mkdir -p "$DIR"/{etc,run,lock,state,cache,private,log,share}
	chmod 700 "$DIR/private"
	local ip=127.0.0.1
	[ $mode = netns ] && ip=$SRV_IP
	cat > "$DIR/etc/smb.conf" <<CONF
[global]
	netbios name = PSTEST
	workgroup = WORKGROUP
	server role = standalone server
	interfaces = $ip
	bind interfaces only = yes
	smb ports = $port
	disable netbios = yes
	server min protocol = SMB2_10
	passdb backend = tdbsam:$DIR/private/passdb.tdb
	private dir = $DIR/private
	lock directory = $DIR/lock
	state directory = $DIR/state
	cache directory = $DIR/cache
	pid directory = $DIR/run
	ncalrpc dir = $DIR/run/ncalrpc
	log file = $DIR/log/smbd.log
	max log size = 1000
	log level = 0
	map to guest = Never
	load printers = no
	printing = bsd
	printcap name = /dev/null
	disable spoolss = yes
	kernel oplocks = no
[share]
	path = $DIR/share
	read only = no
	valid users = $USER_NAME
CONF
	local f=$DIR/share/test.bin
	if [ ! -f "$f" ] || [ "$(stat -c %s "$f")" != "$bytes" ]; then
		rm -f "$f"
		head -c "$bytes" /dev/urandom > "$f.tmp" && mv "$f.tmp" "$f" || die "$f: cannot create"
	fi
	"$PIN" "$f" > "$DIR/run/pin.out" 2>&1 &
	echo $! > "$DIR/run/pin.pid"
	for _ in $(seq 100); do grep -q pinned "$DIR/run/pin.out" && break; kill -0 "$(cat "$DIR/run/pin.pid")" 2>/dev/null || break; sleep 0.1; done
	grep -q pinned "$DIR/run/pin.out" || { do_stop; die "pinning $f failed: $(cat "$DIR/run/pin.out" 2>/dev/null)"; }
	(echo "$PASS"; echo "$PASS") | smbpasswd -c "$DIR/etc/smb.conf" -s -a $USER_NAME >/dev/null \
		|| { do_stop; die "smbpasswd failed"; }
	local run=""
	if [ $mode = netns ]; then
		ip netns add $NS_SRV && ip netns add $NS_CLI || { do_stop; die "ip netns add failed"; }
		ip link add $VETH_S type veth peer name $VETH_C || { do_stop; die "veth failed"; }
		ip link set $VETH_S netns $NS_SRV && ip link set $VETH_C netns $NS_CLI
		ip -n $NS_SRV addr add $SRV_IP/24 dev $VETH_S
		ip -n $NS_CLI addr add $CLI_IP/24 dev $VETH_C
		ip -n $NS_SRV link set lo up; ip -n $NS_CLI link set lo up
		ip -n $NS_SRV link set $VETH_S up; ip -n $NS_CLI link set $VETH_C up
		run="ip netns exec $NS_SRV"
	fi
	# own session: smbd signals its whole process group when it exits
	setsid $run smbd -s "$DIR/etc/smb.conf" -F --no-process-group </dev/null >"$DIR/log/smbd.out" 2>&1 &
	echo $! > "$DIR/run/smbd.pid.ps"
	local cli="" url_host=$ip
	[ $mode = netns ] && cli="ip netns exec $NS_CLI"
	[ "$port" != 445 ] && url_host="$ip:$port"
	local ok=0
	for _ in $(seq 100); do
		kill -0 "$(cat "$DIR/run/smbd.pid.ps")" 2>/dev/null || break
		if $cli smbclient -p "$port" "//$ip/share" -U "$USER_NAME%$PASS" -c 'ls test.bin' >/dev/null 2>&1; then
			ok=1; break
		fi
		sleep 0.2
	done
	if [ $ok != 1 ]; then
		tail -5 "$DIR/log/smbd.out" "$DIR/log/smbd.log" >&2 2>/dev/null
		do_stop; die "smbd did not come up on $ip:$port"
	fi
	cat > "$DIR/env" <<ENV
PS_SMB_MODE=$mode
PS_SMB_URL=smb://$url_host/share/test.bin
PS_SMB_USER=$USER_NAME%$PASS
PS_SMB_FILE=$f
PS_SMB_CLIENT_EXEC="$cli"
PS_SMB_SERVER_EXEC="$run"
PS_SMB_CONF=$DIR/etc/smb.conf
PS_SMB_PID=$(cat "$DIR/run/smbd.pid.ps")
ENV
	trap - INT TERM HUP
	cat "$DIR/env"
}

case "${1:-}" in
start) shift; do_start "$@";;
stop) do_stop;;
status) do_status;;
*) echo "usage: tests/smbserver.sh start [--loopback] [--size 1G] [--port N] | stop | status" >&2; exit 2;;
esac

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The private SMB test server of poolscope: a Samba smbd (Debian's 4.17) with its own smb.conf
# and state/lock/private/cache/pid/log dirs under one directory, one user with a password, one
# share holding a test file pinned in page cache (mmap+mlock: DAMON evicts it otherwise), bound
# to loopback or - the default - inside a network-namespace pair joined by veth, so that client
# and server traffic crosses a real network stack. Uses ksmbd instead when the kernel has it
# (--server auto, the default): ksmbd-tools' ksmbd.mountd with its own ksmbd.conf and user
# database. ksmbd listens in the initial network namespace only, so in netns mode its veth end
# stays there and only the client gets a namespace.
#
#   tests/smbserver.sh start [--loopback] [--size 1G] [--port N] [--server auto|samba|ksmbd]
#                            [--session caller|own]
#                                prints the env (KEY=VALUE); the server runs in the caller's
#                                session (default) or, as a daemon would, in one of its own
#   tests/smbserver.sh stop      kills by pid file, then anything left in the namespaces
#   tests/smbserver.sh status
#   tests/smbserver.sh ksmbd-config DIR [--loopback]
#                                writes DIR/ksmbd.conf and DIR/ksmbdpwd.db with ksmbd-tools
#                                (no kernel module needed; the unit of the ksmbd path)
#
# Env: PS_SMB_DIR (default /tmp/poolscope-smb), PS_PIN (the pspin helper; default
# $O/tests/live/pspin), PS_SMB_PASS, PS_KSMBD_TOOLS (ksmbd-tools unpacked by make deps; default
# $O/ksmbd-tools; the Debian package conflicts with samba, so it is not installed). Traffic stays on 127.0.0.1 or inside psrv0/pscli0.
set -u
DIR=${PS_SMB_DIR:-/tmp/poolscope-smb}
O=${O:-.output}
PIN=${PS_PIN:-$O/tests/live/pspin}
KT=${PS_KSMBD_TOOLS:-$O/ksmbd-tools}
[ -d "$KT/usr/sbin" ] && PATH=$(cd "$KT/usr/sbin" && pwd):$PATH
NS_SRV=psrv0 NS_CLI=pscli0 VETH_S=psveth0s VETH_C=psveth0c
SRV_IP=10.201.7.1 CLI_IP=10.201.7.2
USER_NAME=root PASS=${PS_SMB_PASS:-pspass}

die() { echo "smbserver: $*" >&2; exit 1; }

# The kernel has ksmbd when its control class is there, or its module can be loaded.
ksmbd_present() {
	[ -e /sys/class/ksmbd-control ] || [ -e /sys/module/ksmbd ] ||
		modinfo ksmbd >/dev/null 2>&1
}
ksmbd_why_not() {
	echo "the kernel has no ksmbd (no /sys/class/ksmbd-control, no ksmbd module for $(uname -r))"
}

# Writes $1/ksmbd.conf (share at $2, bound to interface $3, port $4) and the user database
# $1/ksmbdpwd.db, both through ksmbd-tools so their own parser checks what we wrote.
ksmbd_config() { # dir sharepath iface port
	local dir=$1 share=$2 iface=$3 port=$4
	command -v ksmbd.adduser >/dev/null || die "ksmbd-tools not found in $KT (make deps unpacks them)"
	mkdir -p "$dir"
	cat > "$dir/ksmbd.conf" <<CONF
[global]
	netbios name = PSTEST
	workgroup = WORKGROUP
	server min protocol = SMB2_10
	interfaces = $iface
	bind interfaces only = yes
	tcp port = $port
	map to guest = never
CONF
	ksmbd.addshare -c "$dir/ksmbd.conf" -a share \
		-o "path = $share
read only = no
valid users = $USER_NAME" >/dev/null || die "ksmbd.addshare failed on $dir/ksmbd.conf"
	rm -f "$dir/ksmbdpwd.db"
	ksmbd.adduser -c "$dir/ksmbd.conf" -i "$dir/ksmbdpwd.db" -a "$USER_NAME" -p "$PASS" \
		>/dev/null || die "ksmbd.adduser failed on $dir/ksmbdpwd.db"
}

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
	if [ -f "$DIR/run/ksmbd.pid.ps" ]; then
		# ksmbd.control -s stops the kernel server and ksmbd.mountd together
		ksmbd.control -s >/dev/null 2>&1
		killpidfile "$DIR/run/ksmbd.pid.ps"
	fi
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
	local up=0 f
	for f in smbd ksmbd; do
		if [ -f "$DIR/run/$f.pid.ps" ] && kill -0 "$(cat "$DIR/run/$f.pid.ps")" 2>/dev/null; then
			echo "$f running (pid $(cat "$DIR/run/$f.pid.ps"))"; up=1
		fi
	done
	[ $up = 1 ] || echo "server not running"
	ip netns list 2>/dev/null | grep -w -e $NS_SRV -e $NS_CLI | sed 's/^/netns /'
	[ -f "$DIR/env" ] && [ $up = 1 ] && cat "$DIR/env"
	[ $up = 1 ]
}

# Starts the server command in the background in a process group of its own (smbd signals its
# whole group when it exits) and writes its pid. By default it stays in the caller's session:
# with autogroup a session is a scheduling group, and this kernel has left a server in a
# session of its own without CPU for seconds while its client's session kept both processors
# busy (docs/known-issues.md). "own" is how a daemon runs: setsid, as smbd -D would.
background() { # caller|own pidfile logfile cmd...
	local session=$1 pidf=$2 log=$3
	shift 3
	if [ "$session" = own ]; then
		setsid "$@" </dev/null >"$log" 2>&1 &
	else
		set -m
		"$@" </dev/null >"$log" 2>&1 &
		set +m
	fi
	echo $! > "$pidf"
}

do_start() {
	local mode=netns size=1G port=445 bytes server=auto session=caller
	while [ $# -gt 0 ]; do
		case "$1" in
		--loopback) mode=loopback; port=${port/#445/4450};;
		--netns) mode=netns;;
		--size) size=$2; shift;;
		--port) port=$2; shift;;
		--server) server=$2; shift;;
		--session) session=$2; shift;;
		*) die "unknown option '$1' (start [--loopback|--netns] [--size 1G] [--port N] [--server auto|samba|ksmbd] [--session caller|own])";;
		esac
		shift
	done
	[ "$(id -u)" = 0 ] || die "must run as root (namespaces, smbd, mlock)"
	case $server in
	auto)
		if ksmbd_present && command -v ksmbd.mountd >/dev/null; then server=ksmbd; else server=samba; fi;;
	ksmbd)
		ksmbd_present || die "--server ksmbd: $(ksmbd_why_not)"
		command -v ksmbd.mountd >/dev/null || die "ksmbd.mountd not found in $KT (make deps unpacks ksmbd-tools)";;
	samba) ;;
	*) die "--server '$server': expected auto, samba or ksmbd";;
	esac
	case $session in caller|own) ;; *) die "--session '$session': expected caller or own";; esac
	if [ $server = samba ]; then
		command -v smbd >/dev/null || die "smbd not found (apt-get install samba)"
		command -v smbpasswd >/dev/null || die "smbpasswd not found (apt-get install samba-common-bin)"
	fi
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
	local run=""
	if [ $mode = netns ]; then
		# ksmbd serves the initial namespace only: its veth end stays here
		if [ $server = samba ]; then
			ip netns add $NS_SRV || { do_stop; die "ip netns add failed"; }
		fi
		ip netns add $NS_CLI || { do_stop; die "ip netns add failed"; }
		ip link add $VETH_S type veth peer name $VETH_C || { do_stop; die "veth failed"; }
		ip link set $VETH_C netns $NS_CLI
		ip -n $NS_CLI addr add $CLI_IP/24 dev $VETH_C
		ip -n $NS_CLI link set lo up; ip -n $NS_CLI link set $VETH_C up
		if [ $server = samba ]; then
			ip link set $VETH_S netns $NS_SRV
			ip -n $NS_SRV addr add $SRV_IP/24 dev $VETH_S
			ip -n $NS_SRV link set lo up; ip -n $NS_SRV link set $VETH_S up
			run="ip netns exec $NS_SRV"
		else
			ip addr add $SRV_IP/24 dev $VETH_S && ip link set $VETH_S up
		fi
	fi
	if [ $server = samba ]; then
		(echo "$PASS"; echo "$PASS") | smbpasswd -c "$DIR/etc/smb.conf" -s -a $USER_NAME >/dev/null \
			|| { do_stop; die "smbpasswd failed"; }
		background $session "$DIR/run/smbd.pid.ps" "$DIR/log/smbd.out" \
			$run smbd -s "$DIR/etc/smb.conf" -F --no-process-group
	else
		local iface=lo
		[ $mode = netns ] && iface=$VETH_S
		( ksmbd_config "$DIR/etc" "$DIR/share" $iface "$port" ) || { do_stop; die "ksmbd configuration failed"; }
		[ -e /sys/class/ksmbd-control ] || modprobe ksmbd || { do_stop; die "modprobe ksmbd failed"; }
		background $session "$DIR/run/ksmbd.pid.ps" "$DIR/log/ksmbd.out" \
			ksmbd.mountd -n -c "$DIR/etc/ksmbd.conf" -u "$DIR/etc/ksmbdpwd.db" -p "$port"
	fi
	local pidf=$DIR/run/$([ $server = samba ] && echo smbd || echo ksmbd).pid.ps
	local cli="" url_host=$ip
	[ $mode = netns ] && cli="ip netns exec $NS_CLI"
	[ "$port" != 445 ] && url_host="$ip:$port"
	local ok=0
	for _ in $(seq 100); do
		kill -0 "$(cat "$pidf")" 2>/dev/null || break
		if $cli smbclient -p "$port" "//$ip/share" -U "$USER_NAME%$PASS" -c 'ls test.bin' >/dev/null 2>&1; then
			ok=1; break
		fi
		sleep 0.2
	done
	if [ $ok != 1 ]; then
		tail -5 "$DIR"/log/*.out "$DIR/log/smbd.log" >&2 2>/dev/null
		do_stop; die "$server did not come up on $ip:$port"
	fi
	cat > "$DIR/env" <<ENV
PS_SMB_MODE=$mode
PS_SMB_SERVER=$server
PS_SMB_URL=smb://$url_host/share/test.bin
PS_SMB_USER=$USER_NAME%$PASS
PS_SMB_FILE=$f
PS_SMB_CLIENT_EXEC="$cli"
PS_SMB_SERVER_EXEC="$run"
PS_SMB_CONF=$DIR/etc/$([ $server = samba ] && echo smb.conf || echo ksmbd.conf)
PS_SMB_PID=$(cat "$pidf")
ENV
	trap - INT TERM HUP
	cat "$DIR/env"
}

case "${1:-}" in
start) shift; do_start "$@";;
ksmbd-config)
	[ -n "${2:-}" ] || die "usage: ksmbd-config DIR [--loopback]"
	if [ "${3:-}" = --loopback ]; then ksmbd_config "$2" "$2/share" lo 4450
	else ksmbd_config "$2" "$2/share" $VETH_S 445; fi;;
stop) do_stop;;
status) do_status;;
*) echo "usage: tests/smbserver.sh start [--loopback] [--size 1G] [--port N] [--server auto|samba|ksmbd] | stop | status | ksmbd-config DIR [--loopback]" >&2; exit 2;;
esac

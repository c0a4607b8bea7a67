#!/usr/bin/env bash
# fnn-cluster.sh - an emulated Flat Neighborhood Network cluster in network namespaces.
#
#   fnn-cluster.sh up TABLE [--rate RATE] [--mtu MTU] [--loss PC:NIC:PCT] [--prefix P] [--dir D]
#   fnn-cluster.sh down   [--prefix P | --dir D]
#   fnn-cluster.sh status [--prefix P | --dir D]
#   fnn-cluster.sh link PC NIC up|down  [--prefix P | --dir D]
#   fnn-cluster.sh loss PC NIC PCT      [--prefix P | --dir D]    (PCT 0: no loss)
#   fnn-cluster.sh shape PC NIC RATE [DELAY]  [--prefix P | --dir D]  (one NIC's rate, delay)
#   fnn-cluster.sh ns PC                [--prefix P | --dir D]    (prints the namespace)
#
# From an FNN design table (`switch: pc pc ...`, as routing/fnn writes it): one network
# namespace per PC (P-pcN), one namespace P-fab holding one Linux bridge per switch (swS),
# one veth pair per NIC: `nicK` in the PC's namespace (NIC K is on the PC's K-th
# lowest-numbered switch, routing/fnn's convention), `pNnK` enslaved to the switch's bridge.
# NIC K of PC N on switch S gets 198.18.S.(N+1)/24 and MAC 02:18:00:S:00:N+1.  Every NIC is
# shaped with `tc tbf` at RATE in both directions (on both veth ends), every link's MTU is MTU
# (default 1500: jumbo frames with 9000); --loss drops PCT
# percent of the packets in and out of one NIC with an nft `numgen random` rule.  `shape`
# sets one NIC's rate later and, with DELAY (e.g. 5ms, each direction; or OUT/IN, 10ms/0),
# delays its packets: with netem (as root qdisc, the tbf its child) where the kernel has it,
# else through a delay line, a python3 relay in P-fab between the NIC's switch-side veth end
# and its bridge port (frames with their GSO/checksum state, PACKET_VNET_HDR; for light
# traffic: it costs tens of microseconds of CPU per packet).  `down` ends the relays first.
#
# Nothing touches the host's interfaces: every link is created inside the namespaces, and
# IPv6 is off in all of them; PCs answer ARP only on the NIC holding the address.  The state directory D (default /run/fnn-testbed/P) holds
#   state   the namespaces made, one a line, written as each is made: `down` deletes those
#   addrs   the address plan, "pc nic ifname ipv4 mac" (fnn_addrmap_load, `fnn stripe --addrs`)
#   table   the design table;  nics: "pc nic switch" lines;  env: PREFIX, RATE, MTU, NPCS, NICS
#   delay.N.K  the PID of the delay line relaying PC N's NIC K (it exits when this goes)
# `up` prints the prefix; on any failure it removes what it made.  P defaults to tb<pid>.
set -u

die() { echo "fnn-cluster: $*" >&2; exit 1; }
usage() { sed -n '3,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

PREFIX="" DIR="" RATE="200mbit" MTU=1500 LOSS=""
ARGS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--prefix) PREFIX=${2:?}; shift 2 ;;
	--dir) DIR=${2:?}; shift 2 ;;
	--rate) RATE=${2:?}; shift 2 ;;
	--mtu) MTU=${2:?}; shift 2 ;;
	--loss) LOSS=${2:?}; shift 2 ;;
	-h | --help) usage ;;
	*) ARGS+=("$1"); shift ;;
	esac
done
[ ${#ARGS[@]} -ge 1 ] || usage
CMD=${ARGS[0]}

# resolve_dir: DIR from PREFIX or PREFIX from DIR/env.
resolve_dir() {
	if [ -z "$DIR" ]; then
		[ -n "$PREFIX" ] || die "$CMD: give --prefix or --dir"
		DIR=/run/fnn-testbed/$PREFIX
	fi
	if [ -z "$PREFIX" ] && [ -f "$DIR/env" ]; then
		PREFIX=$(sed -n 's/^PREFIX=//p' "$DIR/env")
	fi
	[ -n "$PREFIX" ] || die "$DIR: no cluster there (no env file)"
}

pcns() { echo "$PREFIX-pc$1"; }
fabns() { echo "$PREFIX-fab"; }

# nic_switch PC NIC: the switch of that NIC, from DIR/nics; empty if none.
nic_switch() { awk -v p="$1" -v k="$2" '$1 == p && $2 == k { print $3 }' "$DIR/nics"; }

# parse_table FILE: "pc nic switch" lines, sorted by PC then switch; errors name the line.
parse_table() {
	awk '
	{ sub(/#.*/, ""); if ($0 ~ /^[ \t]*$/) next
	  if (!match($0, /^[ \t]*[0-9]+[ \t]*:/)) { printf "%s: line %d: expected \"switch: pc pc ...\"\n", FILENAME, NR > "/dev/stderr"; bad = 1; exit 1 }
	  split($0, a, ":"); s = a[1] + 0; n = split(a[2], pcs, /[ \t]+/)
	  if (s > 255) { printf "%s: line %d: switch %d: the address plan has 256 switches (198.18.S.0/24)\n", FILENAME, NR, s > "/dev/stderr"; bad = 1; exit 1 }
	  if (seen_sw[s]++) { printf "%s: line %d: switch %d appears twice\n", FILENAME, NR, s > "/dev/stderr"; bad = 1; exit 1 }
	  for (i = 1; i <= n; i++) {
	    if (pcs[i] == "") continue
	    if (pcs[i] !~ /^[0-9]+$/) { printf "%s: line %d: bad PC \"%s\"\n", FILENAME, NR, pcs[i] > "/dev/stderr"; bad = 1; exit 1 }
	    p = pcs[i] + 0
	    if (p > 253) { printf "%s: line %d: PC %d: the address plan has 254 PCs\n", FILENAME, NR, p > "/dev/stderr"; bad = 1; exit 1 }
	    if (on[p, s]++) { printf "%s: line %d: PC %d appears twice on switch %d\n", FILENAME, NR, p, s > "/dev/stderr"; bad = 1; exit 1 }
	    print p, s
	  }
	}
	END { if (bad) exit 1 }' "$1" | sort -n -k1,1 -k2,2 |
		awk '{ if ($1 != last) { k = 0; last = $1 } ; print $1, k++, $2 }'
	return "${PIPESTATUS[0]}"
}

# rate_bytes RATE: bytes per second of a tc rate (kbit, mbit, gbit, bit).
rate_bytes() {
	echo "$1" | awk '{ r = $0; m = 1
		if (r ~ /gbit$/) m = 1e9; else if (r ~ /mbit$/) m = 1e6; else if (r ~ /kbit$/) m = 1e3
		else if (r !~ /^[0-9.]+(bit)?$/) exit 1
		v = r + 0; if (v <= 0) exit 1; printf "%d\n", v * m / 8 }'
}

# shape NS DEV: tbf at RATE on DEV's egress; burst 4 ms of traffic, at least 64 KiB.
shape() {
	local bps burst
	bps=$(rate_bytes "$RATE") || die "bad rate '$RATE' (e.g. 100mbit)"
	burst=$((bps / 250))
	[ "$burst" -ge 65536 ] || burst=65536
	tc -n "$1" qdisc replace dev "$2" root tbf rate "$RATE" burst "$burst" latency 20ms ||
		die "tc tbf on $2 in $1"
}

# set_loss PC NIC PCT: replaces the loss table of PC with PCT percent on nicNIC (0: none).
set_loss() {
	local ns permille
	ns=$(pcns "$1")
	[ -n "$(nic_switch "$1" "$2")" ] || die "loss: PC $1 has no NIC $2"
	permille=$(echo "$3" | awk '$0 ~ /^[0-9.]+$/ && $0 <= 100 { printf "%d\n", $0 * 10 + 0.5; ok = 1 } END { exit !ok }') ||
		die "loss: bad percentage '$3'"
	ip netns exec "$ns" nft delete table inet fnntb_loss 2>/dev/null
	[ "$permille" -gt 0 ] || return 0
	ip netns exec "$ns" nft -f - <<EOF || die "nft loss rule in $ns"
table inet fnntb_loss {
	chain out { type filter hook output priority 0; oifname "nic$2" numgen random mod 1000 < $permille drop; }
	chain in { type filter hook input priority 0; iifname "nic$2" numgen random mod 1000 < $permille drop; }
}
EOF
}

# mkns NAME: a namespace, recorded in the state file first, loopback up, IPv6 off.
mkns() {
	echo "$1" >>"$DIR/state"
	ip netns add "$1" || die "ip netns add $1"
	ip -n "$1" link set lo up
	ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 \
		>/dev/null 2>&1
	# A PC answers ARP for an address only on the NIC that has it (strong host on the
	# wire): a peer's address on switch S is then reachable over switch S only.
	ip netns exec "$1" sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 \
		>/dev/null 2>&1
}

cmd_down() {
	local ns f rc=0
	resolve_dir
	[ -f "$DIR/state" ] || { rm -rf "$DIR"; return 0; }
	# delay lines first: a process in a namespace keeps it (and its links) alive
	for f in "$DIR"/delay.*.*; do
		[ -f "$f" ] || continue
		f=${f##*/delay.}
		delay_end "${f%.*}" "${f#*.}"
	done
	while read -r ns; do
		[ -n "$ns" ] || continue
		if [ -e "/run/netns/$ns" ]; then
			ip netns del "$ns" || rc=1
		fi
	done <"$DIR/state"
	[ $rc -eq 0 ] && rm -rf "$DIR"
	return $rc
}

cmd_up() {
	local table=${ARGS[1]:-} npcs nics pc k sw fab ns
	[ -n "$table" ] || usage
	[ -r "$table" ] || die "$table: cannot read"
	[ -n "$PREFIX" ] || PREFIX="tb$$"
	[[ "$PREFIX" =~ ^[A-Za-z0-9_]{1,10}$ ]] || die "prefix '$PREFIX': 1-10 letters, digits or _"
	rate_bytes "$RATE" >/dev/null || die "bad rate '$RATE' (e.g. 100mbit)"
	[ -n "$DIR" ] || DIR=/run/fnn-testbed/$PREFIX
	[ ! -e "$DIR/state" ] || die "$DIR: a cluster with prefix $PREFIX is already up"
	mkdir -p "$DIR" || die "mkdir $DIR"
	nics=$(parse_table "$table") || { rm -rf "$DIR"; exit 1; }
	[ -n "$nics" ] || { rm -rf "$DIR"; die "$table: no switches"; }
	: >"$DIR/state"
	trap 'echo "fnn-cluster: up failed, removing what was made" >&2; cmd_down' EXIT
	echo "$nics" >"$DIR/nics"
	cp "$table" "$DIR/table"
	npcs=$(echo "$nics" | awk '$1 + 1 > n { n = $1 + 1 } END { print n }')
	printf 'PREFIX=%s\nRATE=%s\nMTU=%s\nNPCS=%s\nNICS=%s\n' "$PREFIX" "$RATE" "$MTU" "$npcs" \
		"$(echo "$nics" | awk '$2 + 1 > n { n = $2 + 1 } END { print n }')" >"$DIR/env"
	fab=$(fabns)
	mkns "$fab"
	for sw in $(echo "$nics" | awk '{ print $3 }' | sort -un); do
		ip -n "$fab" link add "sw$sw" type bridge || die "bridge sw$sw"
		ip -n "$fab" link set "sw$sw" up
	done
	case $MTU in
	'' | *[!0-9]*) die "bad MTU '$MTU'" ;;
	esac
	[ "$MTU" -ge 576 ] && [ "$MTU" -le 65535 ] || die "MTU $MTU: from 576 to 65535"
	echo "# pc nic ifname ipv4 mac  (fnn-cluster.sh, prefix $PREFIX, $RATE per NIC, MTU $MTU)" >"$DIR/addrs"
	for ((pc = 0; pc < npcs; pc++)); do
		ns=$(pcns "$pc")
		mkns "$ns"
		while read -r k sw; do
			ip -n "$fab" link add "p${pc}n$k" type veth peer name "nic$k" netns "$ns" ||
				die "veth p${pc}n$k - nic$k"
			ip -n "$fab" link set "p${pc}n$k" mtu "$MTU" master "sw$sw" up ||
				die "MTU $MTU on p${pc}n$k"
			ip -n "$ns" link set "nic$k" mtu "$MTU" || die "MTU $MTU on nic$k in $ns"
			ip -n "$ns" link set "nic$k" address "$(printf '02:18:00:%02x:00:%02x' "$sw" $((pc + 1)))"
			ip -n "$ns" addr add "198.18.$sw.$((pc + 1))/24" dev "nic$k" || die "address of nic$k in $ns"
			ip -n "$ns" link set "nic$k" up
			shape "$ns" "nic$k"
			shape "$fab" "p${pc}n$k"
			printf '%d %d nic%d 198.18.%d.%d 02:18:00:%02x:00:%02x\n' "$pc" "$k" "$k" "$sw" \
				$((pc + 1)) "$sw" $((pc + 1)) >>"$DIR/addrs"
		done < <(echo "$nics" | awk -v p="$pc" '$1 == p { print $2, $3 }')
	done
	if [ -n "$LOSS" ]; then
		IFS=: read -r pc k pct <<<"$LOSS"
		set_loss "$pc" "$k" "${pct:-}"
	fi
	trap - EXIT
	echo "$PREFIX"
}

cmd_status() {
	local ns f
	resolve_dir
	[ -f "$DIR/state" ] || die "$DIR: no cluster there"
	cat "$DIR/env"
	while read -r ns; do
		if [ ! -e "/run/netns/$ns" ]; then
			echo "$ns: missing"
			continue
		fi
		echo "$ns:"
		ip -n "$ns" -br addr show | grep -v '^lo ' | sed 's/^/  /'
		tc -n "$ns" qdisc show | grep 'tbf\|netem' | sed 's/^/  /'
		ip netns exec "$ns" nft list table inet fnntb_loss 2>/dev/null | grep drop | sed 's/^[ \t]*/  loss: /'
	done <"$DIR/state"
	for f in "$DIR"/delay.*.*; do
		[ -f "$f" ] && echo "delay line of PC/NIC ${f##*/delay.}: pid $(cat "$f")"
	done
}

cmd_link() {
	local pc=${ARGS[1]:-} k=${ARGS[2]:-} st=${ARGS[3]:-}
	resolve_dir
	[ "$st" = up ] || [ "$st" = down ] || usage
	[ -n "$(nic_switch "$pc" "$k")" ] || die "link: PC $pc has no NIC $k"
	ip -n "$(pcns "$pc")" link set "nic$k" "$st" || die "link set nic$k $st"
}

# The delay line: relays frames between two interfaces (argv 1, 2) of the namespace it runs
# in, those from the first delayed by argv 3 seconds, those from the second by argv 4; the
# frames keep their virtio-net header (GSO and checksum state).  It writes argv 5 once its
# sockets are bound and exits when argv 6 is gone (checked every 0.5 s) or an interface is.
DELAY_LINE='
import collections, os, select, socket, sys, time
a, b, dab, dba, ready, alive = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6]
def sock(ifname):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.setsockopt(263, 15, 1)  # SOL_PACKET, PACKET_VNET_HDR
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
    s.bind((ifname, 3))  # ETH_P_ALL
    s.setblocking(False)
    return s
A, B = sock(a), sock(b)
open(ready, "w").close()
lines = {A: (B, dab, collections.deque()), B: (A, dba, collections.deque())}
check = 0.0
while True:
    now = time.monotonic()
    wait = 0.5
    for out, d, q in lines.values():
        while q and q[0][0] <= now:
            try:
                out.send(q.popleft()[1])
            except (BlockingIOError, OSError):
                pass  # a full queue drops, like a link
        if q:
            wait = min(wait, q[0][0] - now)
    if now - check >= 0.5:
        check = now
        if not os.path.exists(alive):
            sys.exit(0)
    r, _, _ = select.select([A, B], [], [], max(wait, 0))
    for s in r:
        out, d, q = lines[s]
        for _ in range(512):
            try:
                data, addr = s.recvfrom(70000)
            except BlockingIOError:
                break
            except OSError:  # down (fnn-cluster.sh link) or gone
                try:
                    socket.if_nametoindex(a if s is A else b)
                except OSError:
                    sys.exit(0)
                break
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            if d > 0:
                q.append((time.monotonic() + d, data))
            else:
                try:
                    out.send(data)
                except (BlockingIOError, OSError):
                    pass
'

# delay_s DELAY: seconds of a tc time (0, 500us, 10ms, 1s); fails on anything else.
delay_s() {
	echo "$1" | awk '$0 ~ /^[0-9.]+(us|ms|s)?$/ { v = $0 + 0; m = 0.001
		if ($0 ~ /us$/) m = 1e-6; else if ($0 ~ /[0-9]s$/) m = 1; print v * m; ok = 1 }
		END { exit !ok }'
}

# delay_end PC NIC: ends PC's NIC's delay line if it has one and puts its veth end back on
# its bridge.
delay_end() {
	local f=$DIR/delay.$1.$2 pid fab i sw
	[ -f "$f" ] || return 0
	fab=$(fabns)
	pid=$(cat "$f")
	rm -f "$f"
	# (the PID only if it is still our relay: its command line names the pid file)
	if [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$f"; then
		kill "$pid" 2>/dev/null
		for ((i = 0; i < 50; i++)); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
	fi
	sw=$(nic_switch "$1" "$2")
	ip -n "$fab" link del "q$1n$2" 2>/dev/null
	ip -n "$fab" link set "p$1n$2" master "sw$sw" 2>/dev/null
}

# delay_line PC NIC OUT_S IN_S: PC's NIC reaches its bridge through a delay line: its veth end
# pNnK leaves the bridge and a new veth pair qNnK - rNnK (rNnK on the bridge) takes its
# place; the relay between pNnK and qNnK delays frames from the PC by OUT_S seconds and
# frames to it by IN_S.  The tbf qdiscs stay where they were (nicK and pNnK).
delay_line() {
	local pc=$1 k=$2 fab py pid i sw f=$DIR/delay.$1.$2
	fab=$(fabns)
	sw=$(nic_switch "$pc" "$k")
	py=/usr/bin/python3
	[ -x "$py" ] || py=$(command -v python3) || die "shape: no netem in this kernel and no python3 for a delay line"
	local mtu
	mtu=$(sed -n 's/^MTU=//p' "$DIR/env")
	ip -n "$fab" link add "q${pc}n$k" mtu "${mtu:-1500}" type veth peer name "r${pc}n$k" \
		mtu "${mtu:-1500}" || die "veth q${pc}n$k"
	ip -n "$fab" link set "r${pc}n$k" master "sw$sw" up
	ip -n "$fab" link set "q${pc}n$k" up
	ip -n "$fab" link set "p${pc}n$k" nomaster
	rm -f "$f.ready"
	echo "" >"$f"
	ip netns exec "$fab" "$py" -c "$DELAY_LINE" "p${pc}n$k" "q${pc}n$k" "$3" "$4" "$f.ready" "$f" \
		</dev/null >/dev/null 2>&1 &
	pid=$!
	echo "$pid" >"$f"
	for ((i = 0; i < 100; i++)); do
		[ -e "$f.ready" ] && break
		[ -e "/proc/$pid" ] || break
		sleep 0.05
	done
	[ -e "$f.ready" ] || { delay_end "$pc" "$k"; die "shape: the delay line of PC $pc NIC $k did not start"; }
	rm -f "$f.ready"
}

# netem_shape NS DEV DELAY: netem delaying DEV's egress by DELAY as root, tbf at RATE (as
# shape()) its child; fails where the kernel has no netem.
netem_shape() {
	local bps burst
	bps=$(rate_bytes "$RATE") || die "bad rate '$RATE' (e.g. 100mbit)"
	burst=$((bps / 250))
	[ "$burst" -ge 65536 ] || burst=65536
	tc -n "$1" qdisc del dev "$2" root 2>/dev/null
	tc -n "$1" qdisc add dev "$2" root handle 1: netem delay "$3" 2>/dev/null &&
		tc -n "$1" qdisc add dev "$2" parent 1:1 handle 10: tbf rate "$RATE" burst "$burst" latency 20ms
}

# cmd_shape: NIC K of PC N shaped at another RATE, both directions (both veth ends), and with
# DELAY (OUT/IN, or one for both) delayed: netem where the kernel has it, else a delay line.
cmd_shape() {
	local pc=${ARGS[1]:-} k=${ARGS[2]:-} dl=${ARGS[4]:-} out="" in="" os is
	[ -n "${ARGS[3]:-}" ] || usage
	RATE=${ARGS[3]}
	resolve_dir
	[ -n "$(nic_switch "$pc" "$k")" ] || die "shape: PC $pc has no NIC $k"
	rate_bytes "$RATE" >/dev/null || die "bad rate '$RATE' (e.g. 100mbit)"
	if [ -n "$dl" ]; then
		out=${dl%%/*} in=${dl#*/}
		os=$(delay_s "$out") && is=$(delay_s "$in") || die "shape: bad delay '$dl' (e.g. 5ms or 10ms/0)"
	fi
	delay_end "$pc" "$k"
	shape "$(pcns "$pc")" "nic$k"
	shape "$(fabns)" "p${pc}n$k"
	[ -n "$dl" ] || return 0
	awk -v a="$os" -v b="$is" 'BEGIN { exit !(a > 0 || b > 0) }' || return 0
	if [ "${FNN_TB_DELAY:-}" != line ] &&
		{ awk -v a="$os" 'BEGIN { exit !(a == 0) }' || netem_shape "$(pcns "$pc")" "nic$k" "$out"; } &&
		{ awk -v a="$is" 'BEGIN { exit !(a == 0) }' || netem_shape "$(fabns)" "p${pc}n$k" "$in"; }; then
		return 0
	fi
	# no netem here (or FNN_TB_DELAY=line): plain tbf again, and the delay line
	shape "$(pcns "$pc")" "nic$k"
	shape "$(fabns)" "p${pc}n$k"
	delay_line "$pc" "$k" "$os" "$is"
}

case "$CMD" in
up) cmd_up ;;
shape) cmd_shape ;;
down) cmd_down ;;
status) cmd_status ;;
link) cmd_link ;;
loss) resolve_dir; [ ${#ARGS[@]} -eq 4 ] || usage; set_loss "${ARGS[1]}" "${ARGS[2]}" "${ARGS[3]}" ;;
ns) resolve_dir; [ -n "${ARGS[1]:-}" ] || usage; pcns "${ARGS[1]}" ;;
*) usage ;;
esac

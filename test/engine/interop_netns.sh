#!/bin/bash
# The native engine and usrsctp between two namespace hosts joined by two links, 1% of the UDP
# datagrams dropped at each host (nft): native -> usrsctp and usrsctp -> native, then native
# -> native spraying over both links (CMT: packets arrive reordered) with CRC32c. Each run
# moves 24 MiB in 1 MiB messages and one 64 MiB message, every byte checked, and ends with
# the sender's CLOSE and ABORT. The first run is captured and must decode as SCTP in tshark
# (checksums verified) without malformed packets or expert errors, if tshark and ethtool are
# installed.
. "$(dirname "$0")/../common.sh"
need_netns
command -v nft >/dev/null || skip "nft missing"
x=./engine_netxfer
[ -x "$x" ] || die "$x not built"
ns_add a; ns_add b
a=$(ns_name a) b=$(ns_name b)
ns_link "$a" a1 198.18.1.1/24 "$b" b1 198.18.1.2/24
ns_link "$a" a2 198.18.2.1/24 "$b" b2 198.18.2.2/24
dir=$(mktemp -d)
trap 'ns_cleanup; rm -rf "$dir"' EXIT
for ns in "$a" "$b"; do
	ip netns exec "$ns" nft add table inet loss || skip "nft cannot make tables here"
	ip netns exec "$ns" nft add chain inet loss in '{ type filter hook input priority 0; }'
	ip netns exec "$ns" nft add rule inet loss in meta l4proto udp numgen random mod 100 \< 1 \
		counter drop
done

# run NAME SENDER_ENGINE RECEIVER_ENGINE [ARGS...]
run() {
	local name=$1 se=$2 re=$3 spid rpid src rrc
	shift 3
	rm -f "$dir"/a "$dir"/b
	bg ip netns exec "$b" env SCTPT_BACKEND="$re" SCTPE_DEBUG=1 timeout 150 $x --addrs 198.18.1.2,198.18.2.2 \
		--card-out "$dir/b" --card-in "$dir/a" --recv $((24 << 20)) --big $((64 << 20)) \
		--timeout 140 "$@" >"$dir/$name.recv" 2>&1
	rpid=$!
	bg ip netns exec "$a" env SCTPT_BACKEND="$se" SCTPE_STATS=1 SCTPE_DEBUG=1 timeout 150 $x \
		--addrs 198.18.1.1,198.18.2.1 --card-out "$dir/a" --card-in "$dir/b" \
		--send $((24 << 20)) --big $((64 << 20)) --timeout 140 "$@" >"$dir/$name.send" 2>&1
	spid=$!
	wait $spid; src=$?
	wait $rpid; rrc=$?
	echo "--- $name: $se -> $re $*"
	cat "$dir/$name.send" "$dir/$name.recv"
	[ $src -eq 0 ] || die "$name: sender failed ($src)"
	[ $rrc -eq 0 ] || die "$name: receiver failed ($rrc)"
	grep -q "intact: yes; peer closed its endpoint" "$dir/$name.recv" || die "$name: not intact"
}

cap=""
if command -v tshark >/dev/null && command -v ethtool >/dev/null; then
	# datagrams cut from UDP GSO batches before the capture sees them, as a wire would
	for d in a1 a2; do ip netns exec "$a" ethtool -K $d tx-udp-segmentation off >/dev/null; done
	for d in b1 b2; do ip netns exec "$b" ethtool -K $d tx-udp-segmentation off >/dev/null; done
	ip netns exec "$b" tshark -q -i b1 -i b2 -f udp -s 200 -w "$dir/cap.pcapng" 2>"$dir/tshark.err" &
	cap=$!
	_pids+=($cap)
	sleep 2 # tshark takes a while to start capturing
fi
run native_to_usrsctp native usrsctp --crc
if [ -n "$cap" ]; then
	sleep 1
	kill -INT $cap; wait $cap 2>/dev/null
fi
run usrsctp_to_native usrsctp native
run native_cmt native native --cmt --crc
for ns in "$a" "$b"; do ip netns exec "$ns" nft list ruleset | grep -o 'counter packets [0-9]*'; done

if [ -n "$cap" ]; then
	dec=""
	for p in $(tshark -r "$dir/cap.pcapng" -T fields -e udp.srcport 2>/dev/null | sort -u); do
		dec="$dec -d udp.port==$p,sctp"
	done
	# the core's path probes share the port: 12 bytes whose SCTP ports would be 0
	n=$(tshark -r "$dir/cap.pcapng" $dec -Y 'sctp.srcport != 0' 2>/dev/null | wc -l)
	bad=$(tshark -r "$dir/cap.pcapng" $dec -o sctp.checksum:CRC-32C \
		-Y 'sctp.srcport != 0 && (_ws.malformed || _ws.expert.severity >= error ||
		sctp.checksum.status == 0)' 2>/dev/null | wc -l)
	types=$(tshark -r "$dir/cap.pcapng" $dec -Y 'sctp.srcport != 0' -T fields \
		-e sctp.chunk_type 2>/dev/null |
		tr ',' '\n' | sort -n | uniq -c | tr '\n' ' ')
	echo "tshark: $n SCTP packets decoded, $bad malformed or with errors; chunk types: $types"
	[ "$n" -gt 1000 ] || die "tshark decoded only $n SCTP packets"
	[ "$bad" -eq 0 ] || {
		tshark -r "$dir/cap.pcapng" $dec -o sctp.checksum:CRC-32C \
			-Y 'sctp.srcport != 0 && (_ws.malformed || _ws.expert.severity >= error ||
			sctp.checksum.status == 0)' -V 2>/dev/null | head -80
		die "tshark found $bad bad packets"
	}
else
	echo "tshark or ethtool not installed: capture check left out"
fi
echo "PASS"

#!/usr/bin/env bash
# Point-to-point (btl_p2p) on 2, 4 and 8 ranks over btl self,tcp and self,sctp: same answers.
. "$(dirname "$0")/btl_common.sh"
compare_btls 2 ./btl_p2p
compare_btls 4 ./btl_p2p $((1 << 20))
# shared memory on the node, sctp configured too (what users run on clusters; vader carries
# everything here, so sctp must have loaded and started beside it)
out=$(run_btl vader,sctp 4 --mca btl_base_verbose 10 ./btl_p2p $((1 << 20))) ||
	{ echo "$out"; die "btl self,vader,sctp failed"; }
[ "$(echo "$out" | grep '^CHECK')" = "$LAST_TCP_CHECKS" ] || { echo "$out"; die "self,vader,sctp: answers differ"; }
[ "$(echo "$out" | grep -c 'btl sctp: bound ')" -eq 4 ] || { echo "$out"; die "self,vader,sctp: btl sctp did not start on every rank"; }
echo "self,vader,sctp np=4: same answers, sctp started on every rank"
compare_btls 8 ./btl_p2p $((256 << 10))
# the core's shared memory between same-host peers (SCTPT_SHM=1, the core's default), under ob1
out=$(run_btl sctp 4 -x SCTPT_SHM=1 ./btl_p2p $((1 << 20))) ||
	{ echo "$out"; die "sctp with the core's shared memory failed"; }
[ "$(echo "$out" | grep '^CHECK')" = "$(run_btl tcp 4 ./btl_p2p $((1 << 20)) | grep '^CHECK')" ] ||
	{ echo "$out"; die "sctp with the core's shared memory: answers differ from tcp"; }
echo "sctp np=4 with the core's shared memory: same answers as tcp"
# the encapsulation port range: both ranks' cards carry a UDP port inside it
base=$((20000 + RANDOM % 20000))
out=$(run_btl sctp 2 --mca btl_sctp_udp_port_min $base --mca btl_sctp_udp_port_range 50 \
	--mca btl_base_verbose 20 ./btl_p2p 65536) || { echo "$out"; die "udp port range run failed"; }
ports=$(echo "$out" | sed -n 's/.*btl sctp: bound .*card "sctpt1 \([0-9]*\) .*/\1/p')
[ "$(echo "$ports" | wc -w)" -eq 2 ] || { echo "$out"; die "port range: no cards in the verbose output"; }
for p in $ports; do
	[ "$p" -ge $base ] && [ "$p" -lt $((base + 50)) ] || die "port range: UDP port $p outside [$base, $((base + 49))]"
done
echo "udp_port_min=$base udp_port_range=50: ports" $ports
# messages were spread over streams (control on 1, matching traffic hashed over the rest) by
# reading ob1's headers, which the component checked are the ones it knows
echo "$out" | grep -q 'btl sctp: streams chosen from ob1 [0-9]*\.[0-9]* headers' ||
	{ echo "$out"; die "the ob1 header check did not pass"; }
used=$(echo "$out" | grep -m1 'btl sctp: stats for' | sed 's/.*msgs per stream://' | wc -w)
[ "$used" -ge 3 ] || { echo "$out" | grep 'btl sctp: stats'; die "only $used streams used"; }
echo "streams used by rank 0 -> 1: $used ($(echo "$out" | grep -m1 'btl sctp: stats for' | sed 's/.*msgs per stream: *//'))"
# large contiguous messages went by RGET over the streams (the receiver's core placing them in
# the receive buffer), and ob1's send pipeline (btl_sctp_rget 0) gives the same answers
gets=$(echo "$out" | sed -n 's/.*btl sctp: \([0-9]*\) gets over SCTP done, \([0-9]*\) served.*/\1 \2/p')
[ "$(echo "$gets" | wc -l)" -eq 2 ] || { echo "$out" | grep 'btl sctp: '; die "no RGET statistics from both ranks"; }
echo "$gets" | while read -r done served; do
	[ "$done" -gt 0 ] && [ "$served" -gt 0 ] || die "a rank did no RGET over SCTP (done $done, served $served)"
done || exit 1
echo "RGET over SCTP, gets done and served per rank:" $gets
out=$(run_btl sctp 2 --mca btl_sctp_rget 0 --mca btl_base_verbose 20 ./btl_p2p) ||
	{ echo "$out"; die "btl_sctp_rget 0 failed"; }
[ "$(echo "$out" | grep '^CHECK')" = "$(run_btl tcp 2 ./btl_p2p | grep '^CHECK')" ] ||
	{ echo "$out"; die "btl_sctp_rget 0: answers differ from tcp"; }
! echo "$out" | grep -q 'gets over SCTP' || die "btl_sctp_rget 0 still gets over SCTP"
echo "btl_sctp_rget 0 (ob1's send pipeline): same answers as tcp"

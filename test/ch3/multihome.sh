#!/usr/bin/env bash
# Multihoming through the thesis's settings. (1) In one private network namespace with two
# interfaces, each rank binds both addresses -- from MPICH_SCTP_MULTIHOME_FILE, then from
# MPICH_SCTP_ADDRS with CMT on -- and btl_p2p answers as over loopback. (2) Two namespaces
# joined by two veth links, one rank in each (Hydra's MPMD form with `ip netns exec`; PMI
# goes through the inherited descriptor): a link goes down while ch3_stream moves checked
# data; the run finishes over the other path and both ranks report the path down.
. "$(dirname "$0")/ch3_common.sh"
need_netns
p2p=$(ch3_prog btl_p2p)
ref=$(run_ch3 2 "$p2p") || { echo "$ref"; die "btl_p2p on loopback failed"; }
ref=$(echo "$ref" | grep '^CHECK')

ns_add mh
ns=$(ns_name mh)
ip -n "$ns" link add v1a type veth peer name v1b || die "veth"
ip -n "$ns" link add v2a type veth peer name v2b || die "veth"
ip -n "$ns" addr add 10.71.1.1/24 dev v1a
ip -n "$ns" addr add 10.71.2.1/24 dev v2a
for i in v1a v1b v2a v2b; do ip -n "$ns" link set "$i" up; done
conf=$(mktemp)
trap 'rm -f "$conf"; ns_cleanup' EXIT
printf 'otherhost 10.99.0.1\nmh-host 10.71.1.1 10.71.2.1\n' >"$conf"

check_run() { # WHAT OUTPUT
	[ "$(echo "$2" | grep -c 'ch3:sctp: rank [01] bound, .* card "sctpt1 [0-9]* [0-9]* 10.71.1.1 10.71.2.1"')" -eq 2 ] ||
		{ echo "$2"; die "$1: the two addresses were not bound by both ranks"; }
	[ "$(echo "$2" | grep '^CHECK')" = "$ref" ] || { echo "$2"; die "$1: answers differ from loopback"; }
	echo "$1: $(echo "$2" | grep -m1 -o 'card "[^"]*"'), same answers as over loopback"
}
out=$(MPICH_SCTP_VERBOSE=1 MPICH_SCTP_MULTIHOME_FILE=$conf MPICH_SCTP_MULTIHOME_HOST=mh-host \
	ip netns exec "$ns" timeout -k 10 "$RUN_TIMEOUT" "$MPIEXEC" -launcher fork -n 2 "$p2p" 2>&1) ||
	{ echo "$out"; die "MPICH_SCTP_MULTIHOME_FILE: run failed"; }
check_run "MPICH_SCTP_MULTIHOME_FILE (mh-host 10.71.1.1 10.71.2.1)" "$out"
out=$(MPICH_SCTP_VERBOSE=1 MPICH_SCTP_ADDRS=10.71.1.1,10.71.2.1 MPICH_SCTP_CMT=1 \
	ip netns exec "$ns" timeout -k 10 "$RUN_TIMEOUT" "$MPIEXEC" -launcher fork -n 2 "$p2p" 2>&1) ||
	{ echo "$out"; die "MPICH_SCTP_ADDRS + CMT: run failed"; }
check_run "MPICH_SCTP_ADDRS=10.71.1.1,10.71.2.1, MPICH_SCTP_CMT=1" "$out"

# (2) failover between two namespaces
ns_add a
ns_add b
a=$(ns_name a)
b=$(ns_name b)
ns_link "$a" w1a 10.72.1.1/24 "$b" w1b 10.72.1.2/24
ns_link "$a" w2a 10.72.2.1/24 "$b" w2b 10.72.2.2/24
printf 'ha 10.72.1.1 10.72.2.1\nhb 10.72.1.2 10.72.2.2\n' >"$conf"
stream=$(ch3_prog ch3_stream)
(sleep 1.5; ip -n "$a" link set w1a down) &
start=$SECONDS
out=$(MPICH_SCTP_VERBOSE=1 MPICH_SCTP_MULTIHOME_FILE=$conf timeout -k 10 "$RUN_TIMEOUT" \
	"$MPIEXEC" -launcher fork -n 1 -env MPICH_SCTP_MULTIHOME_HOST ha ip netns exec "$a" "$stream" 4 : \
	-n 1 -env MPICH_SCTP_MULTIHOME_HOST hb ip netns exec "$b" "$stream" 4 2>&1); rc=$?
wait
[ $rc -eq 0 ] || { echo "$out"; die "failover: status $rc"; }
echo "$out" | grep -q 'ch3_stream: .* all checked' || { echo "$out"; die "failover: no result"; }
echo "$out" | grep -q 'ch3:sctp: rank 0: path 10.72.1.1 -> 10.72.1.2 .* down' ||
	{ echo "$out"; die "failover: rank 0 did not report its path over w1a down"; }
echo "$out" | grep -q 'ch3:sctp: rank 1: path 10.72.1.2 -> 10.72.1.1 .* down' ||
	{ echo "$out"; die "failover: rank 1 did not report its path over w1a down"; }
echo "failover after w1a went down: $(echo "$out" | grep -o 'ch3_stream: .*') ($((SECONDS - start)) s)"
echo "$out" | grep 'path .* down' | sed 's/^/  /'

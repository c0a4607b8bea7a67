#!/usr/bin/env bash
# Interface selection as btl tcp documents it: btl_sctp_if_include/if_exclude list device names
# and CIDR networks; a network stands for every device with an address in it, and a device
# brings all its IPv4 addresses. Duplicates are bound once; invalid entries are ignored with a
# message; if_include with if_exclude is refused with a message (the job then fails,
# promptly). On loopback, then (root) in a private network namespace with a dual-stack device,
# where Open MPI's opal_ifmatches alone would see only the IPv6 address.
. "$(dirname "$0")/btl_common.sh"

# card_of [ip netns exec NS] -- OPTIONS...: the addresses of the business card rank 0 printed
card_of() {
	local pre=() out
	while [ "$1" != -- ]; do pre+=("$1"); shift; done
	shift
	out=$("${pre[@]}" timeout -k 10 "$RUN_TIMEOUT" "$MPIRUN" "${MPI_BASE_OPTS[@]}" -np 2 \
		--mca btl self,sctp --mca btl_base_verbose 10 "$@" ./btl_p2p 1024 2>&1) ||
		{ echo "$out" >&2; return 1; }
	# the addresses of the card (a same-host " shm=<token>" after them is not an address)
	echo "$out" | sed -n 's/.*btl sctp: bound .*card "sctpt1 [0-9]* [0-9]* \([^"]*\)".*/\1/p' | head -n 1 |
		sed 's/ shm=[^ ]*//'
}

# expect WANT [ip netns exec NS] -- OPTIONS...: the card's addresses, in any order, are WANT
expect() {
	local want=$1 got label a seen=0; shift
	for a in "$@"; do
		[ $seen -eq 1 ] && label+=" $a"
		[ "$a" = -- ] && seen=1
	done
	label=${label:- defaults}
	got=$(card_of "$@") || die "$label: run failed"
	[ "$(echo $got | tr ' ' '\n' | sort | xargs)" = "$(echo $want | tr ' ' '\n' | sort | xargs)" ] ||
		die "$label: bound \"$got\", expected \"$want\""
	echo "$label: $got"
}

for spec in 127.0.0.1/8 lo 127.0.0.0/8,lo 127.0.0.1/32; do
	expect 127.0.0.1 -- --mca btl_sctp_if_include "$spec"
done

out=$(timeout -k 10 60 "$MPIRUN" "${MPI_BASE_OPTS[@]}" -np 2 --mca btl self,sctp \
	--mca btl_sctp_if_include lo --mca btl_sctp_if_exclude eth0 ./btl_p2p 1024 2>&1)
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || { echo "$out"; die "if_include + if_exclude: status $rc"; }
echo "$out" | grep -q 'btl sctp: btl_sctp_if_include ("lo") and btl_sctp_if_exclude ("eth0") are mutually exclusive' ||
	{ echo "$out"; die "if_include + if_exclude: no message"; }
echo "if_include + if_exclude: refused (status $rc)"

need_netns
ns_add if >/dev/null
ns=$(ns_name if)
ip -n "$ns" link add v1a type veth peer name v1b || die "veth"
ip -n "$ns" link add v2a type veth peer name v2b || die "veth"
for i in v1a v1b v2a v2b; do ip -n "$ns" link set "$i" up; done
# v1a: dual stack, its IPv6 address first in Open MPI's interface list; and a second network
# (labelled: Open MPI reads IPv4 addresses by name, so it sees an unlabelled one as the first)
ip -n "$ns" addr add fd72:1::1/64 dev v1a nodad || die "IPv6 address"
ip -n "$ns" addr add 10.72.1.1/24 dev v1a
ip -n "$ns" addr add 10.72.3.1/24 dev v1a label v1a:1
ip -n "$ns" addr add 10.72.2.1/24 dev v2a
in_ns=(ip netns exec "$ns")

expect "10.72.1.1 10.72.3.1" "${in_ns[@]}" -- --mca btl_sctp_if_include 10.72.1.0/24
expect "10.72.1.1 10.72.3.1" "${in_ns[@]}" -- --mca btl_sctp_if_include v1a
expect "10.72.1.1 10.72.3.1" "${in_ns[@]}" -- --mca btl_sctp_if_include 10.72.3.1/32
expect 10.72.2.1 "${in_ns[@]}" -- --mca btl_sctp_if_include 10.72.2.7/24
expect 10.72.2.1 "${in_ns[@]}" -- --mca btl_sctp_if_include 10.72.1.1,v2a
expect "10.72.1.1 10.72.3.1 10.72.2.1" "${in_ns[@]}" -- --mca btl_sctp_if_include 10.0.0.0/8
# the default exclusion (127.0.0.1/8: the loopback device), then one replacing it
expect "10.72.1.1 10.72.3.1 10.72.2.1" "${in_ns[@]}" --
expect "127.0.0.1 10.72.2.1" "${in_ns[@]}" -- --mca btl_sctp_if_exclude 10.72.3.0/24
expect 127.0.0.1 "${in_ns[@]}" -- --mca btl_sctp_if_exclude v1a,10.72.2.0/24

#!/usr/bin/env bash
# Multihoming: inside a private network namespace with two interfaces (veth pairs, nothing
# leaves the namespace), every rank binds both addresses -- once chosen by btl_sctp_if_include
# with concurrent multipath transfer on, once from a thesis-style btl_sctp_config_file -- and
# btl_p2p must print the same CHECK lines as over btl tcp on loopback.
. "$(dirname "$0")/btl_common.sh"
need_netns
ns_add mh >/dev/null
ns="${NS_PREFIX}-mh"
ip -n "$ns" link add v1a type veth peer name v1b || die "veth"
ip -n "$ns" link add v2a type veth peer name v2b || die "veth"
ip -n "$ns" addr add 10.71.1.1/24 dev v1a
ip -n "$ns" addr add 10.71.2.1/24 dev v2a
for i in v1a v1b v2a v2b; do ip -n "$ns" link set "$i" up; done

ref=$(run_btl tcp 2 ./btl_p2p) || { echo "$ref"; die "btl_p2p over tcp failed"; }
ref=$(echo "$ref" | grep '^CHECK')

# check_run WHAT OUTPUT: both addresses bound, same answers as tcp
check_run() {
	echo "$2" | grep -q 'btl sctp: bound .*card "sctpt1 [0-9]* [0-9]* 10.71.1.1 10.71.2.1\( shm=[^"]*\)\?"' ||
		{ echo "$2"; die "$1: the two addresses were not bound"; }
	[ "$(echo "$2" | grep '^CHECK')" = "$ref" ] || { echo "$2"; die "$1: answers differ from tcp"; }
	echo "$1: $(echo "$2" | grep -m1 -o 'card "[^"]*"'), same answers as tcp"
}

out=$(ip netns exec "$ns" timeout -k 10 "$RUN_TIMEOUT" "$MPIRUN" "${MPI_BASE_OPTS[@]}" -np 2 \
	--mca btl self,sctp --mca btl_sctp_if_include v1a,v2a --mca btl_sctp_cmt 1 \
	--mca btl_base_verbose 10 ./btl_p2p 2>&1) || { echo "$out"; die "if_include v1a,v2a + cmt: failed"; }
check_run "if_include v1a,v2a, cmt on" "$out"

conf=$(mktemp)
# (no '#' comment line: the core's parser rejects those as "line too long", reported)
printf 'otherhost 10.99.0.1\nmh-host 10.71.1.1 10.71.2.1\n' >"$conf"
out=$(ip netns exec "$ns" timeout -k 10 "$RUN_TIMEOUT" "$MPIRUN" "${MPI_BASE_OPTS[@]}" \
	-np 2 --mca btl self,sctp --mca btl_sctp_config_file "$conf" \
	--mca btl_sctp_config_host mh-host --mca btl_base_verbose 10 ./btl_p2p 2>&1)
rc=$?
rm -f "$conf"
[ $rc -eq 0 ] || { echo "$out"; die "config_file: failed"; }
echo "$out" | grep -q 'btl sctp: bound from the config file, card "sctpt1 [0-9]* [0-9]* 10.71.1.1 10.71.2.1\( shm=[^"]*\)\?"' ||
	{ echo "$out"; die "config_file was not used"; }
[ "$(echo "$out" | grep '^CHECK')" = "$ref" ] || { echo "$out"; die "config_file: answers differ from tcp"; }
echo "config_file (mh-host 10.71.1.1 10.71.2.1): same answers as tcp"

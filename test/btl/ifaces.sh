#!/usr/bin/env bash
# Interface selection as btl tcp does it: device names and CIDR networks in
# btl_sctp_if_include, duplicates bound once, and if_include with if_exclude refused with a
# message (the job then fails, promptly). Loopback only.
. "$(dirname "$0")/btl_common.sh"
sctp_usable || skip "mca_btl_sctp.so lacks the SCTP core (libsctpt)"

# card_of OPTIONS...: the business card rank 0 printed
card_of() {
	local out
	out=$(timeout -k 10 "$RUN_TIMEOUT" "$MPIRUN" "${MPI_BASE_OPTS[@]}" -np 2 --mca btl self,sctp \
		--mca btl_base_verbose 10 "$@" ./btl_p2p 1024 2>&1) || { echo "$out" >&2; return 1; }
	echo "$out" | sed -n 's/.*btl sctp: bound .*card "\(sctpt1 [^"]*\)".*/\1/p' | head -n 1
}

for spec in 127.0.0.1/8 lo 127.0.0.0/8,lo; do
	card=$(card_of --mca btl_sctp_if_include "$spec") || die "if_include=$spec: run failed"
	[ "$(echo "$card" | cut -d' ' -f4-)" = 127.0.0.1 ] || die "if_include=$spec: card \"$card\""
	echo "if_include=$spec: $card"
done

out=$(timeout -k 10 60 "$MPIRUN" "${MPI_BASE_OPTS[@]}" -np 2 --mca btl self,sctp \
	--mca btl_sctp_if_include lo --mca btl_sctp_if_exclude eth0 ./btl_p2p 1024 2>&1)
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || { echo "$out"; die "if_include + if_exclude: status $rc"; }
echo "$out" | grep -q 'btl sctp: btl_sctp_if_include ("lo") and btl_sctp_if_exclude ("eth0") are mutually exclusive' ||
	{ echo "$out"; die "if_include + if_exclude: no message"; }
echo "if_include + if_exclude: refused (status $rc)"

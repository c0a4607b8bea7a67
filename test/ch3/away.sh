#!/usr/bin/env bash
# A rank away from MPI (computing, no MPI call) for longer than SCTP waits for an unanswered
# peer: test/btl's btl_away, rank 1 sleeping 8 s while rank 0 sends it an eager message, puts
# into its window under a passive-target lock and sends it a 4 MiB (rendezvous) message. The
# core's keeper thread answers for rank 1 meanwhile: the job must end normally with every byte
# right, on ch3:sctp with the default timeouts and with short ones (4 retransmissions, RTO at
# most 400 ms, heartbeats every 300 ms: given up after about 2 s), and on ch3:hybrid (the put
# as RDMA) with the short ones. Then ch3:sctp with the short timeouts and no keeper
# (SCTPT_KEEPER_MS=0): rank 0 must lose rank 1 and end the job saying so (the test can tell).
. "$(dirname "$0")/hybrid_common.sh"
AWAY=8
FAST=(MPICH_SCTP_ASSOC_MAX_RETRANS=4 MPICH_SCTP_RTO_MAX=400 MPICH_SCTP_HB_INTERVAL=300)
want="CHECK rank 1 away $AWAY s: eager, put and rendezvous data intact"
if have_ref; then
	out=$(run_ref 2 "$(ch3_prog btl_away "$REF_MPICC" "$BIN/ref")" $AWAY) ||
		{ echo "$out"; die "Debian's MPICH: failed"; }
	[ "$(echo "$out" | grep '^CHECK')" = "$want" ] || { echo "$out"; die "Debian's MPICH: not $want"; }
fi
check() { # WHAT PREFIX ENV...
	local what=$1 prefix=$2 out start=$SECONDS
	shift 2
	out=$(env "$@" timeout -k 10 "$RUN_TIMEOUT" "$prefix/bin/mpiexec" -launcher fork -n 2 \
		"$(hybrid_prog btl_away "$prefix")" $AWAY 2>&1) || { echo "$out"; die "$what: failed"; }
	[ "$(echo "$out" | grep '^CHECK')" = "$want" ] || { echo "$out"; die "$what: not $want"; }
	echo "$what: ended after $((SECONDS - start)) s, data intact"
}
check "ch3:sctp, default timeouts" "$SCTP"
check "ch3:sctp, short timeouts" "$SCTP" "${FAST[@]}"
check "ch3:hybrid, short timeouts" "$HYB" "${FAST[@]}"
start=$SECONDS
out=$(env "${FAST[@]}" SCTPT_KEEPER_MS=0 timeout -k 10 "$RUN_TIMEOUT" "$SCTP/bin/mpiexec" \
	-launcher fork -n 2 "$(hybrid_prog btl_away "$SCTP")" $AWAY 2>&1); rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && echo "$out" | grep -q 'rank 0 lost the connection to rank 1' ||
	{ echo "$out"; die "without the keeper: status $rc and rank 1 not lost (the test cannot tell)"; }
echo "without the keeper: status $rc after $((SECONDS - start)) s: $(echo "$out" | grep -m1 'lost the connection')"
echo "$want"

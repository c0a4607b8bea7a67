#!/usr/bin/env bash
# A rank away from MPI (computing) for several times the time in which SCTP gives up on an
# unanswered peer: the job must finish with the data intact, over tcp (osc pt2pt) and over
# sctp (osc rdma). Over sctp the give-up time is shortened (4 retransmissions, RTO at most
# 400 ms, heartbeats every 300 ms: about 2 s) and the rank stays away 6 s. Then once without
# the core's keeper thread (SCTPT_KEEPER_MS=0), where rank 0 must lose rank 1: the test can
# tell.
. "$(dirname "$0")/btl_common.sh"
require_sctp
FAST=(--mca btl_sctp_assoc_max_retrans 4 --mca btl_sctp_rto_max 400 --mca btl_sctp_hb_interval 300)
SCTP=(--mca osc rdma --mca osc_rdma_btls sctp "${FAST[@]}")
out=$(run_btl tcp 2 --mca osc pt2pt ./btl_away 6) || { echo "$out"; die "btl tcp: failed"; }
want=$(echo "$out" | grep '^CHECK')
[ -n "$want" ] || { echo "$out"; die "btl tcp: no CHECK line"; }
out=$(run_btl sctp 2 "${SCTP[@]}" ./btl_away 6) || { echo "$out"; die "btl sctp: failed"; }
[ "$(echo "$out" | grep '^CHECK')" = "$want" ] || { echo "$out"; die "btl sctp: not $want"; }
echo "tcp and sctp: $want"
out=$(run_btl sctp 2 "${SCTP[@]}" -x SCTPT_KEEPER_MS=0 ./btl_away 6); rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q 'lost the connection' ||
	{ echo "$out"; die "without the keeper: status $rc and no lost peer (the test cannot tell)"; }
echo "without the keeper: status $rc, $(echo "$out" | grep -m1 'lost the connection')"

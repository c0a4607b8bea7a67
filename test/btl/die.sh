#!/usr/bin/env bash
# A rank that aborts, exits early or is killed: the job must end non-zero, promptly, with a
# message naming what happened -- over tcp and over sctp.
. "$(dirname "$0")/btl_common.sh"
RUN_TIMEOUT=60

# expect_death BTL NP MODE
expect_death() {
	local out rc start=$SECONDS
	out=$(run_btl "$1" "$2" ./btl_die "$3"); rc=$?
	[ $((SECONDS - start)) -lt "$RUN_TIMEOUT" ] && [ $rc -ne 124 ] ||
		{ echo "$out"; die "btl $1, $2 ranks, $3: hung (stopped by timeout after $RUN_TIMEOUT s)"; }
	[ $rc -ne 0 ] || { echo "$out"; die "btl $1, $2 ranks, $3: exit status 0"; }
	# the ranks talked before one left: a job that could not start is no death
	! echo "$out" | grep -q 'unable to reach each other' ||
		{ echo "$out"; die "btl $1, $2 ranks, $3: the ranks could not talk over btl $1"; }
	# (ORTE sometimes loses its own abort message to a show_help race and logs
	# "ORTE_ERROR_LOG: ... show_help.c" instead: accepted, the status is what matters.)
	echo "$out" | grep -qiE 'MPI_ABORT|exited|killed|signal|lost the connection|show_help' ||
		{ echo "$out"; die "btl $1, $2 ranks, $3: no message about the dead rank"; }
	echo "btl $1 np=$2 $3: status $rc after $((SECONDS - start)) s: $(echo "$out" | grep -iE 'MPI_ABORT|exited|killed|signal|lost the connection|show_help' | head -n 1)"
}

require_sctp
for btl in tcp sctp; do
	for np in 2 4 8; do expect_death $btl $np abort; done
	expect_death $btl 4 exit
	expect_death $btl 4 kill
done

# With ORTE's recovery mode mpirun does not end the job when a rank dies: the surviving ranks
# must notice through the BTL itself (SCTP heartbeats time out), print which peer was lost and
# abort instead of waiting forever. (The job's status then is ORTE's business: with recovery
# enabled it may be 0, so only "ended, promptly, naming the peer" is checked.)
start=$SECONDS
out=$(run_btl sctp 3 --enable-recovery --mca btl_sctp_assoc_max_retrans 4 \
	--mca btl_sctp_rto_max 400 --mca btl_sctp_hb_interval 300 ./btl_die kill)
rc=$?
[ $((SECONDS - start)) -lt "$RUN_TIMEOUT" ] && [ $rc -ne 124 ] ||
	{ echo "$out"; die "btl sctp, recovery mode, kill: hung"; }
echo "$out" | grep -q 'btl sctp: lost the connection to peer \[\[[0-9]*,[0-9]*\],2\]' ||
	{ echo "$out"; die "btl sctp, recovery mode, kill: no message naming rank 2"; }
echo "btl sctp np=3 kill (recovery mode): ended after $((SECONDS - start)) s: $(echo "$out" | grep -m1 'lost the connection')"

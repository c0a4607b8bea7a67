#!/bin/bash
# The core's own tests on each SCTP engine: every SCTP test program of test/core run again with
# SCTPT_BACKEND=native and =usrsctp, and SCTPT_SHM=0 so that same-host peers go through the
# engine (test/core's own run carries loopback peers over shared memory). The programs are
# test/core's (built by its make check).
core=../core
progs=(test_sctpt_unit test_sctpt_anytag test_sctpt_peer_death test_sctpt_threads
	test_sctpt_close "test_sctpt_alltoall 2 60" "test_sctpt_alltoall 8 30")
for p in "${progs[@]}"; do
	[ -x "$core/${p%% *}" ] || { echo "SKIP: $core/${p%% *} not built (make check in test/core)"; exit 77; }
done
export SCTPT_SHM=0
fail=0
for engine in native usrsctp; do
	for p in "${progs[@]}"; do
		log="${p%% *}.$engine.log"
		if (cd "$core" && SCTPT_BACKEND=$engine timeout 300 ./$p) >"$log" 2>&1; then
			echo "PASS on $engine: $p"
		else
			echo "FAIL on $engine: $p"; tail -20 "$log"; fail=1
		fi
	done
done
exit $fail

#!/bin/bash
# The core's own tests on the native engine: every SCTP test program of test/core run again
# with SCTPT_BACKEND=native (and SCTPT_SHM=0, so that same-host peers go through the engine
# too), as CI runs them on usrsctp. The programs are test/core's (built by its make check).
core=../core
progs=(test_sctpt_unit test_sctpt_anytag test_sctpt_peer_death test_sctpt_threads
	test_sctpt_close "test_sctpt_alltoall 2 60" "test_sctpt_alltoall 8 30")
for p in "${progs[@]}"; do
	[ -x "$core/${p%% *}" ] || { echo "SKIP: $core/${p%% *} not built (make check in test/core)"; exit 77; }
done
export SCTPT_BACKEND=native SCTPT_SHM=0
fail=0
for p in "${progs[@]}"; do
	if (cd "$core" && timeout 300 ./$p) >"${p%% *}.native.log" 2>&1; then
		echo "PASS on native: $p"
	else
		echo "FAIL on native: $p"; tail -20 "${p%% *}.native.log"; fail=1
	fi
done
exit $fail

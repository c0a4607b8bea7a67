#!/usr/bin/env bash
# test_ofi_rdm and test_ofi_rma again with FI_THREAD_DOMAIN, as Open MPI's mtl ofi asks
# without MPI_THREAD_MULTIPLE: the provider then lets the core run without its lock
# (cfg.single_thread) and serializes every call into it, its progress thread's and sleeps
# included, itself. Through shared memory and through SCTP; the provider's log must say the
# core's lock is off (and on for the automatic-progress test, which sleeps beside the
# application).
. "$(dirname "$0")/../common.sh"
export OFI_TEST_THREADING=domain FI_LOG_LEVEL=info FI_LOG_PROV=sctp
log=$(mktemp)
trap 'rm -f "$log"; ns_cleanup' EXIT
for shm in 1 0; do
	for t in test_ofi_rdm test_ofi_rma; do
		FI_SCTP_SHM=$shm ./$t 2>"$log"; rc=$?
		grep -v "<info>" "$log" >&2 # warnings and failures only
		[ $rc -eq 0 ] || die "$t with FI_THREAD_DOMAIN (shm=$shm)"
		off=$(grep -c "core lock off" "$log")
		on=$(grep -c "core lock on" "$log")
		echo "$t shm=$shm: domains with the core's lock off $off, on $on"
		[ "$off" -gt 0 ] || die "$t (shm=$shm): no domain ran without the core's lock"
		if [ $t = test_ofi_rdm ]; then
			[ "$on" -eq 2 ] || die "$t (shm=$shm): $on domains kept the core's lock, " \
				"expected 2 (the automatic-progress test's)"
		else
			[ "$on" -eq 0 ] || die "$t (shm=$shm): $on domains kept the core's lock"
		fi
	done
done

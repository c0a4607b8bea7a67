#!/usr/bin/env bash
# MPICH with --with-device=ch3:sctp builds and installs (cached), reports its device, and
# carries the project's core; a program built with its mpicc runs on 2 ranks over SCTP.
. "$(dirname "$0")/ch3_common.sh"
ch3_installed "$PREFIX" ch3:sctp
nm "$lib" | grep -q ' T sctpt_send$' || die "$lib does not contain the core (sctpt_send)"
ldd "$lib" | grep -q libusrsctp || die "$lib is not linked with libusrsctp"
# the endpoint comes up and says so (card on stderr with MPICH_SCTP_VERBOSE)
out=$(MPICH_SCTP_VERBOSE=1 run_ch3 2 "$(ch3_prog btl_p2p)" 4096) ||
	{ echo "$out"; die "btl_p2p on 2 ranks failed"; }
[ "$(echo "$out" | grep -c 'ch3:sctp: rank [01] bound, [0-9]* streams, card "sctpt1 ')" -eq 2 ] ||
	{ echo "$out"; die "the ranks did not report their SCTP endpoints"; }
echo "$out" | grep 'ch3:sctp: rank' | sed 's/^/  /'
# same-host peers through the core's shared memory (its default): same answers
shm=$(SCTPT_SHM=1 MPICH_SCTP_VERBOSE=1 run_ch3 4 "$(ch3_prog btl_p2p)" 65536) ||
	{ echo "$shm"; die "btl_p2p on 4 ranks with the core's shared memory failed"; }
echo "$shm" | grep -q 'card "sctpt1 .* shm=' || { echo "$shm"; die "SCTPT_SHM=1: no shm token in the cards"; }
ref=$(run_ch3 4 "$(ch3_prog btl_p2p)" 65536) || { echo "$ref"; die "btl_p2p on 4 ranks over SCTP failed"; }
[ "$(echo "$shm" | grep '^CHECK')" = "$(echo "$ref" | grep '^CHECK')" ] ||
	{ echo "$shm"; echo "$ref"; die "shared memory and SCTP disagree"; }
echo "4 ranks through the core's shared memory: same CHECK lines as over SCTP"

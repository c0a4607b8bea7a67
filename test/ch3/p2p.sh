#!/usr/bin/env bash
# Point-to-point (test/btl's btl_p2p: every byte checked, MPI_ANY_TAG/ANY_SOURCE order, sizes
# to 4 MiB) on 2, 4 and 8 ranks over ch3:sctp, against Debian's MPICH; then the streams: the
# (context, tag) mapping spread the traffic over several SCTP streams, and rendezvous data for
# contiguous receives was placed by the core straight into the receive buffers.
. "$(dirname "$0")/ch3_common.sh"
compare 2 btl_p2p
compare 4 btl_p2p $((1 << 20))
compare 8 btl_p2p $((256 << 10))
out=$(MPICH_SCTP_VERBOSE=2 run_ch3 2 "$(ch3_prog btl_p2p)" $((1 << 20))) || { echo "$out"; die "verbose run failed"; }
line=$(echo "$out" | grep -m1 'ch3:sctp: rank 0 stats for rank 1') ||
	{ echo "$out"; die "no per-peer statistics from rank 0"; }
used=$(echo "$line" | sed 's/.*msgs per stream://' | tr ' ' '\n' | grep -c '^[1-9]')
[ "$used" -ge 3 ] || { echo "$line"; die "only $used streams carried messages"; }
echo "streams used by rank 0 -> 1: $used ($(echo "$line" | sed 's/.*msgs per stream: *//'))"
placed=$(echo "$out" | sed -n 's/.*ch3:sctp: rank 1 rendezvous data: \([0-9]*\) placed.*/\1/p')
[ "${placed:-0}" -gt 0 ] || { echo "$out" | grep rendezvous; die "no rendezvous data was placed in the receive buffer"; }
echo "rank 1: $(echo "$out" | grep -o 'rank 1 rendezvous data: .*')"

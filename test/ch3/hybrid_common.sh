# Shared by the ch3:hybrid test scripts (hybrid_*.sh): builds MPICH with --device ch3:hybrid
# (and ch3:sctp, the same point-to-point with one-sided over CH3's packets, as the reference)
# if needed (cached, see scripts/mpich-build.sh), compiles MPI programs with each mpicc and
# runs them with each mpiexec (Hydra). Environment from Makefile.am: top_srcdir, SANITIZERS.
# Exit codes: 0 pass, 1 fail, 77 skip.
RUN_TIMEOUT=${RUN_TIMEOUT:-180}
# ch3_common.sh: the sanitizer skip, SCTPT_SHM=0, ch3_build and ch3_prog, and ch3:sctp built
# (the reference, in $PREFIX)
. "$(dirname "$0")/ch3_common.sh"

HYB=$(ch3_build ch3:hybrid) || exit $?
[ -x "$HYB/bin/mpiexec" ] || die "$HYB/bin/mpiexec missing"
SCTP=$PREFIX
HBIN=$PWD/hybrid-bin

# hybrid_prog NAME PREFIX: NAME.c (test/ch3, test/btl) compiled once with PREFIX's mpicc, into
# $HBIN/<prefix's device>/
hybrid_prog() {
	ch3_prog "$1" "$2/bin/mpicc" "$HBIN/$(basename "$(dirname "$2")")"
}

# run_on PREFIX NP PROG ARGS...: PROG on NP ranks of this host; prints its output
run_on() {
	local prefix=$1 np=$2
	shift 2
	timeout -k 10 "$RUN_TIMEOUT" "$prefix/bin/mpiexec" -launcher fork -n "$np" "$@" 2>&1
}

# rdma_stats OUT NP: every rank's "ch3:hybrid: rank R RDMA:" line (MPICH_HYBRID_STATS=1) is
# there, and no Terminate was sent or received; prints "puts/gets/atomics" per rank
rdma_stats() {
	local out=$1 np=$2 lines
	lines=$(echo "$out" | grep 'ch3:hybrid: rank [0-9]* RDMA:')
	[ "$(echo "$lines" | grep -c .)" -eq "$np" ] || { echo "$out"; die "RDMA statistics of $np ranks expected"; }
	echo "$lines" | grep -v ' 0 Terminates sent, 0 received' && { echo "$lines"; die "Terminates were exchanged"; }
	echo "$lines" | sed -E 's/.*RDMA: ([0-9]+) puts.*, ([0-9]+) gets.*, ([0-9]+) atomics.*, ([0-9]+) operations as CH3 packets.*/\1\/\2\/\3 (+\4 as packets)/' | tr '\n' ' '
}

# Shared by the ch3:hybrid test scripts (hybrid_*.sh): builds MPICH with --device ch3:hybrid
# (and ch3:sctp, the same point-to-point with one-sided over CH3's packets, as the reference)
# if needed (cached, see scripts/mpich-build.sh), compiles MPI programs with each mpicc and
# runs them with each mpiexec (Hydra). Environment from Makefile.am: top_srcdir, SANITIZERS.
# Exit codes: 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../common.sh"

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=$(cd "$top_srcdir" && pwd)
# MPICH is not built with sanitizers: these run in the gcc pass only.
[ "${SANITIZERS:-no}" = no ] || skip "MPICH is not built with sanitizers: the ch3 tests run in the gcc pass"
# SCTP between the ranks of this one host (the core's shared memory would carry it otherwise)
export SCTPT_SHM=${SCTPT_SHM:-0}
RUN_TIMEOUT=${RUN_TIMEOUT:-180}

# hybrid_build DEVICE: the install prefix (the first build takes 20-30 minutes)
hybrid_build() {
	local out rc
	out=$("$top_srcdir/scripts/mpich-build.sh" --device "$1" 2>&1); rc=$?
	if [ $rc -ne 0 ]; then
		echo "$out" | tail -n 30 >&2
		echo "$out" | grep -q 'apt-get source mpich failed\|apt-get source needs' &&
			skip "MPICH's source is not available (apt-get source mpich)"
		die "scripts/mpich-build.sh --device $1 failed"
	fi
	echo "$out" | tail -n 1
}

HYB=$(hybrid_build ch3:hybrid) || exit $?
[ -x "$HYB/bin/mpiexec" ] || die "$HYB/bin/mpiexec missing"
BIN=$PWD/hybrid-bin
mkdir -p "$BIN"

# hybrid_prog NAME PREFIX: NAME.c (test/ch3, test/btl) compiled once with PREFIX's mpicc, into
# $BIN/<prefix's device>/; concurrent tests compile to a temporary name and rename.
hybrid_prog() {
	local name=$1 prefix=$2 dir src d
	dir=$BIN/$(basename "$(dirname "$prefix")")
	for d in ch3 btl; do
		src=$top_srcdir/test/$d/$name.c
		[ -f "$src" ] && break
	done
	if [ ! -x "$dir/$name" ] || [ "$src" -nt "$dir/$name" ] || [ "$prefix/bin/mpicc" -nt "$dir/$name" ]; then
		mkdir -p "$dir"
		"$prefix/bin/mpicc" -O2 -Wno-stringop-overflow -include stddef.h -I"$top_srcdir/test/btl" \
			-o "$dir/$name.$$" "$src" -lpthread || die "$prefix/bin/mpicc could not compile $src"
		mv -f "$dir/$name.$$" "$dir/$name"
	fi
	echo "$dir/$name"
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

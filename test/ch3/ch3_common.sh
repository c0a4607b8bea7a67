# Shared by the ch3:sctp test scripts: builds MPICH with the channel if needed (cached, see
# scripts/mpich-build.sh), compiles test/btl's MPI programs with its mpicc and runs them with
# its mpiexec (Hydra). Environment from Makefile.am: top_srcdir, SANITIZERS.
# Exit codes: 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../common.sh"

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=$(cd "$top_srcdir" && pwd)
# The sanitizer pass would run the very same MPICH build and programs again: nothing of
# ours in them is instrumented there.
[ "${SANITIZERS:-no}" = no ] || skip "MPICH is not built with sanitizers: the ch3 tests run in the gcc pass"
# The ranks share a host: SCTPT_SHM=0 keeps the core's shared memory for same-host peers out,
# so that SCTP carries the traffic (build.sh runs once with it on).
export SCTPT_SHM=${SCTPT_SHM:-0}
# One mpiexec at most this long (8 oversubscribed ranks on 2 cores are slow, but bounded).
RUN_TIMEOUT=${RUN_TIMEOUT:-120}

# The build: cached when nothing changed; the first time it takes 15-30 minutes.
ch3_build() { # DEVICE: prints the install prefix
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

PREFIX=$(ch3_build ch3:sctp) || exit $?
[ -x "$PREFIX/bin/mpiexec" ] || die "$PREFIX/bin/mpiexec missing"
MPIEXEC=$PREFIX/bin/mpiexec
BIN=$PWD/ch3-bin
mkdir -p "$BIN"

# ch3_installed PREFIX DEVICE: the MPICH under PREFIX reports DEVICE (printed with its
# version); sets lib to its libmpi.so.
ch3_installed() {
	"$1/bin/mpichversion" | grep -qE "Device:[[:space:]]*$2\$" ||
		{ "$1/bin/mpichversion"; die "mpichversion does not report $2"; }
	echo "$("$1/bin/mpichversion" | grep -E 'Version:|Device:' | tr -s ' \t' ' ' | tr '\n' ' ')"
	lib=$(ls "$1"/lib/libmpi.so.* 2>/dev/null | head -n 1)
	[ -n "$lib" ] || die "no libmpi.so under $1/lib"
}

# ch3_prog NAME [MPICC [OUTDIR]]: compiles NAME.c of test/btl, test/ch3 or test/testbed once
# (stddef.h: test/btl's programs use offsetof and MPICH's mpi.h does not include it); parallel
# tests may race: each compiles to a temporary file and renames it.
ch3_prog() {
	local name=$1 cc=${2:-$PREFIX/bin/mpicc} dir=${3:-$BIN} src d
	for d in btl ch3 testbed; do
		src=$top_srcdir/test/$d/$name.c
		[ -f "$src" ] && break
	done
	if [ ! -x "$dir/$name" ] || [ "$src" -nt "$dir/$name" ] || [ "$cc" -nt "$dir/$name" ]; then
		mkdir -p "$dir"
		"$cc" -O2 -Wno-stringop-overflow -include stddef.h -I"$top_srcdir/test/btl" \
			-I"$top_srcdir/test/testbed" -o "$dir/$name.$$" "$src" -lpthread ||
			die "$cc could not compile $src"
		mv -f "$dir/$name.$$" "$dir/$name"
	fi
	echo "$dir/$name"
}

# run_ch3 NP PROG ARGS...: runs PROG on NP ranks (one node); prints its output.
run_ch3() {
	local np=$1; shift
	timeout -k 10 "$RUN_TIMEOUT" "$MPIEXEC" -launcher fork -n "$np" "$@" 2>&1
}

# The baseline: Debian's MPICH (ch4) when installed, for the same CHECK lines.
REF_MPICC=/usr/bin/mpicc.mpich
REF_MPIEXEC=/usr/bin/mpiexec.mpich
have_ref() { [ -x "$REF_MPICC" ] && [ -x "$REF_MPIEXEC" ]; }
run_ref() {
	local np=$1; shift
	timeout -k 10 "$RUN_TIMEOUT" "$REF_MPIEXEC" -launcher fork -n "$np" "$@" 2>&1
}

# compare NP NAME ARGS...: NAME (a test/btl program) on NP ranks over ch3:sctp must pass and,
# when Debian's MPICH is installed, print the same CHECK lines as there.
compare() {
	local np=$1 name=$2 out ref rc
	shift 2
	out=$(run_ch3 "$np" "$(ch3_prog "$name")" "$@"); rc=$?
	[ $rc -eq 0 ] || { echo "$out"; die "$name $* on $np ranks over ch3:sctp: status $rc"; }
	echo "$out" | grep -q '^CHECK' || { echo "$out"; die "$name on $np ranks: no CHECK lines"; }
	echo "ch3:sctp np=$np $name $*: $(echo "$out" | grep -c '^CHECK') checks"
	if have_ref; then
		ref=$(run_ref "$np" "$(ch3_prog "$name" "$REF_MPICC" "$BIN/ref")" "$@"); rc=$?
		[ $rc -eq 0 ] || { echo "$ref"; die "$name on $np ranks over Debian's MPICH: status $rc"; }
		if [ "$(echo "$out" | grep '^CHECK')" != "$(echo "$ref" | grep '^CHECK')" ]; then
			echo "--- Debian's MPICH"; echo "$ref" | grep '^CHECK'
			echo "--- ch3:sctp"; echo "$out" | grep '^CHECK'
			die "$name on $np ranks: ch3:sctp and Debian's MPICH disagree"
		fi
		echo "  same CHECK lines as Debian's MPICH"
	fi
	LAST_OUT=$out
}

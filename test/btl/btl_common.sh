# Shared by the BTL test scripts: runs MPI programs under the real mpirun over one BTL.
# Environment (from test/btl/Makefile.am): MPIRUN, OMPI_COMPONENTDIR, BTL_LIBDIR (our
# mca_btl_sctp.so), HAVE_OMPI, SANITIZERS. Exit codes: 0 pass, 1 fail, 77 skip.
# Only a missing prerequisite (no Open MPI, no mpirun) skips: a component that is not built,
# does not load or does not start fails every test.
. "$(dirname "$0")/../common.sh"

[ "${HAVE_OMPI:-no}" = yes ] || skip "Open MPI headers not found: the BTL is not built"
[ -x "${MPIRUN:-}" ] || skip "mpirun not found"
[ -f "$BTL_LIBDIR/mca_btl_sctp.so" ] || die "$BTL_LIBDIR/mca_btl_sctp.so not built"
# Open MPI skips a component it cannot dlopen (with a warning at most): catch that here.
missing=$(nm -D --undefined-only "$BTL_LIBDIR/mca_btl_sctp.so" | awk '$2 ~ /^(sctpt|iw|fnn)_/ { print $2 }')
[ -z "$missing" ] || die "mca_btl_sctp.so cannot load: the project's libraries are not linked in (" $missing ")"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# One mpirun at most this long (8 oversubscribed ranks on 2 cores are slow, but bounded).
RUN_TIMEOUT=${RUN_TIMEOUT:-120}

# Our component first, then Open MPI's own: exactly what README.md tells users.
# MPI_BASE_OPTS: everything but the interfaces; MPI_OPTS adds loopback for both BTLs.
# The ranks share a host: SCTPT_SHM=0 keeps the core's shared memory for same-host peers out,
# so that SCTP is what these tests exercise (p2p.sh runs the shared-memory path once).
MPI_BASE_OPTS=(--allow-run-as-root --oversubscribe --bind-to none
	--mca mca_base_component_path "$BTL_LIBDIR:$OMPI_COMPONENTDIR"
	--mca pml ob1 --mca btl_base_warn_component_unused 0 -x SCTPT_SHM=0)
if [ "${SANITIZERS:-no}" = yes ]; then
	# The ASan-built component is dlopened by the ranks: preload the runtime everywhere and
	# do not report Open MPI's own leaks.
	MPI_BASE_OPTS+=(-x LD_PRELOAD="$(gcc -print-file-name=libasan.so)"
		-x ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 -x UBSAN_OPTIONS=print_stacktrace=1)
fi
MPI_OPTS=("${MPI_BASE_OPTS[@]}" --mca btl_tcp_if_include lo --mca btl_sctp_if_include lo)

# run_btl BTL NP PROG ARGS...: runs PROG on NP ranks over "btl self,BTL"; prints its output.
run_btl() {
	local btl=$1 np=$2; shift 2
	timeout -k 10 "$RUN_TIMEOUT" "$MPIRUN" "${MPI_OPTS[@]}" -np "$np" --mca btl "self,$btl" "$@" 2>&1
}

# require_sctp: two ranks start over "btl self,sctp", each binds its endpoint (the verbose
# "bound" line) and they exchange messages. A component that Open MPI could not open, or that
# did not initialise, fails here with Open MPI's own words, so that no test passes without it
# (a job that merely dies, or runs over vader, would).
require_sctp() {
	local out rc
	out=$(run_btl sctp 2 --mca btl_base_verbose 10 --mca mca_base_component_show_load_errors 1 \
		./btl_p2p 1024); rc=$?
	[ $rc -eq 0 ] && [ "$(echo "$out" | grep -c 'btl sctp: bound .*card "sctpt1 ')" -eq 2 ] ||
		{ echo "$out"; die "btl sctp does not load or start (status $rc)"; }
}

# compare_btls NP PROG ARGS...: runs over tcp and over sctp; both must pass and print the same
# CHECK lines.
compare_btls() {
	local np=$1; shift
	local out_tcp out_sctp rc
	out_tcp=$(run_btl tcp "$np" "$@"); rc=$?
	[ $rc -eq 0 ] || { echo "$out_tcp"; die "$* on $np ranks over btl tcp: status $rc"; }
	LAST_TCP_CHECKS=$(echo "$out_tcp" | grep '^CHECK')
	echo "tcp  np=$np: $(echo "$out_tcp" | grep -c '^CHECK') checks"
	out_sctp=$(run_btl sctp "$np" "$@"); rc=$?
	[ $rc -eq 0 ] || { echo "$out_sctp"; die "$* on $np ranks over btl sctp: status $rc"; }
	echo "sctp np=$np: $(echo "$out_sctp" | grep -c '^CHECK') checks"
	! echo "$out_sctp" | grep 'btl sctp: .* without their completion' ||
		die "$* on $np ranks over btl sctp: sends not completed exactly once"
	if [ "$(echo "$out_tcp" | grep '^CHECK')" != "$(echo "$out_sctp" | grep '^CHECK')" ]; then
		echo "--- tcp"; echo "$out_tcp" | grep '^CHECK'
		echo "--- sctp"; echo "$out_sctp" | grep '^CHECK'
		die "$* on $np ranks: sctp and tcp disagree"
	fi
	echo "$out_sctp" | grep '^CHECK' | sed 's/^/  /'
}

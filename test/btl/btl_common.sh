# Shared by the BTL test scripts: runs MPI programs under the real mpirun over one BTL.
# Environment (from test/btl/Makefile.am): MPIRUN, OMPI_COMPONENTDIR, BTL_LIBDIR (our
# mca_btl_sctp.so), HAVE_OMPI, SANITIZERS. Exit codes: 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../common.sh"

[ "${HAVE_OMPI:-no}" = yes ] || skip "Open MPI headers not found: the BTL is not built"
[ -x "${MPIRUN:-}" ] || skip "mpirun not found"
[ -f "$BTL_LIBDIR/mca_btl_sctp.so" ] || die "$BTL_LIBDIR/mca_btl_sctp.so not built"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# One mpirun at most this long (8 oversubscribed ranks on 2 cores are slow, but bounded).
RUN_TIMEOUT=${RUN_TIMEOUT:-120}

# Our component first, then Open MPI's own: exactly what README.md tells users.
# MPI_BASE_OPTS: everything but the interfaces; MPI_OPTS adds loopback for both BTLs.
MPI_BASE_OPTS=(--allow-run-as-root --oversubscribe --bind-to none
	--mca mca_base_component_path "$BTL_LIBDIR:$OMPI_COMPONENTDIR"
	--mca pml ob1 --mca btl_base_warn_component_unused 0)
if [ "${SANITIZERS:-no}" = yes ]; then
	# The ASan-built component is dlopened by the ranks: preload the runtime everywhere and
	# do not report Open MPI's own leaks.
	MPI_BASE_OPTS+=(-x LD_PRELOAD="$(gcc -print-file-name=libasan.so)"
		-x ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 -x UBSAN_OPTIONS=print_stacktrace=1)
fi
MPI_OPTS=("${MPI_BASE_OPTS[@]}" --mca btl_tcp_if_include lo --mca btl_sctp_if_include lo)

# sctp_usable: true when mca_btl_sctp.so resolves the core's symbols (libsctpt linked in).
sctp_usable() {
	! nm -D --undefined-only "$BTL_LIBDIR/mca_btl_sctp.so" | grep -q ' sctpt_'
}

# run_btl BTL NP PROG ARGS...: runs PROG on NP ranks over "btl self,BTL"; prints its output.
run_btl() {
	local btl=$1 np=$2; shift 2
	timeout -k 10 "$RUN_TIMEOUT" "$MPIRUN" "${MPI_OPTS[@]}" -np "$np" --mca btl "self,$btl" "$@" 2>&1
}

# compare_btls NP PROG ARGS...: runs over tcp and over sctp; both must pass and print the same
# CHECK lines. Sets SCTP_SKIPPED=1 when the sctp run could not be made (core not linked yet).
SCTP_SKIPPED=0
compare_btls() {
	local np=$1; shift
	local out_tcp out_sctp rc
	out_tcp=$(run_btl tcp "$np" "$@"); rc=$?
	[ $rc -eq 0 ] || { echo "$out_tcp"; die "$* on $np ranks over btl tcp: status $rc"; }
	LAST_TCP_CHECKS=$(echo "$out_tcp" | grep '^CHECK')
	echo "tcp  np=$np: $(echo "$out_tcp" | grep -c '^CHECK') checks"
	if ! sctp_usable; then
		SCTP_SKIPPED=1
		return 0
	fi
	out_sctp=$(run_btl sctp "$np" "$@"); rc=$?
	[ $rc -eq 0 ] || { echo "$out_sctp"; die "$* on $np ranks over btl sctp: status $rc"; }
	echo "sctp np=$np: $(echo "$out_sctp" | grep -c '^CHECK') checks"
	if [ "$(echo "$out_tcp" | grep '^CHECK')" != "$(echo "$out_sctp" | grep '^CHECK')" ]; then
		echo "--- tcp"; echo "$out_tcp" | grep '^CHECK'
		echo "--- sctp"; echo "$out_sctp" | grep '^CHECK'
		die "$* on $np ranks: sctp and tcp disagree"
	fi
	echo "$out_sctp" | grep '^CHECK' | sed 's/^/  /'
}

# finish: pass, or skip when only tcp could run.
finish() {
	[ "$SCTP_SKIPPED" -eq 0 ] || skip "mca_btl_sctp.so lacks the SCTP core (libsctpt): tcp runs passed"
	exit 0
}

# Shared by the MPI tests of the provider: Open MPI's own mtl ofi / btl ofi components run
# over libsctp-fi.so (FI_PROVIDER_PATH) under the real mpirun. Debian's
# /etc/openmpi/openmpi-mca-params.conf disables both ("mtl = ^ofi", "btl = ^...,ofi"): the
# command line selects them explicitly, which overrides that file.
# Environment (Makefile.am): MPIRUN, HAVE_OMPI, FI_PROVIDER_PATH, SANITIZERS.
. "$(dirname "$0")/../common.sh"

[ "${HAVE_OMPI:-no}" = yes ] || skip "Open MPI not found"
[ -x "${MPIRUN:-}" ] || skip "mpirun not found"
[ -f "$FI_PROVIDER_PATH/libsctp-fi.so" ] || die "$FI_PROVIDER_PATH/libsctp-fi.so not built"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
RUN_TIMEOUT=${RUN_TIMEOUT:-120}

BASE_OPTS=(--allow-run-as-root --oversubscribe --bind-to none
	-x FI_PROVIDER_PATH -x FI_SCTP_ADDRS=127.0.0.1)
if [ "${SANITIZERS:-no}" = yes ]; then
	BASE_OPTS+=(-x LD_PRELOAD="$(gcc -print-file-name=libasan.so)"
		-x ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 -x UBSAN_OPTIONS=print_stacktrace=1)
fi
# pml cm + mtl ofi restricted to our provider
MTL_OPTS=(--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include sctp)
# the baseline: ob1 over btl tcp
TCP_OPTS=(--mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo)

# run NP OPTS... -- PROG ARGS: prints the job's output, returns its status
run() {
	local np=$1; shift
	timeout -k 10 "$RUN_TIMEOUT" "$MPIRUN" "${BASE_OPTS[@]}" -np "$np" "$@" 2>&1
}

# compare NP "EXTRA OPTS" PROG ARGS...: the program over mtl ofi + sctp and over ob1 + tcp
# must both pass and print the same CHECK lines; every rank must have picked sctp.
compare() {
	local np=$1 extra=$2; shift 2
	local base out rc
	base=$(run "$np" "${TCP_OPTS[@]}" "$@"); rc=$?
	[ $rc -eq 0 ] || { echo "$base"; die "$* on $np ranks over ob1/tcp: status $rc"; }
	# shellcheck disable=SC2086
	out=$(run "$np" "${MTL_OPTS[@]}" --mca mtl_base_verbose 10 $extra "$@"); rc=$?
	[ $rc -eq 0 ] || { echo "$out"; die "$* on $np ranks over mtl ofi/sctp $extra: status $rc"; }
	[ "$(echo "$out" | grep -c 'mtl:ofi:provider: sctp')" -eq "$np" ] ||
		{ echo "$out"; die "not every rank chose the sctp provider"; }
	if [ "$(echo "$base" | grep '^CHECK')" != "$(echo "$out" | grep '^CHECK')" ]; then
		echo "--- ob1/tcp"; echo "$base" | grep '^CHECK'
		echo "--- mtl ofi/sctp"; echo "$out" | grep '^CHECK'
		die "$* on $np ranks: answers differ"
	fi
	echo "np=$np $extra $*: $(echo "$out" | grep -c '^CHECK') checks agree with ob1/tcp"
}

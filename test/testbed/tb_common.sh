# Shared by the testbed tests (source "$(dirname "$0")/tb_common.sh").  Environment from
# Makefile.am: MPIRUN, HAVE_OMPI, FNN_TB_NSRUN, TB_PING, TB_ALLPAIRS.  Exit codes: 0 pass,
# 1 fail, 77 skip.  Every cluster brought up here is taken down on exit; processes started
# in the background are ended by PID.
. "$(dirname "$0")/../common.sh"
TB_SRC=$(cd "$(dirname "$0")" && pwd)
CLUSTER="$TB_SRC/fnn-cluster.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# hard MESSAGE: a setup error, not a test result (exit 99: ERROR, even for an XFAIL test).
hard() { echo "ERROR: $*" >&2; exit 99; }

_tb_up=()
tb_cleanup() {
	local p
	for p in "${_pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${_pids[@]}"; do wait "$p" 2>/dev/null; done
	for p in "${_tb_up[@]}"; do timeout 60 "$CLUSTER" down --prefix "$p"; done
	_tb_up=()
}
trap tb_cleanup EXIT

need_testbed() {
	[ "$(id -u)" -eq 0 ] || skip "the testbed needs root (network namespaces, tc, nft)"
	local c
	for c in ip tc nft nsenter timeout; do command -v $c >/dev/null || skip "$c missing"; done
	need_netns
	[ -x "${TB_PING:-}" ] || die "tb_ping not built (TB_PING=${TB_PING:-})"
}

need_mpi() {
	[ "${HAVE_OMPI:-no}" = yes ] || skip "Open MPI headers not found: tb_allpairs not built"
	[ -x "${MPIRUN:-}" ] || skip "mpirun not found"
	[ -x "${TB_ALLPAIRS:-}" ] && [ -x "${FNN_TB_NSRUN:-}" ] || hard "tb_allpairs or tb_nsrun not built"
}

# tb_up TAG TABLE [OPTIONS]: brings up a cluster with prefix t<pid><TAG> (call directly, not
# in $(...): the list of clusters to take down lives in this shell).  Sets TB_PREFIX.
tb_up() {
	local tag=$1 table=$2; shift 2
	TB_PREFIX="t$$$tag"
	_tb_up+=("$TB_PREFIX")
	timeout 60 "$CLUSTER" up "$table" --prefix "$TB_PREFIX" "$@" >/dev/null ||
		hard "fnn-cluster.sh up $table failed"
	TB_DIR=/run/fnn-testbed/$TB_PREFIX
}

# tb_down: takes the last cluster down and checks nothing of it is left.
tb_down() {
	timeout 60 "$CLUSTER" down --prefix "$TB_PREFIX" || hard "fnn-cluster.sh down $TB_PREFIX failed"
	! ip netns list | grep -q "^$TB_PREFIX-" || hard "namespaces of $TB_PREFIX left behind"
	[ ! -e "$TB_DIR" ] || hard "$TB_DIR left behind"
	unset '_tb_up[-1]'
}

# tb_mpirun NP IFS TIMEOUT PROG ARGS...: NP ranks over btl self,tcp, one per PC namespace of
# the cluster TB_PREFIX, btl tcp on the interfaces IFS (e.g. nic0,nic1).
tb_mpirun() {
	local np=$1 ifs=$2 t=$3; shift 3
	FNN_TB_PREFIX=$TB_PREFIX timeout -k 10 "$t" "$MPIRUN" --allow-run-as-root --oversubscribe \
		--bind-to none -np "$np" --mca pml ob1 --mca btl self,tcp \
		--mca btl_tcp_if_include "$ifs" --mca btl_base_warn_component_unused 0 \
		"$TB_SRC/in-pc-ns.sh" "$@" 2>&1
}

# check_allpairs OUTPUT NP: the program passed with every message intact.
check_allpairs() {
	echo "$1" | grep -q "^CHECK allpairs ranks $2 rounds [0-9]* messages [1-9][0-9]* bytes [0-9]* errors 0$"
}

# need_core_stripe: the core's FNN striping program is built.
need_core_stripe() {
	[ -x "${TB_CORE_STRIPE:-}" ] || hard "tb_core_stripe not built (TB_CORE_STRIPE=${TB_CORE_STRIPE:-})"
}

# tb_core_stripe SECONDS [ARGS...]: runs tb_core_stripe once per PC namespace of cluster
# TB_PREFIX (at most 90 s each), business cards through a fresh directory; the output of PC
# N is in $TB_OUT/out.N.  Returns 0 if every process exited 0.  With TB_DURING set, runs that
# command (in this shell) while the processes run.
tb_core_stripe() {
	local secs=$1 n i p rc=0 pids=()
	shift
	n=$(sed -n 's/^NPCS=//p' "$TB_DIR/env")
	TB_OUT=$(mktemp -d)
	for ((i = 0; i < n; i++)); do
		ip netns exec "$TB_PREFIX-pc$i" timeout -k 5 90 "$TB_CORE_STRIPE" --table "$TB_DIR/table" \
			--addrs "$TB_DIR/addrs" --pc $i --dir "$TB_OUT" --seconds "$secs" "$@" \
			>"$TB_OUT/out.$i" 2>&1 &
		pids+=($!)
		_pids+=($!)
	done
	[ -z "${TB_DURING:-}" ] || eval "$TB_DURING"
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	return $rc
}

# run_cutting_nic1 CMD...: runs CMD in the background, takes PC 1's nic1 down for good 2 s
# into it and waits; CMD's output is in RUN_OUT, its status is returned.
run_cutting_nic1() {
	local log pid rc
	log=$(mktemp)
	"$@" >"$log" &
	pid=$!
	_pids+=("$pid")
	sleep 2
	"$CLUSTER" link --prefix "$TB_PREFIX" 1 1 down || hard "link down"
	wait "$pid"
	rc=$?
	RUN_OUT=$(cat "$log")
	rm -f "$log"
	return $rc
}

# check_core_stripe NPCS: every PC's process printed CHECK with no errors, and every pair
# got one rail per shared switch (tb_core_stripe reads it back from sctpt_peer_stats).
check_core_stripe() {
	local i
	for ((i = 0; i < $1; i++)); do
		grep -q "^CHECK core-stripe pc $i peers [0-9]* messages [1-9][0-9]* bytes [0-9]* errors 0$" \
			"$TB_OUT/out.$i" || return 1
	done
	! grep -h '^RAILS' "$TB_OUT"/out.* | awk '$7 != $9 { bad = 1 } END { exit !bad }'
}

# tb_mpirun_sctp NP TIMEOUT PROG ARGS...: NP ranks over our btl sctp (self,sctp), one per PC
# namespace of cluster TB_PREFIX, striped by the cluster's FNN table and address map
# (btl_sctp_fnn_table, btl_sctp_fnn_addrs).  Needs BTL_LIBDIR and OMPI_COMPONENTDIR.
tb_mpirun_sctp() {
	local np=$1 t=$2 san=()
	shift 2
	[ -f "${BTL_LIBDIR:-}/mca_btl_sctp.so" ] || hard "mca_btl_sctp.so not built (BTL_LIBDIR=${BTL_LIBDIR:-})"
	# the ASan-built component is dlopened by the ranks: preload the runtime (test/btl)
	[ "${SANITIZERS:-no}" != yes ] || san=(-x LD_PRELOAD="$(gcc -print-file-name=libasan.so)"
		-x ASAN_OPTIONS=detect_leaks=0:abort_on_error=1)
	FNN_TB_PREFIX=$TB_PREFIX timeout -k 10 "$t" "$MPIRUN" --allow-run-as-root --oversubscribe \
		--bind-to none -np "$np" --mca pml ob1 --mca btl self,sctp "${san[@]}" \
		--mca mca_base_component_path "$BTL_LIBDIR:$OMPI_COMPONENTDIR" \
		--mca btl_sctp_fnn_table "$TB_DIR/table" --mca btl_sctp_fnn_addrs "$TB_DIR/addrs" \
		--mca btl_base_warn_component_unused 0 "$TB_SRC/in-pc-ns.sh" "$@" 2>&1
}

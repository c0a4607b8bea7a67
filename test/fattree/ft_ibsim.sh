# Helpers to run OpenSM on an ibsim-simulated fabric; sourced by tests and benchmarks.
# Every process started here is stopped by its PID; everything is bounded by timeout.
# IBSIM_SOCKNAME isolates this run's simulator from any other on the machine.

ft_have_opensm() {
	command -v ibsim >/dev/null && command -v ibsim-run >/dev/null && command -v opensm >/dev/null
}

# ft_ibsim_start NETFILE LOGFILE [extra ibsim args]: sets FT_IBSIM_PID, waits until ready.
ft_ibsim_start() {
	net=$1 log=$2
	shift 2
	: "${IBSIM_SOCKNAME:=ftsim$$}"
	export IBSIM_SOCKNAME
	timeout "${FT_IBSIM_TIMEOUT:-600}" ibsim -s -n "$@" "$net" >"$log" 2>&1 &
	FT_IBSIM_PID=$!
	i=0
	while [ $i -lt 600 ]; do
		grep -q "simulator ready" "$log" 2>/dev/null && return 0
		kill -0 "$FT_IBSIM_PID" 2>/dev/null || return 1
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

ft_ibsim_stop() {
	if [ -n "$FT_IBSIM_PID" ]; then
		kill "$FT_IBSIM_PID" 2>/dev/null
		wait "$FT_IBSIM_PID" 2>/dev/null
		FT_IBSIM_PID=
	fi
}

# ft_opensm DUMPDIR CACHEDIR LOG [opensm args]: one sweep with LFT dumps into DUMPDIR.
ft_opensm() {
	dump=$1 cache=$2 log=$3
	shift 3
	mkdir -p "$dump" "$cache"
	OSM_CACHE_DIR=$cache timeout "${FT_OPENSM_TIMEOUT:-600}" ibsim-run opensm -o -D 0x41 \
		--dump_files_dir "$dump" -f "$log" "$@" >"$log.out" 2>&1
}

# ft_lft_norm DUMP: "switchguid lid port" lines, sorted, for comparing dumps.
ft_lft_norm() {
	awk '/^Unicast/ { match($0, /guid 0x[0-9a-f]+/); g = substr($0, RSTART + 5, RLENGTH - 5); next }
	     /^0x/ { print g, $1, $2 }' "$1" | sort
}

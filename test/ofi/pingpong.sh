#!/usr/bin/env bash
# libfabric's own fi_pingpong (libfabric-bin) between two processes over the sctp provider,
# RDM endpoints, every default size with data checks (-c), through shared memory and through
# SCTP: both sides must finish and agree on the message count.
. "$(dirname "$0")/../common.sh"
command -v fi_pingpong >/dev/null || skip "fi_pingpong (libfabric-bin) not installed"
[ -f "$FI_PROVIDER_PATH/libsctp-fi.so" ] || die "$FI_PROVIDER_PATH/libsctp-fi.so not built"
# the sanitizer build's provider inside an uninstrumented program: its runtime goes first
if [ "${SANITIZERS:-no}" = yes ]; then
	export LD_PRELOAD="$(gcc -print-file-name=libasan.so)" ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
fi
for shm in 1 0; do
	port=$((40000 + RANDOM % 20000))
	srv=$(mktemp)
	FI_SCTP_SHM=$shm timeout 120 fi_pingpong -p sctp -e rdm -I 200 -c -B $port >"$srv" 2>&1 &
	spid=$!
	_pids+=("$spid")
	out=""
	for try in $(seq 1 50); do # the server's control socket comes up
		out=$(FI_SCTP_SHM=$shm timeout 120 fi_pingpong -p sctp -e rdm -I 200 -c -P $port \
			127.0.0.1 2>&1) && break
		echo "$out" | grep -q "Connection refused" || break
		sleep 0.2
	done
	wait "$spid"; rc=$?
	echo "$out"
	[ $rc -eq 0 ] || { cat "$srv"; rm -f "$srv"; die "fi_pingpong server failed (shm=$shm)"; }
	rm -f "$srv"
	n=$(echo "$out" | grep -cE '^[0-9.]+[km]? +200 +=200 ')
	[ "$n" -eq 6 ] || die "fi_pingpong client: $n of 6 sizes completed (shm=$shm)"
done

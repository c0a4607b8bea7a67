#!/usr/bin/env bash
# A striped peer dies: on the 4-PC, 2-switch design (2 rails per pair), all-pairs traffic
# through the core (tb_core_stripe), and PC 3's process is killed (SIGKILL) 1.5 s in.  The
# other three must report PC 3 lost (every rail to it fails on its path probes, then the
# peer: rto_max_ms x assoc_max_retrans = 8 s after the last rail, about 9 s in all; the
# kernel sends no ABORT for a killed usrsctp process), deliver every message among
# themselves intact (tb_core_stripe --expect-dead 3: what PC 3 sent or was sent is not
# counted, its loss must be reported), and each exit on its own within 15 s of the kill.
. "$(dirname "$0")/tb_common.sh"
need_testbed
need_core_stripe

tb_up x "$TB_SRC/designs/pc4x2.table" --rate 200mbit
out=$(mktemp -d)
trap 'rm -rf "$out"; tb_cleanup' EXIT
survivors=()
for pc in 0 1 2 3; do
	# `ip netns exec` becomes the program: $! is tb_core_stripe itself (PC 3 is killed by it)
	args=(--table "$TB_DIR/table" --addrs "$TB_DIR/addrs" --pc "$pc" --dir "$out" --seconds 4)
	if [ "$pc" -eq 3 ]; then
		ip netns exec "$TB_PREFIX-pc3" "$TB_CORE_STRIPE" "${args[@]}" >"$out/out.3" 2>&1 &
		victim=$!
	else # (each writes its status and when it ended to exit.N)
		(
			ip netns exec "$TB_PREFIX-pc$pc" timeout -k 5 60 "$TB_CORE_STRIPE" "${args[@]}" \
				--expect-dead 3 >"$out/out.$pc" 2>&1
			echo "$? $(date +%s.%N)" >"$out/exit.$pc"
		) &
		survivors+=($!)
	fi
	_pids+=($!)
done
sleep 1.5
kill -9 "$victim" || hard "PC 3's process was gone before the kill"
killed=$(date +%s.%N)
wait "$victim" 2>/dev/null
for p in "${survivors[@]}"; do wait "$p"; done
rc=0 took=0
for pc in 0 1 2; do
	read -r st end <"$out/exit.$pc" || hard "no exit status of PC $pc"
	t=$(awk -v a="$killed" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
	echo "PC $pc exited with status $st $t s after the kill"
	[ "$st" -eq 0 ] || rc=1
	took=$(awk -v a="$took" -v b="$t" 'BEGIN { print (b > a ? b : a) }')
done
grep -h '^\(CHECK\|DEAD\)' "$out"/out.[012]
[ "$rc" -eq 0 ] || { cat "$out"/out.[012]; die "a survivor failed"; }
for pc in 0 1 2; do
	grep -q "^CHECK core-stripe pc $pc peers 3 messages [1-9][0-9]* bytes [0-9]* errors 0$" "$out/out.$pc" ||
		{ cat "$out/out.$pc"; die "PC $pc: messages wrong"; }
	grep -q "^DEAD pc $pc peer 3 lost at " "$out/out.$pc" ||
		{ cat "$out/out.$pc"; die "PC $pc did not report PC 3 lost"; }
done
awk -v t="$took" 'BEGIN { exit !(t <= 15) }' || die "the last survivor took $took s to finish after the kill"
tb_down

#!/usr/bin/env bash
# The core's shared memory between ranks of one host under ob1, vader excluded: btl_p2p,
# btl_coll and btl_threads on 2 and 8 ranks over "btl self,sctp" with SCTPT_SHM=1 must print
# the CHECKs "btl self,tcp" prints, every peer a rank sent to must have been reached through
# shared memory, and large messages must have gone by ob1's RGET on sctpt_peer_read (the
# receiver copies from the sender's buffer) when btl_sctp_shm_get is on -- whole, and cut in
# 64 KiB gets by btl_sctp_get_limit -- and never when it is off. Same-host peers have a BTL
# module with a smaller eager limit (btl_sctp_shm_eager_limit): 64 KiB messages go by RGET
# with it, eagerly without it.
. "$(dirname "$0")/btl_common.sh"

SHM=(-x SCTPT_SHM=1 --mca btl_base_verbose 20)

# shm_check WHAT NP GETS REF PROG ARGS...: runs PROG over sctp with shared memory; GETS is
# "yes" (some rank read a peer's memory) or "no" (none did); REF the CHECK lines to print.
shm_check() {
	local what=$1 np=$2 gets=$3 ref=$4 out rc bad n
	shift 4
	out=$(run_btl sctp "$np" "${SHM[@]}" "$@"); rc=$?
	[ $rc -eq 0 ] || { echo "$out"; die "$what: status $rc"; }
	[ "$(echo "$out" | grep '^CHECK')" = "$ref" ] ||
		{ echo "$out" | grep -v 'btl sctp: stats'; die "$what: answers differ from btl tcp"; }
	! echo "$out" | grep 'btl sctp: .* without their completion' ||
		die "$what: sends not completed exactly once"
	echo "$out" | grep -q 'btl sctp: stats for' || { echo "$out"; die "$what: no statistics"; }
	# "sent N msgs ..., shared memory none|out|in|both": what we sent went through a ring
	bad=$(echo "$out" | grep 'btl sctp: stats for' |
		awk '{for (i = 1; i < NF; i++) if ($i == "sent") s = $(i + 1);
		      m = $0; sub(/.*shared memory /, "", m); sub(/,.*/, "", m);
		      if (s > 0 && m != "out" && m != "both") print}')
	[ -z "$bad" ] || { echo "$bad"; die "$what: peers reached through SCTP, not shared memory"; }
	n=$(echo "$out" | sed -n "s/.*btl sctp: \([0-9]*\) gets and puts on same-host peers' memory.*/\1/p" |
		awk '{s += $1} END {print s + 0}')
	case $gets in
	yes) [ "$n" -gt 0 ] || die "$what: no message went by RGET" ;;
	no) [ "$n" -eq 0 ] || die "$what: $n gets although btl_sctp_shm_get is off" ;;
	esac
	echo "$what: same answers as tcp, shared memory to every peer, $n gets"
	last_gets=$n
}

for np in 2 8; do
	for prog in "./btl_p2p $((4 << 20))" ./btl_coll ./btl_threads; do
		# shellcheck disable=SC2086
		ref=$(run_btl tcp "$np" $prog) || { echo "$ref"; die "$prog on $np ranks over btl tcp failed"; }
		ref=$(echo "$ref" | grep '^CHECK')
		gets=yes
		[ "$prog" = ./btl_coll ] && gets=any # collectives may stay below the eager limit
		# shellcheck disable=SC2086
		shm_check "${prog#./} np=$np get on" "$np" $gets "$ref" $prog
		if [ "$prog" != ./btl_coll ]; then
			# shellcheck disable=SC2086
			shm_check "${prog#./} np=$np get off" "$np" no "$ref" \
				--mca btl_sctp_shm_get 0 $prog
		fi
		if [ "${prog%% *}" = ./btl_p2p ] && [ "$np" = 2 ]; then
			# shellcheck disable=SC2086
			shm_check "${prog#./} np=$np 64 KiB gets" "$np" yes "$ref" \
				--mca btl_sctp_get_limit 65536 $prog
		fi
	done
done

# up to 64 KiB (and 16 MiB once): more gets with the same-host module than without it
ref=$(run_btl tcp 2 ./btl_p2p 65536) || { echo "$ref"; die "btl_p2p 65536 over btl tcp failed"; }
ref=$(echo "$ref" | grep '^CHECK')
shm_check "btl_p2p 65536 np=2 same-host module" 2 yes "$ref" ./btl_p2p 65536
with=$last_gets
shm_check "btl_p2p 65536 np=2 one module" 2 yes "$ref" --mca btl_sctp_shm_eager_limit 0 \
	./btl_p2p 65536
[ "$with" -gt "$last_gets" ] ||
	die "64 KiB messages: $with gets with the same-host module, $last_gets without"

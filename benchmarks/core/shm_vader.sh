#!/usr/bin/env bash
# shm_vader.sh <build dir>: two ranks of one host, Open MPI's btl sctp (the core's shared-memory
# path, SCTPT_SHM=1) against Open MPI's vader, ob1, busy-polling, with OSU's osu_latency and
# osu_bw counts (benchmarks/core/shm_osu.c: OSU's mean and the median of the loop's pieces).
# Each repetition runs both stacks, alternating which goes first; the table gives, per size,
# the median over the repetitions of each statistic and the ratio sctp/vader (latency: lower
# is better; bandwidth: higher). Goals: 0-byte latency within 1.5x of vader's, bandwidth at
# least 0.9x vader's from 64 KiB.
# The last lines check the goals on the medians: 0-byte latency within 1.5x of vader's, the
# 64 KiB latency ratio, and the lowest bandwidth ratio from 64 KiB up (at least 0.9x).
# Environment: REPS (5), Q (iteration scale, 1 = OSU's counts), MAX (largest size, 4 MiB),
# MIN (smallest), TESTS ("latency bw"), KEEP=1 (keep the raw outputs), SCTP_MCA (more
# --mca settings for the sctp runs, e.g. "--mca btl_sctp_shm_get 0"), BIND (mpirun's
# --bind-to, "none"; "core" keeps the two ranks on two CPUs: far steadier on a loaded machine).
set -u
build=${1:?usage: shm_vader.sh <build dir>}
build=$(cd "$build" && pwd) || exit 2
osu=$build/benchmarks/core/shm_osu
bench=$build/benchmarks/btl
mpirun=$(sed -n 's/^MPIRUN = //p' "$bench/Makefile" 2>/dev/null)
compdir=$(sed -n 's/^OMPI_COMPONENTDIR = //p' "$bench/Makefile" 2>/dev/null)
[ -x "${mpirun:-}" ] || mpirun=$(command -v mpirun) || { echo "shm_vader.sh: no mpirun" >&2; exit 77; }
[ -f "$build/ompi-btl/.libs/mca_btl_sctp.so" ] || { echo "shm_vader.sh: btl sctp not built in $build" >&2; exit 2; }
[ -x "$osu" ] || { echo "shm_vader.sh: $osu not built" >&2; exit 2; }
reps=${REPS:-5}
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] && echo "raw outputs in $tmp" >&2 || rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
common=(--allow-run-as-root --oversubscribe --bind-to "${BIND:-none}" -np 2 --mca pml ob1
	--mca btl_base_warn_component_unused 0)
vader=(--mca btl self,vader)
sctp=(--mca btl self,sctp --mca btl_sctp_if_include lo -x SCTPT_SHM=1
	--mca mca_base_component_path "$build/ompi-btl/.libs${compdir:+:$compdir}")
# shellcheck disable=SC2206
[ -n "${SCTP_MCA:-}" ] && sctp+=(${SCTP_MCA})

run() { # stack test rep
	local -n extra=$1
	timeout 900 "$mpirun" "${common[@]}" "${extra[@]}" "$osu" -t "$2" -q "${Q:-1}" \
		-m "${MAX:-4194304}" -n "${MIN:-0}" >"$tmp/$1.$2.$3" 2>"$tmp/err.$1.$2.$3" ||
		{ echo "shm_vader.sh: $1 $2 failed:" >&2; tail -5 "$tmp/err.$1.$2.$3" >&2; return 1; }
}

# median of column $2 for size $1 over the files given
med() {
	local size=$1 col=$2
	shift 2
	cat "$@" | awk -v s="$size" -v c="$col" '$1 == s {print $c}' | sort -g |
		awk '{v[NR]=$1} END {print NR ? (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2) : 0}'
}

for t in ${TESTS:-latency bw}; do
	for r in $(seq 1 "$reps"); do
		if [ $((r % 2)) = 1 ]; then order="vader sctp"; else order="sctp vader"; fi
		for s in $order; do
			run "$s" "$t" "$r" || exit 1
		done
	done
done

printf '# shm_vader: 2 ranks on one host (%s CPUs, load %s: a machine shared with other work), %s repetitions, bound to %s%s\n' \
	"$(nproc)" "$(cut -d' ' -f1 /proc/loadavg)" "$reps" "${BIND:-none}" "${SCTP_MCA:+; sctp with $SCTP_MCA}"
for t in ${TESTS:-latency bw}; do
	unit=$([ "$t" = latency ] && echo "us" || echo "MB/s")
	printf '# %s, %s: median of pieces (OSU mean)\n%-8s %18s %18s %12s %12s\n' "$t" "$unit" size \
		vader sctp sctp/vader "(OSU means)"
	for size in $(grep -hv '^#' "$tmp"/vader."$t".* | awk '{print $1}' | sort -gu); do
		vm=$(med "$size" 2 "$tmp"/vader."$t".*)
		vp=$(med "$size" 3 "$tmp"/vader."$t".*)
		sm=$(med "$size" 2 "$tmp"/sctp."$t".*)
		sp=$(med "$size" 3 "$tmp"/sctp."$t".*)
		awk -v s="$size" -v vm="$vm" -v vp="$vp" -v sm="$sm" -v sp="$sp" 'BEGIN {
			printf "%-8s %8.2f (%7.2f) %8.2f (%7.2f) %12.2f %12.2f\n", s, vp, vm, sp, sm,
				(vp > 0 ? sp / vp : 0), (vm > 0 ? sm / vm : 0) }'
	done
done

# the goals, on the medians of pieces
ratio() { # test size: sctp/vader
	awk -v a="$(med "$2" 3 "$tmp"/sctp."$1".*)" -v b="$(med "$2" 3 "$tmp"/vader."$1".*)" \
		'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'
}
if echo "${TESTS:-latency bw}" | grep -q latency && [ "${MIN:-0}" -le 0 ]; then
	r0=$(ratio latency 0)
	echo "# goal: 0-byte latency within 1.5x of vader's: ${r0}x $(awk -v r="$r0" 'BEGIN { print (r <= 1.5 ? "(met)" : "(not met)") }')"
	[ "${MAX:-4194304}" -ge 65536 ] && echo "# 64 KiB latency: $(ratio latency 65536)x vader's"
fi
if echo "${TESTS:-latency bw}" | grep -q bw && [ "${MAX:-4194304}" -ge 65536 ]; then
	worst=$(for size in $(grep -hv '^#' "$tmp"/vader.bw.* | awk '$1 >= 65536 {print $1}' | sort -gu); do
		echo "$size $(ratio bw "$size")"; done | sort -k2 -g | head -1)
	echo "# goal: bandwidth at least 0.9x vader's from 64 KiB: lowest ${worst#* }x (at ${worst%% *} B) $(awk -v r="${worst#* }" 'BEGIN { print (r >= 0.9 ? "(met)" : "(not met)") }')"
fi

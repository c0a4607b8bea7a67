#!/usr/bin/env bash
# osc_compare.sh <build dir> [output dir]: MPI one-sided over three stacks in one run, 2 ranks:
#   rdma/sctp   osc rdma on btl sctp's RDMA (iWARP over SCTP)   -- the thesis's hybrid design
#   pt2pt/sctp  osc pt2pt on btl sctp (RDMA off: one-sided as point-to-point messages)
#   pt2pt/tcp   osc pt2pt on btl tcp (osc rdma cannot run over btl tcp)
# bench_osc's put/get latency and bandwidth, accumulate latency and the thesis's mixed test
# (Isend traffic overlapped with Put/Get under fence); best of REPS (3) alternating runs.
# One table per test and osc_compare.png (gnuplot). Loopback unless IFACE is set.
set -u
build=${1:?usage: osc_compare.sh <build dir> [output dir]}
build=$(cd "$build" && pwd) || exit 2
out=${2:-$build/benchmarks/btl/osc-results}
bench=$build/benchmarks/btl/bench_osc
mkdir -p "$out" || exit 2
mpirun=$(sed -n 's/^MPIRUN = //p' "$build/benchmarks/btl/Makefile")
compdir=$(sed -n 's/^OMPI_COMPONENTDIR = //p' "$build/benchmarks/btl/Makefile")
[ -x "${mpirun:-}" ] || mpirun=$(command -v mpirun) || { echo "osc_compare.sh: mpirun not found" >&2; exit 77; }
[ -x "$bench" ] || { echo "osc_compare.sh: $bench not built" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
iface=${IFACE:-lo}
opts=(--allow-run-as-root --oversubscribe --bind-to none -np 2
	--mca mca_base_component_path "$build/ompi-btl/.libs:$compdir" --mca pml ob1
	--mca btl_tcp_if_include "$iface" --mca btl_sctp_if_include "$iface"
	--mca btl_base_warn_component_unused 0)
declare -A stack=(
	[rdma_sctp]="--mca btl self,sctp --mca osc rdma --mca osc_rdma_btls sctp"
	[pt2pt_sctp]="--mca btl self,sctp --mca osc pt2pt --mca btl_sctp_rdma 0"
	[pt2pt_tcp]="--mca btl self,tcp --mca osc pt2pt")
stacks="rdma_sctp pt2pt_sctp pt2pt_tcp"
if [ "${FULL:-0}" = 1 ]; then args="-m 4194304 -i 400 -w 32"; else args="-m 1048576 -i 100 -w 16"; fi
reps=${REPS:-3}
status=0
rm -f "$out"/*.dat
for t in put_lat get_lat acc_lat put_bw get_bw mixed; do
	for rep in $(seq 1 "$reps"); do
		for s in $stacks; do
			echo "== bench_osc $t over $s ($rep/$reps)" >&2
			# shellcheck disable=SC2086
			if timeout -k 5 300 "$mpirun" "${opts[@]}" ${stack[$s]} "$bench" "$t" $args \
				>"$out/$t.$s.$rep.log" 2>&1; then
				grep -E '^[0-9]+ ' "$out/$t.$s.$rep.log" >"$out/$t.$s.$rep.dat"
			else
				echo "osc_compare.sh: $t over $s failed:" >&2; tail -n 5 "$out/$t.$s.$rep.log" >&2
				: >"$out/$t.$s.$rep.dat"; status=1
			fi
		done
	done
	case $t in *_bw) low=0 ;; *) low=1 ;; esac
	for s in $stacks; do
		cat "$out/$t.$s".*.dat | awk -v low=$low '!($1 in v) { o[n++] = $1; v[$1] = $2; next }
			low && $2 < v[$1] { v[$1] = $2 } !low && $2 > v[$1] { v[$1] = $2 }
			END { for (i = 0; i < n; i++) print o[i], v[o[i]] }' >"$out/$t.$s.dat"
	done
done
{
	echo "MPI one-sided, 2 ranks, $(date -u '+%Y-%m-%d %H:%M UTC'), interface $iface, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), best of $reps"
	for t in put_lat get_lat acc_lat put_bw get_bw mixed; do
		case $t in *_bw) unit="MB/s, higher is better" ;; mixed) unit="us per fence epoch with Isend traffic, lower is better" ;; *) unit="us, lower is better" ;; esac
		printf '\n%s (%s)\n%10s | %12s | %12s | %12s\n' "$t" "$unit" size rdma/sctp pt2pt/sctp pt2pt/tcp
		printf -- '-----------+--------------+--------------+-------------\n'
		join "$out/$t.rdma_sctp.dat" "$out/$t.pt2pt_sctp.dat" | join - "$out/$t.pt2pt_tcp.dat" |
			awk '{ z = $1; h = z >= 1048576 ? sprintf("%d MiB", z / 1048576) : z >= 1024 ? sprintf("%d KiB", z / 1024) : sprintf("%d B", z);
				printf "%10s | %12s | %12s | %12s\n", h, $2, $3, $4 }'
	done
} | tee "$out/osc_compare.txt"
if command -v gnuplot >/dev/null; then
	{
		echo 'set terminal pngcairo size 1500,900 font ",10"'
		echo "set output \"$out/osc_compare.png\""
		echo 'set multiplot layout 2,3 title "MPI one-sided: osc rdma on btl sctp (iWARP over SCTP) vs osc pt2pt"'
		echo 'set logscale x 2; set logscale y; set grid; set key top left; set xlabel "bytes"; set format x "%.0b%BB"'
		for t in put_lat get_lat acc_lat put_bw get_bw mixed; do
			echo "set title \"$t\" noenhanced; set ylabel \"$(case $t in *_bw) echo MB/s ;; *) echo us ;; esac)\""
			echo "plot \"$out/$t.rdma_sctp.dat\" w lp t \"osc rdma, btl sctp\", \"$out/$t.pt2pt_sctp.dat\" w lp t \"osc pt2pt, btl sctp\", \"$out/$t.pt2pt_tcp.dat\" w lp t \"osc pt2pt, btl tcp\""
		done
		echo 'unset multiplot'
	} | gnuplot 2>"$out/gnuplot.log" && echo "plot: $out/osc_compare.png"
fi
exit $status

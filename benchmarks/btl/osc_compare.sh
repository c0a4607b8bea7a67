#!/usr/bin/env bash
# osc_compare.sh <build dir> [output dir]: MPI one-sided (bench_osc: the OSU one-sided
# benchmarks on MPI_Win_create windows) over three stacks in one run, 2 ranks:
#   rdma       osc rdma on btl sctp's RDMA (iWARP over SCTP)   -- the thesis's hybrid design
#   pt2pt      osc pt2pt on btl sctp (RDMA off: one-sided as point-to-point messages)
#   pt2pt_tcp  osc pt2pt on btl tcp (osc rdma cannot run over btl tcp)
# Tests: put/get/accumulate latency with lock and with fence synchronization, put and get
# bandwidth (lock), bidirectional put bandwidth (fence) and the thesis's mixed test (Isend
# traffic overlapped with Put/Get under fence). Each runs REPS times (3), the stacks
# alternating; tables show medians and the ratios rdma/pt2pt (the goal: osc rdma better than
# osc pt2pt over btl sctp at every size) and rdma/pt2pt_tcp; osc_compare.png (gnuplot).
# Environment: QUICK=1 (OSU iteration counts x0.1) or Q=F, MEDIAN=0 (OSU's averages instead of
# each run's median iteration), TESTS="put_lat:lock ...",
# OLD=DIR (also osc rdma on the btl sctp of another build directory), BUFSIZE=N (also osc rdma
# with --mca osc_rdma_buffer_size N, stack "rdma_big": osc rdma accumulates in get-op-put pieces
# of buffer_size/8 bytes, 4 KiB by default, each piece a blocking round trip), IFACE (default lo).
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
old=""
if [ -n "${OLD:-}" ]; then
	old=$(cd "$OLD" && pwd)/ompi-btl/.libs
	[ -f "$old/mca_btl_sctp.so" ] || { echo "osc_compare.sh: $old/mca_btl_sctp.so not built" >&2; exit 2; }
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
iface=${IFACE:-lo}
opts=(--allow-run-as-root --oversubscribe --bind-to none -np 2 --mca pml ob1
	--mca btl_tcp_if_include "$iface" --mca btl_sctp_if_include "$iface"
	--mca btl_base_warn_component_unused 0 -x SCTPT_SHM="${SCTPT_SHM:-0}")
new=$build/ompi-btl/.libs
declare -A stack=(
	[rdma]="--mca mca_base_component_path $new:$compdir --mca btl self,sctp --mca osc rdma --mca osc_rdma_btls sctp"
	[pt2pt]="--mca mca_base_component_path $new:$compdir --mca btl self,sctp --mca osc pt2pt --mca btl_sctp_rdma 0"
	[pt2pt_tcp]="--mca mca_base_component_path $new:$compdir --mca btl self,tcp --mca osc pt2pt")
stacks="rdma pt2pt pt2pt_tcp"
if [ -n "$old" ]; then
	stack[old]="--mca mca_base_component_path $old:$compdir --mca btl self,sctp --mca osc rdma --mca osc_rdma_btls sctp"
	stacks="rdma old pt2pt pt2pt_tcp"
fi
if [ -n "${BUFSIZE:-}" ]; then
	stack[rdma_big]="${stack[rdma]} --mca osc_rdma_buffer_size $BUFSIZE"
	stacks="${stacks/rdma /rdma rdma_big }"
fi
q=${Q:-$([ "${QUICK:-0}" = 1 ] && echo 0.1 || echo 1)}
# per-iteration medians (each iteration or window timed, -M) unless MEDIAN=0 (OSU's averages)
med=$([ "${MEDIAN:-1}" = 0 ] || echo -M)
what=$([ -n "$med" ] && echo "the median iteration of each run (OSU: the average; MEDIAN=0)" || echo "OSU's average per run")
reps=${REPS:-3}
tests=${TESTS:-put_lat:lock get_lat:lock acc_lat:lock put_lat:fence get_lat:fence acc_lat:fence put_bw:lock get_bw:lock put_bibw:fence mixed:fence}
status=0
rm -f "$out"/*.dat "$out"/*.log
for ts in $tests; do
	t=${ts%:*} sync=${ts#*:} name=${ts/:/.}
	for rep in $(seq 1 "$reps"); do
		for s in $stacks; do
			echo "== bench_osc $t -s $sync over $s ($rep/$reps)" >&2
			log=$out/$name.$s.$rep.log
			# shellcheck disable=SC2086
			timeout -k 5 900 "$mpirun" "${opts[@]}" ${stack[$s]} "$bench" "$t" -s "$sync" -q "$q" $med \
				>"$log" 2>&1
			rc=$?
			grep -E '^[0-9]+ ' "$log" >"$out/$name.$s.$rep.dat"
			if [ $rc -ne 0 ]; then
				echo "osc_compare.sh: $t ($sync) over $s failed (status $rc):" >&2
				tail -n 5 "$log" >&2
				status=1
			fi
		done
	done
	for s in $stacks; do
		cat "$out/$name.$s".*.dat | awk '
			{ if (!($1 in n)) o[k++] = $1; v[$1, ++n[$1]] = $2 }
			END { for (i = 0; i < k; i++) { z = o[i]; m = n[z]
				for (a = 1; a <= m; a++) x[a] = v[z, a]
				for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (x[b] < x[a]) { y = x[a]; x[a] = x[b]; x[b] = y }
				print z, (m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2) } }' >"$out/$name.$s.dat"
	done
done

{
	echo "MPI one-sided (OSU pattern, MPI_Win_create), 2 ranks, $(date -u '+%Y-%m-%d %H:%M UTC'), interface $iface, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), iterations x$q, $what, median of $reps alternating runs"
	echo "rdma: osc rdma over btl sctp (iWARP); pt2pt: osc pt2pt over btl sctp; pt2pt_tcp: osc pt2pt over btl tcp${old:+; old: osc rdma over $old}${BUFSIZE:+; rdma_big: osc rdma with osc_rdma_buffer_size $BUFSIZE}"
	for ts in $tests; do
		t=${ts%:*} sync=${ts#*:} name=${ts/:/.}
		case $t in *bw*) unit="MB/s, higher is better" better=high ;; mixed) unit="us per fence epoch with Isend traffic, lower is better" better=low ;; *) unit="us, lower is better" better=low ;; esac
		printf '\n%s, %s (%s)\n' "$t" "$sync" "$unit"
		awk -v names="$stacks" -v dir="$out" -v name="$name" -v better="$better" '
			function human(z) { return z >= 1048576 ? sprintf("%d MiB", z / 1048576) : z >= 1024 ? sprintf("%d KiB", z / 1024) : sprintf("%d B", z) }
			BEGIN {
				ns = split(names, s, " ")
				for (i = 1; i <= ns; i++) {
					f = dir "/" name "." s[i] ".dat"
					while ((getline line < f) > 0) { split(line, a, " "); if (!(a[1] in seen)) { seen[a[1]] = 1; z[nz++] = a[1] } v[s[i], a[1]] = a[2] }
					close(f)
				}
				hdr = sprintf("%9s", "size")
				for (i = 1; i <= ns; i++) hdr = hdr sprintf(" | %10s", s[i])
				hdr = hdr sprintf(" | %11s | %15s", "rdma/pt2pt", "rdma/pt2pt_tcp")
				if ((" " names " ") ~ / old /) hdr = hdr sprintf(" | %8s", "new/old")
				if (names ~ /rdma_big/) hdr = hdr sprintf(" | %9s", "big/pt2pt")
				print hdr
				for (k = 0; k < nz; k++) {
					zz = z[k]; line = sprintf("%9s", human(zz))
					for (i = 1; i <= ns; i++) line = line sprintf(" | %10s", ((s[i], zz) in v) ? v[s[i], zz] : "-")
					r = v["rdma", zz]; p = v["pt2pt", zz]; pt = v["pt2pt_tcp", zz]; o = v["old", zz]
					mark = (p > 0 && r > 0 && ((better == "low" && r >= p) || (better == "high" && r <= p))) ? " *" : ""
					line = line sprintf(" | %11s | %15s", p > 0 ? sprintf("%.2f%s", r / p, mark) : "-", pt > 0 ? sprintf("%.2f", r / pt) : "-")
					if ((" " names " ") ~ / old /) line = line sprintf(" | %8s", o > 0 ? sprintf("%.2f", r / o) : "-")
					if (names ~ /rdma_big/) { bg = v["rdma_big", zz]; line = line sprintf(" | %9s", p > 0 && bg > 0 ? sprintf("%.2f", bg / p) : "-") }
					print line
				}
			}'
	done
	echo
	echo "* osc rdma not better than osc pt2pt over btl sctp at that size"
} | tee "$out/osc_compare.txt"
if command -v gnuplot >/dev/null; then
	n=$(echo "$tests" | wc -w)
	{
		echo "set terminal pngcairo size 1800,$(( (n + 3) / 4 * 380 )) font \",9\""
		echo "set output \"$out/osc_compare.png\""
		echo "set multiplot layout $(( (n + 3) / 4 )),4 title \"MPI one-sided: osc rdma on btl sctp (iWARP over SCTP) vs osc pt2pt (median of $reps)\""
		echo 'set logscale x 2; set logscale y; set grid; set key top left; set xlabel "bytes"; set format x "%.0b%BB"'
		for ts in $tests; do
			t=${ts%:*} name=${ts/:/.}
			echo "set title \"$t ${ts#*:}\" noenhanced; set ylabel \"$(case $t in *bw*) echo MB/s ;; *) echo us ;; esac)\""
			printf 'plot '
			sep=""
			for s in $stacks; do
				printf '%s"%s/%s.%s.dat" u ($1 > 0 ? $1 : 1):2 w lp t "%s"' "$sep" "$out" "$name" "$s" "$s"
				sep=", "
			done
			echo
		done
		echo 'unset multiplot'
	} | gnuplot 2>"$out/gnuplot.log" && echo "plot: $out/osc_compare.png"
fi
echo "table: $out/osc_compare.txt"
exit $status

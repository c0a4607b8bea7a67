#!/usr/bin/env bash
# MPICH's own test suite (test/mpi of the very source tree the channel was built from) on
# ch3:sctp and, as the reference, on ch3:sock built the same way: the directories in DIRS
# (default pt2pt coll threads/pt2pt) with at most 4 processes (runtests -maxnp=4: tests
# written for more run with 4). Prints pass/fail counts per device and directory, then every
# test that failed on ch3:sctp with the first lines of its output and its result on ch3:sock.
#
#   test/ch3/mpich_suite.sh [OUTDIR]      (default ./mpich-suite; TAP files and logs there)
#
# Not part of `make check`: several hundred tests take long on a small machine. Environment:
#   DIRS="pt2pt coll threads/pt2pt"  DEVICES="ch3:sctp ch3:sock"  MAXNP=4
#   MPITEST_TIMEOUT (runtests: seconds per test, 180)
#   SUMMARY_ONLY=1: no runs, the summary of the TAP files already in OUTDIR
set -u

# one function, read whole before it runs: editing this file meanwhile cannot derail a run
main() {
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$PWD/mpich-suite}
dirs=${DIRS:-pt2pt coll threads/pt2pt}
devices=${DEVICES:-ch3:sctp ch3:sock}
maxnp=${MAXNP:-4}
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
# SCTP between the ranks of this one host (the core's shared memory would carry it otherwise)
export SCTPT_SHM=0

for dev in $devices; do
	[ "${SUMMARY_ONLY:-0}" = 0 ] || break
	tag=${dev/:/-}
	prefix=$("$here/scripts/mpich-build.sh" --device "$dev" | tail -n 1) ||
		{ echo "mpich_suite: building MPICH with $dev failed" >&2; exit 1; }
	tree=$(dirname "$prefix")/mpich/test/mpi
	[ -x "$tree/runtests" ] || { echo "mpich_suite: no runtests in $tree" >&2; exit 1; }
	echo "== $dev: $(echo $dirs) (maxnp $maxnp), results in $out/$tag.tap"
	start=$SECONDS
	(cd "$tree" && make -C util >"$out/$tag-util.log" 2>&1 &&
		MPITEST_MPIEXECARG="-launcher fork" ./runtests -srcdir=. -tests=testlist \
			-testdirs="$(echo $dirs | tr ' ' ',')" -maxnp="$maxnp" \
			-mpiexec="$prefix/bin/mpiexec" -tapfile="$out/$tag.tap" \
			>"$out/$tag.log" 2>&1)
	echo "   ran in $((SECONDS - start)) s"
done

# runtests' TAP: "ok  - ./pt2pt/name np # time=..." (4.0.2 prints no test numbers), a failed
# test's output follows as "## " lines. results FILE: "index status name np" per test, in order.
results() {
	awk '/^(not )?ok / { n++; st = /^not/ ? "FAIL" : (/# SKIP/ ? "SKIP" : "PASS")
		sub(/^(not )?ok [0-9]* *- /, ""); sub(/ *#.*/, ""); print n, st, $0 }' "$1"
}
echo
for dev in $devices; do
	tag=${dev/:/-}
	results "$out/$tag.tap" >"$out/$tag.results"
	for d in $dirs; do
		printf '%-10s %-14s %s passed, %s failed, %s skipped\n' "$dev" "$d" \
			"$(grep -c " PASS \./$d/[^/]* " "$out/$tag.results")" \
			"$(grep -c " FAIL \./$d/[^/]* " "$out/$tag.results")" \
			"$(grep -c " SKIP \./$d/[^/]* " "$out/$tag.results")"
	done
done

first=${devices%% *}
ref=$(echo "$devices" | awk '{ print $2 }')
echo
echo "== tests that failed on $first (first lines of their output; result on ${ref:-nothing else})"
grep ' FAIL ' "$out/${first/:/-}.results" | while read -r idx st name np; do
	echo "-- $name $np"
	# the output lines after the idx-th result line
	awk -v want="$idx" '/^(not )?ok / { n++; next } n == want && /^## / && !/^## Test output/' \
		"$out/${first/:/-}.tap" | sed -n '1,4p'
	if [ -n "$ref" ]; then
		# both runs go through the same lists in the same order
		r=$(awk -v i="$idx" '$1 == i' "$out/${ref/:/-}.results")
		case $r in
		*" $name $np") echo "   on $ref: $(echo "$r" | awk '{ print $2 }')" ;;
		*) echo "   on $ref: not comparable (${r:-not run})" ;;
		esac
	fi
done
}

main "$@"
exit $?

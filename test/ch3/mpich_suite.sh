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
set -u
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

# "ok N - ./pt2pt/name np" / "not ok N - ..." with the test's output as "  ## " lines after it
summary() { # TAPFILE DIR
	local ok bad
	local skipped
	ok=$(grep "^ok [0-9]* - \./$2/[^/]* " "$1" | grep -vc '# SKIP')
	skipped=$(grep "^ok [0-9]* - \./$2/[^/]* " "$1" | grep -c '# SKIP')
	bad=$(grep -c "^not ok [0-9]* - \./$2/[^/]* " "$1")
	echo "$ok passed, $bad failed, $skipped skipped"
}
echo
for dev in $devices; do
	tag=${dev/:/-}
	for d in $dirs; do
		printf '%-10s %-14s %s\n' "$dev" "$d" "$(summary "$out/$tag.tap" "$d")"
	done
done

first=${devices%% *}
ref=$(echo "$devices" | awk '{ print $2 }')
echo
echo "== tests that failed on $first (first lines of their output; result on ${ref:-nothing else})"
grep "^not ok" "$out/${first/:/-}.tap" | while read -r line; do
	num=$(echo "$line" | awk '{ print $3 }')
	name=$(echo "$line" | sed 's/^not ok [0-9]* - //; s/ #.*//')
	echo "-- $name"
	awk -v n="$line" '$0 == n { on = 1; next } on && /^(not )?ok / { exit } on && /^## / && !/^## Test output/' \
		"$out/${first/:/-}.tap" | sed -n '1,5p'
	if [ -n "$ref" ]; then
		# both runs go through the same list in the same order: same number, same test
		r=$(grep -E "^(not )?ok $num - " "$out/${ref/:/-}.tap" | head -n 1)
		case $r in
		*" - $name"*) echo "   on $ref: $(echo "$r" | sed 's/ [0-9]* - .*//')" ;;
		*) echo "   on $ref: not comparable (${r:-not run})" ;;
		esac
	fi
done

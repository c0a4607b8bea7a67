#!/usr/bin/env bash
# MPICH's own test suite, directory rma (test/mpi/rma of the source tree ch3:hybrid was built
# from, runtests -maxnp=4), on ch3:hybrid. Every test must pass or be listed, with the reason
# it fails, in hybrid_rma_known.txt ("name np: reason", the same failure on ch3:sctp or
# ch3:sock where the reason says so); a listed test that passes is reported, not failed.
# Takes 10-20 minutes on 2 cores. OUTDIR (default ./hybrid-rma-suite) keeps the TAP and logs.
# 10-20 minutes do not fit CI's budget: it runs when SCTPMPI_SUITES=1 (by hand, or a long job).
[ "${SCTPMPI_SUITES:-0}" = 1 ] || { echo "SKIP: MPICH's rma suite runs with SCTPMPI_SUITES=1 (10-20 minutes)"; exit 77; }
. "$(dirname "$0")/hybrid_common.sh"
out=${OUTDIR:-$PWD/hybrid-rma-suite}
known=$top_srcdir/test/ch3/hybrid_rma_known.txt
DIRS=rma DEVICES=ch3:hybrid MAXNP=${MAXNP:-4} "$top_srcdir/test/ch3/mpich_suite.sh" "$out" ||
	die "mpich_suite.sh failed"
res=$out/ch3-hybrid.results
[ -s "$res" ] || die "no results in $res"
pass=$(grep -c ' PASS ' "$res")
fail=$(grep -c ' FAIL ' "$res")
echo "rma on ch3:hybrid: $pass passed, $fail failed, $(grep -c ' SKIP ' "$res") skipped"
unknown=0
while read -r idx st name np; do
	key="${name#./rma/} $np"
	reason=$(grep -F "$key:" "$known" 2>/dev/null | head -n 1 | sed 's/^[^:]*: *//')
	if [ -n "$reason" ]; then
		echo "  known: $key: $reason"
	else
		echo "  NEW FAILURE: $key (output below)"
		awk -v want="$idx" '/^(not )?ok / { n++; next } n == want && /^## / && !/^## Test output/' \
			"$out/ch3-hybrid.tap" | sed -n '1,8p' | sed 's/^/    /'
		unknown=$((unknown + 1))
	fi
done < <(grep ' FAIL ' "$res")
grep -v '^#' "$known" 2>/dev/null | grep . | while IFS=: read -r key _; do
	grep -q " PASS \./rma/${key% *} ${key##* }\$" "$res" && echo "  listed as failing but passed: $key"
done
[ "$unknown" -eq 0 ] || die "$unknown rma tests failed that hybrid_rma_known.txt does not list"

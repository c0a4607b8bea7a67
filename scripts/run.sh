#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine:
#   scripts/run.sh main   install packages, build, run the main job (benchmark comparison)
#   scripts/run.sh test   install packages, build, run every test (gcc -Werror, then ASan+UBSan,
#                         then libFuzzer), and print "N passed, N failed"
# Build trees live in _build/ inside the clone; slow external builds go to $SCTPMPI_CACHE
# (default ~/.cache/sctp-mpi), keyed by version.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
mode=${1:-}
case "$mode" in main|test|build) ;; *) echo "usage: $0 main|test|build" >&2; exit 2 ;; esac
jobs=$(nproc 2>/dev/null || echo 2)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

# MPICH's source comes from `apt-get source mpich`: source lines must be on.
enable_deb_src() {
	local f=/etc/apt/sources.list.d/debian.sources sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	if [ -f "$f" ] && grep -q '^Types: deb$' "$f"; then
		$sudo sed -i 's/^Types: deb$/Types: deb deb-src/' "$f"
		$sudo apt-get update -q
	elif [ -f /etc/apt/sources.list ] && ! grep -q '^deb-src' /etc/apt/sources.list &&
		grep -q '^deb ' /etc/apt/sources.list; then
		sed -n 's/^deb /deb-src /p' /etc/apt/sources.list | $sudo tee -a /etc/apt/sources.list >/dev/null
		$sudo apt-get update -q
	fi
}

install_packages() {
	local want missing=()
	want=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' scripts/packages.txt)
	for p in $want; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "== installing: ${missing[*]}"
	local sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -q
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# configure_build DIR [configure args...]: configure once, then make (incremental).
configure_build() {
	local dir=$1; shift
	mkdir -p "$dir"
	if [ ! -f "$dir/Makefile" ] || [ configure -nt "$dir/Makefile" ]; then
		(cd "$dir" && "$top/configure" -q "$@")
	fi
	make -s -C "$dir" -j"$jobs"
}

build() {
	[ -x configure ] && [ configure -nt configure.ac ] || ./autogen.sh >/dev/null 2>&1 || ./autogen.sh
	configure_build _build/gcc --enable-werror
}

# count_results DIR: adds the automake .trs results under DIR to the totals.
passed=0 failed=0 skipped=0
count_results() {
	local results p f s
	results=$(find "$1" -name '*.trs' -exec cat {} + 2>/dev/null | grep '^:test-result:' || true)
	# automake counts XFAIL (a documented expected failure) as success, and so do we
	p=$(grep -c -E '^:test-result: (PASS|XFAIL)' <<<"$results" || true)
	f=$(grep -c -E '^:test-result: (FAIL|XPASS|ERROR)' <<<"$results" || true)
	s=$(grep -c '^:test-result: SKIP' <<<"$results" || true)
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	echo "== $1: $p passed, $f failed, $s skipped"
	find "$1" -name '*.trs' -exec grep -l -E '^:test-result: (FAIL|XPASS|ERROR)' {} + 2>/dev/null |
		while read -r t; do
			echo "   FAILED: ${t%.trs}"
			tail -n 30 "${t%.trs}.log" | sed 's/^/     | /'
		done || true
	find "$1" -name '*.trs' -exec grep -l '^:test-result: SKIP' {} + 2>/dev/null |
		while read -r t; do
			echo "   skipped: ${t%.trs}: $(grep -m1 -i skip "${t%.trs}.log" | cut -c1-120)"
		done || true
}

run_check() {
	local dir=$1
	find "$dir" -name '*.trs' -delete
	make -C "$dir" -k check -j1 >"$dir/check.out" 2>&1 || true
	count_results "$dir"
}

# Fuzz pass: clang + libFuzzer, each fuzz_* target for FUZZ_SECONDS on a copy of its corpus.
run_fuzz() {
	local dir=_build/fuzz secs=${FUZZ_SECONDS:-20}
	configure_build "$dir" CC=clang --enable-libfuzzer \
		CFLAGS="-g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all"
	make -s -C "$dir" -j"$jobs" check TESTS= >/dev/null
	local t name src corpus
	for t in $(find "$dir" -type f -perm -u+x -name 'fuzz_*' ! -name '*.*' | sort); do
		name=$(basename "$t"); name=${name#fuzz_}
		src=$(dirname "${t#"$dir"/}")
		corpus=$(mktemp -d)
		[ -d "$src/corpus/$name" ] && cp -r "$src/corpus/$name/." "$corpus/"
		if "$t" -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=0 "$corpus" \
			>"$t.fuzz.log" 2>&1; then
			passed=$((passed + 1)); echo "   fuzz $src/$name: ok"
		else
			failed=$((failed + 1)); echo "   FAILED fuzz $src/$name"; tail -n 40 "$t.fuzz.log" | sed 's/^/     | /'
		fi
		rm -rf "$corpus"
	done
}

install_packages
enable_deb_src
build
case "$mode" in
build) ;;
main)
	bash scripts/mpich-build.sh --device ch3:sctp
	bash scripts/mpich-build.sh --device ch3:sock
	scripts/main-job.sh _build/gcc
	;;
test)
	# MPICH with our channels, cached outside the clone (test/ch3 would build them too; here a
	# failure shows early and readably)
	bash scripts/mpich-build.sh --device ch3:sctp || echo "== mpich-build ch3:sctp failed" >&2
	bash scripts/mpich-build.sh --device ch3:hybrid || echo "== mpich-build ch3:hybrid failed" >&2
	echo "== gcc -Werror build: tests"
	run_check _build/gcc
	echo "== ASan+UBSan build: tests"
	configure_build _build/asan --enable-werror --enable-sanitizers
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 run_check _build/asan
	echo "== libFuzzer targets"
	run_fuzz
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
	;;
esac

#!/usr/bin/env bash
# Builds and installs MPICH with a CH3 channel, cached outside the clone.
#
#   scripts/mpich-build.sh [--device ch3:sctp|ch3:hybrid|ch3:sock] [--src MPICH_SOURCE_TREE]
#                          [--jobs N]
#                          [--prefix-only] [--quiet]
#
# Default source: `apt-get source mpich` (Debian 12: MPICH 4.0.2) fetched into
# $SCTPMPI_CACHE/src. The default device is our ch3:sctp channel (ch3-sctp/ in this
# repository), linked with the project's SCTP core (built here as a PIC archive); ch3:hybrid
# (ch3-hybrid/) is ch3:sctp's code plus one-sided communication over the core's iWARP layer
# (transport/iw, added to the archive); ch3:sock is MPICH's own TCP channel, built the same
# way as the baseline.
#
# Cache ($SCTPMPI_CACHE, default ~/.cache/sctp-mpi): one directory per MPICH version, device
# and hash of whatever needs autogen/configure (the channel's build files and errnames.txt,
# the configure options). Inside it: the autogen'd tree, built in place, and install/ (the
# prefix: bin/mpicc, bin/mpiexec, ...). A stamp holds the hash of every channel and core
# source: when only those changed, the kept tree gets the new files and `make install`
# (minutes), never a new configure. The last line printed is the install prefix.
#
# Exit status: 0 built (or already cached), 1 failure (the log's tail is printed).
set -euo pipefail

# All in one function: bash reads it whole before running it, so editing this file while a
# build runs cannot derail that build.
main() {
# started from `make check`, the environment holds automake's top_srcdir (test/ch3 exports
# it): MPICH's configure would take it for its own source tree
unset top_srcdir srcdir abs_top_srcdir abs_srcdir top_builddir builddir
here=$(cd "$(dirname "$0")/.." && pwd)
device=ch3:sctp
src=
jobs=${SCTPMPI_JOBS:-$(nproc)}
prefix_only=no
quiet=no
while [ $# -gt 0 ]; do
	case $1 in
	--device) device=$2; shift 2 ;;
	--device=*) device=${1#*=}; shift ;;
	--src) src=$2; shift 2 ;;
	--src=*) src=${1#*=}; shift ;;
	--jobs) jobs=$2; shift 2 ;;
	--prefix-only) prefix_only=yes; shift ;;
	--quiet) quiet=yes; shift ;;
	-h|--help) sed -n '2,20p' "$0"; exit 0 ;;
	*) echo "mpich-build.sh: unknown argument $1" >&2; exit 1 ;;
	esac
done
case $device in
ch3:sctp|ch3:hybrid|ch3:sock) ;;
*) echo "mpich-build.sh: device $device: expected ch3:sctp, ch3:hybrid or ch3:sock" >&2; exit 1 ;;
esac
# our channels (built with the core) as opposed to MPICH's own
ours=$([ "$device" = ch3:sock ] && echo no || echo yes)

cache=${SCTPMPI_CACHE:-$HOME/.cache/sctp-mpi}
mkdir -p "$cache/src"
say() { [ "$quiet" = yes ] || echo "mpich-build: $*" >&2; }
die() { echo "mpich-build: $*" >&2; exit 1; }

# ---- the MPICH source tree
if [ -z "$src" ]; then
	src=$(ls -d "$cache"/src/mpich-[0-9]*/ 2>/dev/null | sort -V | tail -n 1 || true)
	src=${src%/}
	if [ -z "$src" ] || [ ! -f "$src/maint/version.m4" ]; then
		[ "$prefix_only" = no ] || exit 1
		say "fetching MPICH's source with apt-get source mpich into $cache/src"
		command -v dpkg-source >/dev/null || die "apt-get source needs dpkg-dev"
		(cd "$cache/src" && apt-get source mpich >"$cache/src/apt-source.log" 2>&1) ||
			{ tail -n 20 "$cache/src/apt-source.log" >&2; die "apt-get source mpich failed (deb-src lines in the apt sources?)"; }
		src=$(ls -d "$cache"/src/mpich-[0-9]*/ | sort -V | tail -n 1)
		src=${src%/}
	fi
fi
src=$(cd "$src" && pwd)
[ -f "$src/maint/version.m4" ] || die "$src is not an MPICH source tree (no maint/version.m4)"
version=$(sed -n 's/.*MPICH_VERSION_m4\],\[\([^]]*\)\].*/\1/p' "$src/maint/version.m4" | head -n 1)
[ -n "$version" ] || die "cannot read MPICH's version from $src/maint/version.m4"

# ---- what the build depends on
chan_dir=$here/ch3-sctp
# channel files MPICH's autogen/configure read (a change needs a new tree); errnames.txt is
# extracted again in the kept tree (defmsg.h) when it changes
chan_cfg_files=(subconfigure.m4 Makefile.mk src/Makefile.mk)
configure_opts=(--with-device="$device" --disable-fortran --disable-cxx --disable-romio
	--with-hwloc=/usr --disable-static --enable-threads=multiple
	--with-datatype-engine=dataloop --enable-silent-rules)
# Makefile.am SOURCES lists of the core and what it uses (parsed, so added files follow)
core_libs=("transport libsctpt_la_SOURCES" "common libsmcommon_la_SOURCES"
	"routing/fnn libfnn_la_SOURCES")
core_headers=(transport/sctpt.h routing/fnn/fnn.h)
# ch3:hybrid: its own files in ch3-hybrid/, ch3:sctp's copied beside them (include/sctp/,
# src/sctp/: its wrappers include them), and the iWARP layer in the core archive
hyb_dir=$here/ch3-hybrid
if [ "$device" = ch3:hybrid ]; then
	core_libs+=("transport/iw libiw_la_SOURCES")
	core_headers+=(transport/iw/iw_verbs.h transport/iw/iw_proto.h)
fi

sources_of() { # DIR VAR: the .c/.h files of VAR in DIR/Makefile.am
	awk -v var="$2" '
		$1 == var && $2 == "=" { on = 1; $1 = ""; $2 = "" }
		on { line = $0; cont = sub(/\\[ \t]*$/, "", line); printf "%s ", line; if (!cont) on = 0 }
	' "$here/$1/Makefile.am" | tr -s ' \t' '\n' | grep -E '\.[ch]$' | sed "s|^|$1/|"
}

hash_files() { # paths relative to $here, hashed with their names
	(cd "$here" && for f in "$@"; do echo "== $f"; cat "$f"; done) | sha256sum | cut -c1-16
}

dev_tag=${device/:/-}
cfg_inputs="mpich $version $device ${configure_opts[*]} rev 1"
if [ "$ours" = yes ]; then
	cfg_dir=$chan_dir
	[ "$device" != ch3:hybrid ] || cfg_dir=$hyb_dir
	cfg_hash=$( (echo "$cfg_inputs"; cd "$cfg_dir" && cat "${chan_cfg_files[@]}") | sha256sum | cut -c1-12)
	core_files=()
	for lib in "${core_libs[@]}"; do
		set -- $lib
		while read -r f; do core_files+=("$f"); done < <(sources_of "$1" "$2")
	done
	core_files+=("${core_headers[@]}")
	chan_dirs=ch3-sctp
	[ "$device" != ch3:hybrid ] || chan_dirs="ch3-sctp ch3-hybrid"
	# shellcheck disable=SC2086
	chan_files=$(cd "$here" && find $chan_dirs -type f \( -name '*.[ch]' -o -name '*.m4' -o -name '*.mk' -o -name errnames.txt \) | sort)
	core_hash=$(hash_files "${core_files[@]}")
	# shellcheck disable=SC2086
	full_hash=$(echo "$cfg_hash $core_hash $(hash_files $chan_files)" | sha256sum | cut -c1-16)
else
	cfg_hash=$(echo "$cfg_inputs" | sha256sum | cut -c1-12)
	full_hash=$cfg_hash
fi
dir=$cache/mpich-$version-$dev_tag-$cfg_hash
prefix=$dir/install
tree=$dir/mpich
logs=$dir/logs

if [ "$prefix_only" = yes ]; then
	[ -f "$dir/stamp-built" ] && [ "$(cat "$dir/stamp-built")" = "$full_hash" ] &&
		[ -x "$prefix/bin/mpicc" ] || exit 1
	echo "$prefix"
	exit 0
fi

# one build at a time per cache directory (test scripts may start together)
mkdir -p "$dir" "$logs"
exec 9>"$dir/lock"
if ! flock -n 9; then
	say "another build of $dir is running; waiting for it"
	flock -w 7200 9 || die "gave up waiting for the lock on $dir"
fi

if [ -f "$dir/stamp-built" ] && [ "$(cat "$dir/stamp-built")" = "$full_hash" ] && [ -x "$prefix/bin/mpicc" ]; then
	say "cached: MPICH $version $device in $prefix"
	echo "$prefix"
	exit 0
fi

run_logged() { # NAME CMD...: runs CMD with output in $logs/NAME.log
	local name=$1 t0=$SECONDS
	shift
	say "$name ... (log: $logs/$name.log)"
	if ! "$@" >"$logs/$name.log" 2>&1; then
		tail -n 40 "$logs/$name.log" >&2
		die "$name failed after $((SECONDS - t0)) s (full log: $logs/$name.log)"
	fi
	say "$name done in $((SECONDS - t0)) s"
}

# ---- the core as a PIC archive (our channels only)
build_core() {
	local out=$dir/sctpt obj
	if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$core_hash" ]; then
		return 1
	fi
	rm -rf "$out"
	mkdir -p "$out/include" "$out/lib" "$out/obj" "$out/cfg"
	# the project's config.h holds nothing these files test; an empty one stands in
	echo '/* ch3:sctp core archive: nothing configured */' >"$out/cfg/config.h"
	for f in "${core_files[@]}"; do
		case $f in
		*.c)
			obj=$out/obj/$(echo "${f%.c}" | tr / _).o
			gcc -std=gnu11 -O2 -g -fPIC -pthread -D_GNU_SOURCE -I"$out/cfg" -I"$here" -I"$here/transport" \
				-I"$here/routing/fnn" -Wall -c "$here/$f" -o "$obj" || return 2 ;;
		esac
	done
	for h in "${core_headers[@]}"; do cp "$here/$h" "$out/include/"; done
	ar rcs "$out/lib/libsctpt_mpich.a" "$out"/obj/*.o
	echo "$core_hash" >"$out/stamp"
	return 0
}

# copies the channel into the tree; file contents decide, so that make rebuilds only what changed
sync_channel() {
	local dst=$tree/src/mpid/ch3/channels/sctp f
	mkdir -p "$dst/include" "$dst/src"
	for f in subconfigure.m4 Makefile.mk include/*.h src/*.c src/*.h src/Makefile.mk src/errnames.txt; do
		for g in "$chan_dir"/$f; do
			[ -f "$g" ] || continue
			local rel=${g#"$chan_dir"/}
			cmp -s "$g" "$dst/$rel" || cp "$g" "$dst/$rel"
		done
	done
	# sources no longer in the channel leave the tree too
	for g in "$dst"/src/*.c "$dst"/src/*.h "$dst"/include/*.h; do
		[ -f "$g" ] || continue
		[ -f "$chan_dir/${g#"$dst"/}" ] || rm -f "$g"
	done
	grep -q 'channels/sctp/Makefile.mk' "$tree/src/mpid/ch3/channels/Makefile.mk" ||
		echo 'include $(top_srcdir)/src/mpid/ch3/channels/sctp/Makefile.mk' \
			>>"$tree/src/mpid/ch3/channels/Makefile.mk"
}

# the error keys of a channel as MPICH sees them (ch3:hybrid: ch3:sctp's and its own)
chan_errnames() {
	cat "$chan_dir/src/errnames.txt"
	[ "$device" != ch3:hybrid ] || cat "$hyb_dir/src/errnames.txt"
}

# copy_if_changed SRC DST
copy_if_changed() { cmp -s "$1" "$2" || { mkdir -p "$(dirname "$2")" && cp "$1" "$2"; }; }

# ch3:hybrid in src/mpid/ch3/channels/hybrid: its files, ch3:sctp's sources and headers in
# sctp/ subdirectories (only those hybrid's Makefile.mk names are compiled), one errnames.txt
sync_hybrid() {
	local dst=$tree/src/mpid/ch3/channels/hybrid f g rel
	mkdir -p "$dst/include/sctp" "$dst/src/sctp"
	for f in subconfigure.m4 Makefile.mk include/*.h src/*.c src/*.h src/Makefile.mk; do
		for g in "$hyb_dir"/$f; do
			[ -f "$g" ] && copy_if_changed "$g" "$dst/${g#"$hyb_dir"/}"
		done
	done
	for g in "$chan_dir"/include/*.h; do copy_if_changed "$g" "$dst/include/sctp/${g##*/}"; done
	for g in "$chan_dir"/src/*.c "$chan_dir"/src/*.h; do copy_if_changed "$g" "$dst/src/sctp/${g##*/}"; done
	chan_errnames >"$dst/src/errnames.txt.new"
	copy_if_changed "$dst/src/errnames.txt.new" "$dst/src/errnames.txt"
	rm -f "$dst/src/errnames.txt.new"
	for g in "$dst"/src/*.c "$dst"/src/*.h "$dst"/include/*.h; do
		[ -f "$g" ] || continue
		rel=${g#"$dst"/}
		[ -f "$hyb_dir/$rel" ] || rm -f "$g"
	done
	for g in "$dst"/src/sctp/* "$dst"/include/sctp/*; do
		[ -f "$g" ] || continue
		rel=${g#"$dst"/}
		rel=${rel/sctp\//}
		[ -f "$chan_dir/$rel" ] || rm -f "$g"
	done
	grep -q 'channels/hybrid/Makefile.mk' "$tree/src/mpid/ch3/channels/Makefile.mk" ||
		echo 'include $(top_srcdir)/src/mpid/ch3/channels/hybrid/Makefile.mk' \
			>>"$tree/src/mpid/ch3/channels/Makefile.mk"
}

sync_ours() { if [ "$device" = ch3:hybrid ]; then sync_hybrid; else sync_channel; fi; }

extra_opts=()
if [ "$ours" = yes ]; then
	say "core archive for $device"
	set +e
	build_core >"$logs/core.log" 2>&1
	rc=$?
	set -e
	[ $rc -ne 2 ] || { tail -n 30 "$logs/core.log" >&2; die "building the core failed (log: $logs/core.log)"; }
	core_rebuilt=$([ $rc -eq 0 ] && echo yes || echo no)
	extra_opts=(--with-sctpt="$dir/sctpt")
fi

if [ ! -f "$dir/stamp-configured" ]; then
	say "new tree for MPICH $version $device in $dir (autogen + configure + build: 15-30 min)"
	rm -rf "$tree" "$prefix"
	cp -a "$src" "$tree"
	[ "$ours" = no ] || sync_ours
	# -quick: the bundled modules (yaksa, libfabric, ucx, romio) keep their released configure
	run_logged autogen bash -c "cd '$tree' && ./autogen.sh -quick"
	run_logged configure bash -c "cd '$tree' && ./configure --prefix='$prefix' ${configure_opts[*]} ${extra_opts[*]:-}"
	touch "$dir/stamp-configured"
	[ "$ours" = no ] || chan_errnames >"$dir/errnames.extracted"
elif [ "$ours" = yes ]; then
	sync_ours
	if ! chan_errnames | cmp -s - "$dir/errnames.extracted"; then
		# what autogen's geterrmsgs step does, alone
		run_logged errmsgs bash -c "cd '$tree' && maint/extracterrmsgs -careful=unusederr.txt \
			-skip=src/util/multichannel/mpi.c \$(cat maint/errmsgdirs) >.tmp 2>.err;
			cat .err; ! grep -v Warning: .err && test -s .tmp && mv .tmp src/mpi/errhan/defmsg.h"
	fi
	if [ "$core_rebuilt" = yes ]; then
		# libmpi does not list the archive as a dependency: make it link again
		rm -f "$tree"/lib/libmpi.la "$tree"/lib/.libs/libmpi.so*
	fi
fi
run_logged make bash -c "cd '$tree' && make -j'$jobs'"
run_logged install bash -c "cd '$tree' && make install"
"$prefix/bin/mpichversion" | grep -q "Device:.*${device}" ||
	die "$prefix/bin/mpichversion does not report device $device"
[ "$ours" = no ] || chan_errnames >"$dir/errnames.extracted"
echo "$full_hash" >"$dir/stamp-built"
say "built: MPICH $version $device in $prefix"
echo "$prefix"
}

main "$@"
exit $?

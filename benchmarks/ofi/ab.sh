#!/usr/bin/env bash
# ab.sh <build dir> VARIANT... : ofi_bench variants in the same run, interleaved (the order
# rotates each round), median per (test, size) over ROUNDS (default 5) and the ratio of each
# variant to the first. A variant is "name|environment|ofi_bench arguments", e.g.
#   "base|FI_PROVIDER_PATH=/tmp/base FI_SCTP_SHM=1|-p sctp -t lat -m 64"
#   "new|FI_SCTP_SHM=1|-p sctp -t lat -m 64"
# FI_PROVIDER_PATH defaults to the build's provider, FI_SCTP_ADDRS to 127.0.0.1.
# Environment: ROUNDS=N, OUT=directory for the raw files (default: a temporary one, removed).
set -u
build=${1:?usage: ab.sh <build dir> VARIANT...}
build=$(cd "$build" && pwd) || exit 2
shift
[ $# -ge 1 ] || { echo "ab.sh: no variants" >&2; exit 2; }
bench=$build/benchmarks/ofi/ofi_bench
[ -x "$bench" ] || { echo "ab.sh: $bench not built" >&2; exit 2; }
ROUNDS=${ROUNDS:-5}
if [ -n "${OUT:-}" ]; then
	out=$OUT
	mkdir -p "$out" || exit 2
else
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT
fi
n=$#
variants=("$@")
echo "# ab.sh: $ROUNDS rounds, interleaved; $(date -u '+%F %T') UTC; $(nproc) CPUs, load" \
	"$(cut -d' ' -f1-3 /proc/loadavg) at the start (a shared machine: compare ratios)"
for v in "${variants[@]}"; do echo "#   $v"; done
for r in $(seq 1 "$ROUNDS"); do
	for k in $(seq 0 $((n - 1))); do
		i=$(((k + r) % n))
		IFS='|' read -r name envs args <<<"${variants[$i]}"
		f=$out/$i.$r.txt
		# shellcheck disable=SC2086
		env FI_PROVIDER_PATH="$build/ofi-provider/.libs" FI_SCTP_ADDRS=127.0.0.1 $envs \
			timeout 1800 "$bench" $args >"$f" 2>"$f.err" ||
			echo "# $name round $r failed: $(tail -1 "$f.err")"
	done
done
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" "$ROUNDS" "${variants[@]}" <<'EOF'
import glob, os, statistics, sys
out, rounds, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
names = [v.split("|")[0] for v in variants]
vals = {}
for i in range(len(variants)):
    for f in glob.glob(os.path.join(out, f"{i}.*.txt")):
        for line in open(f):
            p = line.split()
            if len(p) >= 3 and not line.startswith("#"):
                for j, x in enumerate(p[2:]):
                    key = (p[0], p[1] if j == 0 else f"{p[1]}#{j}")
                    vals.setdefault(key, {}).setdefault(i, []).append(float(x))
keys = sorted(vals, key=lambda k: (k[0], (int(k[1]) if k[1].isdigit() else 0, k[1])))
w = max(12, *(len(n) for n in names))
print(f"{'test':>5} {'size':>10} |" + "".join(f" {n:>{w}} |" for n in names) +
      "".join(f" {n + '/' + names[0]:>{w + 4}} |" for n in names[1:]) + "  median (runs)")
for k in keys:
    med = {i: statistics.median(v) for i, v in vals[k].items()}
    row = f"{k[0]:>5} {k[1]:>10} |"
    for i in range(len(names)):
        row += f" {med[i]:>{w}.2f} |" if i in med else f" {'-':>{w}} |"
    for i in range(1, len(names)):
        row += (f" {med[i] / med[0]:>{w + 4}.3f} |" if i in med and 0 in med and med[0]
                else f" {'-':>{w + 4}} |")
    row += "  (" + ",".join(str(len(vals[k].get(i, []))) for i in range(len(names))) + ")"
    print(row)
EOF

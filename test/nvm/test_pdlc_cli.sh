#!/bin/sh
# test_pdlc_cli: pdlc compiles, disassembles, reports errors as file:line:col.
set -u
: "${PDLC:=../../nvm/pdlc}" "${PDL_DIR:=pdl}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$PDLC" -o "$tmp/ping.nvm" "$PDL_DIR/ping.pdl" || fail "ping.pdl does not compile"
head -c 4 "$tmp/ping.nvm" | grep -q NVMM || fail "no module magic"
"$PDLC" --disasm "$PDL_DIR/ping.pdl" > "$tmp/a.txt" || fail "disasm of source"
"$PDLC" --disasm "$tmp/ping.nvm" > "$tmp/b.txt" || fail "disasm of module"
cmp -s "$tmp/a.txt" "$tmp/b.txt" || fail "module disasm differs from source disasm"
grep -q 'SEND' "$tmp/a.txt" && grep -q 'MESSAGE 10:' "$tmp/a.txt" || fail "disasm content"
"$PDLC" --check "$PDL_DIR/delivertest.pdl" || fail "delivertest.pdl"
"$PDLC" --opcodes | grep -q 'DELIVER' || fail "--opcodes"

printf 'PROGRAM bad: VAR x;\nBEGIN\n  x = y + 1;\nEND; END;\n' > "$tmp/bad.pdl"
if "$PDLC" "$tmp/bad.pdl" 2> "$tmp/err.txt"; then fail "bad.pdl compiled"; fi
grep -q "bad.pdl:3:7: error: 'y' is not declared" "$tmp/err.txt" || { cat "$tmp/err.txt"; fail "error format"; }
printf 'garbage' > "$tmp/x.nvm"
if "$PDLC" --disasm "$tmp/x.nvm" 2>/dev/null; then fail "garbage accepted"; fi
# The README's instruction table is the one nvm_opcodes.h generates.
readme="$PDL_DIR/../../../nvm/README.md"
if [ -f "$readme" ]; then
	"$PDLC" --opcodes | sed 's/^/    /' > "$tmp/ops.txt"
	grep -F -x -f "$tmp/ops.txt" "$readme" > "$tmp/found.txt"
	cmp -s "$tmp/ops.txt" "$tmp/found.txt" || fail "nvm/README.md opcode table is stale: paste 'pdlc --opcodes'"
fi
echo "ok   pdlc cli"

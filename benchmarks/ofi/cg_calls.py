#!/usr/bin/env python3
"""cg_calls.py FILE [FUNCTION...]: from a callgrind output file, each function's calls and
inclusive instructions per call (Ir of the function and of everything it called), the way the
provider's per-operation costs are quoted in results/. Without FUNCTION names: the 40 functions
with the most inclusive instructions. A name matches a function of that name (static
functions of several files: the one with the most instructions). Recursive calls count twice."""
import collections
import re
import sys


def parse(path):
    names = {}
    self_ir = collections.Counter()
    call_ir = collections.Counter()
    calls = collections.Counter()
    fn = cfn = None
    pending = 0  # the next cost line is a call's inclusive cost
    ncalls = 0

    def name(kind, rest):
        m = re.match(r"\((\d+)\)(?:\s+(.*))?", rest)
        if not m:
            return rest.strip()
        if m.group(2):
            names[(kind, m.group(1))] = m.group(2).strip()
        return names.get((kind, m.group(1)), m.group(1))

    fl = None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if not line or line[0] == "#":
            continue
        if line.startswith("fl=") or line.startswith("fi=") or line.startswith("fe="):
            f = name("fl", line[3:])
            if line.startswith("fl="):
                fl = f
            continue
        if line.startswith("cfi=") or line.startswith("cfl="):
            name("fl", line[4:])
            continue
        if line.startswith("fn="):
            fn = name("fn", line[3:])
            continue
        if line.startswith("cfn="):
            cfn = name("fn", line[4:])
            continue
        if line.startswith("calls="):
            ncalls = int(line[6:].split()[0])
            pending = 1
            continue
        if line[0] in "0123456789+-*":
            parts = line.split()
            ir = int(parts[1]) if len(parts) > 1 else 0
            if pending:
                call_ir[fn] += ir
                calls[cfn] += ncalls
                pending = 0
            else:
                self_ir[fn] += ir
            continue
    incl = {f: self_ir[f] + call_ir[f] for f in set(self_ir) | set(call_ir)}
    return incl, calls, self_ir


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    incl, calls, self_ir = parse(sys.argv[1])
    want = sys.argv[2:]
    if want:
        rows = []
        for w in want:
            hits = [f for f in incl if f == w or f.endswith(":" + w)]
            hits.sort(key=lambda f: -incl[f])
            rows += hits[:1] if hits else [w]
    else:
        rows = sorted(incl, key=lambda f: -incl[f])[:40]
    for f in rows:
        c = calls.get(f, 0)
        i = incl.get(f, 0)
        per = f"{i / c:10.1f}" if c else f"{'-':>10}"
        print(f"{f[:44]:<44} calls {c:>11,}  incl {i:>15,}  instr/call {per}")


main()

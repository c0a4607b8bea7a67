#!/usr/bin/env python3
"""cg_calls.py FILE [FUNCTION...]: from a callgrind output file, each function's calls and
inclusive instructions per call (Ir of the function and of everything it called), the way the
provider's per-operation costs are quoted in results/. Without FUNCTION names: the 40 functions
with the most inclusive instructions. A name matches a function of that name (static
functions of several files: the one with the most instructions). Recursive calls count twice.
cg_calls.py --own DIR [--core DIR2] FILE: the instructions of the code in source directory DIR
(a path fragment, e.g. "ofi-provider/"): its functions' own, plus what they call outside DIR
and outside DIR2 (e.g. "transport/": libc's memcpy, locks and malloc count as DIR's, the
core's functions do not)."""
import collections
import os
import re
import sys


def parse(path):
    names = {}
    files = {}  # function -> its source file
    edges = collections.Counter()  # (caller, callee) -> inclusive instructions
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

    fl = cfl = None
    key = lambda f, n: (os.path.basename(f) + ":" + n) if f and f != "???" else n
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
            cfl = name("fl", line[4:])
            continue
        if line.startswith("fn="):
            fn = key(fl, name("fn", line[3:]))
            files.setdefault(fn, fl)
            continue
        if line.startswith("cfn="):
            f = cfl if cfl is not None else fl
            cfn = key(f, name("fn", line[4:]))
            files.setdefault(cfn, f)
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
                edges[(fn, cfn)] += ir
                pending = 0
                cfl = None
            else:
                self_ir[fn] += ir
            continue
    incl = {f: self_ir[f] + call_ir[f] for f in set(self_ir) | set(call_ir)}
    return incl, calls, self_ir, files, edges


def own(path, mine, core):
    incl, calls, self_ir, files, edges = parse(path)
    inside = lambda f: mine in (files.get(f) or "")
    total = sum(v for f, v in self_ir.items() if inside(f))
    out = collections.Counter()
    for (a, b), v in edges.items():
        if inside(a) and not inside(b) and not (core and core in (files.get(b) or "")):
            out[b] += v
    total += sum(out.values())
    print(f"{mine}: {total:,} instructions (own {total - sum(out.values()):,}; calls outside "
          f"{mine}{' and ' + core if core else ''}: {sum(out.values()):,})")
    for f, v in out.most_common(8):
        print(f"   {f[:50]:<50} {v:>14,}")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if sys.argv[1] == "--own":
        args = sys.argv[2:]
        mine = args.pop(0)
        core = None
        if args and args[0] == "--core":
            core = args[1]
            args = args[2:]
        own(args[0], mine, core)
        return
    incl, calls, self_ir = parse(sys.argv[1])[:3]
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

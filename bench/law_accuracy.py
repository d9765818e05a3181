#!/usr/bin/python3
"""The large-filter cycle laws against the chain (docs/models.md 9.7).

For filters large enough that `rbf model --fn` answers from the
large-filter law (method auto), run each configuration twice, with
`--method exact` (the renewal chain, seconds to minutes) and with the
default (`auto`), and print the relative differences of everything the
model reports (fp, fn, forgotten, tick fraction, the mean cycle, and the
forgetting and miss probabilities at gaps around the cycle length), with
both model times.

    bench/law_accuracy.py build/rbf GAPSFILE [--quick] [--json]

GAPSFILE: a gaps file as bench/trace_speed.sh writes it (10^6 gaps).
"""
import argparse
import json
import subprocess
import sys
import time

# (arguments, workload) -- sigma and N bounded, one and two phases,
# both hashings, retaining, k from 1 to 8, 2^18 to 2^21 bits
CASES = [
    ("--bits 1000000 --hashes 4 --sigma 400000", "gaps"),
    ("--bits 1000000 --hashes 4 --sigma 400000", "uniform:200000"),
    ("--bits 1000000 --hashes 1 --sigma 600000", "zipf:2000000:1.1"),
    ("--bits 1000000 --hashes 6 --sigma 300000 --hashing non-colliding --recycle retaining", "gaps"),
    ("--bits 1000000 --hashes 8 --sigma 450000", "uniform:150000"),
    ("--bits 1000000 --hashes 4 --sigma 200000 --phases 2", "gaps"),
    ("--bits 1000000 --hashes 4 --sigma 400000 --phases 2", "uniform:250000"),
    ("--bits 2000000 --hashes 8 --sigma 600000 --phases 2 --recycle retaining", "uniform:200000"),
    ("--bits 1000000 --hashes 4 --messages 100000", "gaps"),
    ("--bits 1000000 --hashes 4 --messages 100000", "zipf:1000000:1.0"),
    ("--bits 1000000 --hashes 3 --messages 50000 --hashing non-colliding", "gaps"),
    ("--bits 1000000 --hashes 2 --messages 150000", "uniform:200000"),
    ("--bits 1000000 --hashes 4 --messages 100000 --phases 2", "uniform:160000"),
    ("--bits 524288 --hashes 7 --messages 30000 --phases 2", "gaps"),
    ("--bits 262144 --hashes 5 --sigma 100000", "uniform:60000"),
    ("--bits 262144 --hashes 3 --messages 20000", "uniform:30000"),
]
QUICK = [0, 8, 15]
KEYS = ("fp", "fn", "forgotten", "tick_fraction", "cycle_mean")


def run(rbf, args, method):
    cmd = [rbf, "model"] + args + ["--method", method, "--json"]
    t = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit("law_accuracy: %s: %s" % (" ".join(cmd), r.stderr.strip()))
    return json.loads(r.stdout), time.time() - t


def rel(a, b):
    if a is None or b is None:
        return None
    return abs(a - b) / max(abs(a), 1e-300) if a != b else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rbf")
    ap.add_argument("gaps")
    ap.add_argument("--quick", action="store_true", help="three cases only")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rows = []
    cases = [CASES[i] for i in QUICK] if a.quick else CASES
    for conf, wl in cases:
        args = conf.split()
        if wl == "gaps":
            args += ["--fn", "gaps:" + a.gaps, "--new-fraction", "0.05"]
        else:
            args += ["--fn", wl]
        # the forgetting curve around the cycle: 1/2, 0.99, 1, 1.01 of E[L]
        probe, _ = run(a.rbf, args, "auto")
        mean = probe["cycle_mean"]
        gaps = sorted({max(1, int(mean * f)) for f in (0.5, 0.99, 1.0, 1.01, 1.5)})
        args += ["--forget", ",".join(map(str, gaps))]
        ex, tex = run(a.rbf, args, "exact")
        au, tau = run(a.rbf, args, "auto")
        d = {k: rel(ex.get(k), au.get(k)) for k in KEYS}
        f_forget = max(abs(x["forgotten"] - y["forgotten"]) for x, y in zip(ex["forget"], au["forget"]))
        f_miss = max(abs(x["false_negative"] - y["false_negative"])
                     for x, y in zip(ex["forget"], au["forget"]))
        rows.append({"config": conf, "workload": wl, "law": au.get("cycle_law"),
                     "exact_seconds": tex, "auto_seconds": tau, "fn": au.get("fn"), "rel": d,
                     "forget_abs": f_forget, "miss_abs": f_miss})
        if not a.json:
            worst = max(v for v in d.values() if v is not None)
            print("%-80s %-17s law %-12s exact %6.2f s, auto %5.2f s; fn %.6g; worst rel %.1e, "
                  "forget/miss abs %.1e/%.1e" % (conf, wl, au.get("cycle_law"), tex, tau,
                                                 au.get("fn") or 0.0, worst, f_forget, f_miss),
                  flush=True)
    if a.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()

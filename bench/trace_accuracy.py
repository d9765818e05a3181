#!/usr/bin/python3
"""trace_accuracy.py RBF DIR [EPOCHS] -- rbf model --fn trace:FILE against
rbf simulate on real traces (bench/trace_corpora.sh DIR builds them).

For every corpus and configuration: rbf simulate --workload trace:FILE
--epochs E, and rbf model --fn trace:FILE --arrivals A with A = lines // E
(the arrivals of one simulated epoch: the model starts an empty filter at
each window of A, as the simulator does at each epoch).  A value passes
when it lies inside the simulated 99% interval or within 5% of the simulated
mean.  Prints a Markdown table (whole epochs, then the steady state: the
complete cycles after the first) and a summary; exit status 1 if a whole-
epoch value fails.  Debian's python3 only (no other package)."""
import json
import subprocess
import sys

CONFIGS = [
    # (label, options)
    ("M=200 k=1 σ=60", "--bits 200 --hashes 1 --sigma 60"),
    ("M=3000 k=3 σ=1500 nc", "--bits 3000 --hashes 3 --sigma 1500 --hashing non-colliding"),
    ("M=500 k=1 σ=150", "--bits 500 --hashes 1 --sigma 150"),
    ("M=2000 k=2 σ=1000", "--bits 2000 --hashes 2 --sigma 1000"),
    ("M=4000 k=3 σ=2000 ret", "--bits 4000 --hashes 3 --sigma 2000 --recycle retaining"),
    ("M=8000 k=4 σ=2000 2ph", "--bits 8000 --hashes 4 --sigma 2000 --phases 2"),
    ("M=20000 k=5 σ=8000 2ph", "--bits 20000 --hashes 5 --sigma 8000 --phases 2"),
    ("M=30000 k=8 σ=15000", "--bits 30000 --hashes 8 --sigma 15000"),
    ("M=16000 k=6 N=1000", "--bits 16000 --hashes 6 --messages 1000"),
    ("M=24000 k=7 N=1500 2ph", "--bits 24000 --hashes 7 --messages 1500 --phases 2"),
    ("M=10000 k=3 σ=3000 ret 2ph", "--bits 10000 --hashes 3 --sigma 3000 --recycle retaining --phases 2"),
    ("M=100000 k=4 σ=40000", "--bits 100000 --hashes 4 --sigma 40000"),
    ("M=1000 k=2 N=200 oracle", "--bits 1000 --hashes 2 --messages 200 --oracle"),
    ("M=2000 k=3 N=200 oracle 2ph", "--bits 2000 --hashes 3 --messages 200 --oracle --phases 2"),
]
CORPORA = ["kjv", "csrc", "paths"]


def run(args):
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def judge(sim, ci, model):
    if sim is None or model is None:
        return None
    if ci and ci[0] <= model <= ci[1]:
        return True
    return abs(model - sim) <= 0.05 * abs(sim) or (sim == 0 and model < 1e-6)


def fmt(x, ci=None):
    if x is None:
        return "–"
    s = "%.4g" % x
    if ci:
        s += " [%.4g, %.4g]" % (ci[0], ci[1])
    return s


def main():
    rbf, d = sys.argv[1], sys.argv[2]
    E = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    rows, fails, total, steady_rows = [], 0, 0, []
    for corpus in CORPORA:
        path = "%s/%s.txt" % (d, corpus)
        with open(path, "rb") as f:
            lines = sum(1 for _ in f)
        A = lines // E
        for label, opt in CONFIGS:
            o = opt.split()
            s = run([rbf, "simulate"] + o + ["--workload", "trace:" + path, "--epochs", str(E),
                     "--threads", "1", "--json"])
            m = run([rbf, "model"] + o + ["--fn", "trace:" + path, "--arrivals", str(A), "--json"])
            w = m["whole"]
            ok_fp = judge(s["fp"], s["fp_ci99"], w["fp"])
            ok_fn = judge(s["fn"], s["fn_ci99"], w["fn"])
            total += 1
            bad = ok_fp is False or ok_fn is False
            fails += bad
            cyc = s["cycles"] / E
            rows.append("| %s | %s | %.3g | %s | %s | %s | %s | %s |" % (
                corpus, label, cyc, fmt(s["fp"], s["fp_ci99"]), fmt(w["fp"]),
                fmt(s["fn"], s["fn_ci99"]), fmt(w["fn"]), "no" if bad else "yes"))
            st = m["steady"]
            if s.get("steady_epochs", 0) >= 2 and st["cycles"] > 0:
                okf = judge(s["steady_fp"], s["steady_fp_ci99"], st["fp"])
                okn = judge(s["steady_fn"], s["steady_fn_ci99"], st["fn"])
                steady_rows.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                    corpus, label, fmt(s["steady_fp"], s["steady_fp_ci99"]), fmt(st["fp"]),
                    fmt(s["steady_fn"], s["steady_fn_ci99"]), fmt(st["fn"]),
                    "no" if (okf is False or okn is False) else "yes"))
            sys.stderr.write("%s %s done (model %.2f s)\n" % (corpus, label, m["model_seconds"]))
    print("Whole epochs (%d epochs per trace; model: --arrivals lines/%d)\n" % (E, E))
    print("| trace | configuration | cycles/epoch | simulated fp [99%] | model fp "
          "| simulated fn [99%] | model fn | pass |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print("\nSteady state (complete cycles after the first; epochs with two recycles or more)\n")
    print("| trace | configuration | simulated fp [99%] | model fp | simulated fn [99%] "
          "| model fn | pass |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(steady_rows))
    print("\n%d of %d cases pass (whole epochs)" % (total - fails, total))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

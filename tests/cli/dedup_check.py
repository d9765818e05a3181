#!/usr/bin/env python3
"""dedup_check.py -- check one `rbf dedup --stats --trace-recycles` run.

Usage: dedup_check.py INPUT OUTPUT TRACE STATS AWK_OUTPUT

INPUT is what rbf dedup read, OUTPUT what it wrote, TRACE its stderr lines
"recycle N line L written W", STATS its --stats lines, AWK_OUTPUT what
awk '!seen[$0]++' wrote for INPUT.  Checks, each an assertion:

  1. the counts in STATS and TRACE agree with INPUT and OUTPUT;
  2. OUTPUT is an in-order subsequence of INPUT, cut at the recycle points
     into one piece per cycle; within a cycle a line is written only at its
     first occurrence in that cycle (once reported seen, a line stays seen);
  3. ground truth: replaying the recycle points with exact sets (the
     filter's semantics in include/rbf.h: a line is held from its insertion
     until its filter clears; a recycle's triggering line is forgotten), no
     held line is ever written: a repeat comes back only after a recycle
     (two-phase: after two, unless its first write triggered one);
  4. every line awk keeps is written except false positives (a first
     occurrence is never held, so each one dropped is a false positive);
  5. the model: an independent computation of the average false-positive
     rate (below) equals the rate --stats prints, the planner's sigma is the
     largest meeting the target (f(sigma) <= eps < f(sigma+1)), and the
     observed false-positive count over complete cycles, for all new lines
     and for first occurrences alone, lies in the 99.9% interval around the
     model; the mean number of lines per complete cycle lies in its 99.9%
     interval too.

The model here is written from the definitions, not from src/model: the
set bits of one cycle form a Markov chain over levels b; from level b a
new message sets d new bits with a distribution computed by a small
dynamic programme over its k positions (colliding: drawn with
replacement); the expected arrivals at level b are g_b = q_b / (1 - rho(b))
with q_b the probability of visiting b.  f1 = sum_{b<=sigma} g_b rho(b) /
sum_{b<=sigma} g_b; two-phase f2 = 1 - (1 - f1)(1 - sum F_i rho(i)) with F_i
proportional to g_i P(d > sigma - i | i), on each half of M/2 bits
(MODEL.md sections 3 and the paper's IV-G).

Confidence: over complete cycles the false-positive count is a sum, over
the levels visited, of geometric counts (false positives at a level until a
message sets a bit), so its variance is at most the binomial n p divided by
1 - rho_max; the interval is p n +- 3.29 sqrt(n p / (1 - rho_max)) (99.9%,
normal).  Cycle lengths are i.i.d. (renewal): mean +- 3.29 s / sqrt(c).
"""
import math
import sys

Z = 3.29  # two-sided 99.9% normal quantile


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def read_lines(path):
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    last = lines.pop()
    out = [l + b"\n" for l in lines]
    if last:
        out.append(last)
    return out


def key(line):
    return line[:-1] if line.endswith(b"\n") else line


def parse_stats(path):
    st = {}
    with open(path) as f:
        for ln in f:
            if ":" in ln:
                k, v = ln.split(":", 1)
                st[k.strip()] = v.strip()
    return st


def level_model(M, k, smax):
    """Per level b = 0..smax: (g_b, rho_b, dist_b) of the unbounded chain."""
    q = [0.0] * (smax + k + 2)
    q[0] = 1.0
    levels = []
    for b in range(smax + 1):
        dist = [1.0] + [0.0] * k
        for draw in range(k):
            nd = [0.0] * (k + 1)
            for j in range(draw + 1):
                p = dist[j]
                if p:
                    stay = (b + j) / M
                    nd[j] += p * stay
                    nd[j + 1] += p * (1.0 - stay)
            dist = nd
        rho = dist[0]
        g = q[b] / (1.0 - rho)
        for d in range(1, k + 1):
            q[b + d] += g * dist[d]
        levels.append((g, rho, dist))
    return levels


def model_rates(levels, sigma, k, phases):
    num = sum(g * r for g, r, _ in levels[: sigma + 1])
    den = sum(g for g, _, _ in levels[: sigma + 1])
    f1 = num / den
    if phases == 1:
        return f1, den, levels[sigma][1]
    wsum = fsum = 0.0
    for i in range(max(0, sigma - k + 1), sigma + 1):
        g, rho, dist = levels[i]
        beyond = sum(dist[d] for d in range(sigma - i + 1, k + 1))
        wsum += g * beyond
        fsum += g * beyond * rho
    ffrozen = fsum / wsum
    f2 = 1.0 - (1.0 - f1) * (1.0 - ffrozen)
    return f2, den, 1.0 - (1.0 - levels[sigma][1]) * (1.0 - ffrozen)


def interval(p, n, rho_max):
    mean = p * n
    half = Z * math.sqrt(mean / (1.0 - rho_max))
    return mean - half, mean + half


def main():
    inp, outp, tracep, statsp, awkp = sys.argv[1:6]
    lines = read_lines(inp)
    out = read_lines(outp)
    st = parse_stats(statsp)
    trace = []
    with open(tracep) as f:
        for ln in f:
            w = ln.split()
            if len(w) == 6 and w[0] == "recycle":
                trace.append((int(w[1]), int(w[3]), int(w[5])))
    k = int(st["hashes"])
    sigma = int(st["sigma"])
    per_filter = int(st["bits set"].split(" of ")[1].split()[0])
    phases = 2 if "frozen" in st["bits set"] else 1
    predicted = float(st["predicted fp"])
    eps = float(sys.argv[6])

    # 1. counts
    if int(st["lines read"]) != len(lines):
        fail("lines read %s != %d" % (st["lines read"], len(lines)))
    if int(st["lines written"]) != len(out):
        fail("lines written %s != %d" % (st["lines written"], len(out)))
    if int(st["recycles"]) != len(trace):
        fail("recycles %s != %d trace lines" % (st["recycles"], len(trace)))
    for i, (n, L, W) in enumerate(trace):
        if n != i + 1 or not (0 < L <= len(lines)) or W > len(out):
            fail("bad trace line %r" % ((n, L, W),))
        if i and (L <= trace[i - 1][1] or W < trace[i - 1][2]):
            fail("trace not increasing at recycle %d" % n)

    # 2. map output to input, one cycle at a time
    written = [False] * len(lines)
    bounds = [(0, 0)] + [(L, W) for _, L, W in trace] + [(len(lines), len(out))]
    for c in range(len(bounds) - 1):
        (l0, w0), (l1, w1) = bounds[c], bounds[c + 1]
        first = {}
        for i in range(l0, l1):
            first.setdefault(key(lines[i]), i)
        i = l0
        for j in range(w0, w1):
            while i < l1 and lines[i] != out[j]:
                i += 1
            if i == l1:
                fail("output line %d is not in order in cycle %d (not a subsequence)" % (j + 1, c))
            if first[key(lines[i])] != i:
                fail("input line %d written though it occurred earlier in its cycle" % (i + 1))
            written[i] = True
            i += 1

    # 3. ground truth from the recycle points
    triggers = {L - 1 for _, L, _ in trace}
    active, frozen = set(), set()
    new = [False] * len(lines)
    in_active = [False] * len(lines)
    last_write = {}
    recycles_before = 0
    for i, line in enumerate(lines):
        kk = key(line)
        new[i] = kk not in active and kk not in frozen
        in_active[i] = kk in active
        if written[i] and not new[i]:
            fail("input line %d was written although the filter held it (no recycle since)" % (i + 1))
        if written[i]:
            if kk in last_write:
                pi, prec, ptrig = last_write[kk]
                need = 1 if phases == 1 or ptrig else 2
                if recycles_before - prec < need:
                    fail("line %d written again without a recycle since line %d" % (i + 1, pi + 1))
            last_write[kk] = (i, recycles_before, i in triggers)
        if i in triggers:
            recycles_before += 1
            frozen = active if phases == 2 else set()
            active = set()
        else:
            active.add(kk)

    # 4. awk's first occurrences
    seen = set()
    is_first = [False] * len(lines)
    for i, line in enumerate(lines):
        kk = key(line)
        if kk not in seen:
            seen.add(kk)
            is_first[i] = True
    awk = read_lines(awkp)
    if awk != [lines[i] for i in range(len(lines)) if is_first[i]]:
        fail("awk's first occurrences differ from this script's")
    dropped_first = sum(1 for i in range(len(lines)) if is_first[i] and not written[i])
    if any(is_first[i] and not new[i] for i in range(len(lines))):
        fail("a first occurrence counted as held")

    # 5. the model
    levels = level_model(per_filter, k, sigma + 1)
    f, cycle_len, rho_max = model_rates(levels, sigma, k, phases)
    f_next, _, _ = model_rates(levels, sigma + 1, k, phases)
    print("k=%d sigma=%d bits/filter=%d phases=%d: model f=%.6g (--stats %.6g), f(sigma+1)=%.6g, "
          "lines/cycle %.1f" % (k, sigma, per_filter, phases, f, predicted, f_next, cycle_len))
    if abs(f - predicted) > 1e-6 * f:
        fail("--stats predicted fp %.9g differs from the model %.9g" % (predicted, f))
    if not (f <= eps * (1 + 1e-9) and f_next > eps):
        fail("sigma %d is not the largest with f <= %g (f=%.6g, f(sigma+1)=%.6g)"
             % (sigma, eps, f, f_next))

    # complete cycles only: one-phase from the start, two-phase from the
    # first recycle (the frozen half is empty before it), to the last one
    if len(trace) < 10:
        fail("only %d recycles: use less memory" % len(trace))
    lo = 0 if phases == 1 else trace[0][1]
    hi = trace[-1][1]
    n_new = sum(1 for i in range(lo, hi) if new[i])
    fp = sum(1 for i in range(lo, hi) if new[i] and not written[i])
    n_first = sum(1 for i in range(lo, hi) if is_first[i])
    fp_first = sum(1 for i in range(lo, hi) if is_first[i] and not written[i])
    a, b = interval(f, n_new, rho_max)
    a1, b1 = interval(f, n_first, rho_max)
    print("false positives: %d of %d new lines (rate %.6g, 99.9%% interval %.1f..%.1f)"
          % (fp, n_new, fp / n_new, a, b))
    print("first occurrences dropped: %d of %d in complete cycles (interval %.1f..%.1f), %d in all"
          % (fp_first, n_first, a1, b1, dropped_first))
    if not (a <= fp <= b):
        fail("false positives %d outside the model's 99.9%% interval %.1f..%.1f" % (fp, a, b))
    if not (a1 <= fp_first <= b1):
        fail("dropped first occurrences %d outside %.1f..%.1f" % (fp_first, a1, b1))

    # cycle lengths: lines new to the active filter per complete cycle
    lens = []
    starts = ([0] if phases == 1 else []) + [L for _, L, _ in trace]
    for s, e in zip(starts, starts[1:]):
        lens.append(sum(1 for i in range(s, e) if not in_active[i]))
    m = sum(lens) / len(lens)
    sd = math.sqrt(sum((x - m) ** 2 for x in lens) / (len(lens) - 1))
    half = Z * sd / math.sqrt(len(lens))
    print("lines per cycle: mean %.1f over %d cycles (model %.1f, 99.9%% interval +-%.1f)"
          % (m, len(lens), cycle_len, half))
    if abs(m - cycle_len) > half:
        fail("mean cycle length %.1f outside %.1f +- %.1f" % (m, cycle_len, half))
    print("ok")


if __name__ == "__main__":
    main()

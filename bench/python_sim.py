#!/usr/bin/env python3
"""A straightforward Python simulation of the paper's setup, for speed comparison.

What the paper's own simulation does (section V-A): M = 1000 bits, k hash
positions per message, a sigma-bounded non-retaining filter, arrivals drawn
uniformly with replacement from a pool of 1000 pre-generated messages, and
the count-instance false-positive rate with ground truth (which messages the
filter truly holds).  Written the plain way -- a list of bits, a set of held
messages -- as a Python user would, with no numpy tricks.

`rbf bench sim --python bench/python_sim.py` runs it and prints the ratio.
Output: one line "arrivals_per_second <float> fp <float>".
"""
import argparse
import random
import time


def simulate(bits, hashes, sigma, pool_size, arrivals, seed):
    """The same bookkeeping as the C simulator: new / false positive / repeat /
    false negative per arrival, count-instance, count-first, count-each."""
    rng = random.Random(seed)
    pool = [[rng.randrange(bits) for _ in range(hashes)] for _ in range(pool_size)]
    filt = [False] * bits
    set_bits = 0
    cycle = 0
    held_cycle = {}  # message -> cycle in which it was last held
    fp_spell = set()  # messages held because of a false positive
    seen = set()  # messages that arrived before
    new = fps = each = repeats = fns = 0
    for _ in range(arrivals):
        m = rng.randrange(pool_size)
        pos = pool[m]
        unset = {p for p in pos if not filt[p]}
        is_new = held_cycle.get(m) != cycle
        is_repeat = m in seen
        seen.add(m)
        reported_new = bool(unset)
        if is_new:
            new += 1
            if not reported_new:
                fps += 1
                each += 1
                fp_spell.add(m)
            else:
                fp_spell.discard(m)
        elif m in fp_spell:
            each += 1
        if is_repeat:
            repeats += 1
            if reported_new:
                fns += 1
        if not unset:
            held_cycle[m] = cycle  # a repeat, or a false positive that stays held
            continue
        if set_bits + len(unset) > sigma:
            filt = [False] * bits  # recycle; the message is forgotten
            set_bits = 0
            cycle += 1
            continue
        for p in unset:
            filt[p] = True
        set_bits += len(unset)
        held_cycle[m] = cycle
    return fps / new if new else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arrivals", type=int, default=200000)
    ap.add_argument("--hashes", type=int, default=3)
    ap.add_argument("--sigma", type=int, default=300)
    ap.add_argument("--bits", type=int, default=1000)
    ap.add_argument("--pool", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    # CPU time, like `rbf bench sim`, so load from other processes cancels.
    t0 = time.process_time()
    fp = simulate(a.bits, a.hashes, a.sigma, a.pool, a.arrivals, a.seed)
    dt = time.process_time() - t0
    print(f"arrivals_per_second {a.arrivals / dt:.6g} fp {fp:.6g}")


if __name__ == "__main__":
    main()

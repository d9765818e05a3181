"""The module answers exactly as the library: for one- and two-phase, sigma-
and N-bounded filters (and a planned one), 10^5 operations with repeats
(RBF.ADD, RBF.MADD, RBF.INSERT, RBF.EXISTS, RBF.MEXISTS, RBF.RECYCLE) give
the same 0/1 answers item by item as rbf_insert / rbf_contains /
rbf_recycle in build/redis/rbf_replay with the same configuration and seed;
RBF.INFO equals rbf_get_stats; and the SCANDUMP image is byte-identical to
the library's rbf_save_buffer image."""
import random
import subprocess
import sys

from rrtest import Harness, REPLAY, check, info_dict

OPS = 100_050
POOL = 30_000

CONFIGS = [
    # name, reserve args, replay (bits k sigma messages phases hashing recycle)
    ("sigma-1phase", (1 << 16, 4, 20000, 0, 1, 0, 0)),
    ("sigma-2phase-retaining", (1 << 16, 4, 10000, 0, 2, 0, 1)),
    ("N-1phase-noncolliding", (1 << 16, 5, 0, 6000, 1, 1, 0)),
    ("N-2phase", (1 << 17, 3, 0, 9000, 2, 0, 0)),
]


def reserve_args(cfg, seed):
    bits, k, sigma, msgs, phases, hashing, recycle = cfg
    a = ["bits", bits, "Hashes", k]
    a += ["SIGMA", sigma] if sigma else ["messages", msgs]
    a += ["PHASES", phases, "HASHING", "non-colliding" if hashing else "colliding",
          "RECYCLE", "retaining" if recycle else "non-retaining", "SEED", str(seed)]
    return a


def make_ops(rng):
    ops = []
    for i in range(OPS):
        x = rng.random()
        item = "it%06d" % rng.randrange(POOL)
        if x < 0.00003:
            ops.append(("R", None))
        elif x < 0.80:
            ops.append(("A", item))
        else:
            ops.append(("E", item))
    return ops


def run_module(c, key, ops, rng):
    """Send ops in pipelines, bundling runs into MADD / INSERT / MEXISTS."""
    answers = []
    i = 0
    pipe = c.pipeline(transaction=False)
    shapes = []
    while i < len(ops):
        op, item = ops[i]
        j = i + 1
        while j < len(ops) and j - i < rng.choice((1, 1, 1, 3, 7)) and ops[j][0] == op and op != "R":
            j += 1
        items = [ops[t][1] for t in range(i, j)]
        if op == "R":
            pipe.execute_command("RBF.RECYCLE", key)
            shapes.append("ok")
        elif op == "A" and len(items) == 1:
            pipe.execute_command("RBF.ADD", key, item)
            shapes.append("int")
        elif op == "A":
            if rng.random() < 0.5:
                pipe.execute_command("RBF.MADD", key, *items)
            else:
                pipe.execute_command("RBF.INSERT", key, "ITEMS", *items)
            shapes.append("arr")
        elif len(items) == 1:
            pipe.execute_command("RBF.EXISTS", key, item)
            shapes.append("int")
        else:
            pipe.execute_command("RBF.MEXISTS", key, *items)
            shapes.append("arr")
        i = j
        if len(shapes) >= 1000 or i >= len(ops):
            for shape, r in zip(shapes, pipe.execute()):
                if shape == "ok":
                    check(r in (True, b"OK"), "RECYCLE replied %r" % (r,))
                elif shape == "int":
                    check(r in (0, 1), "reply %r" % (r,))
                    answers.append(str(r))
                else:
                    check(all(x in (0, 1) for x in r), "reply %r" % (r,))
                    answers.extend(str(x) for x in r)
            shapes = []
    return "".join(answers)


def run_library(cfg, seed, ops, image_path):
    lines = "".join("R\n" if op == "R" else "%s %s\n" % (op, item) for op, item in ops)
    out = subprocess.run([REPLAY] + [str(x) for x in cfg] + [str(seed), image_path],
                         input=lines.encode(), stdout=subprocess.PIPE, check=True).stdout.decode()
    answers, stats = out.split("\n")[0], out.split("\n")[1].split()
    return answers, [int(x) for x in stats[1:]]


def scandump(c, key):
    img, cur, n = b"", 0, 0
    while True:
        cur, data = c.execute_command("RBF.SCANDUMP", key, cur)
        if cur == 0:
            check(data is None, "final SCANDUMP data %r" % (data,))
            return img, n
        img += data
        n += 1


def compare(c, key, cfg, seed, ops, rng, tmp, name):
    got = run_module(c, key, ops, rng)
    want, stats = run_library(cfg, seed, ops, tmp + "/" + name + ".img")
    check(len(got) == len(want), "%s: %d answers, library %d" % (name, len(got), len(want)))
    for idx, (a, b) in enumerate(zip(got, want)):
        if a != b:
            raise AssertionError("%s: answer %d differs: module %s, library %s" % (name, idx, a, b))
    info = info_dict(c, key)
    names = ["bits_per_filter", "bits_set", "frozen_bits_set", "cycles", "cycle_messages",
             "inserts", "reported_new"]
    for n_, v in zip(names, stats):
        check(info[n_] == v, "%s: INFO %s %r, rbf_get_stats %d" % (name, n_, info[n_], v))
    check(abs(float(info["fill"]) - stats[1] / stats[0]) < 1e-12, "fill")
    check(name == "planned" or len(got) >= 100_000, "%s: only %d answers" % (name, len(got)))
    check(stats[3] >= 1, "%s: the stream must recycle at least once (cycles %d)" % (name, stats[3]))
    img, chunks = scandump(c, key)
    with open(tmp + "/" + name + ".img", "rb") as f:
        lib_img = f.read()
    check(img == lib_img, "%s: SCANDUMP image differs from rbf_save_buffer (%d vs %d bytes)"
          % (name, len(img), len(lib_img)))
    check(chunks == -(-len(img) // 4096), "%s: %d chunks for %d bytes" % (name, chunks, len(img)))
    print("%s: %d answers equal, stats equal, image equal (%d bytes, %d chunks), cycles %d"
          % (name, len(got), len(img), chunks, stats[3]))
    return info


def main():
    rng = random.Random(20261123)
    with Harness() as h:
        s = h.server(module_args=["CHUNK-BYTES", "4096"])
        c = s.client()
        ops = make_ops(rng)
        for name, cfg in CONFIGS:
            seed = rng.getrandbits(64)
            check(c.execute_command("RBF.RESERVE", name, *reserve_args(cfg, seed)) == b"OK", "reserve")
            info = compare(c, name, cfg, seed, ops, rng, h.tmp, name)
            check(info["sigma"] == cfg[2] and info["messages"] == cfg[3] and info["phases"] == cfg[4],
                  "INFO config")
        # A planned filter (sizing on a worker thread) with a given seed: the
        # configuration INFO reports, replayed by the library, answers alike.
        seed = (1 << 64) - 12345
        check(c.execute_command("RBF.RESERVE", "planned", "error_rate", "0.01", "CAPACITY", "5000",
                                "SEED", str(seed)) == b"OK", "planned reserve")
        info = info_dict(c, "planned")
        check(float(info["model_fp"]) <= 0.01 * (1 + 1e-9), "planned model_fp %r" % info["model_fp"])
        check(float(info["model_messages_per_cycle"]) >= 5000, "planned messages per cycle")
        cfg = (info["bits"], info["hashes"], info["sigma"], 0, 1, 0, 0)
        compare(c, "planned", cfg, seed, ops[:60000], rng, h.tmp, "planned")
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())

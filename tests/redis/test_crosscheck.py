"""The module answers exactly as the library: for one- and two-phase, sigma-
and N-bounded filters, flat and blocked (LAYOUT blocked), and planned ones
(flat and blocked), 10^5 operations with repeats
(RBF.ADD, RBF.MADD, RBF.INSERT, RBF.EXISTS, RBF.MEXISTS, RBF.RECYCLE) give
the same 0/1 answers item by item as rbf_insert / rbf_contains /
rbf_recycle in build/redis/rbf_replay with the same configuration and seed;
RBF.INFO equals rbf_get_stats; the SCANDUMP image is byte-identical to
the library's rbf_save_buffer image; and a blocked filter's model values
are the library's blocked models (`rbf model --layout blocked`), not the
flat ones."""
import json
import os
import random
import subprocess
import sys

from rrtest import Harness, REPLAY, check, info_dict, wait_until

OPS = 100_050
POOL = 30_000

CONFIGS = [
    # name, replay (bits k sigma messages phases hashing recycle layout)
    ("sigma-1phase", (1 << 16, 4, 20000, 0, 1, 0, 0, 0)),
    ("sigma-2phase-retaining", (1 << 16, 4, 10000, 0, 2, 0, 1, 0)),
    ("N-1phase-noncolliding", (1 << 16, 5, 0, 6000, 1, 1, 0, 0)),
    ("N-2phase", (1 << 17, 3, 0, 9000, 2, 0, 0, 0)),
    ("blocked-sigma-1phase", (1 << 16, 4, 20000, 0, 1, 0, 0, 1)),
    ("blocked-sigma-2phase-nc-retaining", (1 << 17, 4, 20000, 0, 2, 1, 1, 1)),
    ("blocked-N-1phase-noncolliding", (1 << 16, 5, 0, 6000, 1, 1, 0, 1)),
    ("blocked-N-2phase", (3 << 15, 3, 0, 9000, 2, 0, 0, 1)),
]


def reserve_args(cfg, seed):
    bits, k, sigma, msgs, phases, hashing, recycle, layout = cfg
    a = ["bits", bits, "Hashes", k]
    a += ["SIGMA", sigma] if sigma else ["messages", msgs]
    a += ["PHASES", phases, "HASHING", "non-colliding" if hashing else "colliding",
          "RECYCLE", "retaining" if recycle else "non-retaining", "SEED", str(seed)]
    if layout:
        a[2:2] = ["layout", "Blocked"]  # keywords in any order, any case
    return a


def cli_model(cfg):
    """The library's model values for cfg (rbf model --json), or None where
    the library has no model (two-phase N-bounded blocked)."""
    bits, k, sigma, msgs, phases, hashing, recycle, layout = cfg
    if msgs and phases == 2 and layout:
        return None
    cmd = [os.environ["RBF_CLI"], "model", "--bits", str(bits), "--hashes", str(k),
           "--json", "--layout", "blocked" if layout else "flat"]
    cmd += ["--sigma", str(sigma)] if sigma else ["--messages", str(msgs)]
    if phases == 2:
        cmd += ["--phases", "2"]
    if hashing:
        cmd += ["--hashing", "non-colliding"]
    if recycle:
        cmd += ["--recycle", "retaining"]
    out = json.loads(subprocess.run(cmd, stdout=subprocess.PIPE, check=True).stdout)
    if sigma:
        return out["fp"], out["expected_messages"]
    if phases == 2:
        return out["fp"], float(msgs)
    return out["exact_real"], float(msgs)


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
    layout = ["--blocked"] if cfg[7] else []
    out = subprocess.run([REPLAY] + layout + [str(x) for x in cfg[:7]] + [str(seed), image_path],
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
    check(info["layout"] == (b"blocked" if cfg[7] else b"flat"), "%s: INFO layout %r" % (name, info["layout"]))
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
            # the model values are the library's for this layout
            want = cli_model(cfg)
            wait_until(lambda: info_dict(c, name)["model_fp"] != b"pending", what="model values")
            info = info_dict(c, name)
            if want is None:
                check(info["model_fp"] == b"nan", "%s: model_fp %r (no model)" % (name, info["model_fp"]))
            else:
                got = (float(info["model_fp"]), float(info["model_messages_per_cycle"]))
                check(all(abs(g - w) <= 1e-9 * abs(w) for g, w in zip(got, want)),
                      "%s: model values %r, library %r" % (name, got, want))
                if cfg[7]:
                    flat = cli_model(cfg[:7] + (0,))
                    check(abs(got[0] - flat[0]) > 1e-6 * flat[0],
                          "%s: blocked model_fp equals the flat one %r" % (name, flat[0]))
                print("%s: model_fp %.12g, messages per cycle %.12g (library's %s model)"
                      % (name, got[0], got[1], "blocked" if cfg[7] else "flat"))
        # A planned filter (sizing on a worker thread) with a given seed: the
        # configuration INFO reports, replayed by the library, answers alike.
        seed = (1 << 64) - 12345
        check(c.execute_command("RBF.RESERVE", "planned", "error_rate", "0.01", "CAPACITY", "5000",
                                "SEED", str(seed)) == b"OK", "planned reserve")
        info = info_dict(c, "planned")
        check(float(info["model_fp"]) <= 0.01 * (1 + 1e-9), "planned model_fp %r" % info["model_fp"])
        check(float(info["model_messages_per_cycle"]) >= 5000, "planned messages per cycle")
        cfg = (info["bits"], info["hashes"], info["sigma"], 0, 1, 0, 0, 0)
        compare(c, "planned", cfg, seed, ops[:60000], rng, h.tmp, "planned")
        # A planned blocked filter (CAPACITY: a search over the blocked
        # planner at given memories): whole 512-bit blocks, the target met
        # by the blocked model, answers alike.
        check(c.execute_command("RBF.RESERVE", "planned-blocked", "CAPACITY", "5000", "LAYOUT",
                                "blocked", "error_rate", "0.01", "SEED", str(seed)) == b"OK",
              "planned blocked reserve")
        info = info_dict(c, "planned-blocked")
        check(info["layout"] == b"blocked" and info["bits"] % 512 == 0, "planned blocked %r" % info)
        check(float(info["model_fp"]) <= 0.01 * (1 + 1e-9), "planned blocked model_fp %r" % info["model_fp"])
        check(float(info["model_messages_per_cycle"]) >= 5000, "planned blocked messages per cycle")
        cfg = (info["bits"], info["hashes"], info["sigma"], 0, 1, 0, 0, 1)
        want = cli_model(cfg)
        check(abs(float(info["model_fp"]) - want[0]) <= 1e-6 * want[0],
              "planned blocked model_fp %r, rbf model %r" % (info["model_fp"], want[0]))
        compare(c, "planned-blocked", cfg, seed, ops[:60000], rng, h.tmp, "planned")
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())

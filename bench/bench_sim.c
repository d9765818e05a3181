/*
 * bench_sim.c -- `rbf bench sim`: simulator arrivals per second per core on
 * the paper's setup (M = 1000, uniform:1000), against the bare filter loop
 * the simulator is built on, and optionally against a straightforward
 * Python simulation of the same setup (bench/python_sim.py).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cli_util.h"
#include "rbf_sim.h"

static const char *const CMD = "bench sim";

/* Timings are CPU time of the process (cli_cpu_seconds): the rates are per
 * core, and CPU time keeps them meaningful on a machine shared with other
 * work (wall time would charge us for other processes' slices).  One worker
 * thread runs; the calling thread sleeps on a condition variable
 * meanwhile. */

static void help(void)
{
    printf("Usage: rbf bench sim [--arrivals A] [--hashes K] [--sigma S] [--repeat R]\n"
           "                     [--python SCRIPT] [--python-arrivals A]\n"
           "\n"
           "Simulator throughput on the paper's setup (M = 1000 bits, uniform:1000,\n"
           "sigma-bounded), one thread: arrivals per CPU-second, best of R runs\n"
           "(default 3) of A arrivals (default 20M) in one epoch; the same number for\n"
           "bare filter loops over the same pool and draws, without the bookkeeping:\n"
           "rbf_insert_hash, rbf_insert_positions, and rbf_insert_positions_many in\n"
           "blocks of 256 (the simulator's own path, its draws in a pass of their\n"
           "own; the filter work the simulator stands on); with\n"
           "--python, also runs SCRIPT (bench/python_sim.py) with python3 on A'\n"
           "arrivals (default 200k) and prints the speed ratio.\n");
}

/* The bare filter loop: the same pool and index draws, no bookkeeping. */
/* by_positions: the pool's positions computed once (rbf_positions) and
 * inserted with rbf_insert_positions (1) or, as the simulator does, with
 * rbf_insert_positions_many a block of 256 draws at a time (2); 0: by hash. */
static double bare_loop(unsigned k, uint64_t sigma, uint64_t n, uint64_t *sink, int by_positions)
{
    rbf_config c;
    rbf_config_init(&c);
    c.bits = 1000;
    c.hashes = k;
    c.sigma = sigma;
    c.seed = 1;
    rbf *f;
    if (rbf_new(&c, &f) != RBF_OK)
        return 0;
    uint64_t pool[1000], x = 0x1234567;
    for (int i = 0; i < 1000; i++) {
        pool[i] = rbf_splitmix64(&x);
    }
    uint64_t *pos = malloc(1000 * (size_t)k * sizeof *pos);
    if (!pos) {
        rbf_free(f);
        return 0;
    }
    for (int i = 0; i < 1000; i++)
        (void)rbf_positions(f, pool[i], pos + (size_t)i * k);
    uint64_t s = 88172645463325252ULL, fresh = 0;
    double t0 = cli_cpu_seconds();
    if (by_positions == 2) {
        uint32_t ids[256];
        uint8_t res[256];
        for (uint64_t i = 0; i < n; i += 256) {
            unsigned m = n - i < 256 ? (unsigned)(n - i) : 256u;
            for (unsigned j = 0; j < m; j++) {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                ids[j] = (uint32_t)(((unsigned __int128)s * 1000) >> 64);
            }
            (void)rbf_insert_positions_many(f, pos, ids, m, res);
            for (unsigned j = 0; j < m; j++)
                fresh += res[j] & 1u;
        }
    } else if (by_positions) {
        for (uint64_t i = 0; i < n; i++) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            uint64_t id = (uint64_t)(((unsigned __int128)s * 1000) >> 64);
            fresh += (uint64_t)(rbf_insert_positions(f, pos + id * k) & 1);
        }
    } else {
        for (uint64_t i = 0; i < n; i++) {
            s ^= s << 13; /* xorshift64: the cheapest decent index stream */
            s ^= s >> 7;
            s ^= s << 17;
            uint64_t id = (uint64_t)(((unsigned __int128)s * 1000) >> 64);
            fresh += (uint64_t)rbf_insert_hash(f, pool[id]);
        }
    }
    free(pos);
    double dt = cli_cpu_seconds() - t0;
    *sink += fresh;
    rbf_free(f);
    return (double)n / dt;
}

int bench_sim_main(int argc, char **argv)
{
    uint64_t arrivals = 20000000, sigma = 300, reps = 3, py_arrivals = 200000, v;
    unsigned k = 3;
    const char *python = NULL;
    int rc;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help();
            return cli_finish_stdout(CMD);
        }
        if (!val)
            return cli_usage(CMD, "option '%s' needs a value or is unknown", a);
        i++;
        if (!strcmp(a, "--arrivals")) {
            if ((rc = cli_opt_count(CMD, "--arrivals", val, 1, &arrivals)))
                return rc;
        } else if (!strcmp(a, "--hashes")) {
            if ((rc = cli_opt_uint(CMD, "--hashes", val, 1, 64, &v)))
                return rc;
            k = (unsigned)v;
        } else if (!strcmp(a, "--sigma")) {
            if ((rc = cli_opt_uint(CMD, "--sigma", val, 1, 999, &sigma)))
                return rc;
        } else if (!strcmp(a, "--repeat")) {
            if ((rc = cli_opt_uint(CMD, "--repeat", val, 1, 100, &reps)))
                return rc;
        } else if (!strcmp(a, "--python")) {
            python = val;
        } else if (!strcmp(a, "--python-arrivals")) {
            if ((rc = cli_opt_count(CMD, "--python-arrivals", val, 1, &py_arrivals)))
                return rc;
        } else {
            return cli_usage(CMD, "unknown option '%s'", a);
        }
    }
    if (sigma < k)
        return cli_usage(CMD, "--sigma: must be at least --hashes");

    rbf_sim_config cfg;
    rbf_sim_config_init(&cfg);
    cfg.filter.hashes = k;
    cfg.filter.sigma = sigma;
    cfg.arrivals = arrivals;
    cfg.epochs = 1;
    cfg.threads = 1;
    double best = 0, fp = 0;
    for (uint64_t r = 0; r < reps; r++) {
        rbf_sim_result res;
        cfg.seed = r + 1;
        double t0 = cli_cpu_seconds();
        rc = rbf_sim_run(&cfg, &res);
        double dt = cli_cpu_seconds() - t0;
        if (rc != RBF_OK)
            return cli_fail(CMD, "%s", rbf_strerror(rc));
        double rate = (double)res.total.arrivals / dt;
        if (rate > best) {
            best = rate;
            fp = res.fp.mean;
        }
        rbf_sim_result_free(&res);
    }
    uint64_t sink = 0;
    double bare = 0, barep = 0, barem = 0;
    for (uint64_t r = 0; r < reps; r++) {
        double b = bare_loop(k, sigma, arrivals, &sink, 0);
        if (b > bare)
            bare = b;
        b = bare_loop(k, sigma, arrivals, &sink, 1);
        if (b > barep)
            barep = b;
        b = bare_loop(k, sigma, arrivals, &sink, 2);
        if (b > barem)
            barem = b;
    }
    printf("setup: M=1000 k=%u sigma=%llu colliding non-retaining, uniform:1000, %llu arrivals,"
           " one thread, best of %llu\n",
           k, (unsigned long long)sigma, (unsigned long long)arrivals, (unsigned long long)reps);
    printf("(rates per CPU-second of this process, so other load on the machine cancels)\n");
    printf("simulator:            %.4g arrivals/s per core (%.2f ns per arrival; fp %.5g)\n", best,
           1e9 / best, fp);
    printf("bare rbf_insert_hash: %.4g inserts/s (%.2f ns per insert; checksum %llu)\n", bare,
           1e9 / bare, (unsigned long long)(sink % 1000));
    printf("bare rbf_insert_positions: %.4g inserts/s (%.2f ns per insert)\n", barep, 1e9 / barep);
    printf("bare rbf_insert_positions_many (the simulator's path; draws in a pass of their "
           "own): %.4g inserts/s (%.2f ns per insert)\n",
           barem, 1e9 / barem);
    if (python) {
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "python3 '%s' --arrivals %llu --hashes %u --sigma %llu", python,
                 (unsigned long long)py_arrivals, k, (unsigned long long)sigma);
        FILE *p = popen(cmd, "r");
        if (!p)
            return cli_fail(CMD, "cannot run python3");
        char line[512];
        double py = 0;
        while (fgets(line, sizeof line, p)) {
            const char *key = strstr(line, "arrivals_per_second");
            if (key)
                py = strtod(key + strlen("arrivals_per_second") + 1, NULL);
        }
        int st = pclose(p);
        if (st != 0 || py <= 0)
            return cli_fail(CMD, "'%s' failed or printed no arrivals_per_second", cmd);
        printf("python (%s, %llu arrivals): %.4g arrivals/s; simulator is %.0fx faster\n", python,
               (unsigned long long)py_arrivals, py, best / py);
    }
    return cli_finish_stdout(CMD);
}

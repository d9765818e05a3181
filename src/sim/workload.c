/*
 * workload.c -- the simulator's workloads: spec parsing, the random
 * generator's seeding, the alias table behind Zipf, the fading sampler's
 * set-up, and trace loading.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "sim_internal.h"
#include "rbf_alloc.h"

/* ---- random generator */

void rbf__sim_rng_seed(sim_rng *r, uint64_t seed, uint64_t stream)
{
    /* Mix the stream number through splitmix64 before combining it with
     * the seed, so nearby (seed, stream) pairs start far apart. */
    uint64_t a = stream ^ 0x5851f42d4c957f2dULL;
    uint64_t x = seed ^ rbf_splitmix64(&a);
    (void)rbf_splitmix64(&x);
    for (int i = 0; i < 4; i++)
        r->s[i] = rbf_splitmix64(&x);
    if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3])) /* the one forbidden state */
        r->s[0] = 1;
}

/* ---- alias table (Vose 1991) */

int rbf__sim_alias_init(sim_alias *a, const double *w, uint64_t n)
{
    memset(a, 0, sizeof *a);
    if (n == 0 || n >= UINT32_MAX)
        return RBF_EINVAL;
    double sum = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (!(w[i] >= 0) || !isfinite(w[i]))
            return RBF_EINVAL;
        sum += w[i];
    }
    if (!(sum > 0) || !isfinite(sum))
        return RBF_EINVAL;
    double *p = rbf__malloc((size_t)n * sizeof *p);
    uint32_t *small = rbf__malloc((size_t)n * sizeof *small);
    uint32_t *large = rbf__malloc((size_t)n * sizeof *large);
    a->thr = rbf__malloc((size_t)n * sizeof *a->thr);
    a->alias = rbf__malloc((size_t)n * sizeof *a->alias);
    if (!p || !small || !large || !a->thr || !a->alias) {
        rbf__free(p);
        rbf__free(small);
        rbf__free(large);
        rbf__sim_alias_free(a);
        return RBF_ENOMEM;
    }
    a->n = n;
    uint64_t ns = 0, nl = 0;
    for (uint64_t i = 0; i < n; i++) {
        p[i] = w[i] * (double)n / sum;
        if (p[i] < 1)
            small[ns++] = (uint32_t)i;
        else
            large[nl++] = (uint32_t)i;
    }
    while (ns && nl) {
        uint32_t s = small[--ns], l = large[nl - 1];
        a->alias[s] = l;
        a->thr[s] = p[s] <= 0 ? 0 : (uint64_t)ldexp(p[s], 64);
        p[l] -= 1 - p[s];
        if (p[l] < 1) {
            nl--;
            small[ns++] = l;
        }
    }
    /* What is left has probability 1 up to rounding: always accept. */
    while (nl) {
        uint32_t l = large[--nl];
        a->thr[l] = UINT64_MAX;
        a->alias[l] = l;
    }
    while (ns) {
        uint32_t s = small[--ns];
        a->thr[s] = UINT64_MAX;
        a->alias[s] = s;
    }
    rbf__free(p);
    rbf__free(small);
    rbf__free(large);
    return RBF_OK;
}

void rbf__sim_alias_free(sim_alias *a)
{
    if (!a)
        return;
    rbf__free(a->thr);
    rbf__free(a->alias);
    memset(a, 0, sizeof *a);
}

int rbf__sim_zipf_init(sim_alias *a, uint64_t n, double s)
{
    if (n == 0 || n >= UINT32_MAX || !(s >= 0) || !isfinite(s)) {
        memset(a, 0, sizeof *a);
        return RBF_EINVAL;
    }
    double *w = rbf__malloc((size_t)n * sizeof *w);
    if (!w) {
        memset(a, 0, sizeof *a);
        return RBF_ENOMEM;
    }
    for (uint64_t i = 0; i < n; i++)
        w[i] = exp(-s * log((double)(i + 1)));
    int rc = rbf__sim_alias_init(a, w, n);
    rbf__free(w);
    return rc;
}

/* ---- fading */

int rbf__sim_fading_init(sim_fading *fw, double new_fraction, double lifetime)
{
    memset(fw, 0, sizeof *fw);
    if (!(new_fraction > 0 && new_fraction <= 1) || !(lifetime > 0) || !isfinite(lifetime))
        return RBF_EINVAL;
    fw->always_new = new_fraction >= 1;
    fw->new_threshold = fw->always_new ? UINT64_MAX : (uint64_t)ldexp(new_fraction, 64);
    double lr = lifetime * new_fraction; /* mean lifetime in births */
    fw->log_p = -1 / lr;
    /* Ring: enough births that the dropped tail weighs below e^-40. */
    double need = ceil(40 * lr);
    uint64_t w = 1;
    while (w < SIM_FADING_MAX_WINDOW && (double)w < need)
        w <<= 1;
    fw->window = w;
    return RBF_OK;
}

/* ---- workload specs */

static int parse_u64(const char *s, const char *end, uint64_t *out)
{
    if (s == end)
        return -1;
    uint64_t v = 0;
    for (const char *p = s; p < end; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static int parse_dbl(const char *s, const char *end, double *out)
{
    char buf[64];
    size_t n = (size_t)(end - s);
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *e;
    errno = 0;
    double v = strtod(buf, &e);
    if (*e || e == buf || !isfinite(v) || buf[0] == ' ' || buf[0] == '\t')
        return -1;
    *out = v;
    return 0;
}

int rbf_sim_workload_parse(const char *spec, rbf_sim_workload *out, const char **why)
{
    const char *w = NULL;
    rbf_sim_workload wl;
    memset(&wl, 0, sizeof wl);
    if (!spec || !out) {
        w = "no workload given";
        goto done;
    }
    const char *c1 = strchr(spec, ':');
    size_t kn = c1 ? (size_t)(c1 - spec) : strlen(spec);
    const char *end = spec + strlen(spec);
    if (kn == 7 && !strncmp(spec, "uniform", 7)) {
        wl.kind = RBF_WORKLOAD_UNIFORM;
        if (!c1 || parse_u64(c1 + 1, end, &wl.pool) || wl.pool == 0 || wl.pool >= UINT32_MAX)
            w = "uniform:P needs a pool size P from 1 to 4294967294";
    } else if (kn == 4 && !strncmp(spec, "zipf", 4)) {
        wl.kind = RBF_WORKLOAD_ZIPF;
        const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || parse_u64(c1 + 1, c2, &wl.pool) || wl.pool == 0 || wl.pool >= UINT32_MAX)
            w = "zipf:P:S needs a pool size P from 1 to 4294967294 and an exponent S";
        else if (parse_dbl(c2 + 1, end, &wl.exponent) || wl.exponent < 0 || wl.exponent > 100)
            w = "zipf:P:S needs an exponent S from 0 to 100";
    } else if (kn == 6 && !strncmp(spec, "fading", 6)) {
        wl.kind = RBF_WORKLOAD_FADING;
        const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || parse_dbl(c1 + 1, c2, &wl.new_fraction) || !(wl.new_fraction > 0) ||
            wl.new_fraction > 1)
            w = "fading:R:L needs a new-message fraction R in (0, 1] and a lifetime L";
        else if (parse_dbl(c2 + 1, end, &wl.lifetime) || !(wl.lifetime > 0) ||
                 wl.lifetime > 1e15)
            w = "fading:R:L needs a lifetime L > 0 (arrivals)";
    } else if (kn == 5 && !strncmp(spec, "trace", 5)) {
        wl.kind = RBF_WORKLOAD_TRACE;
        if (!c1 || !c1[1])
            w = "trace:FILE needs a file name";
        else
            wl.trace_path = c1 + 1;
    } else {
        w = "unknown workload (use uniform:P, zipf:P:S, fading:R:L or trace:FILE)";
    }
done:
    if (why)
        *why = w;
    if (w)
        return RBF_EINVAL;
    *out = wl;
    return RBF_OK;
}

/* ---- dense ids: open addressing on the 64-bit key */

int rbf__sim_dense_ids(const uint64_t *keys, size_t n, uint32_t *ids_out, uint64_t *first_key,
                  uint64_t *distinct)
{
    size_t cap = 16;
    while (cap < 2 * n + 2)
        cap <<= 1;
    uint64_t *tk = rbf__malloc(cap * sizeof *tk);
    uint32_t *tv = rbf__malloc(cap * sizeof *tv);
    if (!tk || !tv) {
        rbf__free(tk);
        rbf__free(tv);
        return RBF_ENOMEM;
    }
    memset(tv, 0xff, cap * sizeof *tv); /* UINT32_MAX = empty */
    uint64_t next = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = keys[i];
        size_t h = (size_t)((k * 0x9e3779b97f4a7c15ULL) >> 32) & (cap - 1);
        while (tv[h] != UINT32_MAX && tk[h] != k)
            h = (h + 1) & (cap - 1);
        if (tv[h] == UINT32_MAX) {
            if (next >= UINT32_MAX - 1) {
                rbf__free(tk);
                rbf__free(tv);
                return RBF_EINVAL;
            }
            tk[h] = k;
            tv[h] = (uint32_t)next;
            if (first_key)
                first_key[next] = k;
            next++;
        }
        ids_out[i] = tv[h];
    }
    rbf__free(tk);
    rbf__free(tv);
    *distinct = next;
    return RBF_OK;
}

/* ---- traces */

int rbf__sim_trace_load(const char *path, sim_trace *t)
{
    memset(t, 0, sizeof *t);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return RBF_EIO;
    /* Hash each line as it streams past; keep only the hashes. */
    size_t cap = 1024, n = 0;
    uint64_t *h = rbf__malloc(cap * sizeof *h);
    size_t lcap = 256, llen = 0;
    char *line = rbf__malloc(lcap);
    int rc = RBF_OK;
    if (!h || !line)
        rc = RBF_ENOMEM;
    char buf[1 << 16];
    size_t got;
    int pending = 0; /* bytes of an unterminated line are in `line` */
    while (rc == RBF_OK && (got = fread(buf, 1, sizeof buf, fp)) > 0) {
        size_t i = 0;
        while (i < got) {
            char *nl = memchr(buf + i, '\n', got - i);
            size_t take = nl ? (size_t)(nl - (buf + i)) : got - i;
            if (llen + take > lcap) {
                while (llen + take > lcap)
                    lcap *= 2;
                char *nb = rbf__realloc(line, lcap);
                if (!nb) {
                    rc = RBF_ENOMEM;
                    break;
                }
                line = nb;
            }
            memcpy(line + llen, buf + i, take);
            llen += take;
            i += take;
            pending = llen > 0;
            if (nl) {
                if (n == cap) {
                    uint64_t *nh = rbf__realloc(h, 2 * cap * sizeof *h);
                    if (!nh) {
                        rc = RBF_ENOMEM;
                        break;
                    }
                    h = nh;
                    cap *= 2;
                }
                h[n++] = XXH3_64bits(line, llen);
                llen = 0;
                pending = 0;
                i++; /* the '\n' */
            }
        }
    }
    if (rc == RBF_OK && ferror(fp))
        rc = RBF_EIO;
    if (rc == RBF_OK && pending) {
        if (n == cap) {
            uint64_t *nh = rbf__realloc(h, (cap + 1) * sizeof *h);
            if (!nh)
                rc = RBF_ENOMEM;
            else
                h = nh;
        }
        if (rc == RBF_OK)
            h[n++] = XXH3_64bits(line, llen);
    }
    int saved = errno;
    fclose(fp);
    rbf__free(line);
    if (rc == RBF_OK && n == 0)
        rc = RBF_EINVAL;
    if (rc == RBF_OK) {
        t->line_id = rbf__malloc(n * sizeof *t->line_id);
        t->hashes = rbf__malloc(n * sizeof *t->hashes);
        if (!t->line_id || !t->hashes)
            rc = RBF_ENOMEM;
        else
            rc = rbf__sim_dense_ids(h, n, t->line_id, t->hashes, &t->ids);
    }
    rbf__free(h);
    if (rc != RBF_OK) {
        rbf__sim_trace_free(t);
        errno = saved;
        return rc;
    }
    t->lines = n;
    /* Give back the unused part of the id -> hash table. */
    uint64_t *shrunk = rbf__realloc(t->hashes, (size_t)t->ids * sizeof *t->hashes);
    if (shrunk)
        t->hashes = shrunk;
    return RBF_OK;
}

void rbf__sim_trace_free(sim_trace *t)
{
    if (!t)
        return;
    rbf__free(t->line_id);
    rbf__free(t->hashes);
    memset(t, 0, sizeof *t);
}

int rbf_sim_trace_read(const char *path, uint32_t **ids, uint64_t *n, uint32_t *distinct)
{
    if (!path || !ids || !n || !distinct)
        return RBF_EINVAL;
    *ids = NULL;
    *n = 0;
    *distinct = 0;
    sim_trace t;
    int rc = rbf__sim_trace_load(path, &t);
    if (rc != RBF_OK)
        return rc;
    if (t.ids >= UINT32_MAX) {
        rbf__sim_trace_free(&t);
        return RBF_EINVAL;
    }
    /* plain malloc: the caller frees with free() */
    uint32_t *out = malloc((size_t)t.lines * sizeof *out);
    if (!out) {
        rbf__sim_trace_free(&t);
        return RBF_ENOMEM;
    }
    memcpy(out, t.line_id, (size_t)t.lines * sizeof *out);
    *ids = out;
    *n = t.lines;
    *distinct = (uint32_t)t.ids;
    rbf__sim_trace_free(&t);
    return RBF_OK;
}

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

/* ---- dense ids: open addressing on the 64-bit key, the table sized by the
 * distinct keys seen so far (at most half full; doubled and rehashed as they
 * grow), so a long trace of few distinct lines keeps a table that fits in
 * the cache.  Ids are given in order of first occurrence, whatever the
 * table's size. */

typedef struct dense_tab {
    uint64_t *tk; /* keys */
    uint32_t *tv; /* ids, UINT32_MAX: empty */
    size_t cap;   /* a power of two */
    uint64_t next; /* ids given */
} dense_tab;

static size_t dense_slot(const uint64_t *tk, const uint32_t *tv, size_t mask, uint64_t k)
{
    size_t h = (size_t)((k * 0x9e3779b97f4a7c15ULL) >> 32) & mask;
    while (tv[h] != UINT32_MAX && tk[h] != k)
        h = (h + 1) & mask;
    return h;
}

static void dense_free(dense_tab *d)
{
    rbf__free(d->tk);
    rbf__free(d->tv);
    memset(d, 0, sizeof *d);
}

static int dense_alloc(dense_tab *d, size_t cap)
{
    d->tk = rbf__malloc(cap * sizeof *d->tk);
    d->tv = rbf__malloc(cap * sizeof *d->tv);
    if (!d->tk || !d->tv) {
        dense_free(d);
        return RBF_ENOMEM;
    }
    memset(d->tv, 0xff, cap * sizeof *d->tv);
    d->cap = cap;
    return RBF_OK;
}

/* The id of key k, a new one (*fresh = 1) if it was not seen; RBF_EINVAL
 * past 2^32 - 2 ids, RBF_ENOMEM. */
static int dense_id(dense_tab *d, uint64_t k, uint32_t *id, int *fresh)
{
    size_t h = dense_slot(d->tk, d->tv, d->cap - 1, k);
    *fresh = d->tv[h] == UINT32_MAX;
    if (*fresh) {
        if (d->next >= UINT32_MAX - 1)
            return RBF_EINVAL;
        if (2 * (d->next + 1) > d->cap) { /* keep it at most half full */
            dense_tab g = {0};
            if (dense_alloc(&g, 2 * d->cap))
                return RBF_ENOMEM;
            for (size_t s = 0; s < d->cap; s++)
                if (d->tv[s] != UINT32_MAX) {
                    size_t e = dense_slot(g.tk, g.tv, g.cap - 1, d->tk[s]);
                    g.tk[e] = d->tk[s];
                    g.tv[e] = d->tv[s];
                }
            g.next = d->next;
            dense_free(d);
            *d = g;
            h = dense_slot(d->tk, d->tv, d->cap - 1, k);
        }
        d->tk[h] = k;
        d->tv[h] = (uint32_t)d->next++;
    }
    *id = d->tv[h];
    return RBF_OK;
}

int rbf__sim_dense_ids(const uint64_t *keys, size_t n, uint32_t *ids_out, uint64_t *first_key,
                  uint64_t *distinct)
{
    dense_tab d = {0};
    int rc = dense_alloc(&d, 1024), fresh;
    for (size_t i = 0; i < n && !rc; i++) {
        rc = dense_id(&d, keys[i], &ids_out[i], &fresh);
        if (!rc && fresh && first_key)
            first_key[ids_out[i]] = keys[i];
    }
    *distinct = d.next;
    dense_free(&d);
    return rc;
}

/* ---- traces */

/* Room for entry n of an array of `size`-byte entries with capacity *cap:
 * the array, moved if it had to grow (NULL when out of memory; the old one
 * is then left as it was). */
static void *grow(void *a, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return a;
    size_t nc = *cap ? 2 * *cap : 1024;
    void *p = rbf__realloc(a, nc * size);
    if (p)
        *cap = nc;
    return p;
}

/* One line read: its hash, its id, and the hash of a new id. */
static int trace_line(sim_trace *t, dense_tab *d, size_t *lcap, size_t *hcap, const char *p,
                      size_t len)
{
    uint64_t k = XXH3_64bits(p, len);
    uint32_t *ids = grow(t->line_id, lcap, t->lines, sizeof *t->line_id);
    if (!ids)
        return RBF_ENOMEM;
    t->line_id = ids;
    uint32_t id;
    int fresh, rc = dense_id(d, k, &id, &fresh);
    if (rc)
        return rc;
    if (fresh) {
        uint64_t *hs = grow(t->hashes, hcap, t->ids, sizeof *t->hashes);
        if (!hs)
            return RBF_ENOMEM;
        t->hashes = hs;
        t->hashes[t->ids++] = k;
    }
    t->line_id[t->lines++] = id;
    return RBF_OK;
}

int rbf__sim_trace_load(const char *path, sim_trace *t)
{
    memset(t, 0, sizeof *t);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return RBF_EIO;
    /* Hash each line as it streams past and give it its id at once: what
     * is kept is an id a line and a hash a distinct line.  A line that lies
     * whole in the buffer is hashed in place; one cut by the buffer's end
     * is gathered in `line`. */
    size_t lcap = 0, hcap = 0, gcap = 256, llen = 0;
    char *line = rbf__malloc(gcap);
    dense_tab d = {0};
    int rc = line ? dense_alloc(&d, 1024) : RBF_ENOMEM;
    char buf[1 << 16];
    size_t got;
    while (rc == RBF_OK && (got = fread(buf, 1, sizeof buf, fp)) > 0) {
        size_t i = 0;
        while (i < got && rc == RBF_OK) {
            char *nl = memchr(buf + i, '\n', got - i);
            size_t take = nl ? (size_t)(nl - (buf + i)) : got - i;
            if (nl && llen == 0) { /* whole in the buffer */
                rc = trace_line(t, &d, &lcap, &hcap, buf + i, take);
                i += take + 1;
                continue;
            }
            if (llen + take > gcap) {
                while (llen + take > gcap)
                    gcap *= 2;
                char *nb = rbf__realloc(line, gcap);
                if (!nb) {
                    rc = RBF_ENOMEM;
                    break;
                }
                line = nb;
            }
            memcpy(line + llen, buf + i, take);
            llen += take;
            i += take;
            if (nl) {
                rc = trace_line(t, &d, &lcap, &hcap, line, llen);
                llen = 0;
                i++; /* the '\n' */
            }
        }
    }
    if (rc == RBF_OK && ferror(fp))
        rc = RBF_EIO;
    if (rc == RBF_OK && llen > 0) /* an unterminated last line */
        rc = trace_line(t, &d, &lcap, &hcap, line, llen);
    int saved = errno;
    fclose(fp);
    rbf__free(line);
    dense_free(&d);
    if (rc == RBF_OK && t->lines == 0)
        rc = RBF_EINVAL;
    if (rc != RBF_OK) {
        rbf__sim_trace_free(t);
        errno = saved;
        return rc;
    }
    /* The arrays' unused capacity is not shrunk: it was never written, so
     * it holds no memory, and a failed shrink would be a failure to
     * report for nothing. */
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
    /* The caller frees with free(): with the library's own allocator (libc)
     * the array read is handed over as it is; a hooked allocator's memory
     * is copied into malloc's.  (A copy of 10^8 ids is 400 MB written to
     * fresh pages: over a second where page faults are slow.) */
    uint32_t *out;
    if (!rbf__alloc_hooked()) {
        out = t.line_id;
        t.line_id = NULL;
    } else {
        out = malloc((size_t)t.lines * sizeof *out);
        if (!out) {
            rbf__sim_trace_free(&t);
            return RBF_ENOMEM;
        }
        memcpy(out, t.line_id, (size_t)t.lines * sizeof *out);
    }
    *ids = out;
    *n = t.lines;
    *distinct = (uint32_t)t.ids;
    rbf__sim_trace_free(&t);
    return RBF_OK;
}

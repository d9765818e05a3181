/*
 * filter_ref.c -- the reference model of MODEL.md section 1 (see filter_ref.h).
 * Deliberately simple: clarity over speed.
 */
#include "filter_ref.h"

#include <stdlib.h>
#include <string.h>

int filter_ref_init(filter_ref *r, const rbf_config *cfg)
{
    memset(r, 0, sizeof *r);
    if (rbf_config_check(cfg, NULL) != RBF_OK)
        return -1;
    r->phases = cfg->phases;
    r->m = cfg->phases == 2 ? cfg->bits / 2 : cfg->bits;
    r->k = cfg->hashes;
    r->sigma = cfg->sigma;
    r->n = cfg->messages;
    r->retaining = cfg->recycle == RBF_RETAINING;
    r->act = calloc((size_t)r->m, 1);
    r->frz = r->phases == 2 ? calloc((size_t)r->m, 1) : NULL;
    if (!r->act || (r->phases == 2 && !r->frz)) {
        filter_ref_free(r);
        return -1;
    }
    return 0;
}

void filter_ref_free(filter_ref *r)
{
    free(r->act);
    free(r->frz);
    r->act = r->frz = NULL;
}

/* Distinct positions among pos[0..k-1] whose bit is 0 in `bits`. */
static uint64_t count_unset(const filter_ref *r, const uint8_t *bits, const uint64_t *pos)
{
    uint64_t d = 0;
    for (unsigned i = 0; i < r->k; i++) {
        int dup = 0;
        for (unsigned j = 0; j < i; j++)
            dup |= pos[j] == pos[i];
        if (!dup && !bits[pos[i]])
            d++;
    }
    return d;
}

static void set_bits(filter_ref *r, const uint64_t *pos)
{
    for (unsigned i = 0; i < r->k; i++) {
        if (!r->act[pos[i]]) {
            r->act[pos[i]] = 1;
            r->b++;
        }
    }
}

void filter_ref_recycle(filter_ref *r)
{
    if (r->phases == 2) {
        uint8_t *old_frozen = r->frz;
        memset(old_frozen, 0, (size_t)r->m);
        r->frz = r->act;
        r->fb = r->b;
        r->act = old_frozen;
    } else {
        memset(r->act, 0, (size_t)r->m);
    }
    r->b = 0;
    r->c = 0;
    r->cycles++;
}

int filter_ref_contains(const filter_ref *r, const uint64_t *pos)
{
    if (count_unset(r, r->act, pos) == 0)
        return 1;
    return r->phases == 2 && count_unset(r, r->frz, pos) == 0;
}

int filter_ref_insert(filter_ref *r, const uint64_t *pos)
{
    r->inserts++;
    int seen = filter_ref_contains(r, pos);
    uint64_t d = count_unset(r, r->act, pos);
    if (d > 0) {
        if (r->sigma && r->b + d > r->sigma) {
            filter_ref_recycle(r);
            if (r->retaining) {
                set_bits(r, pos);
                r->c = 1;
            }
        } else {
            set_bits(r, pos);
            r->c++;
            if (r->n && r->c == r->n)
                filter_ref_recycle(r);
        }
    }
    if (!seen)
        r->reported_new++;
    return !seen;
}

void filter_ref_stats(const filter_ref *r, rbf_stats *out)
{
    memset(out, 0, sizeof *out);
    out->bits = r->m;
    out->bits_set = r->b;
    out->frozen_bits_set = r->fb;
    out->cycles = r->cycles;
    out->cycle_messages = r->c;
    out->inserts = r->inserts;
    out->reported_new = r->reported_new;
}

static int bit_at(const uint8_t *words, uint64_t i)
{
    return (words[8 * (i / 64) + (i % 64) / 8] >> (i % 8)) & 1;
}

int filter_ref_compare_saved(const filter_ref *r, const uint8_t *buf, uint64_t len,
                             uint64_t *where)
{
    uint64_t nwords = (r->m + 63) / 64;
    /* the header size: 128 (format version 1) or 192 (version 2) */
    uint64_t hs = len >= 16 ? (uint64_t)buf[12] | (uint64_t)buf[13] << 8 : 0;
    if ((hs != 128 && hs != 192) || len != hs + nwords * 8 * r->phases + 8) {
        *where = UINT64_MAX;
        return -1;
    }
    const uint8_t *body = buf + hs;
    for (uint64_t i = 0; i < nwords * 64; i++) {
        int want = i < r->m ? r->act[i] : 0;
        if (bit_at(body, i) != want) {
            *where = i;
            return -1;
        }
    }
    if (r->phases == 2) {
        body += nwords * 8;
        for (uint64_t i = 0; i < nwords * 64; i++) {
            int want = i < r->m ? r->frz[i] : 0;
            if (bit_at(body, i) != want) {
                *where = r->m + i;
                return -1;
            }
        }
    }
    return 0;
}

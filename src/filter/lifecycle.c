/*
 * lifecycle.c -- a filter's configuration, creation and release, recycling
 * and statistics.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/random.h>
#endif

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "concurrent.h"
#include "filter_internal.h"
#include "rbf_abi.h"
#include "rbf_alloc.h"

/* The ABI (rbf_base.h): layout and concurrent took the place of the first
 * reserved word; the struct keeps the size and offsets of 2.0.0
 * (tests/test_base.c pins them too). */
_Static_assert(sizeof(rbf_config) == 8 * 5 + 4 * 4 + 8 * 8, "rbf_config changed size");
_Static_assert(offsetof(rbf_config, layout) == offsetof(rbf_config, seed) + 8,
               "rbf_config.layout must take the place of reserved_[0]");
_Static_assert(offsetof(rbf_config, reserved_) == offsetof(rbf_config, seed) + 16,
               "rbf_config.reserved_ moved");

/* Bytes of a bit array of nwords words (nwords is checked against SIZE_MAX
 * by rbf_config_check). */
static size_t words_bytes(uint64_t nwords) { return (size_t)nwords * sizeof(uint64_t); }

/* A 64-bit seed from the operating system.  getrandom() first; if it is not
 * there, /dev/urandom; as a last resort, address and time bits (never an
 * error: a filter must be creatable even in a chroot without /dev). */
static uint64_t os_random_seed(void)
{
    uint64_t s = 0;
#if defined(__linux__)
    if (getrandom(&s, sizeof s, 0) == (ssize_t)sizeof s)
        return s;
#endif
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t r = read(fd, &s, sizeof s);
        close(fd);
        if (r == (ssize_t)sizeof s)
            return s;
    }
    uint64_t local = 0;
    s = (uint64_t)(uintptr_t)&local ^ (uint64_t)(uintptr_t)&s ^ (uint64_t)getpid() << 32;
    return XXH3_64bits(&s, sizeof s);
}

void rbf_config_init(rbf_config *cfg)
{
    if (!cfg)
        return;
    memset(cfg, 0, sizeof *cfg);
    cfg->hashing = RBF_COLLIDING;
    cfg->recycle = RBF_NON_RETAINING;
    cfg->phases = 1;
    cfg->seed = os_random_seed();
}

int rbf_config_check(const rbf_config *cfg, const char **why)
{
    const char *w = NULL;
    int rc = RBF_EINVAL;
    if (!cfg)
        w = "configuration is NULL";
    else if (!RBF_RESERVED_ZERO(cfg))
        w = "a field this version of the library does not know is set (fill the "
            "configuration with rbf_config_init first)";
    else if (cfg->concurrent > 1)
        w = "concurrent must be 0 or 1";
    else if (cfg->phases != 1 && cfg->phases != 2)
        w = "phases must be 1 or 2";
    else if (cfg->bits == 0)
        w = "bits must be at least 1";
    else if (rbf__bits_per_filter(cfg) == 0)
        w = "a two-phase filter needs at least 2 bits";
    else if (cfg->hashes == 0)
        w = "hashes must be at least 1";
    else if (cfg->hashes > RBF_MAX_HASHES)
        w = "hashes must be at most 256";
    else if (cfg->hashing != RBF_COLLIDING && cfg->hashing != RBF_NON_COLLIDING)
        w = "hashing must be RBF_COLLIDING or RBF_NON_COLLIDING";
    else if (cfg->recycle != RBF_NON_RETAINING && cfg->recycle != RBF_RETAINING)
        w = "recycle must be RBF_NON_RETAINING or RBF_RETAINING";
    else if (cfg->layout != RBF_LAYOUT_FLAT && cfg->layout != RBF_LAYOUT_BLOCKED)
        w = "layout must be RBF_LAYOUT_FLAT or RBF_LAYOUT_BLOCKED";
    else if (cfg->layout == RBF_LAYOUT_BLOCKED && rbf__bits_per_filter(cfg) % RBF_BLOCK_BITS != 0)
        w = "the blocked layout needs bits per filter to be a multiple of 512";
    else if (cfg->sigma != 0 && cfg->messages != 0)
        w = "set either sigma or messages, not both";
    else if (cfg->sigma == 0 && cfg->messages == 0)
        w = "set a recycling threshold: sigma (bits) or messages (N)";
    else if (cfg->hashing == RBF_NON_COLLIDING && cfg->hashes > rbf__bits_per_filter(cfg))
        w = "non-colliding hashing needs hashes <= bits per filter";
    else if (cfg->sigma != 0 && cfg->sigma >= rbf__bits_per_filter(cfg))
        w = "sigma must be less than the bits per filter";
    else if (cfg->sigma != 0 && cfg->sigma < cfg->hashes)
        w = "sigma must be at least hashes (a message may need k bits)";
    else if (rbf__bits_per_filter(cfg) / 64 + (rbf__bits_per_filter(cfg) % 64 != 0) >
             (uint64_t)SIZE_MAX / sizeof(uint64_t)) {
        w = "bits too large to address on this machine";
        rc = RBF_ENOMEM;
    }
    if (why)
        *why = w;
    return w ? rc : RBF_OK;
}

int rbf__alloc(const rbf_config *cfg, struct rbf **out)
{
    struct rbf *f = rbf__calloc(1, sizeof *f);
    if (!f)
        return RBF_ENOMEM;
    f->cfg = *cfg;
    f->m = rbf__bits_per_filter(cfg);
    f->nwords = f->m / 64 + (f->m % 64 != 0);
    f->active = rbf__alloc_lines(words_bytes(f->nwords));
    if (f->active && cfg->phases == 2)
        f->frozen = rbf__alloc_lines(words_bytes(f->nwords));
    if (!f->active || (cfg->phases == 2 && !f->frozen)) {
        rbf__free_lines(f->active, words_bytes(f->nwords));
        rbf__free(f);
        return RBF_ENOMEM;
    }
    f->limit_bits = cfg->sigma ? cfg->sigma : UINT64_MAX;
    f->limit_msgs = cfg->messages ? cfg->messages : UINT64_MAX;
    if (cfg->concurrent && rbf__conc_attach(f) != RBF_OK) {
        rbf__free_lines(f->active, words_bytes(f->nwords));
        rbf__free_lines(f->frozen, words_bytes(f->nwords));
        rbf__free(f);
        return RBF_ENOMEM;
    }
    rbf__choose_path(f);
    *out = f;
    return RBF_OK;
}

int rbf_new(const rbf_config *cfg, rbf **out)
{
    if (!out)
        return RBF_EINVAL;
    *out = NULL;
    int rc = rbf_config_check(cfg, NULL);
    if (rc != RBF_OK)
        return rc;
    return rbf__alloc(cfg, out);
}

void rbf_free(rbf *f)
{
    if (!f)
        return;
    rbf__conc_detach(f);
    rbf__free_lines(f->active, words_bytes(f->nwords));
    rbf__free_lines(f->frozen, words_bytes(f->nwords));
    rbf__free(f);
}

void rbf_get_config(const rbf *f, rbf_config *out)
{
    if (f && out)
        *out = f->cfg;
}

int rbf_recycle(rbf *f)
{
    if (!f)
        return RBF_EINVAL;
    if (f->conc)
        rbf__conc_recycle(f);
    else
        rbf__recycle(f);
    return RBF_OK;
}

int rbf_set_concurrent(rbf *f, unsigned concurrent)
{
    if (!f || concurrent > 1)
        return RBF_EINVAL;
    int rc = RBF_OK;
    if (concurrent && !f->conc)
        rc = rbf__conc_attach(f);
    else if (!concurrent && f->conc)
        rbf__conc_detach(f);
    else
        return RBF_OK;
    if (rc == RBF_OK)
        rbf__choose_path(f); /* the configuration changed: so may the path */
    return rc;
}


void rbf_get_stats(const rbf *f, rbf_stats *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    if (!f)
        return;
    out->bits = f->m;
    out->seed = f->cfg.seed;
    if (f->conc) {
        rbf__conc_stats(f, out);
        return;
    }
    out->bits_set = f->b;
    out->frozen_bits_set = f->fb;
    out->cycles = f->cycles;
    out->cycle_messages = f->c;
    out->inserts = f->inserts;
    out->reported_new = f->reported_new;
    out->seed = f->cfg.seed;
}

/*
 * blk_internal.h -- what the files of the blocked models share (internal to
 * src/model/blocked/): one block's occupancy chain (chain.c), the Poisson
 * and binomial load windows (chain.c), and the law of a sum of independent
 * block counts, exact by FFT or by Edgeworth (sums.c).  blocked.c builds
 * the Poissonised models from them.
 */
#ifndef RBF_BLK_INTERNAL_H
#define RBF_BLK_INTERNAL_H

#include <complex.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "model_blocked.h"

#define BLK_TINY 1e-30
#define BLK_PI 3.14159265358979323846
#define BLK_Z 14.0          /* time window: sum's mean -/+ Z standard deviations */
#define BLK_LCAP 65536u     /* largest block load followed */
#define BLK_FULL_FFT 2048u /* sums with at most this support: no window */

/* ---- one block: the joint chain of (f, b) after L messages (chain.c) */

typedef struct blk_chain {
    unsigned W, k;
    int nc, need_f;
    double *T;   /* T[b (k+1) + d]: P(a message into a block at b sets d new bits) */
    double *rho; /* rho_W(b) = T[b (k+1)] */
    unsigned L;  /* loads processed */
    unsigned blo, bn, flo, fn; /* the live rectangle of J */
    double *J;   /* J[(f - flo) bn + (b - blo)] */
    /* records of loads 0..L */
    size_t cap;
    unsigned *pb_lo, *pb_n, *h_lo, *h_n;
    size_t *pb_off, *h_off;
    double *a, *mb, *m2b, *mc, *m2c;
    double *pool_b, *pool_h;
    size_t pool_b_len, pool_b_cap, pool_h_len, pool_h_cap;
} blk_chain;

int rbf__blk_chain_init(blk_chain *c, unsigned W, unsigned k, int nc, int need_f);
void rbf__blk_chain_destroy(blk_chain *c);
int rbf__blk_chain_extend(blk_chain *c, uint64_t L);

/* ---- Poisson and binomial weights on the window where they matter (chain.c) */

typedef struct wwin {
    uint64_t lo;
    size_t n, cap;
    double *w;
} wwin;

int rbf__blk_pois_window(wwin *ww, double t);
int rbf__blk_binom_window(wwin *ww, uint64_t n, uint64_t B);

/* ---- the law of a sum of independent block counts (sums.c) */

enum { SD_POINT = 0, SD_ARRAY = 1, SD_EDGE = 2 };

typedef struct sdist {
    int kind;
    int64_t s0;               /* SD_POINT */
    int64_t c0;               /* SD_ARRAY: pmf[s - c0], s in [c0, c0 + n) */
    size_t n;
    double *pmf, *cdf;
    double mu, sd, g3, g4;    /* SD_EDGE */
    double scale;             /* total mass (1 except for the tilted sum) */
} sdist;

static inline double sd_pmf(const sdist *s, int64_t x)
{
    switch (s->kind) {
    case SD_POINT:
        return x == s->s0 ? s->scale : 0.0;
    case SD_ARRAY:
        if (x < s->c0 || x >= s->c0 + (int64_t)s->n)
            return 0.0;
        return s->pmf[x - s->c0];
    default: {
        double z = ((double)x - s->mu) / s->sd;
        if (fabs(z) > 40.0)
            return 0.0;
        double z2 = z * z;
        double he3 = z * (z2 - 3.0), he4 = z2 * z2 - 6.0 * z2 + 3.0;
        double he6 = z2 * z2 * z2 - 15.0 * z2 * z2 + 45.0 * z2 - 15.0;
        double v = exp(-0.5 * z2) / (sqrt(2.0 * BLK_PI) * s->sd) *
                   (1.0 + s->g3 / 6.0 * he3 + s->g4 / 24.0 * he4 + s->g3 * s->g3 / 72.0 * he6);
        return v > 0.0 ? v * s->scale : 0.0;
    }
    }
}

/* P(S <= x) (a probability law: scale 1). */
static inline double sd_cdf(const sdist *s, int64_t x)
{
    switch (s->kind) {
    case SD_POINT:
        return x >= s->s0 ? 1.0 : 0.0;
    case SD_ARRAY:
        if (x < s->c0)
            return 0.0;
        if (x >= s->c0 + (int64_t)s->n)
            return 1.0;
        return model_clamp01(s->cdf[x - s->c0]);
    default: {
        double z = ((double)x + 0.5 - s->mu) / s->sd;
        if (z < -40.0)
            return 0.0;
        if (z > 40.0)
            return 1.0;
        double z2 = z * z;
        double he2 = z2 - 1.0, he3 = z * (z2 - 3.0), he5 = z * (z2 * z2 - 10.0 * z2 + 15.0);
        double phi = exp(-0.5 * z2) / sqrt(2.0 * BLK_PI);
        double v = 0.5 * erfc(-z / sqrt(2.0)) -
                   phi * (s->g3 / 6.0 * he2 + s->g4 / 24.0 * he3 + s->g3 * s->g3 / 72.0 * he5);
        return model_clamp01(v);
    }
    }
}

typedef struct fftws {
    size_t cap;
    double complex *a, *p, *q, *tw;
    double *pm1, *cd1, *pm2;
    size_t dcap;
    size_t twn; /* the transform length tw holds (0: none) */
} fftws;

void rbf__blk_sd_edgeworth(sdist *s, const double *y, uint64_t m, const double *z, unsigned W);
void rbf__blk_fftws_free(fftws *w);
int rbf__blk_sd_exact(fftws *w, const double *y, const double *z, unsigned W, uint64_t m, sdist *sy,
                    sdist *sz);

#endif

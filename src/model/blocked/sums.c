/*
 * sums.c -- the law of a sum of m independent block counts for the blocked
 * models: exact by an FFT convolution power on a window that holds all but
 * a negligible part of it, or by a 4-cumulant Edgeworth expansion.
 */
#include <complex.h>
#include <stdlib.h>
#include <string.h>

#include "blk_internal.h"
#include "rbf_alloc.h"

/* ------------------------------------------------------------------ */
/* FFT and the law of a sum of independent block counts.              */

/* In place, unscaled; tw[j * ts] = exp(-2 pi i j / n) for j < n / 2. */
static void fft(double complex *a, size_t n, int inverse, const double complex *tw, size_t ts)
{
    for (size_t i = 1, j = 0; i < n; i++) {
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) {
            double complex t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }
    /* the butterflies in real arithmetic: the same products and sums as
     * the complex ones, without the library's checks for infinities */
    double *ar = (double *)a; /* C11 6.2.5: a complex is an array of two reals */
    const double *tr = (const double *)tw;
    const double sgn = inverse ? -1.0 : 1.0;
    for (size_t len = 2; len <= n; len <<= 1) {
        size_t step = n / len, half = len / 2;
        for (size_t i = 0; i < n; i += len)
            for (size_t j = 0; j < half; j++) {
                double wr = tr[2 * (j * step * ts)], wi = sgn * tr[2 * (j * step * ts) + 1];
                double *x = ar + 2 * (i + j), *y = ar + 2 * (i + j + half);
                double vr = y[0] * wr - y[1] * wi, vi = y[0] * wi + y[1] * wr;
                double ur = x[0], ui = x[1];
                x[0] = ur + vr;
                x[1] = ui + vi;
                y[0] = ur - vr;
                y[1] = ui - vi;
            }
    }
}

/* The transform of a real sequence x[0..n) (n even, >= 4) by one of
 * length n/2 (even samples in the real parts, odd in the imaginary):
 * X[0..n/2], the rest being conj(X[n - j]).  tw: the length-n twiddles;
 * s: n/2 scratch values. */
static void rfft_fwd(const double *x, size_t n, double complex *X, double complex *s,
                     const double complex *tw)
{
    const size_t h = n / 2;
    for (size_t j = 0; j < h; j++)
        s[j] = x[2 * j] + I * x[2 * j + 1];
    fft(s, h, 0, tw, 2);
    for (size_t k = 0; k <= h; k++) {
        double complex zk = s[k % h], zc = conj(s[(h - k) % h]);
        double complex e = 0.5 * (zk + zc), o = -0.5 * I * (zk - zc);
        X[k] = e + (k < h ? tw[k] : -1.0) * o;
    }
}

/* The inverse: x[0..n) times n/2 (unscaled) from X[0..n/2] of a real
 * sequence. */
static void rfft_inv(const double complex *X, size_t n, double *x, double complex *s,
                     const double complex *tw)
{
    const size_t h = n / 2;
    for (size_t k = 0; k < h; k++) {
        double complex a = X[k], b = conj(X[h - k]);
        s[k] = 0.5 * (a + b) + I * (0.5 * (a - b) * conj(tw[k]));
    }
    fft(s, h, 1, tw, 2);
    for (size_t j = 0; j < h; j++) {
        x[2 * j] = creal(s[j]);
        x[2 * j + 1] = cimag(s[j]);
    }
}

static double complex cpow_int(double complex z, uint64_t m)
{
    if (m == 0)
        return 1.0;
    if (m <= 64) {
        /* few factors (the exact sums' B - 2 or B - 1 <= 63, but near the
         * top of the support): binary powering, a dozen complex products
         * at most (relative rounding ~1e-15) instead of log, atan2, hypot
         * and sincos; the products in real arithmetic, like the FFT's */
        double xr = creal(z), xi = cimag(z), pr = 1.0, pi = 0.0;
        for (;;) {
            if (m & 1) {
                double t = pr * xr - pi * xi;
                pi = pr * xi + pi * xr;
                pr = t;
            }
            m >>= 1;
            if (!m)
                break;
            double t = xr * xr - xi * xi;
            xi = 2.0 * xr * xi;
            xr = t;
        }
        return pr + I * pi;
    }
    double r = cabs(z);
    if (r == 0.0)
        return 0.0;
    double lr = (double)m * log(r);
    if (lr < -740.0)
        return 0.0;
    double th = (double)m * carg(z);
    return exp(lr) * (cos(th) + I * sin(th));
}





/* Cumulants k1..k4 of a (possibly unnormalised) vector on 0..W; returns its mass. */
static double cumulants(const double *y, unsigned W, double kap[4])
{
    model_sum s0, s1;
    msum_init(&s0);
    msum_init(&s1);
    for (unsigned b = 0; b <= W; b++) {
        msum_add(&s0, y[b]);
        msum_add(&s1, y[b] * (double)b);
    }
    double m0 = msum_get(&s0);
    double mu = m0 > 0.0 ? msum_get(&s1) / m0 : 0.0;
    double c2 = 0.0, c3 = 0.0, c4 = 0.0;
    for (unsigned b = 0; b <= W; b++) {
        double d = (double)b - mu, w = y[b] / (m0 > 0.0 ? m0 : 1.0);
        c2 += w * d * d;
        c3 += w * d * d * d;
        c4 += w * d * d * d * d;
    }
    kap[0] = mu;
    kap[1] = c2;
    kap[2] = c3;
    kap[3] = c4 - 3.0 * c2 * c2;
    return m0;
}

/* Edgeworth law of sum of m copies of y plus (if ztil) one copy of z. */
void rbf__blk_sd_edgeworth(sdist *s, const double *y, uint64_t m, const double *z, unsigned W)
{
    double ky[4], kz[4] = {0, 0, 0, 0}, K[4];
    cumulants(y, W, ky);
    double mass = 1.0;
    if (z)
        mass = cumulants(z, W, kz);
    for (int i = 0; i < 4; i++)
        K[i] = (double)m * ky[i] + kz[i];
    s->scale = mass;
    if (!(K[1] > 1e-12)) {
        s->kind = SD_POINT;
        s->s0 = (int64_t)llround(K[0]);
        return;
    }
    s->kind = SD_EDGE;
    s->mu = K[0];
    s->sd = sqrt(K[1]);
    s->g3 = K[2] / (K[1] * s->sd);
    s->g4 = K[3] / (K[1] * K[1]);
}

/* Workspace of the exact sums. */

void rbf__blk_fftws_free(fftws *w)
{
    rbf__free(w->a);
    rbf__free(w->p);
    rbf__free(w->q);
    rbf__free(w->tw);
    rbf__free(w->pm1);
    rbf__free(w->cd1);
    rbf__free(w->pm2);
    memset(w, 0, sizeof *w);
}

/* Exact laws: sy = m copies of y; if z, sz = z * (m - 1 copies of y).
 * m >= 1.  Arrays in sy/sz point into the workspace. */
int rbf__blk_sd_exact(fftws *w, const double *y, const double *z, unsigned W, uint64_t m, sdist *sy,
                    sdist *sz)
{
    double ky[4];
    cumulants(y, W, ky);
    uint64_t full = m * W + 1;
    double zz = BLK_Z + 8.0;
    for (;;) {
        int64_t c0 = 0;
        uint64_t need = full;
        int windowed = 0;
        if (full > BLK_FULL_FFT) {
            double half = zz * sqrt((double)m * (ky[1] > 0 ? ky[1] : 0)) + (double)W + 2.0;
            double lo = floor((double)m * ky[0] - half), hi = ceil((double)m * ky[0] + half);
            if (lo < 0.0)
                lo = 0.0;
            if (hi > (double)(full - 1))
                hi = (double)(full - 1);
            c0 = (int64_t)lo;
            need = (uint64_t)(hi - lo) + 1;
            windowed = need < full;
        }
        size_t nf = 64;
        while (nf < need)
            nf *= 2;
        if (nf > ((size_t)1 << 24))
            return RBF_EINVAL;
        if (nf > w->cap) {
            rbf__free(w->a);
            rbf__free(w->p);
            rbf__free(w->q);
            rbf__free(w->tw);
            w->a = rbf__malloc(nf * sizeof *w->a);
            w->p = rbf__malloc(2 * nf * sizeof *w->p); /* the spectrum, then scratch */
            w->q = rbf__malloc(nf * sizeof *w->q);
            w->tw = rbf__malloc(nf / 2 * sizeof *w->tw);
            rbf__free(w->pm1);
            rbf__free(w->cd1);
            rbf__free(w->pm2);
            w->pm1 = rbf__malloc(nf * sizeof *w->pm1);
            w->cd1 = rbf__malloc(nf * sizeof *w->cd1);
            w->pm2 = rbf__malloc(nf * sizeof *w->pm2);
            if (!w->a || !w->p || !w->q || !w->tw || !w->pm1 || !w->cd1 || !w->pm2) {
                rbf__blk_fftws_free(w);
                return RBF_ENOMEM;
            }
            w->cap = nf;
            w->twn = 0;
        }
        if (w->twn != nf) { /* the same length as the last call: the same twiddles */
            for (size_t j = 0; j < nf / 2; j++) {
                double ang = -2.0 * BLK_PI * (double)j / (double)nf;
                w->tw[j] = cos(ang) + I * sin(ang);
            }
            w->twn = nf;
        }
        /* y and z are real: their transforms by half-length ones, and of
         * the Hermitian spectra only the lower half (half the complex
         * powers); the laws come back as real sequences */
        const size_t h = nf / 2;
        double *ry = (double *)w->a, *rz = ry + nf; /* a: 2 nf doubles */
        double complex *sc = w->p + nf;
        memset(ry, 0, nf * sizeof *ry);
        if (z)
            memset(rz, 0, nf * sizeof *rz);
        for (unsigned b = 0; b <= W; b++) {
            ry[b % nf] += y[b];
            if (z)
                rz[b % nf] += z[b];
        }
        rfft_fwd(ry, nf, w->p, sc, w->tw);
        if (z)
            rfft_fwd(rz, nf, w->q, sc, w->tw);
        for (size_t j = 0; j <= h; j++) {
            double complex pm = cpow_int(w->p[j], m - 1);
            w->p[j] *= pm;
            if (z)
                w->q[j] *= pm;
        }
        rfft_inv(w->p, nf, ry, sc, w->tw);
        if (z)
            rfft_inv(w->q, nf, rz, sc, w->tw);
        double inv = 1.0 / (double)h;
        model_sum cs;
        msum_init(&cs);
        for (size_t i = 0; i < nf; i++) {
            size_t idx = (size_t)(((uint64_t)c0 + i) % nf);
            double v = ry[idx] * inv;
            w->pm1[i] = v;
            msum_add(&cs, v);
            w->cd1[i] = msum_get(&cs);
            if (z)
                w->pm2[i] = rz[idx] * inv;
        }
        if (windowed) {
            /* the window must hold the law: its edges carry nothing */
            double edge = 0.0;
            for (size_t i = 0; i < 32 && i < nf; i++) {
                edge = fmax(edge, fabs(w->pm1[i]));
                edge = fmax(edge, fabs(w->pm1[nf - 1 - i]));
            }
            if (edge > 1e-13 && zz < 80.0) {
                zz += 12.0;
                continue;
            }
        }
        sy->kind = SD_ARRAY;
        sy->c0 = c0;
        sy->n = nf;
        sy->pmf = w->pm1;
        sy->cdf = w->cd1;
        sy->scale = 1.0;
        if (z && sz) {
            sz->kind = SD_ARRAY;
            sz->c0 = c0;
            sz->n = nf;
            sz->pmf = w->pm2;
            sz->cdf = NULL;
            sz->scale = 1.0;
        }
        return RBF_OK;
    }
}


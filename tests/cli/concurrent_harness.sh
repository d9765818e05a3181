#!/usr/bin/env bash
# A program outside the library, using only the public header, runs 8
# threads on one filter with concurrent = 1 (what must hold for it to be done):
#   - no insert lost: each key whose insert returned is contained, checked
#     by its own thread, when no recycle ran in between;
#   - sigma held while recycling: a thread samples rbf_get_stats while the
#     filter recycles (by threshold and by rbf_recycle from another thread);
#   - bits_set equal to a single-threaded filter over the same keys (no
#     recycle), and the bit arrays equal.
# No timing is checked.  Compiled against build/librbf.a.
set -euo pipefail
: "${RBF_SRC:?}" "${RBF_BUILD:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/harness.c" <<'EOF'
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rbf.h>

#define T 8
#ifndef PER
#define PER 20000
#endif
static rbf *shared_f;
static uint64_t sigma;
static atomic_int done;
static int recycler = 1; /* thread 0 calls rbf_recycle now and then */
static atomic_ulong lost, checked, bad;

static uint64_t key_of(int t, uint64_t j) { uint64_t s = (uint64_t)t << 40 | j; return rbf_splitmix64(&s); }

static void *inserter(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (uint64_t j = 0; j < PER; j++) {
        uint64_t k = key_of(t, j);
        rbf_stats a, b;
        rbf_get_stats(shared_f, &a);
        int r = rbf_insert(shared_f, &k, sizeof k);
        int h = rbf_contains(shared_f, &k, sizeof k);
        rbf_get_stats(shared_f, &b);
        if (r != 0 && r != 1)
            bad++;
        if (a.cycles == b.cycles) {
            checked++;
            if (h != 1)
                lost++;
        }
        if (recycler && t == 0 && j % 5000 == 2500)
            rbf_recycle(shared_f);
    }
    return NULL;
}

static void *sampler(void *arg)
{
    (void)arg;
    while (!done) {
        rbf_stats s;
        rbf_get_stats(shared_f, &s);
        if (s.bits_set > sigma || s.reported_new > s.inserts)
            bad++;
    }
    return NULL;
}

static rbf *make(uint64_t bits, uint64_t sig, unsigned conc)
{
    rbf_config c;
    rbf_config_init(&c);
    c.bits = bits;
    c.hashes = 7;
    c.sigma = sig;
    c.seed = 42;
    c.concurrent = conc;
    rbf *f;
    if (rbf_new(&c, &f) != RBF_OK)
        exit(2);
    return f;
}

static void run(void)
{
    pthread_t th[T + 1];
    done = 0;
    for (int t = 0; t < T; t++)
        pthread_create(&th[t], NULL, inserter, (void *)(intptr_t)t);
    pthread_create(&th[T], NULL, sampler, NULL);
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    done = 1;
    pthread_join(th[T], NULL);
}

int main(void)
{
    /* 1: recycling (sigma small enough for many cycles) */
    sigma = 20000;
    shared_f = make(1 << 18, sigma, 1);
    run();
    rbf_stats s;
    rbf_get_stats(shared_f, &s);
    printf("recycling: %llu inserts, %llu cycles, %lu of %d keys checked, %lu lost, %lu bad\n",
           (unsigned long long)s.inserts, (unsigned long long)s.cycles, (unsigned long)checked,
           T * PER, (unsigned long)lost, (unsigned long)bad);
    int fail = lost != 0 || bad != 0 || s.inserts != (uint64_t)T * PER || s.cycles < (uint64_t)PER / 1000 ||
               checked < (unsigned long)T * PER / 2 || s.bits_set > sigma;
    rbf_free(shared_f);

    /* 2: no recycle: bits_set and the arrays equal a single-threaded filter's */
    sigma = (1u << 22) / 2 - 1;
    shared_f = make(1 << 22, sigma, 1);
    checked = 0;
    recycler = 0;
    run();
    rbf *ref = make(1 << 22, sigma, 0);
    for (int t = 0; t < T; t++)
        for (uint64_t j = 0; j < PER; j++) {
            uint64_t k = key_of(t, j);
            rbf_insert(ref, &k, sizeof k);
        }
    rbf_stats a, b;
    rbf_get_stats(ref, &a);
    rbf_get_stats(shared_f, &b);
    uint64_t na, nb;
    rbf_save_size(ref, &na);
    rbf_save_size(shared_f, &nb);
    uint8_t *pa = malloc(na), *pb = malloc(nb);
    rbf_save_buffer(ref, pa, na);
    rbf_save_buffer(shared_f, pb, nb);
    int same = na == nb && memcmp(pa + 128, pb + 128, na - 136) == 0;
    printf("no recycle: bits_set %llu single-threaded, %llu with %d threads; arrays %s; %lu lost\n",
           (unsigned long long)a.bits_set, (unsigned long long)b.bits_set, T,
           same ? "equal" : "DIFFER", (unsigned long)lost);
    fail |= a.bits_set != b.bits_set || !same || b.cycles != 0 || lost != 0 || bad != 0;
    free(pa);
    free(pb);
    rbf_free(ref);
    rbf_free(shared_f);
    return fail;
}
EOF
per=20000
case "${RBF_LINK_FLAGS:-}" in *sanitize=thread*) per=4000 ;; esac # ThreadSanitizer: slower
cc -std=c11 -O2 -Wall -Wextra -Werror -pthread -DPER=$per ${RBF_LINK_FLAGS:-} -I"$RBF_SRC/include" \
  "$tmp/harness.c" "$RBF_BUILD/librbf.a" -o "$tmp/harness"
"$tmp/harness"
echo "1 passed, 0 failed"

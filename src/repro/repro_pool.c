/*
 * repro_pool.c -- the reproduce module's thread pool: independent jobs
 * 0..n-1 (simulation points, planner points) handed out one at a time to
 * --threads workers, the calling thread included.  The numbers of a job do
 * not depend on which thread runs it (each job has its own seed).
 */
#include <pthread.h>

#include "cli_util.h"
#include "repro_internal.h"

typedef struct pool {
    pthread_mutex_t lock;
    size_t next, done, n;
    int rc;
    int (*fn)(void *, size_t);
    void *arg;
} pool;

static void *pool_worker(void *p_)
{
    pool *p = p_;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        if (p->rc != 0 || p->next >= p->n) {
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        size_t i = p->next++;
        pthread_mutex_unlock(&p->lock);
        int rc = p->fn(p->arg, i);
        pthread_mutex_lock(&p->lock);
        if (rc != 0 && p->rc == 0)
            p->rc = rc;
        p->done++;
        cli_progress_update(p->done);
        pthread_mutex_unlock(&p->lock);
    }
}

int repro_parallel(repro_ctx *c, const char *label, size_t n, int (*fn)(void *arg, size_t i),
                   void *arg)
{
    pool p = {.next = 0, .done = 0, .n = n, .rc = 0, .fn = fn, .arg = arg};
    pthread_mutex_init(&p.lock, NULL);
    cli_progress_begin(label, n);
    unsigned nt = c->threads ? c->threads : 1;
    if (nt > n)
        nt = (unsigned)(n ? n : 1);
    pthread_t th[64];
    if (nt > 64)
        nt = 64;
    unsigned started = 0;
    for (unsigned t = 1; t < nt; t++)
        if (pthread_create(&th[started], NULL, pool_worker, &p) == 0)
            started++;
    pool_worker(&p); /* the calling thread works too */
    for (unsigned t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    cli_progress_end();
    pthread_mutex_destroy(&p.lock);
    return p.rc;
}

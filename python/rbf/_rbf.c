/*
 * _rbf.c -- the CPython extension behind `import rbf`: the filter, the
 * models, the planner and the simulator of librbf (linked statically).
 *
 * Built with the limited API of Python 3.11 (an abi3 module).  The Python
 * layer (rbf/__init__.py) adds the pythonic conveniences; everything that
 * loops over items, runs a model or a simulation is here, with the GIL
 * released while the library works.
 *
 * Items: bytes, bytearray, memoryview (any C-contiguous buffer given as a
 * memoryview), str (its UTF-8 bytes) and int (its decimal text, minus sign
 * included: what redis-py sends).  bool, float and anything else raise
 * TypeError.
 *
 * Locking: a filter made with concurrent=False has a lock of its own, taken
 * by every call that touches it; a call that releases the GIL holds it
 * while the library works, so no two threads ever run the library on it at
 * once.  A concurrent filter takes no lock (the library is thread-safe).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rbf.h"
#include "rbf_model.h"
#include "rbf_sim.h"
/* Two of the rbf command's helpers (src/util/cli_util.h, linked from
 * librbfcliutil.a; declared here, as this file is built against the
 * public headers only): its reader of --memory, so that memory="..."
 * means what --memory means, and its monotonic clock. */
int cli_parse_bytes(const char *s, uint64_t *out, const char **err);
double cli_wall_seconds(void);

/* ------------------------------------------------------------ errors */

static PyObject *CancelledError; /* rbf.Cancelled */

static PyObject *raise_rc(int rc, const char *why)
{
    switch (rc) {
    case RBF_ENOMEM:
        return PyErr_NoMemory();
    case RBF_EIO:
        return PyErr_SetFromErrno(PyExc_OSError);
    case RBF_EFORMAT:
    case RBF_ECORRUPT:
        PyErr_Format(PyExc_ValueError, "not a valid rbf image: %s", rbf_strerror(rc));
        return NULL;
    case RBF_ECANCELED:
        if (!PyErr_Occurred())
            PyErr_SetString(CancelledError, rbf_strerror(rc));
        return NULL;
    default:
        PyErr_SetString(PyExc_ValueError, why ? why : rbf_strerror(rc));
        return NULL;
    }
}

/* ------------------------------------------------------------ items */

/* Where an item's bytes are.  `num` holds the decimal text of a small int;
 * `view` a buffer to release (memoryview); `tmp` a str of a big int. */
typedef struct item_ref {
    const char *p;
    Py_ssize_t n;
    int has_view;
    Py_buffer view;
    PyObject *tmp;
    char num[24];
} item_ref;

static void item_release(item_ref *r)
{
    if (r->has_view) {
        PyBuffer_Release(&r->view);
        r->has_view = 0;
    }
    Py_CLEAR(r->tmp);
}

static int item_type_error(PyObject *o)
{
    PyObject *name = PyType_GetName(Py_TYPE(o));
    PyErr_Format(PyExc_TypeError,
                 "an rbf item must be bytes, bytearray, memoryview, str or int, not %S",
                 name ? name : Py_None);
    Py_XDECREF(name);
    return -1;
}

static Py_ssize_t int_text(char *buf, long long v)
{
    char tmp[24];
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    Py_ssize_t n = 0, i = 0;
    do {
        tmp[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    if (v < 0)
        buf[i++] = '-';
    while (n)
        buf[i++] = tmp[--n];
    return i;
}

/* Fill `r` with the bytes of item `o`.  0, or -1 with an exception set. */
static int item_get(PyObject *o, item_ref *r)
{
    PyTypeObject *t = Py_TYPE(o);
    r->has_view = 0;
    r->tmp = NULL;
    if (t == &PyBytes_Type) {
        char *p;
        if (PyBytes_AsStringAndSize(o, &p, &r->n) < 0)
            return -1;
        r->p = p;
        return 0;
    }
    if (t == &PyUnicode_Type) {
        r->p = PyUnicode_AsUTF8AndSize(o, &r->n);
        return r->p ? 0 : -1;
    }
    if (t == &PyLong_Type) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (v == -1 && PyErr_Occurred())
            return -1;
        if (!overflow) {
            r->n = int_text(r->num, v);
            r->p = r->num;
            return 0;
        }
        r->tmp = PyObject_Str(o);
        if (!r->tmp)
            return -1;
        r->p = PyUnicode_AsUTF8AndSize(r->tmp, &r->n);
        if (!r->p) {
            Py_CLEAR(r->tmp);
            return -1;
        }
        return 0;
    }
    if (PyBool_Check(o))
        return item_type_error(o);
    if (PyBytes_Check(o)) {
        char *p;
        if (PyBytes_AsStringAndSize(o, &p, &r->n) < 0)
            return -1;
        r->p = p;
        return 0;
    }
    if (PyUnicode_Check(o)) {
        r->p = PyUnicode_AsUTF8AndSize(o, &r->n);
        return r->p ? 0 : -1;
    }
    if (PyLong_Check(o)) {
        /* an int subclass (not bool): its decimal text as int() gives it */
        PyObject *plain = PyNumber_Long(o);
        if (!plain)
            return -1;
        r->tmp = PyObject_Str(plain);
        Py_DECREF(plain);
        if (!r->tmp)
            return -1;
        r->p = PyUnicode_AsUTF8AndSize(r->tmp, &r->n);
        if (!r->p) {
            Py_CLEAR(r->tmp);
            return -1;
        }
        return 0;
    }
    if (PyByteArray_Check(o)) {
        r->p = PyByteArray_AsString(o);
        r->n = PyByteArray_Size(o);
        return r->p ? 0 : -1;
    }
    if (PyMemoryView_Check(o)) {
        if (PyObject_GetBuffer(o, &r->view, PyBUF_SIMPLE) == 0) {
            r->has_view = 1;
            r->p = (const char *)r->view.buf;
            r->n = r->view.len;
            return 0;
        }
        /* not contiguous: its bytes in C order, as tobytes() gives them */
        if (!PyErr_ExceptionMatches(PyExc_BufferError))
            return -1;
        PyErr_Clear();
        r->tmp = PyObject_CallMethod(o, "tobytes", NULL);
        if (!r->tmp)
            return -1;
        char *p;
        if (PyBytes_AsStringAndSize(r->tmp, &p, &r->n) < 0) {
            Py_CLEAR(r->tmp);
            return -1;
        }
        r->p = p;
        return 0;
    }
    return item_type_error(o);
}

/* The filter's lock below relies on the GIL: refuse a build without one. */
#ifdef Py_GIL_DISABLED
#error "rbf's Python module needs an interpreter with a GIL (the filter's lock relies on it)"
#endif

#if defined(__GNUC__)
#define RBF_PY_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define RBF_PY_LIKELY(x) (x)
#endif

/* ------------------------------------------------------------ the filter type */

typedef struct {
    PyObject_HEAD
    rbf *f;
    atomic_int busy; /* the filter's own lock (single-writer filters): 1 while held */
    int concurrent;  /* 1: the library's lock-free concurrent filter, no lock here */
    unsigned phases;
    PyObject *weakreflist;
} FilterObject;

static PyObject *FilterType; /* the type object (heap type) */

/* The filter's own lock (filters not made with concurrent=True): one
 * word, which only a thread holding the GIL takes (this module is built for
 * interpreters with a GIL: an abi3 extension for 3.11, which free-threaded
 * builds do not load).  A batch takes it, releases the GIL while the library
 * works, and frees it without the GIL (a release store).  So a call that
 * holds the GIL from start to end and finds the word free needs no atomic
 * read-modify-write: nobody can take the lock before that call gives the GIL
 * back (fheld: single items).  A thread that finds it held waits without
 * the GIL (yielding, then sleeping 50 us at a time), then takes it with the
 * GIL again. */
static void fwait(FilterObject *s)
{
    unsigned n = 0;
    while (atomic_load_explicit(&s->busy, memory_order_acquire)) {
        if (++n < 64) {
            sched_yield();
        } else {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
}

/* Take the lock; the GIL is held (and may be released while waiting). */
static void flock(FilterObject *s)
{
    if (s->concurrent)
        return;
    while (atomic_load_explicit(&s->busy, memory_order_acquire)) {
        Py_BEGIN_ALLOW_THREADS
        fwait(s);
        Py_END_ALLOW_THREADS
    }
    atomic_store_explicit(&s->busy, 1, memory_order_relaxed);
}

/* With the GIL held: is the lock taken (by a batch working without the
 * GIL)?  If not, the caller may use the filter until it releases the GIL. */
static inline int fheld(FilterObject *s)
{
    return !s->concurrent && atomic_load_explicit(&s->busy, memory_order_acquire);
}

static inline void funlock(FilterObject *s)
{
    if (!s->concurrent)
        atomic_store_explicit(&s->busy, 0, memory_order_release);
}

static int filter_ready(FilterObject *s)
{
    if (!s->f) {
        PyErr_SetString(PyExc_ValueError, "rbf.Filter: not initialised");
        return -1;
    }
    return 0;
}

static int set_handle(FilterObject *s, rbf *f, int concurrent)
{
    if (concurrent) {
        int rc = rbf_set_concurrent(f, 1);
        if (rc) {
            rbf_free(f);
            raise_rc(rc, NULL);
            return -1;
        }
    }
    rbf *old = s->f;
    s->f = f;
    s->concurrent = concurrent;
    rbf_free(old);
    rbf_config c;
    rbf_get_config(f, &c);
    s->phases = c.phases;
    return 0;
}

static int parse_choice(PyObject *v, const char *what, const char *a, const char *b, int *out)
{
    if (!v || v == Py_None)
        return 0;
    if (!PyUnicode_Check(v)) {
        PyErr_Format(PyExc_TypeError, "%s: a str ('%s' or '%s')", what, a, b);
        return -1;
    }
    const char *s = PyUnicode_AsUTF8AndSize(v, NULL);
    if (!s)
        return -1;
    if (!strcmp(s, a))
        *out = 0;
    else if (!strcmp(s, b))
        *out = 1;
    else {
        PyErr_Format(PyExc_ValueError, "%s: '%s' is not '%s' or '%s'", what, s, a, b);
        return -1;
    }
    return 0;
}

/* A non-negative integer that fits 64 bits, or None (0). */
static int parse_u64(PyObject *v, const char *what, uint64_t *out)
{
    if (!v || v == Py_None)
        return 0;
    if (PyBool_Check(v) || !PyLong_Check(v)) {
        PyErr_Format(PyExc_TypeError, "%s: an int", what);
        return -1;
    }
    unsigned long long x = PyLong_AsUnsignedLongLong(v);
    if (x == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s: must be a non-negative integer below 2**64", what);
        return -1;
    }
    *out = x;
    return 0;
}

static int parse_u32(PyObject *v, const char *what, unsigned *out)
{
    uint64_t x = *out;
    if (parse_u64(v, what, &x) < 0)
        return -1;
    if (x > 0xffffffffu) {
        PyErr_Format(PyExc_ValueError, "%s: too large", what);
        return -1;
    }
    *out = (unsigned)x;
    return 0;
}

static int Filter_init(PyObject *self_, PyObject *args, PyObject *kw)
{
    FilterObject *s = (FilterObject *)self_;
    static char *kwlist[] = {"bits", "hashes", "sigma", "messages", "phases", "hashing",
                             "recycle", "layout", "seed", "concurrent", NULL};
    PyObject *bits = NULL, *hashes = NULL, *sigma = NULL, *messages = NULL, *phases = NULL,
             *hashing = NULL, *recycle = NULL, *layout = NULL, *seed = NULL;
    int concurrent = 0;
    if (s->f) {
        /* A second __init__ would free the filter under a batch that runs
         * without the GIL (a concurrent filter's batches take no lock). */
        PyErr_SetString(PyExc_RuntimeError,
                        "rbf.Filter: already initialised (make a new Filter instead)");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOOOOOOOp", kwlist, &bits, &hashes, &sigma,
                                     &messages, &phases, &hashing, &recycle, &layout, &seed,
                                     &concurrent))
        return -1;
    rbf_config c;
    rbf_config_init(&c);
    int nc = 0, ret = 0, blk = 0;
    c.phases = 1;
    if (parse_u64(bits, "bits", &c.bits) < 0 || parse_u32(hashes, "hashes", &c.hashes) < 0 ||
        parse_u64(sigma, "sigma", &c.sigma) < 0 ||
        parse_u64(messages, "messages", &c.messages) < 0 ||
        parse_u32(phases, "phases", &c.phases) < 0 ||
        parse_choice(hashing, "hashing", "colliding", "non-colliding", &nc) < 0 ||
        parse_choice(recycle, "recycle", "non-retaining", "retaining", &ret) < 0 ||
        parse_choice(layout, "layout", "flat", "blocked", &blk) < 0 ||
        parse_u64(seed, "seed", &c.seed) < 0)
        return -1;
    c.hashing = nc ? RBF_NON_COLLIDING : RBF_COLLIDING;
    c.recycle = ret ? RBF_RETAINING : RBF_NON_RETAINING;
    c.layout = blk ? RBF_LAYOUT_BLOCKED : RBF_LAYOUT_FLAT;
    const char *why = NULL;
    int rc = rbf_config_check(&c, &why);
    if (rc) {
        raise_rc(rc, why);
        return -1;
    }
    rbf *f = NULL;
    Py_BEGIN_ALLOW_THREADS
    rc = rbf_new(&c, &f);
    Py_END_ALLOW_THREADS
    if (rc) {
        raise_rc(rc, NULL);
        return -1;
    }
    return set_handle(s, f, concurrent);
}

static void Filter_dealloc(PyObject *self_)
{
    FilterObject *s = (FilterObject *)self_;
    PyTypeObject *tp = Py_TYPE(self_);
    PyObject_GC_UnTrack(self_);
    if (s->weakreflist)
        PyObject_ClearWeakRefs(self_);
    rbf_free(s->f);
    s->f = NULL;
    freefunc fr = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    fr(self_);
    Py_DECREF(tp);
}

static int Filter_traverse(PyObject *self_, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self_));
    return 0;
}

/* ---- single items */

static PyObject *Filter_add(PyObject *self_, PyObject *item)
{
    FilterObject *s = (FilterObject *)self_;
    item_ref r;
    if (!s->f) {
        filter_ready(s);
        return NULL;
    }
    if (item_get(item, &r) < 0)
        return NULL;
    int v;
    if (RBF_PY_LIKELY(!fheld(s))) {
        v = rbf_insert(s->f, r.p, (size_t)r.n);
    } else {
        flock(s);
        v = rbf_insert(s->f, r.p, (size_t)r.n);
        funlock(s);
    }
    item_release(&r);
    if (v < 0)
        return raise_rc(v, NULL);
    if (v) {
        Py_INCREF(Py_True);
        return Py_True;
    }
    Py_INCREF(Py_False);
    return Py_False;
}

static int Filter_contains(PyObject *self_, PyObject *item)
{
    FilterObject *s = (FilterObject *)self_;
    item_ref r;
    if (filter_ready(s) < 0)
        return -1;
    if (item_get(item, &r) < 0)
        return -1;
    int v;
    if (RBF_PY_LIKELY(!fheld(s))) {
        v = rbf_contains(s->f, r.p, (size_t)r.n);
    } else {
        flock(s);
        v = rbf_contains(s->f, r.p, (size_t)r.n);
        funlock(s);
    }
    item_release(&r);
    if (v < 0) {
        raise_rc(v, NULL);
        return -1;
    }
    return v;
}

/* ---- batches
 *
 * Items are gathered under the GIL into an arena (their bytes copied, so
 * nothing the GIL protects is read while it is released), CHUNK at a time;
 * then the library runs on the chunk with the GIL released and the
 * filter's lock held. */

#define CHUNK 4096
#define ARENA_SOFT (1u << 20)

typedef struct batch {
    char *arena;
    size_t cap, used;
    size_t off[CHUNK];
    size_t len[CHUNK];
    const void *keys[CHUNK];
    uint8_t res[CHUNK];
    size_t n;
} batch;

static int batch_push(batch *b, const char *p, size_t n)
{
    if (b->used + n > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->used + n)
            cap *= 2;
        char *a = PyMem_Realloc(b->arena, cap);
        if (!a) {
            PyErr_NoMemory();
            return -1;
        }
        b->arena = a;
        b->cap = cap;
    }
    if (n)
        memcpy(b->arena + b->used, p, n);
    b->off[b->n] = b->used;
    b->len[b->n] = n;
    b->used += n;
    b->n++;
    return 0;
}

/* Run the library over the gathered chunk: insert (1) or contains (0).
 * Returns the count, or -1 with an exception. */
static int64_t batch_run(FilterObject *s, batch *b, int insert)
{
    for (size_t i = 0; i < b->n; i++)
        b->keys[i] = b->arena + b->off[i];
    int64_t r;
    flock(s);
    Py_BEGIN_ALLOW_THREADS
    if (insert)
        r = rbf_insert_keys(s->f, b->keys, b->len, b->n, b->res);
    else
        r = rbf_contains_keys(s->f, b->keys, b->len, b->n, b->res);
    funlock(s);
    Py_END_ALLOW_THREADS
    if (r < 0) {
        raise_rc((int)r, NULL);
        return -1;
    }
    return r;
}

/* The common loop: feed every item of `items` to the library.  mode 0:
 * count only (update); 1: a list of bools.  `insert` chooses the call. */
static PyObject *batch_loop(FilterObject *s, PyObject *items, int insert, int want_list)
{
    if (filter_ready(s) < 0)
        return NULL;
    batch *b = PyMem_Malloc(sizeof *b);
    if (!b)
        return PyErr_NoMemory();
    b->arena = NULL;
    b->cap = b->used = b->n = 0;
    PyObject *out = NULL, *it = NULL, *seq = NULL;
    int64_t total = 0;
    Py_ssize_t seqlen = -1, idx = 0;
    int is_list = PyList_Check(items), is_tuple = !is_list && PyTuple_Check(items);
    if (is_list || is_tuple) {
        seq = items;
        Py_INCREF(seq);
    } else {
        it = PyObject_GetIter(items);
        if (!it)
            goto fail;
    }
    if (want_list) {
        out = PyList_New(0);
        if (!out)
            goto fail;
    }
    for (;;) {
        PyObject *o;
        if (seq) {
            seqlen = is_list ? PyList_Size(seq) : PyTuple_Size(seq);
            if (idx >= seqlen)
                o = NULL;
            else {
                o = is_list ? PyList_GetItem(seq, idx) : PyTuple_GetItem(seq, idx);
                if (!o)
                    goto fail;
                Py_INCREF(o);
                idx++;
            }
        } else {
            o = PyIter_Next(it);
            if (!o && PyErr_Occurred())
                goto fail_flush;
        }
        if (o) {
            item_ref r;
            if (item_get(o, &r) < 0) {
                Py_DECREF(o);
                goto fail_flush;
            }
            int e = batch_push(b, r.p, (size_t)r.n);
            item_release(&r);
            Py_DECREF(o);
            if (e < 0)
                goto fail;
        }
        if (b->n == CHUNK || (b->n && (!o || b->used >= ARENA_SOFT))) {
            int64_t c = batch_run(s, b, insert);
            if (c < 0)
                goto fail;
            total += c;
            if (out) {
                for (size_t i = 0; i < b->n; i++) {
                    if (PyList_Append(out, b->res[i] ? Py_True : Py_False) < 0)
                        goto fail;
                }
            }
            b->n = 0;
            b->used = 0;
            /* Ctrl-C between chunks: the items before it were added */
            if (o && PyErr_CheckSignals() < 0)
                goto fail;
        }
        if (!o)
            break;
    }
    PyMem_Free(b->arena);
    PyMem_Free(b);
    Py_XDECREF(it);
    Py_XDECREF(seq);
    if (out)
        return out;
    return PyLong_FromLongLong((long long)total);
fail_flush:
    /* an item that is not one, or an iterator that raised: the items before
     * it are added first, as a loop of add() would have added them */
    if (insert && b->n) {
        PyObject *et, *ev, *etb;
        PyErr_Fetch(&et, &ev, &etb);
        if (batch_run(s, b, insert) < 0)
            PyErr_Clear();
        PyErr_Restore(et, ev, etb);
    }
fail:
    PyMem_Free(b->arena);
    PyMem_Free(b);
    Py_XDECREF(it);
    Py_XDECREF(seq);
    Py_XDECREF(out);
    return NULL;
}

static PyObject *Filter_update(PyObject *self_, PyObject *items)
{
    return batch_loop((FilterObject *)self_, items, 1, 0);
}

static PyObject *Filter_add_list(PyObject *self_, PyObject *items)
{
    return batch_loop((FilterObject *)self_, items, 1, 1);
}

static PyObject *Filter_contains_list(PyObject *self_, PyObject *items)
{
    return batch_loop((FilterObject *)self_, items, 0, 1);
}

/* _add_fixed(buffer, itemsize, out, insert): n = len(buffer)/itemsize
 * fixed-width items, each without its trailing NUL bytes (as numpy gives an
 * 'S' element); out (a writable buffer of n bytes) receives 0/1.  Returns
 * the count.  The buffers are held for the whole call. */
static PyObject *Filter_fixed(PyObject *self_, PyObject *args)
{
    FilterObject *s = (FilterObject *)self_;
    PyObject *src, *dst;
    Py_ssize_t w;
    int insert;
    if (!PyArg_ParseTuple(args, "OnOp", &src, &w, &dst, &insert))
        return NULL;
    if (filter_ready(s) < 0)
        return NULL;
    if (w <= 0) {
        PyErr_SetString(PyExc_ValueError, "itemsize must be positive");
        return NULL;
    }
    Py_buffer in, out;
    if (PyObject_GetBuffer(src, &in, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    if (PyObject_GetBuffer(dst, &out, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&in);
        return NULL;
    }
    size_t n = (size_t)(in.len / w);
    if (in.len % w || (size_t)out.len < n) {
        PyBuffer_Release(&in);
        PyBuffer_Release(&out);
        PyErr_SetString(PyExc_ValueError, "buffer sizes do not match the item count");
        return NULL;
    }
    size_t cn = n < CHUNK ? (n ? n : 1) : CHUNK;
    const void **keys = PyMem_Malloc(cn * sizeof *keys);
    size_t *lens = PyMem_Malloc(cn * sizeof *lens);
    if (!keys || !lens) {
        PyMem_Free(keys);
        PyMem_Free(lens);
        PyBuffer_Release(&in);
        PyBuffer_Release(&out);
        return PyErr_NoMemory();
    }
    int64_t total = 0, r = 0;
    const char *base = (const char *)in.buf;
    uint8_t *res = (uint8_t *)out.buf;
    flock(s);
    Py_BEGIN_ALLOW_THREADS
    for (size_t i = 0; i < n && r >= 0; i += cn) {
        size_t m = n - i < cn ? n - i : cn;
        for (size_t j = 0; j < m; j++) {
            const char *p = base + (i + j) * (size_t)w;
            size_t l = (size_t)w;
            while (l && p[l - 1] == 0)
                l--;
            keys[j] = p;
            lens[j] = l;
        }
        r = insert ? rbf_insert_keys(s->f, keys, lens, m, res + i)
                   : rbf_contains_keys(s->f, keys, lens, m, res + i);
        if (r >= 0)
            total += r;
    }
    funlock(s);
    Py_END_ALLOW_THREADS
    PyMem_Free(keys);
    PyMem_Free(lens);
    PyBuffer_Release(&in);
    PyBuffer_Release(&out);
    if (r < 0)
        return raise_rc((int)r, NULL);
    return PyLong_FromLongLong((long long)total);
}

/* ---- whole-filter operations */

static PyObject *Filter_recycle(PyObject *self_, PyObject *unused)
{
    FilterObject *s = (FilterObject *)self_;
    (void)unused;
    if (filter_ready(s) < 0)
        return NULL;
    int rc;
    flock(s);
    Py_BEGIN_ALLOW_THREADS
    rc = rbf_recycle(s->f);
    funlock(s);
    Py_END_ALLOW_THREADS
    if (rc)
        return raise_rc(rc, NULL);
    Py_RETURN_NONE;
}

static PyObject *Filter_clear(PyObject *self_, PyObject *unused)
{
    FilterObject *s = (FilterObject *)self_;
    (void)unused;
    if (filter_ready(s) < 0)
        return NULL;
    int rc = 0;
    flock(s);
    Py_BEGIN_ALLOW_THREADS
    for (unsigned i = 0; i < s->phases && !rc; i++)
        rc = rbf_recycle(s->f);
    funlock(s);
    Py_END_ALLOW_THREADS
    if (rc)
        return raise_rc(rc, NULL);
    Py_RETURN_NONE;
}

static int dict_u64(PyObject *d, const char *k, uint64_t v)
{
    PyObject *o = PyLong_FromUnsignedLongLong(v);
    if (!o)
        return -1;
    int r = PyDict_SetItemString(d, k, o);
    Py_DECREF(o);
    return r;
}

static int dict_f64(PyObject *d, const char *k, double v)
{
    PyObject *o = PyFloat_FromDouble(v);
    if (!o)
        return -1;
    int r = PyDict_SetItemString(d, k, o);
    Py_DECREF(o);
    return r;
}

static int dict_str(PyObject *d, const char *k, const char *v)
{
    PyObject *o = v ? PyUnicode_FromString(v) : (Py_INCREF(Py_None), Py_None);
    if (!o)
        return -1;
    int r = PyDict_SetItemString(d, k, o);
    Py_DECREF(o);
    return r;
}

static int dict_bool(PyObject *d, const char *k, int v)
{
    return PyDict_SetItemString(d, k, v ? Py_True : Py_False);
}

static int dict_none(PyObject *d, const char *k)
{
    return PyDict_SetItemString(d, k, Py_None);
}

static PyObject *Filter_stats(PyObject *self_, void *closure)
{
    FilterObject *s = (FilterObject *)self_;
    (void)closure;
    if (filter_ready(s) < 0)
        return NULL;
    rbf_stats st;
    flock(s);
    rbf_get_stats(s->f, &st);
    funlock(s);
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    if (dict_u64(d, "bits", st.bits) || dict_u64(d, "bits_set", st.bits_set) ||
        dict_u64(d, "frozen_bits_set", st.frozen_bits_set) || dict_u64(d, "cycles", st.cycles) ||
        dict_u64(d, "cycle_messages", st.cycle_messages) || dict_u64(d, "inserts", st.inserts) ||
        dict_u64(d, "reported_new", st.reported_new)) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

static PyObject *Filter_config(PyObject *self_, void *closure)
{
    FilterObject *s = (FilterObject *)self_;
    (void)closure;
    if (filter_ready(s) < 0)
        return NULL;
    rbf_config c;
    rbf_get_config(s->f, &c);
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    if (dict_u64(d, "bits", c.bits) || dict_u64(d, "hashes", c.hashes) ||
        (c.sigma ? dict_u64(d, "sigma", c.sigma) : dict_none(d, "sigma")) ||
        (c.messages ? dict_u64(d, "messages", c.messages) : dict_none(d, "messages")) ||
        dict_u64(d, "phases", c.phases) ||
        dict_str(d, "hashing", c.hashing == RBF_NON_COLLIDING ? "non-colliding" : "colliding") ||
        dict_str(d, "recycle", c.recycle == RBF_RETAINING ? "retaining" : "non-retaining") ||
        dict_str(d, "layout", c.layout == RBF_LAYOUT_BLOCKED ? "blocked" : "flat") ||
        dict_u64(d, "seed", c.seed) || dict_bool(d, "concurrent", s->concurrent)) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

static PyObject *Filter_is_concurrent(PyObject *self_, void *closure)
{
    (void)closure;
    return PyBool_FromLong(((FilterObject *)self_)->concurrent);
}

static PyObject *Filter_to_bytes(PyObject *self_, PyObject *unused)
{
    FilterObject *s = (FilterObject *)self_;
    (void)unused;
    if (filter_ready(s) < 0)
        return NULL;
    uint64_t size = 0;
    PyObject *b = NULL;
    int rc;
    for (;;) {
        flock(s);
        rc = rbf_save_size(s->f, &size);
        funlock(s);
        if (rc)
            return raise_rc(rc, NULL);
        if (size > (uint64_t)PY_SSIZE_T_MAX)
            return PyErr_NoMemory();
        b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
        if (!b)
            return NULL;
        char *p = PyBytes_AsString(b);
        flock(s);
        Py_BEGIN_ALLOW_THREADS
        rc = rbf_save_buffer(s->f, p, (size_t)size);
        funlock(s);
        Py_END_ALLOW_THREADS
        if (rc == RBF_ERANGE) { /* changed size meanwhile (re-initialised): again */
            Py_DECREF(b);
            continue;
        }
        break;
    }
    if (rc) {
        Py_DECREF(b);
        return raise_rc(rc, NULL);
    }
    return b;
}

static PyObject *Filter_save(PyObject *self_, PyObject *arg)
{
    FilterObject *s = (FilterObject *)self_;
    if (filter_ready(s) < 0)
        return NULL;
    PyObject *path = NULL;
    if (!PyUnicode_FSConverter(arg, &path))
        return NULL;
    const char *p = PyBytes_AsString(path);
    if (!p) {
        Py_DECREF(path);
        return NULL;
    }
    int rc, err;
    flock(s);
    Py_BEGIN_ALLOW_THREADS
    errno = 0;
    rc = rbf_save(s->f, p);
    err = errno;
    funlock(s);
    Py_END_ALLOW_THREADS
    if (rc == RBF_EIO) {
        errno = err ? err : EIO;
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, arg);
        Py_DECREF(path);
        return NULL;
    }
    Py_DECREF(path);
    if (rc)
        return raise_rc(rc, NULL);
    Py_RETURN_NONE;
}

/* A new Filter object of type `cls` around handle f. */
static PyObject *wrap_handle(PyObject *cls, rbf *f, int concurrent)
{
    PyObject *o = PyObject_CallMethod(cls, "__new__", "O", cls);
    if (!o) {
        rbf_free(f);
        return NULL;
    }
    if (!PyObject_TypeCheck(o, (PyTypeObject *)FilterType)) {
        rbf_free(f);
        Py_DECREF(o);
        PyErr_SetString(PyExc_TypeError, "not an rbf.Filter class");
        return NULL;
    }
    if (set_handle((FilterObject *)o, f, concurrent) < 0) {
        Py_DECREF(o);
        return NULL;
    }
    return o;
}

static PyObject *Filter_from_bytes(PyObject *cls, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"data", "concurrent", NULL};
    Py_buffer b;
    int concurrent = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*|$p", kwlist, &b, &concurrent))
        return NULL;
    rbf *f = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = rbf_load_buffer(b.buf, (size_t)b.len, &f);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&b);
    if (rc)
        return raise_rc(rc, NULL);
    return wrap_handle(cls, f, concurrent);
}

static PyObject *Filter_load(PyObject *cls, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"path", "concurrent", NULL};
    PyObject *arg = NULL, *path = NULL;
    int concurrent = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$p", kwlist, &arg, &concurrent))
        return NULL;
    if (!PyUnicode_FSConverter(arg, &path))
        return NULL;
    const char *p = PyBytes_AsString(path);
    if (!p) {
        Py_DECREF(path);
        return NULL;
    }
    rbf *f = NULL;
    int rc, err;
    Py_BEGIN_ALLOW_THREADS
    errno = 0;
    rc = rbf_load(p, &f);
    err = errno;
    Py_END_ALLOW_THREADS
    if (rc == RBF_EIO) {
        errno = err ? err : EIO;
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, arg);
        Py_DECREF(path);
        return NULL;
    }
    Py_DECREF(path);
    if (rc)
        return raise_rc(rc, NULL);
    return wrap_handle(cls, f, concurrent);
}

static PyObject *Filter_hash(PyObject *self_, PyObject *item)
{
    FilterObject *s = (FilterObject *)self_;
    item_ref r;
    if (filter_ready(s) < 0 || item_get(item, &r) < 0)
        return NULL;
    uint64_t h = rbf_hash(s->f, r.p, (size_t)r.n);
    item_release(&r);
    return PyLong_FromUnsignedLongLong(h);
}

static PyObject *Filter_positions(PyObject *self_, PyObject *item)
{
    FilterObject *s = (FilterObject *)self_;
    item_ref r;
    if (filter_ready(s) < 0 || item_get(item, &r) < 0)
        return NULL;
    uint64_t h = rbf_hash(s->f, r.p, (size_t)r.n);
    item_release(&r);
    uint64_t pos[RBF_MAX_HASHES];
    int k = rbf_positions(s->f, h, pos);
    if (k < 0)
        return raise_rc(k, NULL);
    PyObject *l = PyList_New(k);
    if (!l)
        return NULL;
    for (int i = 0; i < k; i++) {
        PyObject *v = PyLong_FromUnsignedLongLong(pos[i]);
        if (!v || PyList_SetItem(l, i, v) < 0) {
            Py_DECREF(l);
            return NULL;
        }
    }
    return l;
}

static PyObject *Filter_sizeof(PyObject *self_, PyObject *unused)
{
    FilterObject *s = (FilterObject *)self_;
    (void)unused;
    uint64_t size = 0;
    if (s->f) {
        flock(s);
        rbf_save_size(s->f, &size);
        funlock(s);
    }
    /* the image is the bit arrays plus a small header: close to the memory held */
    return PyLong_FromUnsignedLongLong(size + (uint64_t)sizeof(FilterObject) +
                                       (s->concurrent ? 8192 : 0));
}

static PyMethodDef Filter_methods[] = {
    {"add", Filter_add, METH_O,
     "add(item) -> bool\n\nTest-and-insert ITEM.  True if it was reported new (its bits were\n"
     "set), False if reported seen (a repeat or a false positive): the answer\n"
     "of rbf_insert and RBF.ADD.  Note: pybloom-live's add() returns the\n"
     "opposite (True when the item was already present)."},
    {"update", Filter_update, METH_O,
     "update(iterable) -> int\n\nAdd every item in order; return how many were reported new."},
    {"_add_list", Filter_add_list, METH_O, NULL},
    {"_contains_list", Filter_contains_list, METH_O, NULL},
    {"_fixed", Filter_fixed, METH_VARARGS, NULL},
    {"recycle", Filter_recycle, METH_NOARGS,
     "recycle()\n\nRecycle now, exactly as the threshold would (two-phase: the active\n"
     "filter becomes the frozen one)."},
    {"clear", Filter_clear, METH_NOARGS,
     "clear()\n\nEmpty the filter: recycle once per phase, so no item is held any more.\n"
     "The counters in f.stats keep counting (cycles counts these recycles)."},
    {"to_bytes", Filter_to_bytes, METH_NOARGS,
     "to_bytes() -> bytes\n\nThe library's portable image of the filter (docs/file-format.md).\n"
     "It holds the hash seed, which is the key against flooding: keep it as\n"
     "private as the filter's users."},
    {"save", Filter_save, METH_O,
     "save(path)\n\nSave crash-safely (temporary file, fsync, rename).  OSError on failure.\n"
     "The file holds the hash seed: keep it private."},
    {"from_bytes", (PyCFunction)(void (*)(void))Filter_from_bytes,
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "from_bytes(data, *, concurrent=False) -> Filter\n\nA filter from an image of to_bytes(),"
     " save() or RBF.SCANDUMP.\nA damaged or truncated image raises ValueError."},
    {"load", (PyCFunction)(void (*)(void))Filter_load, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "load(path, *, concurrent=False) -> Filter\n\nLoad a file written by save() (checked: a "
     "damaged file raises ValueError,\na missing or unreadable one OSError)."},
    {"hash", Filter_hash, METH_O, "hash(item) -> int\n\nThe keyed 64-bit hash of ITEM."},
    {"positions", Filter_positions, METH_O,
     "positions(item) -> list[int]\n\nThe k bit positions of ITEM, in the order drawn."},
    {"__sizeof__", Filter_sizeof, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Filter_getset[] = {
    {"stats", Filter_stats, NULL,
     "The counters (a dict): bits, bits_set, frozen_bits_set, cycles,\n"
     "cycle_messages, inserts, reported_new.",
     NULL},
    {"config", Filter_config, NULL,
     "The configuration (a dict): bits, hashes, sigma, messages, phases,\n"
     "hashing, recycle, layout, seed, concurrent.",
     NULL},
    {"concurrent", Filter_is_concurrent, NULL, "True for a lock-free concurrent filter.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef Filter_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(FilterObject, weakreflist), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot Filter_slots[] = {
    {Py_tp_init, Filter_init},
    {Py_tp_dealloc, Filter_dealloc},
    {Py_tp_traverse, Filter_traverse},
    {Py_tp_methods, Filter_methods},
    {Py_tp_getset, Filter_getset},
    {Py_tp_members, Filter_members},
    {Py_sq_contains, Filter_contains},
    {Py_tp_doc, "The C core of rbf.Filter (use rbf.Filter)."},
    {0, NULL},
};

static PyType_Spec Filter_spec = {
    "rbf._rbf.FilterBase",
    sizeof(FilterObject),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    Filter_slots,
};

/* ------------------------------------------------------------ progress */

typedef struct progress_ctx {
    PyObject *callback; /* may be NULL */
    int stopped;        /* progress_cb asked to stop, with an exception set */
} progress_ctx;

/* The library's progress callback: take the GIL back, check for a signal
 * (Ctrl-C) and call the user's callback; nonzero cancels. */
static int progress_cb(void *ctx, uint64_t done, uint64_t total)
{
    progress_ctx *p = ctx;
    PyGILState_STATE g = PyGILState_Ensure();
    int stop = 0;
    if (PyErr_Occurred())
        stop = 1;
    else if (PyErr_CheckSignals() < 0)
        stop = 1;
    else if (p->callback) {
        PyObject *r = PyObject_CallFunction(p->callback, "KK", (unsigned long long)done,
                                            (unsigned long long)total);
        if (!r)
            stop = 1;
        else {
            if (r != Py_None && PyObject_IsTrue(r) > 0) {
                /* a true return value asks to stop */
                PyErr_SetString(CancelledError, "cancelled by the progress callback");
                stop = 1;
            }
            Py_DECREF(r);
        }
    }
    if (stop)
        p->stopped = 1;
    PyGILState_Release(g);
    return stop;
}

/* A computation that was asked to stop may still end normally (a small
 * one checks its callback only between steps, or not at all): the
 * exception the callback left (its own, rbf.Cancelled, KeyboardInterrupt)
 * is raised all the same. */
#define PROGRESS_RC(pc, rc) ((rc) == 0 && (pc).stopped ? RBF_ECANCELED : (rc))

/* progress=: a callable or None (NULL). */
static int progress_arg(PyObject **progress)
{
    if (*progress == Py_None)
        *progress = NULL;
    if (*progress && !PyCallable_Check(*progress)) {
        PyErr_SetString(PyExc_TypeError, "progress: a callable (done, total)");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ models */

static PyObject *np_or_list(const double *v, size_t n)
{
    PyObject *l = PyList_New((Py_ssize_t)n);
    if (!l)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *x = PyFloat_FromDouble(v[i]);
        if (!x) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SetItem(l, (Py_ssize_t)i, x);
    }
    return l;
}

static PyObject *u64_list(const uint64_t *v, size_t n)
{
    PyObject *l = PyList_New((Py_ssize_t)n);
    if (!l)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *x = PyLong_FromUnsignedLongLong(v[i]);
        if (!x) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SetItem(l, (Py_ssize_t)i, x);
    }
    return l;
}

static const char *method_name(rbf_model_method m)
{
    switch (m) {
    case RBF_MODEL_EXACT:
        return "exact";
    case RBF_MODEL_PAPER:
        return "paper";
    case RBF_MODEL_ASYMPTOTIC:
        return "fast";
    default:
        return "auto";
    }
}

static int parse_method(PyObject *v, rbf_model_method *m, int allow_paper)
{
    if (!v || v == Py_None)
        return 0;
    const char *s = PyUnicode_Check(v) ? PyUnicode_AsUTF8AndSize(v, NULL) : NULL;
    if (!s) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "method: a str");
        return -1;
    }
    if (!strcmp(s, "auto"))
        *m = RBF_MODEL_AUTO;
    else if (!strcmp(s, "exact"))
        *m = RBF_MODEL_EXACT;
    else if (!strcmp(s, "fast"))
        *m = RBF_MODEL_ASYMPTOTIC;
    else if (allow_paper && !strcmp(s, "paper"))
        *m = RBF_MODEL_PAPER;
    else {
        PyErr_Format(PyExc_ValueError, "method: '%s' is not auto, exact, fast%s", s,
                     allow_paper ? " or paper" : "");
        return -1;
    }
    return 0;
}

/* The cycle-length models (rbf model --fn / --forget / --oracle / two-phase
 * --messages), through rbf_model_policy; the keys of the CLI's --json. */
/* The model's parameters for one filter of `per` bits. */
static void model_params(rbf_model_params *p, uint64_t per, unsigned k, int nc, int ret,
                         rbf_model_method meth)
{
    rbf_model_params_init(p);
    p->bits = per;
    p->hashes = k;
    p->hashing = nc ? RBF_NON_COLLIDING : RBF_COLLIDING;
    p->recycle = ret ? RBF_RETAINING : RBF_NON_RETAINING;
    p->method = meth;
}

/* The first keys of rbf model --fn / --forget / --oracle --json (the
 * CLI's cli_model_fn_json_head). */
static int cycles_head(PyObject *d, uint64_t M, unsigned k, uint64_t S, uint64_t N, int nc,
                       int ret, unsigned ph, int oracle)
{
    return dict_u64(d, "bits", M) || dict_u64(d, "hashes", k) ||
                   (S ? dict_u64(d, "sigma", S) : dict_none(d, "sigma")) ||
                   (N ? dict_u64(d, "messages", N) : dict_none(d, "messages")) ||
                   dict_str(d, "hashing", nc ? "non-colliding" : "colliding") ||
                   dict_str(d, "recycle", ret ? "retaining" : "non-retaining") ||
                   dict_u64(d, "phases", ph) || dict_bool(d, "oracle", oracle)
               ? -1
               : 0;
}

/* A double, or None where it is NaN (as the CLI's JSON writes null). */
static int dict_f64n(PyObject *d, const char *k, double v)
{
    return isnan(v) ? dict_none(d, k) : dict_f64(d, k, v);
}

static int trace_rates(PyObject *d, const char *name, const rbf_model_trace_rates *r)
{
    PyObject *e = PyDict_New();
    int bad = !e || dict_f64(e, "fp", r->fp) || dict_f64(e, "fn", r->fn) ||
              dict_f64(e, "forgotten", r->forgotten) ||
              dict_f64(e, "tick_fraction", r->tick_fraction) || dict_f64n(e, "fp_se", r->fp_se) ||
              dict_f64n(e, "fn_se", r->fn_se) || dict_f64(e, "arrivals", r->arrivals) ||
              dict_f64(e, "repeats", r->repeats) || dict_f64(e, "cycles", r->cycles) ||
              PyDict_SetItemString(d, name, e) < 0;
    Py_XDECREF(e);
    return bad ? -1 : 0;
}

/* Read trace `path` (one message per line) into t and *ids (the
 * caller frees *ids), its window A checked: 0, or -1 with an exception. */
static int trace_load(const char *path, uint64_t A, rbf_model_trace *t, uint32_t **ids)
{
    memset(t, 0, sizeof *t);
    *ids = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = rbf_sim_trace_read(path, ids, &t->arrivals, &t->distinct);
    Py_END_ALLOW_THREADS
    if (rc == RBF_EIO) {
        PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
        return -1;
    }
    if (rc == RBF_EINVAL) {
        PyErr_Format(PyExc_ValueError, "fn: trace '%s' is empty or has 2^32 - 1 distinct lines "
                                       "or more", path);
        return -1;
    }
    if (rc) {
        PyErr_NoMemory();
        return -1;
    }
    if (A > t->arrivals) {
        free(*ids);
        *ids = NULL;
        PyErr_Format(PyExc_ValueError, "arrivals: %llu is more than the trace's %llu lines",
                     (unsigned long long)A, (unsigned long long)t->arrivals);
        return -1;
    }
    return 0;
}

/* rbf model ... --fn trace:FILE [--arrivals A] [--replicas R]: the cycle
 * law replayed on a trace (rbf_model_fn_trace), the CLI's --json keys. */
static PyObject *model_trace(const rbf_model_params *p0, const rbf_model_cycle_spec *cs,
                             uint64_t M, int nc, int ret, const char *wspec, const char *path,
                             uint64_t A, unsigned R, PyObject *progress)
{
    if (!*path) {
        PyErr_SetString(PyExc_ValueError, "fn: trace:FILE needs a file name");
        return NULL;
    }
    double t0 = cli_wall_seconds();
    rbf_model_trace t;
    uint32_t *ids = NULL;
    if (trace_load(path, A, &t, &ids) < 0)
        return NULL;
    double t1 = cli_wall_seconds();
    int rc;
    t.ids = ids;
    t.window = A;
    t.replicas = R;
    t.seed = 1;
    rbf_model_trace_bin curve[RBF_MODEL_TRACE_BINS];
    t.curve = curve;
    rbf_model_params p = *p0;
    progress_ctx pc = {progress, 0};
    p.progress = progress_cb;
    p.progress_ctx = &pc;
    rbf_model_trace_result r;
    Py_BEGIN_ALLOW_THREADS
    rc = rbf_model_fn_trace(&p, cs, &t, &r);
    Py_END_ALLOW_THREADS
    rc = PROGRESS_RC(pc, rc);
    free(ids);
    double t2 = cli_wall_seconds();
    if (rc)
        return raise_rc(rc, rc == RBF_ENOMEM ? NULL : "the model rejected these parameters");
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    const uint64_t S = cs->sigma, N = cs->messages;
    int bad = cycles_head(d, M, p.hashes, S, N, nc, ret, cs->phases, cs->oracle) ||
              dict_str(d, "workload", wspec) || dict_str(d, "method", "replay") ||
              dict_u64(d, "lines", t.arrivals) || dict_u64(d, "distinct", t.distinct) ||
              dict_u64(d, "window", A ? A : t.arrivals) || dict_u64(d, "windows", r.windows) ||
              dict_u64(d, "replicas", r.replicas) ||
              dict_f64(d, "new_fraction",
                       r.whole.arrivals > 0.0 ? 1.0 - r.whole.repeats / r.whole.arrivals : 0.0) ||
              dict_f64n(d, "fp_law", r.fp_law) || dict_f64n(d, "cycle_mean", r.cycle_mean) ||
              dict_f64(d, "fp", r.whole.fp) || dict_f64(d, "fn", r.whole.fn) ||
              trace_rates(d, "whole", &r.whole) || trace_rates(d, "steady", &r.steady);
    PyObject *l = bad ? NULL : PyList_New(0);
    bad = bad || !l;
    for (unsigned b = 0; !bad && b < RBF_MODEL_TRACE_BINS; b++) {
        if (!(curve[b].repeats > 0.0))
            continue;
        PyObject *e = PyDict_New();
        bad = !e || dict_u64(e, "gap_lo", curve[b].gap_lo) ||
              dict_u64(e, "gap_hi", curve[b].gap_hi) || dict_f64(e, "repeats", curve[b].repeats) ||
              dict_f64(e, "forgotten", curve[b].forgotten) || dict_f64(e, "fn", curve[b].fn) ||
              PyList_Append(l, e) < 0;
        Py_XDECREF(e);
    }
    bad = bad || PyDict_SetItemString(d, "forget_curve", l) < 0 ||
          dict_f64(d, "read_seconds", t1 - t0) || dict_f64(d, "model_seconds", t2 - t1);
    Py_XDECREF(l);
    if (bad)
        Py_CLEAR(d);
    return d;
}

static PyObject *model_cycles(uint64_t M, unsigned k, uint64_t S, uint64_t N, unsigned ph, int nc,
                              int ret, int blk, rbf_model_method meth, uint64_t P, int oracle,
                              PyObject *fn, PyObject *forget, PyObject *progress, uint64_t A,
                              unsigned R)
{
    uint64_t per = ph == 2 ? M / 2 : M;
    if (oracle && !N) {
        PyErr_SetString(PyExc_ValueError, "oracle: applies to messages only");
        return NULL;
    }
    if (blk) {
        PyErr_SetString(PyExc_ValueError, "layout='blocked': not with fn, forget, oracle or "
                                          "two-phase messages (those models are of the flat "
                                          "layout)");
        return NULL;
    }
    if (P) {
        PyErr_SetString(PyExc_ValueError, "points: not with fn, forget, oracle or two-phase "
                                          "messages");
        return NULL;
    }
    if (meth == RBF_MODEL_PAPER) {
        PyErr_SetString(PyExc_ValueError, "method='paper': not with fn, forget, oracle or "
                                          "two-phase messages");
        return NULL;
    }
    if (N && ret) {
        PyErr_SetString(PyExc_ValueError, "recycle: applies to sigma only");
        return NULL;
    }
    if (S && (S >= per || (ret && S < k))) {
        PyErr_Format(PyExc_ValueError,
                     "sigma: must be less than the bits per filter (%llu), and at least hashes "
                     "with recycle='retaining'",
                     (unsigned long long)per);
        return NULL;
    }
    if (nc && k > per) {
        PyErr_SetString(PyExc_ValueError,
                        "hashes: must not exceed the bits per filter with non-colliding hashing");
        return NULL;
    }
    rbf_model_workload w;
    memset(&w, 0, sizeof w);
    const char *wspec = NULL, *trace = NULL;
    if (fn) {
        if (!PyUnicode_Check(fn)) {
            PyErr_SetString(PyExc_TypeError, "fn: a workload spec (uniform:P, zipf:P:S, "
                                             "fading:R:L, trace:FILE)");
            return NULL;
        }
        wspec = PyUnicode_AsUTF8AndSize(fn, NULL);
        if (!wspec)
            return NULL;
        rbf_sim_workload sw;
        const char *why = NULL;
        if (rbf_sim_workload_parse(wspec, &sw, &why) != RBF_OK) {
            PyErr_Format(PyExc_ValueError, "fn: %s", why ? why : "bad workload");
            return NULL;
        }
        switch (sw.kind) {
        case RBF_WORKLOAD_UNIFORM:
            w.kind = RBF_WORKLOAD_UNIFORM;
            w.pool = sw.pool;
            break;
        case RBF_WORKLOAD_ZIPF:
            w.kind = RBF_WORKLOAD_ZIPF;
            w.pool = sw.pool;
            w.exponent = sw.exponent;
            break;
        case RBF_WORKLOAD_FADING:
            w.kind = RBF_WORKLOAD_FADING;
            w.new_fraction = sw.new_fraction;
            w.lifetime = sw.lifetime;
            break;
        case RBF_WORKLOAD_TRACE:
            if (forget) {
                PyErr_SetString(PyExc_ValueError, "forget: not with fn='trace:FILE' (ask it "
                                                  "without fn)");
                return NULL;
            }
            trace = sw.trace_path; /* inside wspec, which fn keeps */
            break;
        default:
            PyErr_SetString(PyExc_ValueError, "fn: not a workload spec");
            return NULL;
        }
    }
    if (!trace && (A || R)) {
        PyErr_SetString(PyExc_ValueError, "arrivals, replicas: apply to fn='trace:FILE' only");
        return NULL;
    }
    uint64_t *gaps = NULL;
    double *fo = NULL, *mi = NULL;
    size_t ng = 0;
    if (forget) {
        PyObject *seq = PyLong_Check(forget) ? Py_BuildValue("(O)", forget)
                                             : PySequence_Tuple(forget);
        if (!seq)
            return NULL;
        Py_ssize_t n = PyTuple_Size(seq);
        if (n < 1 || n > 10000) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_ValueError, "forget: 1 to 10000 gaps (in ticks)");
            return NULL;
        }
        ng = (size_t)n;
        gaps = PyMem_Malloc(ng * sizeof *gaps);
        fo = PyMem_Malloc(ng * sizeof *fo);
        mi = PyMem_Malloc(ng * sizeof *mi);
        if (!gaps || !fo || !mi) {
            Py_DECREF(seq);
            PyMem_Free(gaps);
            PyMem_Free(fo);
            PyMem_Free(mi);
            return PyErr_NoMemory();
        }
        for (size_t i = 0; i < ng; i++) {
            gaps[i] = 0;
            if (parse_u64(PyTuple_GetItem(seq, (Py_ssize_t)i), "forget", &gaps[i]) < 0) {
                Py_DECREF(seq);
                PyMem_Free(gaps);
                PyMem_Free(fo);
                PyMem_Free(mi);
                return NULL;
            }
        }
        Py_DECREF(seq);
    }
    rbf_model_params p;
    model_params(&p, per, k, nc, ret, meth);
    progress_ctx pc = {progress, 0};
    p.progress = progress_cb;
    p.progress_ctx = &pc;
    rbf_model_cycle_spec cs;
    rbf_model_cycle_spec_init(&cs);
    cs.phases = ph;
    cs.sigma = S;
    cs.messages = N;
    cs.oracle = oracle;
    if (trace)
        return model_trace(&p, &cs, M, nc, ret, wspec, trace, A, R, progress);
    rbf_model_policy_result r;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = rbf_model_policy(&p, &cs, fn ? &w : NULL, gaps, ng, fo, mi, &r);
    Py_END_ALLOW_THREADS
    rc = PROGRESS_RC(pc, rc);
    PyObject *d = NULL;
    if (rc) {
        raise_rc(rc, rc == RBF_ENOMEM ? NULL : "the model rejected these parameters");
        goto done;
    }
    d = PyDict_New();
    if (!d)
        goto done;
    int bad = cycles_head(d, M, k, S, N, nc, ret, ph, oracle) ||
              dict_str(d, "method", method_name(meth)) ||
              (ph == 2 && dict_u64(d, "bits_per_filter", per)) || dict_f64(d, "fp", r.fp) ||
              (r.stuck ? dict_none(d, "cycle_mean") : dict_f64(d, "cycle_mean", r.cycle_mean)) ||
              (N && (r.saturated_at ? dict_u64(d, "saturated_at", r.saturated_at)
                                    : dict_none(d, "saturated_at"))) ||
              (r.cycle_law &&
               dict_str(d, "cycle_law", rbf_model_law_name((rbf_model_law)r.cycle_law)));
    if (!bad && fn)
        bad = dict_str(d, "workload", wspec) || dict_f64(d, "fn", r.fn) ||
              (r.stuck ? dict_none(d, "forgotten") : dict_f64(d, "forgotten", r.forgotten)) ||
              (r.stuck ? dict_none(d, "tick_fraction")
                       : dict_f64(d, "tick_fraction", r.tick_fraction));
    else if (!bad)
        bad = dict_none(d, "fn");
    if (!bad && forget) {
        if (!r.has_cycles) {
            bad = dict_none(d, "forget");
        } else {
            PyObject *l = PyList_New(0);
            bad = !l;
            for (size_t i = 0; !bad && i < ng; i++) {
                PyObject *e = PyDict_New();
                bad = !e || dict_u64(e, "gap", gaps[i]) || dict_f64(e, "forgotten", fo[i]) ||
                      dict_f64(e, "false_negative", mi[i]) || PyList_Append(l, e) < 0;
                Py_XDECREF(e);
            }
            bad = bad || PyDict_SetItemString(d, "forget", l) < 0;
            Py_XDECREF(l);
        }
    }
    if (bad)
        Py_CLEAR(d);
done:
    PyMem_Free(gaps);
    PyMem_Free(fo);
    PyMem_Free(mi);
    return d;
}

/* _model(bits, hashes, sigma, messages, phases, hashing, recycle, layout,
 * method, points, progress): the CLI's `rbf model` (--json keys; with
 * points, a sampled curve: "curve" with the columns as lists). */
static PyObject *mod_model(PyObject *mod, PyObject *args, PyObject *kw)
{
    (void)mod;
    static char *kwlist[] = {"bits",   "hashes", "sigma",  "messages", "phases",
                             "hashing", "recycle", "layout", "method", "points",
                             "progress", "oracle", "fn",     "forget", "arrivals",
                             "replicas", NULL};
    PyObject *bits = NULL, *hashes = NULL, *sigma = NULL, *messages = NULL, *phases = NULL,
             *hashing = NULL, *recycle = NULL, *layout = NULL, *method = NULL, *points = NULL,
             *progress = NULL, *fn = NULL, *forget = NULL, *arrivals = NULL, *replicas = NULL;
    int oracle = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOOOOOOOOOpOOOO", kwlist, &bits, &hashes,
                                     &sigma, &messages, &phases, &hashing, &recycle, &layout,
                                     &method, &points, &progress, &oracle, &fn, &forget,
                                     &arrivals, &replicas))
        return NULL;
    uint64_t A = 0;
    unsigned R = 0;
    if (parse_u64(arrivals, "arrivals", &A) < 0 || parse_u32(replicas, "replicas", &R) < 0)
        return NULL;
    if (R > 1000 || (arrivals && arrivals != Py_None && A == 0) ||
        (replicas && replicas != Py_None && R == 0)) {
        PyErr_SetString(PyExc_ValueError, "arrivals, replicas: a count from 1 (replicas: to "
                                          "1000)");
        return NULL;
    }
    uint64_t M = 0, S = 0, N = 0, P = 0;
    unsigned k = 0, ph = 1;
    int nc = 0, ret = 0, blk = 0;
    rbf_model_method meth = RBF_MODEL_AUTO;
    if (parse_u64(bits, "bits", &M) < 0 || parse_u32(hashes, "hashes", &k) < 0 ||
        parse_u64(sigma, "sigma", &S) < 0 || parse_u64(messages, "messages", &N) < 0 ||
        parse_u32(phases, "phases", &ph) < 0 ||
        parse_choice(hashing, "hashing", "colliding", "non-colliding", &nc) < 0 ||
        parse_choice(recycle, "recycle", "non-retaining", "retaining", &ret) < 0 ||
        parse_choice(layout, "layout", "flat", "blocked", &blk) < 0 ||
        parse_method(method, &meth, 1) < 0 || parse_u64(points, "points", &P) < 0)
        return NULL;
    if (progress && progress != Py_None && !PyCallable_Check(progress)) {
        PyErr_SetString(PyExc_TypeError, "progress: a callable (done, total)");
        return NULL;
    }
    if (!M || !k) {
        PyErr_SetString(PyExc_ValueError, "bits and hashes are required (positive)");
        return NULL;
    }
    if ((S != 0) == (N != 0)) {
        PyErr_SetString(PyExc_ValueError, "give exactly one of sigma and messages");
        return NULL;
    }
    if (ph != 1 && ph != 2) {
        PyErr_SetString(PyExc_ValueError, "phases: 1 or 2");
        return NULL;
    }
    uint64_t per = ph == 2 ? M / 2 : M;
    if (fn == Py_None)
        fn = NULL;
    if (forget == Py_None)
        forget = NULL;
    if (progress_arg(&progress) < 0)
        return NULL;
    if (fn || oracle || forget || (N && ph == 2))
        return model_cycles(M, k, S, N, ph, nc, ret, blk, meth, P, oracle, fn, forget, progress,
                            A, R);
    if (A || R) {
        PyErr_SetString(PyExc_ValueError, "arrivals, replicas: apply to fn='trace:FILE' only");
        return NULL;
    }
    if (N && ret) {
        PyErr_SetString(PyExc_ValueError, "recycle: applies to sigma only");
        return NULL;
    }
    if (S && S >= per) {
        PyErr_Format(PyExc_ValueError, "sigma: must be less than the bits per filter (%llu)",
                     (unsigned long long)per);
        return NULL;
    }
    if (S && ret && S < k) {
        PyErr_SetString(PyExc_ValueError, "sigma: at least hashes with recycle='retaining'");
        return NULL;
    }
    if (blk && (per < RBF_BLOCK_BITS || per % RBF_BLOCK_BITS)) {
        PyErr_Format(PyExc_ValueError,
                     "layout='blocked': the bits per filter (%llu) are not whole blocks of 512",
                     (unsigned long long)per);
        return NULL;
    }
    if (P == 1) {
        PyErr_SetString(PyExc_ValueError, "points: at least 2");
        return NULL;
    }
    if (blk && (P || meth == RBF_MODEL_PAPER)) {
        PyErr_SetString(PyExc_ValueError, "layout='blocked': no points and no method='paper'");
        return NULL;
    }
    if (N && meth == RBF_MODEL_PAPER) {
        PyErr_SetString(PyExc_ValueError, "method='paper': applies to sigma only");
        return NULL;
    }
    rbf_model_params p;
    model_params(&p, per, k, nc, ret, meth);
    progress_ctx pc = {progress, 0};
    p.progress = progress_cb;
    p.progress_ctx = &pc;
    if (blk)
        p.layout = RBF_LAYOUT_BLOCKED;

    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    if (dict_u64(d, "bits", M) || dict_u64(d, "hashes", k) ||
        (S ? dict_u64(d, "sigma", S) : dict_none(d, "sigma")) ||
        (N ? dict_u64(d, "messages", N) : dict_none(d, "messages")) ||
        dict_str(d, "hashing", nc ? "non-colliding" : "colliding") ||
        dict_str(d, "recycle", ret ? "retaining" : "non-retaining") || dict_u64(d, "phases", ph) ||
        dict_str(d, "method", method_name(meth)) ||
        (ph == 2 && dict_u64(d, "bits_per_filter", per)) ||
        dict_str(d, "layout", blk ? "blocked" : "flat") ||
        (blk && dict_u64(d, "blocks_per_filter", per / RBF_BLOCK_BITS)))
        goto fail;

    int rc = 0;
    if (P) {
        /* a sampled curve: P points evenly over [first, last] */
        uint64_t first = S ? (ret ? (k > 1 ? k : 1) : 1) : 1, last = S ? S : N;
        uint64_t span = last - first, m = P > span ? span + 1 : P;
        uint64_t *pts = PyMem_Malloc((size_t)m * sizeof *pts);
        if (!pts) {
            PyErr_NoMemory();
            goto fail;
        }
        size_t n = rbf_model_curve_points(first, last, P, pts);
        size_t cols = S ? (ph == 2 ? 4 : 2) : 6;
        double *c = PyMem_Malloc(n * cols * sizeof *c);
        void *rows = NULL;
        if (c) {
            if (S && ph == 2)
                rows = PyMem_Malloc(n * sizeof(rbf_model_two_phase_result));
            else if (S)
                rows = PyMem_Malloc(n * sizeof(rbf_model_sigma_result));
        }
        if (!c || (S && !rows)) {
            PyMem_Free(pts);
            PyMem_Free(c);
            PyMem_Free(rows);
            PyErr_NoMemory();
            goto fail;
        }
        Py_BEGIN_ALLOW_THREADS
        if (S && ph == 2) {
            rbf_model_two_phase_result *t = rows;
            rc = rbf_model_two_phase_points(&p, pts, n, t);
            for (size_t i = 0; !rc && i < n; i++) {
                c[i] = t[i].fp;
                c[n + i] = t[i].fp_active;
                c[2 * n + i] = t[i].fp_frozen;
                c[3 * n + i] = t[i].expected_messages;
            }
        } else if (S) {
            rbf_model_sigma_result *t = rows;
            rc = rbf_model_sigma_points(&p, pts, n, t);
            for (size_t i = 0; !rc && i < n; i++) {
                c[i] = t[i].fp;
                c[n + i] = t[i].expected_messages;
            }
        } else {
            for (size_t i = 0; !rc && i < n; i++) {
                rbf_model_n_result r;
                rc = rbf_model_nbounded(&p, pts[i], &r);
                c[i] = r.f_w;
                c[n + i] = r.f_o;
                c[2 * n + i] = r.f_a;
                c[3 * n + i] = r.exact_worst;
                c[4 * n + i] = r.exact_oracle;
                c[5 * n + i] = r.exact_real;
            }
        }
        Py_END_ALLOW_THREADS
        rc = PROGRESS_RC(pc, rc);
        PyMem_Free(rows);
        if (rc) {
            PyMem_Free(pts);
            PyMem_Free(c);
            raise_rc(rc, "the model rejected these parameters");
            goto fail;
        }
        static const char *sn[] = {"fp", "expected_messages"};
        static const char *tn[] = {"fp", "fp_active", "fp_frozen", "expected_messages"};
        static const char *nn[] = {"f_w", "f_o", "f_a", "exact_worst", "exact_oracle",
                                   "exact_real"};
        const char **names = S ? (ph == 2 ? tn : sn) : nn;
        PyObject *curve = PyDict_New();
        int bad = !curve;
        if (!bad) {
            PyObject *x = u64_list(pts, n);
            bad = !x || PyDict_SetItemString(curve, S ? "sigma" : "messages", x) < 0;
            Py_XDECREF(x);
        }
        for (size_t j = 0; !bad && j < cols; j++) {
            PyObject *x = np_or_list(c + j * n, n);
            bad = !x || PyDict_SetItemString(curve, names[j], x) < 0;
            Py_XDECREF(x);
        }
        PyMem_Free(pts);
        PyMem_Free(c);
        if (bad || PyDict_SetItemString(d, "curve", curve) < 0) {
            Py_XDECREF(curve);
            goto fail;
        }
        Py_DECREF(curve);
        return d;
    }

    if (blk && N) {
        rbf_model_blocked_n_result r;
        Py_BEGIN_ALLOW_THREADS
        rc = rbf_model_blocked_nbounded(&p, N, &r);
        Py_END_ALLOW_THREADS
        rc = PROGRESS_RC(pc, rc);
        if (rc) {
            raise_rc(rc, "the model rejected these parameters");
            goto fail;
        }
        if (dict_none(d, "f_w") || dict_none(d, "f_o") || dict_none(d, "f_a") ||
            dict_f64(d, "exact_worst", r.exact_worst) ||
            dict_f64(d, "exact_oracle", r.exact_oracle) ||
            dict_f64(d, "exact_real", r.exact_real) ||
            dict_f64(d, "messages_per_cycle_real", r.messages_per_cycle_real) ||
            dict_bool(d, "exact_convolution", r.exact_convolution))
            goto fail;
    } else if (blk && ph == 2) {
        rbf_model_blocked_two_phase_result t;
        Py_BEGIN_ALLOW_THREADS
        rc = rbf_model_blocked_two_phase(&p, S, &t);
        Py_END_ALLOW_THREADS
        rc = PROGRESS_RC(pc, rc);
        if (rc) {
            raise_rc(rc, "the model rejected these parameters");
            goto fail;
        }
        if (dict_f64(d, "fp", t.fp) || dict_f64(d, "fp_active", t.fp_active) ||
            dict_f64(d, "fp_frozen", t.fp_frozen) ||
            dict_f64(d, "expected_messages", t.expected_messages) ||
            dict_f64(d, "messages_per_cycle", t.messages_per_cycle) ||
            dict_bool(d, "exact_convolution", t.exact_convolution))
            goto fail;
    } else if (blk) {
        rbf_model_blocked_sigma_result r;
        Py_BEGIN_ALLOW_THREADS
        rc = rbf_model_blocked_sigma(&p, S, &r);
        Py_END_ALLOW_THREADS
        rc = PROGRESS_RC(pc, rc);
        if (rc) {
            raise_rc(rc, "the model rejected these parameters");
            goto fail;
        }
        if (dict_f64(d, "fp", r.fp) || dict_f64(d, "expected_messages", r.expected_messages) ||
            dict_f64(d, "messages_per_cycle", r.messages_per_cycle) ||
            dict_bool(d, "exact_convolution", r.exact_convolution))
            goto fail;
    } else if (S && ph == 2) {
        rbf_model_two_phase_result t;
        Py_BEGIN_ALLOW_THREADS
        rc = rbf_model_two_phase(&p, S, &t);
        Py_END_ALLOW_THREADS
        rc = PROGRESS_RC(pc, rc);
        if (rc) {
            raise_rc(rc, "the model rejected these parameters");
            goto fail;
        }
        if (dict_f64(d, "fp", t.fp) || dict_f64(d, "fp_active", t.fp_active) ||
            dict_f64(d, "fp_frozen", t.fp_frozen) ||
            dict_f64(d, "expected_messages", t.expected_messages))
            goto fail;
    } else if (S) {
        rbf_model_sigma_result r;
        Py_BEGIN_ALLOW_THREADS
        rc = rbf_model_sigma(&p, S, &r);
        Py_END_ALLOW_THREADS
        rc = PROGRESS_RC(pc, rc);
        if (rc) {
            raise_rc(rc, "the model rejected these parameters");
            goto fail;
        }
        if (dict_f64(d, "fp", r.fp) || dict_f64(d, "expected_messages", r.expected_messages))
            goto fail;
    } else {
        rbf_model_n_result r;
        Py_BEGIN_ALLOW_THREADS
        rc = rbf_model_nbounded(&p, N, &r);
        Py_END_ALLOW_THREADS
        rc = PROGRESS_RC(pc, rc);
        if (rc) {
            raise_rc(rc, "the model rejected these parameters");
            goto fail;
        }
        if (dict_f64(d, "f_w", r.f_w) || dict_f64(d, "f_o", r.f_o) || dict_f64(d, "f_a", r.f_a) ||
            dict_f64(d, "exact_worst", r.exact_worst) ||
            dict_f64(d, "exact_oracle", r.exact_oracle) ||
            dict_f64(d, "exact_real", r.exact_real) ||
            dict_f64(d, "exact_real_worst", r.exact_real_worst) ||
            (r.saturated_at ? dict_u64(d, "saturated_at", r.saturated_at)
                            : dict_none(d, "saturated_at")))
            goto fail;
    }
    return d;
fail:
    Py_DECREF(d);
    return NULL;
}

/* ------------------------------------------------------------ planner */

static int choice_dict(PyObject *d, const char *name, const rbf_plan_choice *c, int is_sigma,
                       uint64_t bits, int two)
{
    PyObject *x = PyDict_New();
    if (!x)
        return -1;
    int bad = dict_bool(x, "feasible", c->feasible);
    if (!c->feasible) {
        bad = bad || dict_none(x, "hashes") || dict_none(x, is_sigma ? "sigma" : "messages") ||
              dict_none(x, "expected_messages") || dict_none(x, "fp") ||
              dict_none(x, "gain_vs_worst_case");
    } else {
        bad = bad || dict_u64(x, "hashes", c->hashes) ||
              dict_u64(x, is_sigma ? "sigma" : "messages", is_sigma ? c->sigma : c->messages) ||
              (two && dict_u64(x, "bits_per_filter", bits / 2)) ||
              dict_f64(x, "expected_messages", c->expected_messages) || dict_f64(x, "fp", c->fp) ||
              (c->gain_vs_worst_case > 0.0 ? dict_f64(x, "gain_vs_worst_case", c->gain_vs_worst_case)
                                           : dict_none(x, "gain_vs_worst_case"));
    }
    if (bad || PyDict_SetItemString(d, name, x) < 0) {
        Py_DECREF(x);
        return -1;
    }
    Py_DECREF(x);
    return 0;
}

static int plan_fields(PyObject *d, const rbf_plan *p, const rbf_plan_options *o)
{
    return dict_u64(d, "bits", p->bits) || dict_u64(d, "memory_bytes", (p->bits + 7) / 8) ||
           /* "target_fp" (2.1, as rbf plan --json); "fp_target" its old key, kept */
           dict_f64(d, "target_fp", p->target_fp) || dict_f64(d, "fp_target", p->target_fp) ||
           dict_u64(d, "max_hashes", o->max_hashes) ||
           dict_bool(d, "k_at_max_hashes",
                     p->sigma_bounded.feasible && p->sigma_bounded.hashes == o->max_hashes) ||
           dict_str(d, "hashing", o->hashing == RBF_NON_COLLIDING ? "non-colliding" : "colliding") ||
           dict_str(d, "recycle", o->recycle == RBF_RETAINING ? "retaining" : "non-retaining") ||
           dict_str(d, "method", method_name(o->method)) ||
           choice_dict(d, "sigma_bounded", &p->sigma_bounded, 1, p->bits, 0) ||
           choice_dict(d, "average_n", &p->average_n, 0, p->bits, 0) ||
           choice_dict(d, "oracle_n", &p->oracle_n, 0, p->bits, 0) ||
           choice_dict(d, "worst_case", &p->worst_case, 0, p->bits, 0) ||
           choice_dict(d, "two_phase", &p->two_phase, 1, p->bits, 1);
}

/* The filter part of rbf plan --remember / --fn's JSON (the CLI's
 * cli_plan_fn_json_filter): 0, or -1 with an exception. */
static int plan_fn_filter(PyObject *d, uint64_t M, const rbf_plan_options *o, int feasible,
                          unsigned phases, unsigned hashes, uint64_t sigma, double expected,
                          double fp)
{
    if (dict_str(d, "hashing", o->hashing == RBF_NON_COLLIDING ? "non-colliding" : "colliding") ||
        dict_str(d, "recycle", o->recycle == RBF_RETAINING ? "retaining" : "non-retaining") ||
        dict_bool(d, "feasible", feasible))
        return -1;
    if (!feasible)
        return dict_none(d, "phases");
    return dict_u64(d, "phases", phases) || dict_u64(d, "hashes", hashes) ||
                   dict_u64(d, "sigma", sigma) ||
                   dict_u64(d, "bits_per_filter", phases == 2 ? M / 2 : M) ||
                   dict_f64(d, "expected_messages", expected) || dict_f64(d, "fp", fp)
               ? -1
               : 0;
}

/* ... and its end: the least memory that has one, where none here did. */
static int plan_fn_end(PyObject *d, int feasible, uint64_t least)
{
    return feasible || !least ? dict_none(d, "least_bits") : dict_u64(d, "least_bits", least);
}

/* remember= and fn= plan a memory, on the flat layout. */
static int plan_fn_check(uint64_t M, uint64_t N, int blk, const char *what)
{
    if (N || !M) {
        PyErr_Format(PyExc_ValueError, "%s: give a memory (bits/memory), not messages", what);
        return -1;
    }
    if (blk >= 0) {
        PyErr_Format(PyExc_ValueError,
                     "layout: not with %s (its cycle models are of the flat layout)", what);
        return -1;
    }
    return 0;
}

/* miss=: 0 <= miss < 1 (NULL: *miss unchanged). */
static int parse_miss(PyObject *o, double *miss)
{
    if (!o)
        return 0;
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred())
        return -1;
    if (!(v >= 0.0 && v < 1.0)) {
        PyErr_SetString(PyExc_ValueError, "miss: 0 <= miss < 1");
        return -1;
    }
    *miss = v;
    return 0;
}

/* rbf plan --remember W [--miss D] --json, through rbf_plan_remember. */
static PyObject *plan_remember(uint64_t M, uint64_t N, double eps, int blk, PyObject *remember,
                               PyObject *missobj, rbf_plan_options *o, PyObject *progress)
{
    uint64_t W = 0;
    double miss = 0.01;
    if (plan_fn_check(M, N, blk, "remember") < 0)
        return NULL;
    if (parse_u64(remember, "remember", &W) < 0)
        return NULL;
    if (parse_miss(missobj, &miss) < 0)
        return NULL;
    progress_ctx pc = {progress, 0};
    o->progress = progress_cb;
    o->progress_ctx = &pc;
    rbf_plan_remember_result r;
    uint64_t least = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = rbf_plan_remember(M, eps, W, miss, o, &r, &least);
    Py_END_ALLOW_THREADS
    rc = PROGRESS_RC(pc, rc);
    if (rc)
        return raise_rc(rc, rc == RBF_ENOMEM ? NULL : "the model rejected these parameters");
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    int bad = dict_u64(d, "bits", M) || dict_f64(d, "target_fp", eps) ||
              dict_u64(d, "remember", W) || dict_f64(d, "miss_target", miss) ||
              plan_fn_filter(d, M, o, r.feasible, r.phases, r.hashes, r.sigma,
                             r.expected_messages, r.fp) ||
              (r.feasible && (dict_f64(d, "miss", r.miss) ||
                              dict_bool(d, "miss_is_bound", (int)r.miss_is_bound))) ||
              plan_fn_end(d, r.feasible, least);
    if (bad) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

/* rbf plan --bits M --fp EPS --fn trace:FILE [--miss D] [--arrivals A]:
 * sizing for a log (rbf_plan_trace), the CLI's --json keys. */
static PyObject *plan_trace(uint64_t M, uint64_t N, double eps, int blk, PyObject *fn,
                            PyObject *missobj, uint64_t A, rbf_plan_options *o, PyObject *progress)
{
    double miss = 0.01;
    if (plan_fn_check(M, N, blk, "fn") < 0)
        return NULL;
    const char *spec = PyUnicode_Check(fn) ? PyUnicode_AsUTF8AndSize(fn, NULL) : NULL;
    if (!spec) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "fn: 'trace:FILE'");
        return NULL;
    }
    if (strncmp(spec, "trace:", 6) != 0 || !spec[6]) {
        PyErr_SetString(PyExc_ValueError, "fn: 'trace:FILE' (a log, one message per line)");
        return NULL;
    }
    const char *path = spec + 6;
    if (parse_miss(missobj, &miss) < 0)
        return NULL;
    rbf_model_trace t;
    uint32_t *ids = NULL;
    if (trace_load(path, A, &t, &ids) < 0)
        return NULL;
    int rc;
    t.ids = ids;
    t.window = A;
    t.seed = 1;
    progress_ctx pc = {progress, 0};
    o->progress = progress_cb;
    o->progress_ctx = &pc;
    rbf_plan_trace_result r;
    uint64_t least = 0;
    Py_BEGIN_ALLOW_THREADS
    rc = rbf_plan_trace(M, eps, &t, miss, o, &r, &least);
    Py_END_ALLOW_THREADS
    rc = PROGRESS_RC(pc, rc);
    free(ids);
    if (rc)
        return raise_rc(rc, rc == RBF_ENOMEM ? NULL : "the model rejected these parameters");
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    int bad = dict_u64(d, "bits", M) || dict_f64(d, "target_fp", eps) ||
              dict_str(d, "trace", path) || dict_u64(d, "lines", t.arrivals) ||
              dict_u64(d, "distinct", t.distinct) || dict_u64(d, "window", A ? A : t.arrivals) ||
              dict_f64(d, "miss_target", miss) ||
              plan_fn_filter(d, M, o, r.feasible, r.phases, r.hashes, r.sigma,
                             r.expected_messages, r.fp) ||
              (r.feasible && (dict_f64(d, "fp_trace", r.fp_trace) || dict_f64(d, "fn", r.fn))) ||
              plan_fn_end(d, r.feasible, least);
    if (bad) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

/* _plan(bits=, messages=, fp=, max_hashes=, hashing=, recycle=, method=,
 * layout=, progress=, remember=, miss=, fn=, arrivals=): rbf plan --json. */
static PyObject *mod_plan(PyObject *mod, PyObject *args, PyObject *kw)
{
    (void)mod;
    static char *kwlist[] = {"bits",   "messages", "fp",     "max_hashes", "hashing",
                             "recycle", "method",  "layout", "progress",   "remember",
                             "miss",    "fn",      "arrivals", NULL};
    PyObject *bits = NULL, *messages = NULL, *maxk = NULL, *hashing = NULL, *recycle = NULL,
             *method = NULL, *layout = NULL, *progress = NULL, *remember = NULL, *missobj = NULL,
             *fn = NULL, *arrivals = NULL;
    double eps = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOdOOOOOOOOOO", kwlist, &bits, &messages, &eps,
                                     &maxk, &hashing, &recycle, &method, &layout, &progress,
                                     &remember, &missobj, &fn, &arrivals))
        return NULL;
    uint64_t A = 0;
    if (parse_u64(arrivals, "arrivals", &A) < 0)
        return NULL;
    if (fn == Py_None)
        fn = NULL;
    uint64_t M = 0, N = 0;
    int nc = 0, ret = 0, blk = -1;
    rbf_plan_options o;
    rbf_plan_options_init(&o);
    unsigned mk = o.max_hashes;
    if (parse_u64(bits, "bits", &M) < 0 || parse_u64(messages, "messages", &N) < 0 ||
        parse_u32(maxk, "max_hashes", &mk) < 0 ||
        parse_choice(hashing, "hashing", "colliding", "non-colliding", &nc) < 0 ||
        parse_choice(recycle, "recycle", "non-retaining", "retaining", &ret) < 0 ||
        parse_method(method, &o.method, 0) < 0)
        return NULL;
    if (layout && layout != Py_None) {
        blk = 0;
        if (parse_choice(layout, "layout", "flat", "blocked", &blk) < 0)
            return NULL;
    }
    if (!(eps > 0 && eps < 1)) {
        PyErr_SetString(PyExc_ValueError, "fp: the target rate, 0 < fp < 1");
        return NULL;
    }
    if ((M != 0) == (N != 0)) {
        PyErr_SetString(PyExc_ValueError, "give either a memory (bits/memory) or messages");
        return NULL;
    }
    if (mk < 1 || mk > RBF_MAX_HASHES) {
        PyErr_Format(PyExc_ValueError, "max_hashes: 1 to %u", RBF_MAX_HASHES);
        return NULL;
    }
    if (N > ((uint64_t)1 << 50)) {
        PyErr_SetString(PyExc_ValueError, "messages: at most 2**50");
        return NULL;
    }
    if (blk >= 0 && M && M < RBF_BLOCK_BITS) {
        PyErr_SetString(PyExc_ValueError, "layout: needs at least 512 bits (one block)");
        return NULL;
    }
    if (progress_arg(&progress) < 0)
        return NULL;
    if (remember == Py_None)
        remember = NULL;
    if (missobj == Py_None)
        missobj = NULL;
    if (missobj && !remember && !fn) {
        PyErr_SetString(PyExc_ValueError, "miss: applies to remember or fn only");
        return NULL;
    }
    if (remember && fn) {
        PyErr_SetString(PyExc_ValueError, "remember and fn exclude each other");
        return NULL;
    }
    if (A && !fn) {
        PyErr_SetString(PyExc_ValueError, "arrivals: applies to fn='trace:FILE' only");
        return NULL;
    }
    o.max_hashes = mk;
    o.hashing = nc ? RBF_NON_COLLIDING : RBF_COLLIDING;
    o.recycle = ret ? RBF_RETAINING : RBF_NON_RETAINING;
    if (remember)
        return plan_remember(M, N, eps, blk, remember, missobj, &o, progress);
    if (fn)
        return plan_trace(M, N, eps, blk, fn, missobj, A, &o, progress);
    o.hashing = nc ? RBF_NON_COLLIDING : RBF_COLLIDING;
    o.recycle = ret ? RBF_RETAINING : RBF_NON_RETAINING;
    progress_ctx pc = {progress, 0};
    o.progress = progress_cb;
    o.progress_ctx = &pc;
    rbf_plan p;
    rbf_plan_choice bc;
    memset(&bc, 0, sizeof bc);
    uint64_t b1 = 0, b2 = 0, bb = M - M % RBF_BLOCK_BITS;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    if (M) {
        rc = rbf_plan_memory(M, eps, &o, &p);
        if (!rc && blk >= 0)
            rc = rbf_plan_blocked_memory(M, eps, &o, &bc);
    } else {
        rc = rbf_plan_messages(N, eps, &o, &b1, &p);
        if (!rc)
            rc = rbf_plan_messages_two_phase(N, eps, &o, &b2, NULL);
        /* the least whole blocks whose blocked plan holds N */
        if (!rc && blk >= 0)
            rc = rbf_plan_blocked_capacity(N, eps, &o, &bb, &bc);
    }
    Py_END_ALLOW_THREADS
    rc = PROGRESS_RC(pc, rc);
    if (rc)
        return raise_rc(rc, "the planner rejected these parameters");
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    /* "capacity" (2.1, rbf plan --capacity); "messages" its old key, kept */
    if (N && (dict_u64(d, "capacity", N) || dict_u64(d, "messages", N) ||
              dict_u64(d, "two_phase_bits", b2) ||
              dict_u64(d, "two_phase_memory_bytes", (b2 + 7) / 8) ||
              (blk >= 0 && (dict_u64(d, "blocked_bits", bb) ||
                            dict_u64(d, "blocked_memory_bytes", bb / 8)))))
        goto fail;
    if (plan_fields(d, &p, &o))
        goto fail;
    if (blk >= 0) {
        /* the two layouts side by side, as rbf plan --layout --json */
        const rbf_plan_choice *fl = &p.sigma_bounded;
        PyObject *lay = PyDict_New();
        if (!lay || dict_str(d, "layout", blk ? "blocked" : "flat") ||
            PyDict_SetItemString(d, "layouts", lay) < 0) {
            Py_XDECREF(lay);
            goto fail;
        }
        Py_DECREF(lay);
        for (int i = 0; i < 2; i++) {
            const rbf_plan_choice *c = i ? &bc : fl;
            uint64_t nb = i ? bb : p.bits;
            PyObject *x = PyDict_New();
            if (!x)
                goto fail;
            int bad = dict_u64(x, "bits", nb) || dict_bool(x, "feasible", c->feasible) ||
                      (c->feasible ? (dict_u64(x, "hashes", c->hashes) ||
                                      dict_u64(x, "sigma", c->sigma) ||
                                      dict_f64(x, "expected_messages", c->expected_messages) ||
                                      dict_f64(x, "messages_per_cycle_per_bit",
                                               c->expected_messages / (double)nb) ||
                                      dict_f64(x, "fp", c->fp))
                                   : (dict_none(x, "hashes") || dict_none(x, "sigma") ||
                                      dict_none(x, "expected_messages") ||
                                      dict_none(x, "messages_per_cycle_per_bit") ||
                                      dict_none(x, "fp")));
            if (bad || PyDict_SetItemString(lay, i ? "blocked" : "flat", x) < 0) {
                Py_DECREF(x);
                goto fail;
            }
            Py_DECREF(x);
        }
        if (fl->feasible && bc.feasible
                ? dict_f64(d, "blocked_vs_flat_per_bit",
                           (bc.expected_messages / (double)bb) /
                               (fl->expected_messages / (double)p.bits))
                : dict_none(d, "blocked_vs_flat_per_bit"))
            goto fail;
    }
    return d;
fail:
    Py_DECREF(d);
    return NULL;
}

/* ------------------------------------------------------------ simulator */

static int stat_fields(PyObject *d, const char *name, const rbf_sim_stat *s, int observed)
{
    char key[64];
    snprintf(key, sizeof key, "%s_ci99", name);
    if (!observed)
        return dict_none(d, name) || dict_none(d, key);
    if (dict_f64(d, name, s->mean))
        return -1;
    if (!s->has_ci)
        return dict_none(d, key);
    PyObject *t = Py_BuildValue("(dd)", s->ci_low, s->ci_high);
    if (!t)
        return -1;
    int r = PyDict_SetItemString(d, key, t);
    Py_DECREF(t);
    return r;
}

static int counts_fields(PyObject *d, const rbf_sim_counts *c)
{
    return dict_u64(d, "arrivals", c->arrivals) || dict_u64(d, "new_arrivals", c->new_arrivals) ||
           dict_u64(d, "false_positives", c->fp_first) ||
           dict_u64(d, "fp_each_arrivals", c->fp_each) || dict_u64(d, "repeats", c->repeats) ||
           dict_u64(d, "false_negatives", c->false_negatives) || dict_u64(d, "cycles", c->cycles);
}

/* _simulate(bits, hashes, sigma, messages, oracle, hashing, recycle, phases,
 * layout, workload, arrivals, warmup, epochs, seed, threads, detail,
 * progress): rbf simulate --json (per_epoch with detail). */
static PyObject *mod_simulate(PyObject *mod, PyObject *args, PyObject *kw)
{
    (void)mod;
    static char *kwlist[] = {"bits",     "hashes",   "sigma",  "messages", "oracle", "hashing",
                             "recycle",  "phases",   "layout", "workload", "arrivals",
                             "warmup",   "epochs",   "seed",   "threads",  "detail",
                             "progress", NULL};
    PyObject *bits = NULL, *hashes = NULL, *sigma = NULL, *messages = NULL, *hashing = NULL,
             *recycle = NULL, *phases = NULL, *layout = NULL, *arrivals = NULL, *warmup = NULL,
             *epochs = NULL, *seed = NULL, *threads = NULL, *progress = NULL;
    const char *wspec = "uniform:1000";
    int oracle = 0, detail = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOOpOOOOsOOOOOpO", kwlist, &bits, &hashes,
                                     &sigma, &messages, &oracle, &hashing, &recycle, &phases,
                                     &layout, &wspec, &arrivals, &warmup, &epochs, &seed, &threads,
                                     &detail, &progress))
        return NULL;
    rbf_sim_config c;
    rbf_sim_config_init(&c);
    int nc = 0, ret = 0, blk = 0;
    if (parse_u64(bits, "bits", &c.filter.bits) < 0 ||
        parse_u32(hashes, "hashes", &c.filter.hashes) < 0 ||
        parse_u64(sigma, "sigma", &c.filter.sigma) < 0 ||
        parse_u64(messages, "messages", &c.filter.messages) < 0 ||
        parse_choice(hashing, "hashing", "colliding", "non-colliding", &nc) < 0 ||
        parse_choice(recycle, "recycle", "non-retaining", "retaining", &ret) < 0 ||
        parse_u32(phases, "phases", &c.filter.phases) < 0 ||
        parse_choice(layout, "layout", "flat", "blocked", &blk) < 0 ||
        parse_u64(arrivals, "arrivals", &c.arrivals) < 0 ||
        parse_u64(warmup, "warmup", &c.warmup) < 0 || parse_u32(epochs, "epochs", &c.epochs) < 0 ||
        parse_u64(seed, "seed", &c.seed) < 0 || parse_u32(threads, "threads", &c.threads) < 0)
        return NULL;
    c.filter.hashing = nc ? RBF_NON_COLLIDING : RBF_COLLIDING;
    c.filter.recycle = ret ? RBF_RETAINING : RBF_NON_RETAINING;
    c.filter.layout = blk ? RBF_LAYOUT_BLOCKED : RBF_LAYOUT_FLAT;
    c.oracle = oracle;
    const char *why = NULL;
    if (rbf_sim_workload_parse(wspec, &c.workload, &why)) {
        PyErr_Format(PyExc_ValueError, "workload: %s", why ? why : "not a workload spec");
        return NULL;
    }
    if (c.threads > 4096) {
        PyErr_SetString(PyExc_ValueError, "threads: 0 to 4096 (0: every online processor)");
        return NULL;
    }
    if (arrivals && arrivals != Py_None && c.workload.kind == RBF_WORKLOAD_TRACE) {
        PyErr_SetString(PyExc_ValueError, "arrivals: a trace is replayed whole (its epochs split "
                                          "it); leave arrivals out");
        return NULL;
    }
    if (rbf_sim_config_check(&c, &why)) {
        PyErr_SetString(PyExc_ValueError, why ? why : "bad simulator configuration");
        return NULL;
    }
    if (progress_arg(&progress) < 0)
        return NULL;
    progress_ctx pc = {progress, 0};
    c.progress = progress_cb;
    c.progress_ctx = &pc;
    rbf_sim_result r;
    int rc, mrc;
    double model = 0;
    const char *mname = NULL;
    Py_BEGIN_ALLOW_THREADS
    rc = rbf_sim_run(&c, &r);
    mrc = rc ? rc : rbf_sim_model(&c, &model, &mname);
    Py_END_ALLOW_THREADS
    rc = PROGRESS_RC(pc, rc);
    if (rc) {
        if (rc == RBF_EIO)
            return PyErr_SetFromErrnoWithFilename(PyExc_OSError, c.workload.trace_path);
        return raise_rc(rc, NULL);
    }
    PyObject *d = PyDict_New();
    if (!d) {
        rbf_sim_result_free(&r);
        return NULL;
    }
    const rbf_config *fc = &c.filter;
    int bad = dict_u64(d, "bits", fc->bits) || dict_u64(d, "hashes", fc->hashes) ||
              (fc->sigma ? dict_u64(d, "sigma", fc->sigma) : dict_none(d, "sigma")) ||
              (fc->messages ? dict_u64(d, "messages", fc->messages) : dict_none(d, "messages")) ||
              dict_bool(d, "oracle", c.oracle) ||
              dict_str(d, "hashing", nc ? "non-colliding" : "colliding") ||
              dict_str(d, "recycle", ret ? "retaining" : "non-retaining") ||
              dict_u64(d, "phases", fc->phases) || dict_str(d, "layout", blk ? "blocked" : "flat") ||
              dict_str(d, "workload", wspec) || dict_u64(d, "seed", c.seed) ||
              dict_u64(d, "epochs", r.epochs) || dict_u64(d, "warmup", c.warmup) ||
              counts_fields(d, &r.total) ||
              stat_fields(d, "fp", &r.fp, r.total.new_arrivals > 0) ||
              stat_fields(d, "fp_first", &r.fp_first, r.total.arrivals > 0) ||
              stat_fields(d, "fp_each", &r.fp_each, r.total.arrivals > 0) ||
              stat_fields(d, "fn", &r.fn, r.total.repeats > 0) ||
              stat_fields(d, "messages_per_cycle", &r.messages_per_cycle, r.total.cycles > 0);
    rbf_sim_steady st;
    bad = bad || rbf_sim_steady_of(&r, &st) != RBF_OK || dict_u64(d, "steady_epochs", st.epochs) ||
          stat_fields(d, "steady_fp", &st.fp, st.has_fp) ||
          stat_fields(d, "steady_fn", &st.fn, st.has_fn);
    if (!bad) {
        if (mrc == RBF_OK) {
            int inside = rbf_sim_model_inside_ci99(&r, model);
            bad = dict_f64(d, "model", model) || dict_str(d, "model_name", mname) ||
                  (inside >= 0 ? dict_bool(d, "model_inside_ci99", inside)
                               : dict_none(d, "model_inside_ci99"));
        } else {
            bad = dict_none(d, "model") || dict_str(d, "model_name", mname) ||
                  dict_none(d, "model_inside_ci99");
        }
    }
    uint64_t run = r.total.arrivals + (uint64_t)r.epochs * c.warmup;
    bad = bad || dict_u64(d, "threads", r.threads) ||
          dict_f64(d, "elapsed_seconds", r.elapsed_seconds) ||
          dict_f64(d, "arrivals_per_second",
                   r.elapsed_seconds > 0 ? (double)run / r.elapsed_seconds : 0);
    if (!bad) {
        /* per-epoch rates as columns (arrays in the Python layer) */
        double *col = PyMem_Malloc((size_t)r.epochs * 5 * sizeof *col);
        if (!col) {
            PyErr_NoMemory();
            bad = 1;
        } else {
            unsigned E = r.epochs;
            for (unsigned i = 0; i < E; i++) {
                col[i] = r.epoch_rates[i].fp;
                col[E + i] = r.epoch_rates[i].fp_first;
                col[2 * E + i] = r.epoch_rates[i].fp_each;
                col[3 * E + i] = r.epoch_rates[i].fn;
                col[4 * E + i] = r.epoch_rates[i].messages_per_cycle;
            }
            static const char *names[] = {"fp", "fp_first", "fp_each", "fn",
                                          "messages_per_cycle"};
            PyObject *pe = PyDict_New();
            bad = !pe;
            for (int j = 0; !bad && j < 5; j++) {
                PyObject *x = np_or_list(col + (size_t)j * E, E);
                bad = !x || PyDict_SetItemString(pe, names[j], x) < 0;
                Py_XDECREF(x);
            }
            if (!bad && detail) {
                PyObject *lst = PyList_New(0);
                bad = !lst;
                for (unsigned i = 0; !bad && i < E; i++) {
                    PyObject *e = PyDict_New();
                    bad = !e || counts_fields(e, &r.epoch_counts[i]) ||
                          dict_f64(e, "fp", r.epoch_rates[i].fp) ||
                          dict_f64(e, "fp_first", r.epoch_rates[i].fp_first) ||
                          dict_f64(e, "fp_each", r.epoch_rates[i].fp_each) ||
                          dict_f64(e, "fn", r.epoch_rates[i].fn) ||
                          dict_f64(e, "messages_per_cycle", r.epoch_rates[i].messages_per_cycle) ||
                          PyList_Append(lst, e) < 0;
                    Py_XDECREF(e);
                }
                bad = bad || PyDict_SetItemString(d, "per_epoch", lst) < 0;
                Py_XDECREF(lst);
            }
            bad = bad || PyDict_SetItemString(d, "epoch_rates", pe) < 0;
            Py_XDECREF(pe);
            PyMem_Free(col);
        }
    }
    rbf_sim_result_free(&r);
    if (bad) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

static PyObject *mod_strerror(PyObject *mod, PyObject *arg)
{
    (void)mod;
    long c = PyLong_AsLong(arg);
    if (c == -1 && PyErr_Occurred())
        return NULL;
    return PyUnicode_FromString(rbf_strerror((int)c));
}

/* ------------------------------------------------------------ sizes */

/* _parse_bytes(str) -> int: --memory's bytes, or ValueError. */
static PyObject *mod_parse_bytes(PyObject *mod, PyObject *arg)
{
    (void)mod;
    Py_ssize_t n;
    const char *t = PyUnicode_AsUTF8AndSize(arg, &n);
    if (!t)
        return NULL;
    uint64_t v = 0;
    const char *err = "not a size";
    if ((size_t)n != strlen(t) || cli_parse_bytes(t, &v, &err) != 0) {
        PyErr_Format(PyExc_ValueError, "memory: %R: %s", arg, err);
        return NULL;
    }
    return PyLong_FromUnsignedLongLong((unsigned long long)v);
}

static PyMethodDef module_methods[] = {
    {"_parse_bytes", mod_parse_bytes, METH_O, NULL},
    {"_model", (PyCFunction)(void (*)(void))mod_model, METH_VARARGS | METH_KEYWORDS, NULL},
    {"_plan", (PyCFunction)(void (*)(void))mod_plan, METH_VARARGS | METH_KEYWORDS, NULL},
    {"_simulate", (PyCFunction)(void (*)(void))mod_simulate, METH_VARARGS | METH_KEYWORDS, NULL},
    {"strerror", mod_strerror, METH_O, "strerror(code) -> str: the library's name of a status code."},
    {NULL, NULL, 0, NULL},
};

static int module_exec(PyObject *m)
{
    FilterType = PyType_FromModuleAndSpec(m, &Filter_spec, NULL);
    if (!FilterType)
        return -1;
    if (PyModule_AddObjectRef(m, "FilterBase", FilterType) < 0)
        return -1;
    CancelledError = PyErr_NewExceptionWithDoc(
        "rbf.Cancelled", "A model, plan or simulation stopped by its progress callback.", NULL,
        NULL);
    if (!CancelledError || PyModule_AddObjectRef(m, "Cancelled", CancelledError) < 0)
        return -1;
    if (PyModule_AddStringConstant(m, "library_version", rbf_version()) < 0)
        return -1;
    if (PyModule_AddIntConstant(m, "MAX_HASHES", RBF_MAX_HASHES) < 0)
        return -1;
    return 0;
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "rbf._rbf", "The C core of rbf (librbf, linked statically).", 0,
    module_methods, module_slots, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__rbf(void);

PyMODINIT_FUNC PyInit__rbf(void)
{
    return PyModuleDef_Init(&module_def);
}

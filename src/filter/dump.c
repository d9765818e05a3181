/*
 * dump.c -- streaming a filter's image in pieces while the filter changes.
 *
 * A dump is the image rbf_save_buffer would have written when the dump was
 * opened, read front to back in pieces of any size while the filter goes on
 * taking inserts and recycles between the pieces.  Before each write the
 * owner tells the dump what is coming (rbf_dump_before_insert,
 * rbf_dump_before_recycle): the dump then copies the pages of the image not
 * yet read that the write may change, and later reads take those copies.
 * An insert changes only the words at its k positions in the active
 * filter, unless it recycles; a write that may recycle may change every
 * page, so then every page not yet read is copied.  Pages wholly read are
 * never copied and their copies are released as the reading passes them.
 * The last 8 bytes are the checksum of the bytes read, computed here.
 *
 * This is what the Redis module's RBF.SCANDUMP streams: the filter stays
 * writable during a dump of any size, and a dump costs memory only for the
 * pages written to before they were read.
 */
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "rbf.h"
#include "rbf_alloc.h"

#define DUMP_PAGE 4096u

#define IMAGE_MAGIC "RBFILTR\x1a"
#define IMAGE_HEADER_V1 128u
#define IMAGE_HEADER_V2 192u

struct rbf_dump {
    const rbf *f;
    uint64_t size;      /* image bytes, checksum included */
    uint64_t body;      /* size - 8 */
    uint64_t header;    /* bytes before the active filter's words */
    uint64_t read;      /* bytes read so far */
    uint64_t npages;    /* pages of the body */
    uint64_t held;      /* bytes of copied pages */
    uint8_t **pages;    /* per page: its copy, or NULL (allocated at the first copy) */
    int broken;         /* a copy failed: the dump can no longer be read */
    XXH3_state_t sum;   /* of the bytes read */
};

int rbf_dump_open(const rbf *f, rbf_dump **out)
{
    if (!out)
        return RBF_EINVAL;
    *out = NULL;
    if (!f)
        return RBF_EINVAL;
    uint64_t size = 0;
    int rc = rbf_save_size(f, &size);
    if (rc != RBF_OK)
        return rc;
    rbf_config c;
    rbf_get_config(f, &c);
    uint64_t per = c.phases == 2 ? c.bits / 2 : c.bits;
    uint64_t words = (per + 63) / 64;
    /* XXH3_state_t wants 64-byte alignment: the library's line allocator */
    rbf_dump *d = rbf__alloc_lines(sizeof *d);
    if (!d)
        return RBF_ENOMEM;
    d->f = f;
    d->size = size;
    d->body = size - 8;
    d->header = d->body - 8 * words * c.phases;
    d->npages = (d->body + DUMP_PAGE - 1) / DUMP_PAGE;
    XXH3_64bits_reset(&d->sum);
    *out = d;
    return RBF_OK;
}

void rbf_dump_close(rbf_dump *d)
{
    if (!d)
        return;
    if (d->pages) {
        for (uint64_t i = 0; i < d->npages; i++)
            rbf__free(d->pages[i]);
        rbf__free(d->pages);
    }
    rbf__free_lines(d, sizeof *d);
}

uint64_t rbf_dump_size(const rbf_dump *d)
{
    return d ? d->size : 0;
}

uint64_t rbf_dump_offset(const rbf_dump *d)
{
    return d ? d->read : 0;
}

uint64_t rbf_dump_held(const rbf_dump *d)
{
    return d ? d->held + (d->pages ? d->npages * sizeof *d->pages : 0) : 0;
}

static uint64_t page_end(const rbf_dump *d, uint64_t i)
{
    uint64_t end = (i + 1) * DUMP_PAGE;
    return end > d->body ? d->body : end;
}

/* Copy page i as it is now, unless copied already or wholly read. */
static int keep_page(rbf_dump *d, uint64_t i)
{
    if (page_end(d, i) <= d->read)
        return RBF_OK;
    if (!d->pages) {
        d->pages = rbf__calloc((size_t)d->npages, sizeof *d->pages);
        if (!d->pages)
            return RBF_ENOMEM;
    }
    if (d->pages[i])
        return RBF_OK;
    uint64_t start = i * DUMP_PAGE, n = page_end(d, i) - start;
    uint8_t *p = rbf__malloc((size_t)n);
    if (!p)
        return RBF_ENOMEM;
    rbf_save_range(d->f, start, p, (size_t)n);
    d->pages[i] = p;
    d->held += n;
    return RBF_OK;
}

static int fail(rbf_dump *d, int rc)
{
    if (rc != RBF_OK)
        d->broken = 1;
    return rc;
}

int rbf_dump_before_recycle(rbf_dump *d)
{
    if (!d)
        return RBF_EINVAL;
    if (d->broken)
        return RBF_ENOMEM;
    if (d->read >= d->body)
        return RBF_OK;
    for (uint64_t i = d->read / DUMP_PAGE; i < d->npages; i++) {
        int rc = keep_page(d, i);
        if (rc != RBF_OK)
            return fail(d, rc);
    }
    return RBF_OK;
}

/* Whether inserting n more messages may recycle: a sigma-bounded filter
 * whose set bits could pass sigma, an N-bounded one within n messages of N. */
static int may_recycle(const rbf *f, size_t n)
{
    rbf_config c;
    rbf_stats s;
    rbf_get_config(f, &c);
    rbf_get_stats(f, &s);
    if (c.sigma) {
        uint64_t add = (uint64_t)c.hashes * n;
        return add / c.hashes != n || s.bits_set + add > c.sigma;
    }
    return s.cycle_messages + n >= c.messages;
}

int rbf_dump_before_insert(rbf_dump *d, const void *const *keys, const size_t *lens, size_t n)
{
    if (!d || (n && (!keys || !lens)))
        return RBF_EINVAL;
    if (d->broken)
        return RBF_ENOMEM;
    if (d->read >= d->body || n == 0)
        return RBF_OK;
    if (may_recycle(d->f, n))
        return rbf_dump_before_recycle(d);
    uint64_t pos[RBF_MAX_HASHES];
    for (size_t j = 0; j < n; j++) {
        int k = rbf_positions(d->f, rbf_hash(d->f, keys[j], lens[j]), pos);
        for (int t = 0; t < k; t++) {
            /* the word's bytes in the image: the active filter comes first */
            uint64_t off = d->header + 8 * (pos[t] / 64);
            if (off + 8 <= d->read)
                continue;
            int rc = keep_page(d, off / DUMP_PAGE);
            if (rc == RBF_OK && (off + 7) / DUMP_PAGE != off / DUMP_PAGE)
                rc = keep_page(d, (off + 7) / DUMP_PAGE);
            if (rc != RBF_OK)
                return fail(d, rc);
        }
    }
    return RBF_OK;
}

/* Release the copies of pages wholly read. */
static void drop_read_pages(rbf_dump *d, uint64_t from)
{
    if (!d->pages)
        return;
    for (uint64_t i = from / DUMP_PAGE; i < d->npages && page_end(d, i) <= d->read; i++)
        if (d->pages[i]) {
            d->held -= page_end(d, i) - i * DUMP_PAGE;
            rbf__free(d->pages[i]);
            d->pages[i] = NULL;
        }
}

int rbf_dump_read(rbf_dump *d, void *buf, size_t cap, size_t *got)
{
    if (got)
        *got = 0;
    if (!d || !got || (!buf && cap))
        return RBF_EINVAL;
    if (d->broken)
        return RBF_ENOMEM;
    uint64_t left = d->size - d->read;
    size_t n = left < cap ? (size_t)left : cap;
    uint8_t *out = buf;
    uint64_t off = d->read, end = off + n, pos = off;
    while (pos < end && pos < d->body) {
        uint64_t i = pos / DUMP_PAGE, stop;
        if (d->pages && d->pages[i]) {
            stop = page_end(d, i) < end ? page_end(d, i) : end;
            memcpy(out + (pos - off), d->pages[i] + (pos - i * DUMP_PAGE), (size_t)(stop - pos));
        } else {
            /* a run of pages not copied: one range from the filter */
            stop = pos;
            while (stop < end && stop < d->body && !(d->pages && d->pages[stop / DUMP_PAGE])) {
                stop = page_end(d, stop / DUMP_PAGE);
                if (stop > end)
                    stop = end;
            }
            rbf_save_range(d->f, pos, out + (pos - off), (size_t)(stop - pos));
        }
        pos = stop;
    }
    if (pos > off)
        XXH3_64bits_update(&d->sum, out, (size_t)(pos - off));
    if (end > d->body) {
        uint8_t tail[8];
        uint64_t sum = XXH3_64bits_digest(&d->sum);
        for (int b = 0; b < 8; b++)
            tail[b] = (uint8_t)(sum >> (8 * b));
        uint64_t from = pos > d->body ? pos : d->body;
        memcpy(out + (from - off), tail + (from - d->body), (size_t)(end - from));
    }
    d->read = end;
    drop_read_pages(d, off);
    *got = n;
    return RBF_OK;
}

static uint64_t le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

int rbf_image_size(const void *head, size_t len, uint64_t *size)
{
    if (!head || !size)
        return RBF_EINVAL;
    *size = 0;
    const uint8_t *h = head;
    if (len < 16)
        return RBF_ERANGE;
    if (memcmp(h, IMAGE_MAGIC, 8) != 0)
        return RBF_EFORMAT;
    uint64_t version = le(h + 8, 4), hs = le(h + 12, 4);
    if (!((version == 1 && hs == IMAGE_HEADER_V1) || (version == 2 && hs == IMAGE_HEADER_V2)))
        return RBF_EFORMAT;
    if (len < hs)
        return RBF_ERANGE;
    if (le(h + hs - 8, 8) != XXH3_64bits(h, (size_t)hs - 8))
        return RBF_ECORRUPT;
    uint64_t phases = le(h + 36, 4), words = le(h + 112, 8);
    if ((phases != 1 && phases != 2) || words == 0 || words > (UINT64_C(1) << 50))
        return RBF_ECORRUPT;
    *size = hs + 8 * words * phases + 8;
    return RBF_OK;
}

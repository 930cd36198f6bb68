/*
 * vmgpu: the write-back cache of the non-coherent mode (contract v1.2).
 *
 * With the noncoherent property the guest may set CACHE_MODE to
 * NONCOHERENT. The engine's data accesses to system memory (FILL, DISCARD
 * and TRANSFER, after aperture and GPU page-table translation, and the page
 * rewrites of COMPRESS, DECOMPRESS and NOTIFY) then go through this cache,
 * keyed by bus page address. The lines hold the stored bytes: compression's
 * encoding is done above the cache. vmgpu-mem.c decides which
 * accesses those are, and ring fetches, table walks, FENCE and WAIT never
 * come here. A read miss fills the line from memory; a write miss fills it
 * too, then the write changes the line only and makes it dirty. Memory
 * sees a dirty line when CACHE_FLUSH writes it back or when the line is
 * evicted, least recently used first, to make room for another. An
 * invalidate, the switch back to COHERENT and reset drop lines without
 * writing them back.
 *
 * The cache-lines slots are allocated at realize, their 4 KiB of data on
 * first use (then kept). A hash table finds the line of a bus page; valid
 * lines are on an LRU list, the others on a free list. Nothing here trusts
 * the guest: CACHE_FLUSH visits each slot once per command, in slot order
 * and across as many slices as its visits and write backs take, so its
 * work is bounded by cache-lines whatever the range, and a slice's by its
 * budget however many rings flush.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "system/dma.h"
#include "vmgpu.h"
#include "trace.h"

#define VMGPU_CACHE_LINE_MASK   ((uint64_t)VMGPU_CACHE_LINE_SIZE - 1)
/* What a visit of a slot costs of a slice's budget, in bytes copied. */
#define VMGPU_CACHE_VISIT_COST  64

void vmgpu_cache_init(VmgpuState *s)
{
    VmgpuCache *c = &s->cache;
    uint32_t i;

    c->num_lines = s->cache_lines;
    c->lines = g_new0(VmgpuCacheLine, c->num_lines);
    c->map = g_hash_table_new(g_int64_hash, g_int64_equal);
    QTAILQ_INIT(&c->lru);
    QTAILQ_INIT(&c->free);
    for (i = 0; i < c->num_lines; i++) {
        QTAILQ_INSERT_TAIL(&c->free, &c->lines[i], link);
    }
}

void vmgpu_cache_exit(VmgpuState *s)
{
    VmgpuCache *c = &s->cache;
    uint32_t i;

    for (i = 0; i < c->num_lines; i++) {
        g_free(c->lines[i].data);
    }
    g_free(c->lines);
    c->lines = NULL;
    c->num_lines = 0;
    if (c->map) {
        g_hash_table_destroy(c->map);
        c->map = NULL;
    }
}

/* Forget a valid line, dirty or not. */
static void vmgpu_cache_unlink(VmgpuCache *c, VmgpuCacheLine *line)
{
    g_hash_table_remove(c->map, &line->tag);
    QTAILQ_REMOVE(&c->lru, line, link);
    line->valid = false;
    line->dirty = false;
    QTAILQ_INSERT_TAIL(&c->free, line, link);
    c->used--;
}

/* Drop every line without writing it back: reset, or back to COHERENT. */
static void vmgpu_cache_drop_all(VmgpuState *s)
{
    VmgpuCache *c = &s->cache;
    VmgpuCacheLine *line, *next;
    uint32_t lines = c->used, dirty = 0;

    QTAILQ_FOREACH_SAFE(line, &c->lru, link, next) {
        dirty += line->dirty;
        vmgpu_cache_unlink(c, line);
    }
    if (lines) {
        trace_vmgpu_cache_drop_all(lines, dirty);
    }
}

void vmgpu_cache_reset(VmgpuState *s)
{
    vmgpu_cache_drop_all(s);
    s->cache_mode = VMGPU_CACHE_MODE_COHERENT;
}

const char *vmgpu_cache_mode_write(VmgpuState *s, uint32_t val)
{
    if (val != VMGPU_CACHE_MODE_COHERENT &&
        val != VMGPU_CACHE_MODE_NONCOHERENT) {
        return "unknown cache mode";
    }
    if (val == VMGPU_CACHE_MODE_NONCOHERENT && !s->noncoherent) {
        return "non-coherent mode not configured (noncoherent=off)";
    }
    if (val != s->cache_mode) {
        trace_vmgpu_cache_mode(s->cache_mode, val);
        if (val == VMGPU_CACHE_MODE_COHERENT) {
            /* Software wrote back what it wanted to keep. */
            vmgpu_cache_drop_all(s);
        }
        s->cache_mode = val;
    }
    return NULL;
}

/* Write a dirty line back to memory; on failure it stays dirty. */
static bool vmgpu_cache_writeback(VmgpuState *s, VmgpuCacheLine *line,
                                  VmgpuMemError *err)
{
    if (vmgpu_dma_rw(s, line->tag, line->data, VMGPU_CACHE_LINE_SIZE,
                     true) != MEMTX_OK) {
        trace_vmgpu_cache_writeback_fault(line->tag);
        return vmgpu_fail(err, VMGPU_ERR_DMA, line->tag);
    }
    trace_vmgpu_cache_writeback(line->tag);
    line->dirty = false;
    return true;
}

/*
 * A free slot for a new line, still on the free list. With none left the
 * least recently used line goes, written back first if dirty. A line that
 * cannot be written back (IOMMU fault) is dropped all the same, its data
 * lost as a write to a faulting address is, and the access that needed the
 * slot fails with the DMA error at that line's bus address.
 */
static VmgpuCacheLine *vmgpu_cache_alloc(VmgpuState *s, VmgpuMemError *err)
{
    VmgpuCache *c = &s->cache;
    VmgpuCacheLine *line = QTAILQ_FIRST(&c->free);

    if (!line) {
        VmgpuCacheLine *victim = QTAILQ_FIRST(&c->lru);
        bool ok = true;

        /* realize guarantees at least one line, so the LRU is not empty */
        trace_vmgpu_cache_evict(victim->tag, victim->dirty);
        if (victim->dirty) {
            ok = vmgpu_cache_writeback(s, victim, err);
        }
        vmgpu_cache_unlink(c, victim);
        if (!ok) {
            return NULL;
        }
        line = victim;
    }
    if (!line->data) {
        line->data = g_malloc(VMGPU_CACHE_LINE_SIZE);
    }
    return line;
}

/*
 * A data access of len bytes at bus address bus, within one line (the
 * caller splits at page boundaries). Committed only on success: a failed
 * fill or eviction changes neither buf nor memory.
 */
bool vmgpu_cache_rw(VmgpuState *s, uint64_t bus, void *buf, uint32_t len,
                    bool write, VmgpuMemError *err)
{
    VmgpuCache *c = &s->cache;
    uint64_t tag = bus & ~VMGPU_CACHE_LINE_MASK;
    uint32_t offset = bus & VMGPU_CACHE_LINE_MASK;
    VmgpuCacheLine *line;

    if (len > VMGPU_CACHE_LINE_SIZE - offset) {
        return vmgpu_fail(err, VMGPU_ERR_BAD_FIELD, bus);
    }
    line = g_hash_table_lookup(c->map, &tag);
    if (line) {
        QTAILQ_REMOVE(&c->lru, line, link);
    } else {
        line = vmgpu_cache_alloc(s, err);
        if (!line) {
            return false;
        }
        if (vmgpu_dma_rw(s, tag, line->data, VMGPU_CACHE_LINE_SIZE,
                         false) != MEMTX_OK) {
            return vmgpu_fail(err, VMGPU_ERR_DMA, bus);
        }
        trace_vmgpu_cache_fill(tag, write);
        QTAILQ_REMOVE(&c->free, line, link);
        line->tag = tag;
        line->valid = true;
        line->dirty = false;
        g_hash_table_insert(c->map, &line->tag, line);
        c->used++;
    }
    QTAILQ_INSERT_TAIL(&c->lru, line, link);
    if (write) {
        memcpy(line->data + offset, buf, len);
        line->dirty = true;
    } else {
        memcpy(buf, line->data + offset, len);
    }
    return true;
}

/*
 * CACHE_FLUSH, or the next slice of it. *cursor is the next slot to visit;
 * each visit costs VMGPU_CACHE_VISIT_COST of the slice's budget, each write
 * back a line. Size 0 is the whole
 * cache (with an all-zero address); otherwise the lines of the bus pages
 * the SYSTEM range touches. WRITEBACK writes dirty lines back and keeps
 * them, clean; INVALIDATE drops lines, dirty ones without writing them
 * back; both write back, then drop. A write back that fails halts the
 * command at that line, which stays dirty: the lines visited before it
 * are done.
 */
VmgpuCmdStatus vmgpu_cache_flush(VmgpuState *s, const struct vmgpu_cmd_range *c,
                                 uint64_t *cursor, uint64_t *budget,
                                 VmgpuMemError *err)
{
    VmgpuCache *cache = &s->cache;
    uint16_t flags = le16_to_cpu(c->hdr.flags);
    uint16_t known = VMGPU_CACHE_FLAG_WRITEBACK | VMGPU_CACHE_FLAG_INVALIDATE;
    uint64_t addr = le64_to_cpu(c->addr.addr);
    uint64_t size = le64_to_cpu(c->size);
    uint64_t first = 0, last = UINT64_MAX;

    if (!(flags & known) || (flags & ~known)) {
        vmgpu_fail(err, VMGPU_ERR_BAD_FIELD, flags);
        return VMGPU_CMD_FAILED;
    }
    if (!size) {
        if (!buffer_is_zero(&c->addr, sizeof(c->addr))) {
            vmgpu_fail(err, VMGPU_ERR_BAD_FIELD, addr);
            return VMGPU_CMD_FAILED;
        }
    } else {
        if (le32_to_cpu(c->addr.space) != VMGPU_SPACE_SYSTEM ||
            c->addr.vm) {
            vmgpu_fail(err, VMGPU_ERR_BAD_FIELD, addr);
            return VMGPU_CMD_FAILED;
        }
        if (size - 1 > UINT64_MAX - addr) {
            vmgpu_fail(err, VMGPU_ERR_RANGE, addr);
            return VMGPU_CMD_FAILED;
        }
        first = addr & ~VMGPU_CACHE_LINE_MASK;
        last = (addr + size - 1) & ~VMGPU_CACHE_LINE_MASK;
    }
    if (!*cursor) {
        trace_vmgpu_cache_flush(addr, size, flags, s->cache_mode,
                                cache->used);
    }
    if (s->cache_mode == VMGPU_CACHE_MODE_COHERENT || !cache->used) {
        /* Coherent mode keeps no lines: nothing to do. */
        *cursor = cache->num_lines;
    }
    while (*cursor < cache->num_lines && *budget) {
        VmgpuCacheLine *line = &cache->lines[*cursor];

        if (line->valid && line->tag >= first && line->tag <= last) {
            if ((flags & VMGPU_CACHE_FLAG_WRITEBACK) && line->dirty) {
                if (!vmgpu_cache_writeback(s, line, err)) {
                    return VMGPU_CMD_FAILED;
                }
                *budget -= MIN(*budget, VMGPU_CACHE_LINE_SIZE);
            }
            if (flags & VMGPU_CACHE_FLAG_INVALIDATE) {
                trace_vmgpu_cache_invalidate(line->tag, line->dirty);
                vmgpu_cache_unlink(cache, line);
            }
        }
        *budget -= MIN(*budget, VMGPU_CACHE_VISIT_COST);
        (*cursor)++;
    }
    if (*cursor < cache->num_lines) {
        return VMGPU_CMD_MORE;
    }
    trace_vmgpu_cache_flush_done(cache->used);
    return VMGPU_CMD_DONE;
}

/*
 * NOTIFY: write back the line of the bus page bus if it is dirty, then drop
 * it. A write back that fails leaves the line cached and dirty, as
 * CACHE_FLUSH does. Coherent mode keeps no lines: nothing to do.
 */
bool vmgpu_cache_release(VmgpuState *s, uint64_t bus, VmgpuMemError *err)
{
    VmgpuCache *c = &s->cache;
    uint64_t tag = bus & ~VMGPU_CACHE_LINE_MASK;
    VmgpuCacheLine *line = g_hash_table_lookup(c->map, &tag);

    if (!line) {
        return true;
    }
    if (line->dirty && !vmgpu_cache_writeback(s, line, err)) {
        return false;
    }
    trace_vmgpu_cache_invalidate(line->tag, false);
    vmgpu_cache_unlink(c, line);
    return true;
}

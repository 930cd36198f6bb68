/*
 * vmgpu: compression state and allocation notifications (contract v1.3;
 * owners v1.5).
 *
 * The device keeps a set of compressed system pages, keyed by bus page
 * address (after aperture and GPU page-table translation), at most
 * compress-pages of them. Each has an owner: the ASID of the VM whose
 * VIRTUAL address COMPRESS named, 0 for a physical address. An ASID other
 * than 0 owns at most COMPRESS_QUOTA pages, and FORGET drops all of an
 * ASID's pages, so that one address space can neither fill the set for the
 * others nor leave state behind it. A page past the quota or the capacity
 * stays raw (COMPRESS_SKIPPED counts it), which is never an error (v1.9).
 * A compressed page is stored encoded: each 32-bit little-endian word
 * XORed with VMGPU_COMPRESS_XOR. The
 * encoding is done at each page's memory access, below the copy engine
 * (whose swizzling moves plain bytes) and above the non-coherent cache
 * (whose lines hold the stored bytes):
 *
 * - a data access through VIRTUAL, in a VM other than the paging VM 0, sees
 *   a page its VM's ASID owns decoded and writes it encoded; any other page
 *   is raw to it, as to a physical access;
 * - the paging VM's data accesses are physical ones: the kernel's moves and
 *   clears go through it and handle the stored bytes;
 * - a physical data access (SYSTEM, GART) sees the stored bytes; a physical
 *   write, and a DISCARD through any space, drops the page's state once
 *   done: the page is raw from then on;
 * - FENCE, WAIT, ring fetches and table walks never look at the state.
 *
 * COMPRESS encodes pages in place and adds them to the set, DECOMPRESS
 * decodes the pages the command's ASID owns in place and removes them.
 * NOTIFY (ring 0, the paging VM) resolves pages about to leave device
 * access: EVICTION decodes them and writes back and drops their cache lines,
 * IOMMU_UNMAP writes back and drops the lines and forgets the state without
 * decoding. VRAM pages are skipped. Each page counts 4 KiB of the slice
 * budget, and the ring's cursor counts bytes, as for FILL.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "vmgpu.h"
#include "trace.h"

#define VMGPU_PAGE_MASK     ((uint64_t)VMGPU_PAGE_SIZE - 1)

void vmgpu_compress_init(VmgpuState *s)
{
    s->compressed = g_hash_table_new_full(g_int64_hash, g_int64_equal,
                                          g_free, NULL);
    s->compress_owned = g_hash_table_new(g_direct_hash, g_direct_equal);
    s->compress_quota = s->compress_pages;
}

void vmgpu_compress_exit(VmgpuState *s)
{
    if (s->compressed) {
        g_hash_table_destroy(s->compressed);
        s->compressed = NULL;
    }
    if (s->compress_owned) {
        g_hash_table_destroy(s->compress_owned);
        s->compress_owned = NULL;
    }
}

/*
 * RESET and device reset forget every page (their contents stay encoded)
 * and give every ASID the whole set again.
 */
void vmgpu_compress_reset(VmgpuState *s)
{
    if (s->compressed && g_hash_table_size(s->compressed)) {
        trace_vmgpu_compress_reset(g_hash_table_size(s->compressed));
        g_hash_table_remove_all(s->compressed);
    }
    if (s->compress_owned) {
        g_hash_table_remove_all(s->compress_owned);
    }
    s->compress_quota = s->compress_pages;
    s->compress_skipped = 0;
}

/* Whether page is compressed, and if so for which ASID. */
static bool vmgpu_compressed(VmgpuState *s, uint64_t page, uint32_t *owner)
{
    gpointer value;

    if (!g_hash_table_size(s->compressed) ||
        !g_hash_table_lookup_extended(s->compressed, &page, NULL, &value)) {
        return false;
    }
    *owner = GPOINTER_TO_UINT(value);
    return true;
}

/* Whether the bus page has compression state: no plain copy may touch it. */
bool vmgpu_compress_holds(VmgpuState *s, uint64_t page)
{
    uint32_t owner;

    return vmgpu_compressed(s, page, &owner);
}

static uint32_t vmgpu_compress_owned(VmgpuState *s, uint32_t asid)
{
    return GPOINTER_TO_UINT(g_hash_table_lookup(s->compress_owned,
                                                GUINT_TO_POINTER(asid)));
}

/* ASID 0 (physical addresses) has only the capacity as its limit. */
static void vmgpu_compress_count(VmgpuState *s, uint32_t asid, int delta)
{
    uint32_t pages;

    if (!asid) {
        return;
    }
    pages = vmgpu_compress_owned(s, asid) + delta;
    if (pages) {
        g_hash_table_insert(s->compress_owned, GUINT_TO_POINTER(asid),
                            GUINT_TO_POINTER(pages));
    } else {
        g_hash_table_remove(s->compress_owned, GUINT_TO_POINTER(asid));
    }
}

static void vmgpu_compress_add(VmgpuState *s, uint64_t page, uint32_t owner)
{
    uint64_t *key = g_new(uint64_t, 1);

    *key = page;
    g_hash_table_insert(s->compressed, key, GUINT_TO_POINTER(owner));
    vmgpu_compress_count(s, owner, 1);
}

static void vmgpu_compress_drop(VmgpuState *s, uint64_t page)
{
    uint32_t owner;

    if (vmgpu_compressed(s, page, &owner)) {
        g_hash_table_remove(s->compressed, &page);
        vmgpu_compress_count(s, owner, -1);
    }
}

static gboolean vmgpu_compress_owned_by(gpointer key, gpointer value,
                                        gpointer asid)
{
    return value == asid;
}

/*
 * FORGET: drop every page asid owns without decoding. Bounded by the
 * capacity of the set, as a RESET is; an ASID that owns no page (most
 * address spaces the driver retires) walks nothing.
 */
void vmgpu_compress_forget(VmgpuState *s, uint32_t asid)
{
    guint pages = 0;

    if (!asid || vmgpu_compress_owned(s, asid)) {
        pages = g_hash_table_foreach_remove(s->compressed,
                                            vmgpu_compress_owned_by,
                                            GUINT_TO_POINTER(asid));
        g_hash_table_remove(s->compress_owned, GUINT_TO_POINTER(asid));
    }
    trace_vmgpu_compress_forget(asid, pages);
}

/* Encode or decode (one XOR) len bytes that sit at page offset off. */
static void vmgpu_compress_xor(uint8_t *p, uint32_t off, uint32_t len)
{
    uint32_t i;

    for (i = 0; i < len; i++) {
        p[i] ^= (uint8_t)(VMGPU_COMPRESS_XOR >> (8 * ((off + i) & 3)));
    }
}

/*
 * A data access of len bytes at bus address bus, within one page (see
 * vmgpu_mem_page_rw): decoded through VIRTUAL in a VM whose ASID (asid)
 * owns the page, raw otherwise, and a raw write that went through drops
 * the page's state.
 */
bool vmgpu_compress_rw(VmgpuState *s, uint64_t bus, void *buf, uint32_t len,
                       bool write, VmgpuAccess access, uint32_t asid,
                       VmgpuMemError *err)
{
    uint64_t page = bus & ~VMGPU_PAGE_MASK;
    uint32_t off = bus & VMGPU_PAGE_MASK;
    uint8_t stored[VMGPU_PAGE_SIZE];
    uint32_t owner;

    if (!vmgpu_compressed(s, page, &owner)) {
        return vmgpu_mem_bus_rw(s, bus, buf, len, write, err);
    }
    if (len > sizeof(stored) - off) {
        return vmgpu_fail(err, VMGPU_ERR_BAD_FIELD, bus);
    }
    if (access == VMGPU_ACCESS_DECODED && owner == asid) {
        if (!write) {
            if (!vmgpu_mem_bus_rw(s, bus, buf, len, false, err)) {
                return false;
            }
            vmgpu_compress_xor(buf, off, len);
            return true;
        }
        memcpy(stored, buf, len);
        vmgpu_compress_xor(stored, off, len);
        return vmgpu_mem_bus_rw(s, bus, stored, len, true, err);
    }
    if (!vmgpu_mem_bus_rw(s, bus, buf, len, write, err)) {
        return false;
    }
    if (write) {
        trace_vmgpu_compress_write_drops(page);
        vmgpu_compress_drop(s, page);
    }
    return true;
}

/*
 * Encode or decode a whole page in place, through the data path (the cache
 * in non-coherent mode). Nothing changes unless both accesses work.
 */
static bool vmgpu_compress_recode(VmgpuState *s, uint64_t page,
                                  VmgpuMemError *err)
{
    uint8_t data[VMGPU_PAGE_SIZE];

    if (!vmgpu_mem_bus_rw(s, page, data, sizeof(data), false, err)) {
        return false;
    }
    vmgpu_compress_xor(data, 0, sizeof(data));
    return vmgpu_mem_bus_rw(s, page, data, sizeof(data), true, err);
}

/* NOTIFY on one system page: EVICTION first, then IOMMU_UNMAP. */
static bool vmgpu_notify_page(VmgpuState *s, uint16_t flags, uint64_t page,
                              VmgpuMemError *err)
{
    uint32_t owner;
    bool compressed = vmgpu_compressed(s, page, &owner);

    if (flags & VMGPU_NOTIFY_FLAG_EVICTION) {
        if (compressed) {
            if (!vmgpu_compress_recode(s, page, err)) {
                return false;
            }
            vmgpu_compress_drop(s, page);
        }
        if (!vmgpu_cache_release(s, page, err)) {
            return false;
        }
        trace_vmgpu_notify_eviction(page, compressed);
        compressed = false;
    }
    if (flags & VMGPU_NOTIFY_FLAG_IOMMU_UNMAP) {
        if (!vmgpu_cache_release(s, page, err)) {
            return false;
        }
        vmgpu_compress_drop(s, page);
        trace_vmgpu_notify_iommu_unmap(page, compressed);
    }
    return true;
}

/*
 * One system page of COMPRESS, DECOMPRESS or NOTIFY; addr names it, asid
 * is the owner the command acts for. NOTIFY acts on every owner's pages.
 */
static bool vmgpu_compress_page(VmgpuState *s, uint16_t opcode,
                                uint16_t flags, uint64_t addr, uint64_t page,
                                uint32_t asid, VmgpuMemError *err)
{
    uint32_t owner;
    bool compressed = vmgpu_compressed(s, page, &owner);

    switch (opcode) {
    case VMGPU_OP_COMPRESS:
        /* Compressed for another ASID, it stays theirs (raw to this one). */
        if (compressed) {
            return true;
        }
        /*
         * Compression is the device's to give (v1.9): a page past the
         * ASID's quota or the set's capacity stays raw, which its owner's
         * view cannot tell from compressed, so nobody's job fails for
         * what other address spaces hold.
         */
        if (asid && vmgpu_compress_owned(s, asid) >= s->compress_quota) {
            trace_vmgpu_compress_quota(page, asid, s->compress_quota);
            s->compress_skipped++;
            return true;
        }
        if (g_hash_table_size(s->compressed) >= s->compress_pages) {
            trace_vmgpu_compress_full(page, s->compress_pages);
            s->compress_skipped++;
            return true;
        }
        if (!vmgpu_compress_recode(s, page, err)) {
            return false;
        }
        vmgpu_compress_add(s, page, asid);
        trace_vmgpu_compress_page(page, true);
        return true;
    case VMGPU_OP_DECOMPRESS:
        if (!compressed || owner != asid) {
            return true;
        }
        if (!vmgpu_compress_recode(s, page, err)) {
            return false;
        }
        vmgpu_compress_drop(s, page);
        trace_vmgpu_compress_page(page, false);
        return true;
    }
    return vmgpu_notify_page(s, flags, page, err);
}

static const char *vmgpu_compress_name(uint16_t opcode)
{
    switch (opcode) {
    case VMGPU_OP_COMPRESS:
        return "COMPRESS";
    case VMGPU_OP_DECOMPRESS:
        return "DECOMPRESS";
    }
    return "NOTIFY";
}

/* The fields of COMPRESS, DECOMPRESS and NOTIFY; logs what is wrong. */
static bool vmgpu_compress_check(VmgpuState *s,
                                 const struct vmgpu_cmd_range *c,
                                 VmgpuMemError *err)
{
    uint16_t opcode = le16_to_cpu(c->hdr.opcode);
    uint16_t flags = le16_to_cpu(c->hdr.flags);
    uint16_t known = VMGPU_NOTIFY_FLAG_EVICTION | VMGPU_NOTIFY_FLAG_IOMMU_UNMAP;
    uint32_t space = le32_to_cpu(c->addr.space);
    uint64_t addr = le64_to_cpu(c->addr.addr);
    uint64_t size = le64_to_cpu(c->size);
    enum vmgpu_error code = VMGPU_ERR_BAD_FIELD;
    const char *why = NULL;
    uint64_t bad = addr;

    if (!vmgpu_mem_check_addr(&c->addr, err)) {
        why = "unknown space, or a VM outside VIRTUAL";
        bad = space;
    } else if (opcode != VMGPU_OP_NOTIFY) {
        if (flags) {
            why = "flags must be 0";
            bad = flags;
        }
    } else if (!flags || (flags & ~known)) {
        why = "flags must be EVICTION and/or IOMMU_UNMAP";
        bad = flags;
    } else if ((flags & VMGPU_NOTIFY_FLAG_IOMMU_UNMAP) && !s->iommu_dma) {
        why = "IOMMU_UNMAP on a device whose DMA has no IOMMU "
              "(no CAP_IOMMU_DMA)";
        bad = flags;
    } else if (space != VMGPU_SPACE_VIRTUAL ||
               le32_to_cpu(c->addr.vm) != VMGPU_VM_PAGING) {
        why = "not a VIRTUAL address of the paging VM 0";
    }
    if (why) {
        /* reported below */
    } else if ((addr | size) & VMGPU_PAGE_MASK) {
        why = "address or size not 4 KiB aligned";
    } else if (!size) {
        why = "size is 0";
    } else if (size - 1 > UINT64_MAX - addr) {
        why = "range wraps past 2^64";
        code = VMGPU_ERR_RANGE;
    }
    if (why) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "vmgpu: %s space %u addr 0x%" PRIx64 " size 0x%" PRIx64
                      " flags 0x%x: %s\n", vmgpu_compress_name(opcode), space,
                      addr, size, flags, why);
        return vmgpu_fail(err, code, bad);
    }
    return true;
}

/*
 * COMPRESS, DECOMPRESS or NOTIFY, or the next slice of it: *done is the
 * bytes of the range already done. A failure leaves the pages before it
 * done; the failing page is as it was, except that a NOTIFY EVICTION whose
 * write back fails has decoded the page (in its cache line) already, which
 * a resubmitted NOTIFY finds decoded and writes back again.
 */
VmgpuCmdStatus vmgpu_compress_exec(VmgpuState *s, unsigned ring,
                                   const struct vmgpu_cmd_range *c,
                                   uint64_t *done, uint64_t *budget,
                                   VmgpuMemError *err)
{
    uint16_t opcode = le16_to_cpu(c->hdr.opcode);
    uint16_t flags = le16_to_cpu(c->hdr.flags);
    uint64_t addr = le64_to_cpu(c->addr.addr);
    uint64_t size = le64_to_cpu(c->size);
    /* Every command here may rewrite its pages but IOMMU_UNMAP alone. */
    bool rewrite = opcode != VMGPU_OP_NOTIFY ||
                   (flags & VMGPU_NOTIFY_FLAG_EVICTION);
    uint32_t asid = 0;
    VmgpuXlate xlate = { 0 };

    if (!vmgpu_compress_check(s, c, err)) {
        return VMGPU_CMD_FAILED;
    }
    if (le32_to_cpu(c->addr.space) == VMGPU_SPACE_VIRTUAL) {
        asid = s->vms[le32_to_cpu(c->addr.vm)].asid;
    }
    if (!*done) {
        trace_vmgpu_compress_cmd(ring, vmgpu_compress_name(opcode),
                                 le32_to_cpu(c->addr.space),
                                 le32_to_cpu(c->addr.vm), addr, size, flags);
    }
    while (*done < size && *budget) {
        uint64_t bus;
        bool system;

        if (!vmgpu_run_resolve(s, &xlate, &c->addr, *done, rewrite, &system,
                               &bus, err)) {
            return VMGPU_CMD_FAILED;
        }
        if (system &&
            !vmgpu_compress_page(s, opcode, flags, addr + *done,
                                 bus & ~VMGPU_PAGE_MASK, asid, err)) {
            return VMGPU_CMD_FAILED;
        }
        *done += VMGPU_PAGE_SIZE;
        *budget -= MIN(*budget, VMGPU_PAGE_SIZE);
    }
    return *done == size ? VMGPU_CMD_DONE : VMGPU_CMD_MORE;
}

/*
 * vmgpu: FILL and TRANSFER, a slice at a time, by runs (vmgpu-run.c) where
 * memory allows, else a page at a time.
 *
 * A copy's size is 64-bit, so one command may be far too long to run in
 * one go on QEMU's main loop. Each call goes on from the ring's cursor
 * (bytes of the command already done) and stops once it has spent the
 * slice's byte budget; the engine calls again in a later bottom half. Work
 * is done in runs of pages that all translated, queued for the copy
 * thread (vmgpu-offload.c), or, where memory needs more than a plain
 * copy, in chunks that never cross a 4 KiB page of the source or the
 * destination. A slice ends only between them, so the per-page rules of
 * vmgpu-mem.c hold across slices too.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "vmgpu.h"

/* Charge a chunk to the slice; the last chunk may overrun what is left. */
static void vmgpu_copy_charge(uint64_t *budget, uint64_t chunk)
{
    *budget -= MIN(*budget, chunk);
}

/* Bytes from offset done up to the next page boundary of addr + done. */
static uint32_t vmgpu_copy_page_left(uint64_t addr, uint64_t done)
{
    return VMGPU_PAGE_SIZE - ((addr + done) & (VMGPU_PAGE_SIZE - 1));
}

/*
 * Bytes a run from dst + done may take: what is left, or about the slice's
 * budget (at least to the next page of dst) ending at a page of dst, so
 * that a slice never ends inside a page it has begun to write.
 */
static uint64_t vmgpu_copy_want(uint64_t dst, uint64_t done, uint64_t left,
                                uint64_t budget)
{
    uint64_t want = MIN(left, MAX(budget, VMGPU_PAGE_SIZE));
    uint64_t end = dst + done + want;

    if (want == left) {
        return want;
    }
    want -= end & (VMGPU_PAGE_SIZE - 1);
    return want ? want : vmgpu_copy_page_left(dst, done);
}

/*
 * n bytes (a multiple of 4) of the little-endian 32-bit pattern. Only
 * written: p may be guest memory the CPU writes meanwhile, whose bytes a
 * fill must not copy on.
 */
void vmgpu_copy_pattern(uint8_t *p, uint64_t n, uint32_t pattern)
{
    uint32_t block[256];
    uint64_t filled, chunk;
    unsigned i;

    if (pattern == (pattern & 0xff) * 0x01010101u) {
        memset(p, pattern & 0xff, n);
        return;
    }
    for (i = 0; i < ARRAY_SIZE(block); i++) {
        block[i] = cpu_to_le32(pattern);
    }
    for (filled = 0; filled < n; filled += chunk) {
        chunk = MIN(sizeof(block), n - filled);
        memcpy(p + filled, block, chunk);
    }
}

/*
 * FILL, or DISCARD (discard: the pattern is stored raw, see vmgpu-mem.c);
 * uncached: FILL_FLAG_COHERENT. Runs where it can (vmgpu-run.c), a page at
 * a time where it cannot.
 */
VmgpuCmdStatus vmgpu_copy_fill(VmgpuState *s, VmgpuRing *ring,
                               const struct vmgpu_addr *dst, uint64_t size,
                               uint32_t pattern, bool discard, bool uncached,
                               uint64_t *budget, VmgpuMemError *err)
{
    uint64_t *done = &ring->cmd_done;
    uint64_t addr = le64_to_cpu(dst->addr);
    VmgpuAccess access = uncached ? VMGPU_ACCESS_UNCACHED :
                                    vmgpu_mem_data_access(dst, discard);
    uint32_t page[VMGPU_PAGE_SIZE / 4];
    VmgpuXlate xlate = { 0 };
    VmgpuRun run;

    if (size % 4 || addr % 4) {
        return vmgpu_cmd_fail(err, VMGPU_ERR_BAD_FIELD, addr);
    }
    vmgpu_copy_pattern((uint8_t *)page, sizeof(page), pattern);
    while (*done < size && *budget && vmgpu_offload_room(s)) {
        uint32_t chunk = MIN(size - *done, vmgpu_copy_page_left(addr, *done));
        uint64_t want = vmgpu_copy_want(addr, *done, size - *done,
                                        MIN(*budget, vmgpu_offload_room(s)));

        if (vmgpu_run_map(s, &xlate, dst, *done, want, true, access, &run)) {
            /* Whole words: every run boundary is 4-aligned, as addr is. */
            uint64_t n = run.len & ~3ull;

            if (n) {
                vmgpu_offload_add(s, ring, &run, NULL, n);
                *done += n;
                continue;
            }
            vmgpu_run_unmap(s, &run, 0, true);
        }
        /* The page path goes after the runs before it. */
        if (vmgpu_offload_flush(s, pattern, false, budget)) {
            return VMGPU_CMD_MORE;
        }
        if (uncached ? !vmgpu_mem_uncached_rw(s, dst, *done, page, chunk, true,
                                              err) :
                       !vmgpu_mem_data_rw(s, dst, *done, page, chunk, true,
                                          discard, err)) {
            return VMGPU_CMD_FAILED;
        }
        *done += chunk;
        vmgpu_copy_charge(budget, chunk);
    }
    if (vmgpu_offload_flush(s, pattern, *done == size, budget)) {
        return VMGPU_CMD_MORE;
    }
    return *done == size ? VMGPU_CMD_DONE : VMGPU_CMD_MORE;
}

static void vmgpu_swizzle_page(uint8_t *out, const uint8_t *in, bool swizzle)
{
    unsigned block = 1u << VMGPU_SWIZZLE_BLOCK_SHIFT;
    unsigned off;

    for (off = 0; off < VMGPU_PAGE_SIZE; off += block) {
        unsigned other = vmgpu_swizzle_offset(off);

        memcpy(swizzle ? out + other : out + off,
               swizzle ? in + off : in + other, block);
    }
}

/* Queue one run of a TRANSFER, if both sides have a run. */
static bool vmgpu_copy_run(VmgpuState *s, VmgpuRing *ring,
                           const struct vmgpu_cmd_transfer *c,
                           VmgpuXlate *src_xlate, VmgpuXlate *dst_xlate,
                           uint64_t want)
{
    VmgpuRun src, dst;
    uint64_t n;

    if (!vmgpu_run_map(s, src_xlate, &c->src, ring->cmd_done, want, false,
                       vmgpu_mem_data_access(&c->src, false), &src)) {
        return false;
    }
    if (!vmgpu_run_map(s, dst_xlate, &c->dst, ring->cmd_done, src.len, true,
                       vmgpu_mem_data_access(&c->dst, false), &dst)) {
        vmgpu_run_unmap(s, &src, 0, false);
        return false;
    }
    n = MIN(src.len, dst.len);
    vmgpu_offload_add(s, ring, &dst, &src, n);
    ring->cmd_done += n;
    return true;
}

VmgpuCmdStatus vmgpu_copy_transfer(VmgpuState *s, VmgpuRing *ring,
                                   const struct vmgpu_cmd_transfer *c,
                                   uint64_t *budget, VmgpuMemError *err)
{
    uint64_t *done = &ring->cmd_done;
    uint16_t flags = le16_to_cpu(c->hdr.flags);
    uint64_t size = le64_to_cpu(c->size);
    uint64_t src = le64_to_cpu(c->src.addr);
    uint64_t dst = le64_to_cpu(c->dst.addr);
    bool swizzle = flags & VMGPU_TRANSFER_FLAG_SWIZZLE;
    bool unswizzle = flags & VMGPU_TRANSFER_FLAG_UNSWIZZLE;
    uint16_t known = VMGPU_TRANSFER_FLAG_SWIZZLE | VMGPU_TRANSFER_FLAG_UNSWIZZLE;
    uint8_t buf[VMGPU_PAGE_SIZE], tiled[VMGPU_PAGE_SIZE];
    VmgpuXlate src_xlate = { 0 }, dst_xlate = { 0 };
    /* Once a side needs the page path, the rest of the slice takes it. */
    bool runs = !swizzle && !unswizzle;

    if ((flags & ~known) || (swizzle && unswizzle) ||
        ((swizzle || unswizzle) &&
         ((src | dst | size) & (VMGPU_PAGE_SIZE - 1)))) {
        return vmgpu_cmd_fail(err, VMGPU_ERR_BAD_FIELD, flags);
    }
    while (*done < size && *budget && vmgpu_offload_room(s)) {
        uint32_t chunk = MIN(size - *done, vmgpu_copy_page_left(src, *done));

        if (runs) {
            runs = vmgpu_copy_run(s, ring, c, &src_xlate, &dst_xlate,
                                  vmgpu_copy_want(dst, *done, size - *done,
                                                  MIN(*budget,
                                                      vmgpu_offload_room(s))));
            if (runs) {
                continue;
            }
        }
        /* The page path goes after the runs before it. */
        if (vmgpu_offload_flush(s, 0, false, budget)) {
            return VMGPU_CMD_MORE;
        }
        chunk = MIN(chunk, vmgpu_copy_page_left(dst, *done));
        if (!vmgpu_mem_data_rw(s, &c->src, *done, buf, chunk, false, false,
                               err)) {
            return VMGPU_CMD_FAILED;
        }
        if (swizzle || unswizzle) {
            vmgpu_swizzle_page(tiled, buf, swizzle);
            memcpy(buf, tiled, sizeof(buf));
        }
        if (!vmgpu_mem_data_rw(s, &c->dst, *done, buf, chunk, true, false,
                               err)) {
            return VMGPU_CMD_FAILED;
        }
        *done += chunk;
        vmgpu_copy_charge(budget, chunk);
    }
    if (vmgpu_offload_flush(s, 0, *done == size, budget)) {
        return VMGPU_CMD_MORE;
    }
    return *done == size ? VMGPU_CMD_DONE : VMGPU_CMD_MORE;
}

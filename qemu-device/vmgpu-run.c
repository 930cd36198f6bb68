/*
 * vmgpu: copies by run.
 *
 * FILL and TRANSFER move whole runs of memory with one memset or memcpy
 * where nothing but plain bytes lies in between: VRAM, and RAM the PCI
 * address space maps straight through (the IOMMU's translation checked),
 * in coherent mode, holding no compressed page. A run is as long as
 * consecutive pages stay contiguous: a VIRTUAL or GART range costs one
 * table read per window of entries instead of a walk per page.
 *
 * The windows (VmgpuXlate) live for one slice of one command. A table
 * write made before a slice starts is seen by all of it; the contract
 * says so. COMPRESS, DECOMPRESS and NOTIFY find their pages through them
 * too (vmgpu_run_resolve()).
 *
 * Anything else takes vmgpu-mem.c's page-at-a-time path, which reports
 * the error if there is one: a run ends before a page that would fault,
 * so a fault still never half-writes a page.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/rcu.h"
#include "system/dma.h"
#include "vmgpu.h"
#include "trace.h"

#define VMGPU_IN_PAGE(addr) ((addr) & (VMGPU_PAGE_SIZE - 1))

/* va's leaf entry, from the window, which a miss refills from va on. */
static bool vmgpu_run_leaf(VmgpuState *s, VmgpuXlate *x, uint32_t vm,
                           uint64_t va, uint64_t *pte)
{
    uint64_t page_va = va - VMGPU_IN_PAGE(va);
    VmgpuMemError err;          /* the page path reports it */
    uint32_t space;
    uint64_t table;
    unsigned index, count;

    if (x->leaf_count && x->vm == vm && page_va >= x->leaf_va &&
        (page_va - x->leaf_va) / VMGPU_PAGE_SIZE < x->leaf_count) {
        *pte = x->leaf[(page_va - x->leaf_va) / VMGPU_PAGE_SIZE];
        return true;
    }
    x->leaf_count = 0;
    if (!vmgpu_vm_leaf_table(s, vm, page_va, &space, &table, &err)) {
        return false;
    }
    index = vmgpu_vm_index(page_va, 0);
    count = MIN(VMGPU_RUN_WINDOW, VMGPU_PT_ENTRIES - index);
    if (!vmgpu_mem_table_read(s, space, table, index, x->leaf, count, &err)) {
        return false;
    }
    x->vm = vm;
    x->leaf_va = page_va;
    x->leaf_count = count;
    *pte = x->leaf[0];
    return true;
}

/* The bus address of an aperture byte, through the GART window. */
static bool vmgpu_run_gart(VmgpuState *s, VmgpuXlate *x, uint64_t offset,
                           uint64_t *bus)
{
    uint64_t index = offset >> VMGPU_PAGE_SHIFT;
    uint64_t pte;
    unsigned i;

    if (index >= s->gart_num_pages) {
        return false;
    }
    if (!x->gart_count || index < x->gart_index ||
        index - x->gart_index >= x->gart_count) {
        x->gart_count = 0;
        x->gart_index = index;
        i = MIN(VMGPU_RUN_WINDOW, s->gart_num_pages - index);
        if (vmgpu_dma_rw(s, s->gart_base + index * sizeof(pte), x->gart,
                         i * sizeof(pte), false) != MEMTX_OK) {
            return false;
        }
        x->gart_count = i;
        for (i = 0; i < x->gart_count; i++) {
            x->gart[i] = le64_to_cpu(x->gart[i]);
        }
    }
    pte = x->gart[index - x->gart_index];
    if (!(pte & VMGPU_GART_PTE_VALID)) {
        return false;
    }
    *bus = (pte & VMGPU_GART_PTE_ADDR_MASK) + VMGPU_IN_PAGE(offset);
    return true;
}

/*
 * Where the byte at offset of a lives: a VRAM offset or a bus address.
 * False when the page path has to decide (a fault, a bad field).
 */
static bool vmgpu_run_locate(VmgpuState *s, VmgpuXlate *x,
                             const struct vmgpu_addr *a, uint64_t offset,
                             bool write, uint32_t *space, uint64_t *addr)
{
    uint64_t pte, page;

    *space = le32_to_cpu(a->space);
    *addr = le64_to_cpu(a->addr) + offset;
    if (*space == VMGPU_SPACE_VIRTUAL) {
        if (!vmgpu_run_leaf(s, x, le32_to_cpu(a->vm), *addr, &pte) ||
            !vmgpu_vm_leaf_page(pte, write, space, &page)) {
            return false;
        }
        *addr = page + VMGPU_IN_PAGE(*addr);
    }
    if (*space == VMGPU_SPACE_GART) {
        *space = VMGPU_SPACE_SYSTEM;
        return vmgpu_run_gart(s, x, *addr, addr);
    }
    if (*space == VMGPU_SPACE_VRAM) {
        return *addr < s->vram_size;
    }
    return *space == VMGPU_SPACE_SYSTEM;
}

/*
 * Where the page at offset of a lives, as vmgpu_mem_resolve() says, but
 * through the windows; what they cannot translate goes to
 * vmgpu_mem_resolve(), which reports the fault.
 */
bool vmgpu_run_resolve(VmgpuState *s, VmgpuXlate *x, const struct vmgpu_addr *a,
                       uint64_t offset, bool write, bool *system,
                       uint64_t *bus, VmgpuMemError *err)
{
    uint32_t space;
    uint64_t addr;

    if (vmgpu_run_locate(s, x, a, offset, write, &space, &addr)) {
        *system = space == VMGPU_SPACE_SYSTEM;
        *bus = addr;
        return true;
    }
    return vmgpu_mem_resolve(s, a, offset, write, system, bus, err);
}

/* A system page a plain copy may touch: no cached line, no compression. */
static bool vmgpu_run_plain(VmgpuState *s, uint64_t bus, VmgpuAccess access)
{
    return access == VMGPU_ACCESS_COHERENT ||
           access == VMGPU_ACCESS_UNCACHED ||
           !vmgpu_compress_holds(s, bus - VMGPU_IN_PAGE(bus));
}

/* Whether the IOMMU lets the device reach RAM at bus, for at least *len. */
static bool vmgpu_run_direct(VmgpuState *s, uint64_t bus, uint64_t *len,
                             bool write)
{
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(s));
    hwaddr xlat, l = *len;
    MemoryRegion *mr;

    RCU_READ_LOCK_GUARD();
    mr = address_space_translate(as, bus, &xlat, &l, write,
                                 MEMTXATTRS_UNSPECIFIED);
    /*
     * Guest RAM only. The device's own BARs: the page path refuses them
     * (ERR_DMA). Another device's memory (a peer's BAR) is copied a page
     * at a time under the BQL: its owner may free what backs it while the
     * copy thread would write there, which a mapping does not prevent.
     */
    if (object_dynamic_cast(memory_region_owner(mr), TYPE_DEVICE) ||
        !memory_access_is_direct(mr, write, MEMTXATTRS_UNSPECIFIED)) {
        return false;
    }
    *len = MIN(*len, l);
    return true;
}

/*
 * Map the run at offset of a, at most len bytes. False when its first page
 * needs the page path: the caller then does that page the slow way.
 */
bool vmgpu_run_map(VmgpuState *s, VmgpuXlate *x, const struct vmgpu_addr *a,
                   uint64_t offset, uint64_t len, bool write,
                   VmgpuAccess access, VmgpuRun *run)
{
    uint32_t space, next_space;
    uint64_t addr, next, n;
    dma_addr_t plen;

    if (!len || !vmgpu_run_locate(s, x, a, offset, write, &space, &addr)) {
        return false;
    }
    if (space == VMGPU_SPACE_SYSTEM &&
        (s->cache_mode == VMGPU_CACHE_MODE_NONCOHERENT || s->cache.used ||
         !vmgpu_run_plain(s, addr, access))) {
        return false;
    }
    n = MIN(len, VMGPU_PAGE_SIZE - VMGPU_IN_PAGE(addr));
    while (n < len && vmgpu_run_locate(s, x, a, offset + n, write,
                                       &next_space, &next) &&
           next_space == space && next == addr + n &&
           (space == VMGPU_SPACE_VRAM || vmgpu_run_plain(s, next, access))) {
        n += MIN(len - n, VMGPU_PAGE_SIZE);
    }
    if (space == VMGPU_SPACE_VRAM) {
        n = MIN(n, s->vram_size - addr);
        *run = (VmgpuRun) {
            .host = s->vram_ptr + addr, .len = n, .vram_offset = addr,
        };
        trace_vmgpu_run(space, addr, n, write);
        return true;
    }
    if (!vmgpu_run_direct(s, addr, &n, write)) {
        return false;
    }
    plen = n;
    run->host = dma_memory_map(pci_get_address_space(PCI_DEVICE(s)), addr,
                               &plen, write ? DMA_DIRECTION_FROM_DEVICE :
                                              DMA_DIRECTION_TO_DEVICE,
                               MEMTXATTRS_UNSPECIFIED);
    if (!run->host) {
        return false;
    }
    run->len = plen;
    run->dma = true;
    trace_vmgpu_run(space, addr, plen, write);
    return true;
}

/* Done with a run, used bytes of it from its start. */
void vmgpu_run_unmap(VmgpuState *s, VmgpuRun *run, uint64_t used, bool write)
{
    if (run->dma) {
        dma_memory_unmap(pci_get_address_space(PCI_DEVICE(s)), run->host,
                         run->len, write ? DMA_DIRECTION_FROM_DEVICE :
                                           DMA_DIRECTION_TO_DEVICE, used);
    } else if (write) {
        /* For the display's redraw (vmgpu-scanout.c). */
        memory_region_set_dirty(&s->vram, run->vram_offset, used);
    }
}

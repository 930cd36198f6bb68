/*
 * vmgpu: how commands reach memory.
 *
 * A command names memory as (space, address). VRAM is device memory; the
 * aperture (GART) segment and system addresses end in DMA through the PCI
 * address space, so the emulated IOMMU translates and checks every access.
 * System memory is touched one page at a time and nothing is written
 * unless the read before it succeeded, so a fault never half-writes a page
 * and never runs past a bad one. VIRTUAL addresses are translated a page
 * at a time through the VM's page table (FillVirtual, TransferVirtual).
 *
 * In non-coherent mode the engine's data accesses (vmgpu_mem_data_rw: FILL,
 * DISCARD, TRANSFER, and the page rewrites of COMPRESS, DECOMPRESS and
 * NOTIFY) that end at a bus address go through the device cache
 * (vmgpu-cache.c); everything else, vmgpu_mem_rw and the table walks, stays
 * coherent. Data accesses to system memory also meet the compression state
 * (vmgpu-compress.c): a VIRTUAL one (but in the paging VM) decodes a
 * compressed page, a physical
 * write drops its state.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "system/dma.h"
#include "vmgpu.h"
#include "trace.h"

/*
 * Whether an access of len bytes at bus address bus reaches one of this
 * device's own BARs. VRAM is addressed as VRAM, never through the BAR;
 * and the host aperture's windows open lazily, so such an access would
 * succeed or fail by timing, and a copy could land after the table read
 * that moved its window. It is refused instead, always. Page by page:
 * a translation ends at a RAM region's end only, so one that starts in
 * a hole or another device's registers may run into a BAR. With an IOMMU
 * this translates once more than the access itself does, which repeats
 * the IOMMU's fault report for an address it refuses.
 */
static bool vmgpu_dma_reaches_self(VmgpuState *s, dma_addr_t bus,
                                   dma_addr_t len, bool write)
{
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(s));
    MemoryRegion *mr;
    hwaddr xlat, l;

    RCU_READ_LOCK_GUARD();
    while (len) {
        l = MIN(len, VMGPU_PAGE_SIZE - (bus & (VMGPU_PAGE_SIZE - 1)));
        mr = address_space_translate(as, bus, &xlat, &l, write,
                                     MEMTXATTRS_UNSPECIFIED);
        if (!l || memory_region_owner(mr) == OBJECT(s)) {
            qemu_log_mask(LOG_GUEST_ERROR, "vmgpu: DMA at 0x%" PRIx64
                          " reaches the device's own BAR\n", (uint64_t)bus);
            return true;
        }
        bus += l;
        len -= l;
    }
    return false;
}

/* Device DMA of system memory: never into the device itself. */
MemTxResult vmgpu_dma_rw(VmgpuState *s, dma_addr_t bus, void *buf,
                         dma_addr_t len, bool write)
{
    if (vmgpu_dma_reaches_self(s, bus, len, write)) {
        return MEMTX_ACCESS_ERROR;
    }
    return pci_dma_rw(PCI_DEVICE(s), bus, buf, len,
                      write ? DMA_DIRECTION_FROM_DEVICE :
                              DMA_DIRECTION_TO_DEVICE,
                      MEMTXATTRS_UNSPECIFIED);
}

/* Bus address of one aperture byte, through the GART entry of its page. */
static bool vmgpu_gart_translate(VmgpuState *s, uint64_t offset,
                                 dma_addr_t *bus, VmgpuMemError *err)
{
    uint64_t index = offset >> VMGPU_PAGE_SHIFT;
    uint64_t pte;

    if (index >= s->gart_num_pages) {
        return vmgpu_fail(err, VMGPU_ERR_RANGE, offset);
    }
    if (vmgpu_dma_rw(s, s->gart_base + index * sizeof(pte), &pte, sizeof(pte),
                     false) != MEMTX_OK) {
        return vmgpu_fail(err, VMGPU_ERR_DMA,
                          s->gart_base + index * sizeof(pte));
    }
    pte = le64_to_cpu(pte);
    if (!(pte & VMGPU_GART_PTE_VALID)) {
        return vmgpu_fail(err, VMGPU_ERR_GART_FAULT, offset);
    }
    *bus = (pte & VMGPU_GART_PTE_ADDR_MASK) + (offset & (VMGPU_PAGE_SIZE - 1));
    return true;
}

static bool vmgpu_mem_page_rw(VmgpuState *s, uint32_t space, uint64_t addr,
                              void *buf, uint32_t len, bool write,
                              VmgpuAccess access, uint32_t asid,
                              VmgpuMemError *err);

/*
 * Walk VM vm's 4-level page table for va down to its leaf table: every
 * level's entry says in which space the next table lives.
 */
bool vmgpu_vm_leaf_table(VmgpuState *s, uint32_t vm, uint64_t va,
                         uint32_t *space, uint64_t *table, VmgpuMemError *err)
{
    int level;

    if (vm >= VMGPU_MAX_VMS || !s->vms[vm].enabled) {
        return vmgpu_fail(err, VMGPU_ERR_VM_FAULT, va);
    }
    if (va >> VMGPU_VA_BITS) {
        return vmgpu_fail(err, VMGPU_ERR_RANGE, va);
    }
    *space = s->vms[vm].root_space;
    *table = s->vms[vm].root;
    for (level = VMGPU_PT_LEVELS - 1; level > 0; level--) {
        uint64_t pte;

        if (!vmgpu_mem_table_read(s, *space, *table, vmgpu_vm_index(va, level),
                                  &pte, 1, err)) {
            return false;
        }
        if (!(pte & VMGPU_PTE_VALID)) {
            return vmgpu_fail(err, VMGPU_ERR_VM_FAULT, va);
        }
        *space = (pte & VMGPU_PTE_SPACE_MASK) >> VMGPU_PTE_SPACE_SHIFT;
        *table = pte & VMGPU_PTE_ADDR_MASK;
        if (*space == VMGPU_SPACE_VIRTUAL) {
            return vmgpu_fail(err, VMGPU_ERR_VM_FAULT, va);
        }
    }
    return true;
}

/*
 * The page a leaf entry maps, if it is valid, allows the access and names
 * a physical space.
 */
bool vmgpu_vm_leaf_page(uint64_t pte, bool write, uint32_t *space,
                        uint64_t *page)
{
    if (!(pte & VMGPU_PTE_VALID) || (write && !(pte & VMGPU_PTE_WRITE))) {
        return false;
    }
    *space = (pte & VMGPU_PTE_SPACE_MASK) >> VMGPU_PTE_SPACE_SHIFT;
    *page = pte & VMGPU_PTE_ADDR_MASK;
    return *space != VMGPU_SPACE_VIRTUAL;
}

/* Where va of VM vm lives: a walk, then its leaf entry. */
static bool vmgpu_vm_translate(VmgpuState *s, uint32_t vm, uint64_t va,
                               bool write, uint32_t *space, uint64_t *addr,
                               VmgpuMemError *err)
{
    uint32_t table_space;
    uint64_t table, pte, page;

    if (!vmgpu_vm_leaf_table(s, vm, va, &table_space, &table, err) ||
        !vmgpu_mem_table_read(s, table_space, table, vmgpu_vm_index(va, 0),
                              &pte, 1, err)) {
        return false;
    }
    if (!vmgpu_vm_leaf_page(pte, write, space, &page)) {
        return vmgpu_fail(err, VMGPU_ERR_VM_FAULT, va);
    }
    *addr = page + (va & (VMGPU_PAGE_SIZE - 1));
    return true;
}

/* A coherent access to system memory at bus address bus. */
static bool vmgpu_mem_dma(VmgpuState *s, uint64_t bus, void *buf,
                          uint32_t len, bool write, VmgpuMemError *err)
{
    if (vmgpu_dma_rw(s, bus, buf, len, write) != MEMTX_OK) {
        return vmgpu_fail(err, VMGPU_ERR_DMA, bus);
    }
    return true;
}

/*
 * A data access of len bytes at bus address bus, within one page: through
 * the cache in non-coherent mode, else straight to memory. The stored
 * bytes, whatever the compression state.
 */
bool vmgpu_mem_bus_rw(VmgpuState *s, uint64_t bus, void *buf, uint32_t len,
                      bool write, VmgpuMemError *err)
{
    if (s->cache_mode == VMGPU_CACHE_MODE_NONCOHERENT) {
        return vmgpu_cache_rw(s, bus, buf, len, write, err);
    }
    return vmgpu_mem_dma(s, bus, buf, len, write, err);
}

/*
 * Access len bytes at (space, addr); len never crosses a 4 KiB boundary of
 * addr, so one translation covers it. Only a coherent access goes straight
 * to memory; a data access meets the cache and the compression state, as
 * the VM whose ASID is asid sees it.
 */
static bool vmgpu_mem_page_rw(VmgpuState *s, uint32_t space, uint64_t addr,
                              void *buf, uint32_t len, bool write,
                              VmgpuAccess access, uint32_t asid,
                              VmgpuMemError *err)
{
    dma_addr_t bus = addr;

    switch (space) {
    case VMGPU_SPACE_VRAM:
        if (addr >= s->vram_size || len > s->vram_size - addr) {
            return vmgpu_fail(err, VMGPU_ERR_RANGE, addr);
        }
        if (write) {
            memcpy(s->vram_ptr + addr, buf, len);
            /* For the display's redraw (vmgpu-scanout.c). */
            memory_region_set_dirty(&s->vram, addr, len);
        } else {
            memcpy(buf, s->vram_ptr + addr, len);
        }
        return true;
    case VMGPU_SPACE_GART:
        if (!vmgpu_gart_translate(s, addr, &bus, err)) {
            return false;
        }
        /* fall through */
    case VMGPU_SPACE_SYSTEM:
        if (access == VMGPU_ACCESS_UNCACHED &&
            !vmgpu_cache_release(s, bus, err)) {
            return false;
        }
        if (access != VMGPU_ACCESS_COHERENT && access != VMGPU_ACCESS_UNCACHED) {
            return vmgpu_compress_rw(s, bus, buf, len, write, access, asid,
                                     err);
        }
        return vmgpu_mem_dma(s, bus, buf, len, write, err);
    }
    return vmgpu_fail(err, VMGPU_ERR_BAD_FIELD, space);
}

/*
 * Read count 8-byte entries of a table (page table, GART) from index on,
 * coherently, in host order; they must not cross the table's 4 KiB page.
 */
bool vmgpu_mem_table_read(VmgpuState *s, uint32_t space, uint64_t table,
                          unsigned index, uint64_t *entries, unsigned count,
                          VmgpuMemError *err)
{
    unsigned i;

    if (!vmgpu_mem_page_rw(s, space, table + index * sizeof(*entries), entries,
                           count * sizeof(*entries), false,
                           VMGPU_ACCESS_COHERENT, 0, err)) {
        return false;
    }
    for (i = 0; i < count; i++) {
        entries[i] = le64_to_cpu(entries[i]);
    }
    return true;
}

bool vmgpu_mem_check_addr(const struct vmgpu_addr *a, VmgpuMemError *err)
{
    uint32_t space = le32_to_cpu(a->space);
    uint32_t vm = le32_to_cpu(a->vm);

    if (space > VMGPU_SPACE_VIRTUAL ||
        (space == VMGPU_SPACE_VIRTUAL ? vm >= VMGPU_MAX_VMS : vm != 0)) {
        return vmgpu_fail(err, VMGPU_ERR_BAD_FIELD, space);
    }
    return true;
}

static bool vmgpu_mem_access(VmgpuState *s, const struct vmgpu_addr *a,
                             uint64_t offset, void *buf, uint32_t len,
                             bool write, VmgpuAccess access,
                             VmgpuMemError *err)
{
    uint32_t space = le32_to_cpu(a->space);
    uint64_t addr = le64_to_cpu(a->addr) + offset;
    uint32_t vm = le32_to_cpu(a->vm);
    /* A VM out of range faults in the walk below. */
    uint32_t asid = space == VMGPU_SPACE_VIRTUAL && vm < VMGPU_MAX_VMS ?
                    s->vms[vm].asid : 0;
    uint8_t *p = buf;

    while (len) {
        uint32_t chunk = MIN(len, VMGPU_PAGE_SIZE - (addr & (VMGPU_PAGE_SIZE - 1)));
        uint32_t page_space = space;
        uint64_t page_addr = addr;

        if (space == VMGPU_SPACE_VIRTUAL &&
            !vmgpu_vm_translate(s, vm, addr, write, &page_space, &page_addr,
                                err)) {
            trace_vmgpu_mem_fault(space, addr, err->code);
            return false;
        }
        if (!vmgpu_mem_page_rw(s, page_space, page_addr, p, chunk, write,
                               access, asid, err)) {
            trace_vmgpu_mem_fault(space, addr, err->code);
            return false;
        }
        addr += chunk;
        p += chunk;
        len -= chunk;
    }
    return true;
}

/*
 * Where the page at offset of a lives, for the commands that act on whole
 * pages (COMPRESS, DECOMPRESS, NOTIFY): *bus is its bus address when it is
 * in system memory (*system), else it is a VRAM page, checked to exist. A
 * VIRTUAL page needs a writable entry when the command may rewrite it.
 */
bool vmgpu_mem_resolve(VmgpuState *s, const struct vmgpu_addr *a,
                       uint64_t offset, bool write, bool *system,
                       uint64_t *bus, VmgpuMemError *err)
{
    uint32_t space = le32_to_cpu(a->space);
    uint64_t addr = le64_to_cpu(a->addr) + offset;
    uint32_t page_space = space;
    uint64_t page_addr = addr;
    dma_addr_t gart_bus;

    if (space == VMGPU_SPACE_VIRTUAL &&
        !vmgpu_vm_translate(s, le32_to_cpu(a->vm), addr, write,
                            &page_space, &page_addr, err)) {
        trace_vmgpu_mem_fault(space, addr, err->code);
        return false;
    }
    *system = true;
    switch (page_space) {
    case VMGPU_SPACE_VRAM:
        *system = false;
        if (page_addr >= s->vram_size) {
            trace_vmgpu_mem_fault(space, addr, VMGPU_ERR_RANGE);
            return vmgpu_fail(err, VMGPU_ERR_RANGE, page_addr);
        }
        return true;
    case VMGPU_SPACE_GART:
        if (!vmgpu_gart_translate(s, page_addr, &gart_bus, err)) {
            trace_vmgpu_mem_fault(space, addr, err->code);
            return false;
        }
        *bus = gart_bus;
        return true;
    case VMGPU_SPACE_SYSTEM:
        *bus = page_addr;
        return true;
    }
    return vmgpu_fail(err, VMGPU_ERR_BAD_FIELD, space);
}

/* A device-internal access (FENCE, WAIT): always coherent. */
bool vmgpu_mem_rw(VmgpuState *s, const struct vmgpu_addr *a, uint64_t offset,
                  void *buf, uint32_t len, bool write, VmgpuMemError *err)
{
    return vmgpu_mem_access(s, a, offset, buf, len, write,
                            VMGPU_ACCESS_COHERENT, err);
}

/*
 * A FILL with FILL_FLAG_COHERENT (the paging ring's, for memory the CPU
 * writes too, such as page tables): straight to memory, never leaving a
 * line in the cache that a later write back could use to revert the CPU's
 * writes to the rest of the page.
 */
bool vmgpu_mem_uncached_rw(VmgpuState *s, const struct vmgpu_addr *a,
                           uint64_t offset, void *buf, uint32_t len,
                           bool write, VmgpuMemError *err)
{
    return vmgpu_mem_access(s, a, offset, buf, len, write,
                            VMGPU_ACCESS_UNCACHED, err);
}

/*
 * A data access of FILL, TRANSFER or DISCARD: cached when non-coherent.
 * Through VIRTUAL a compressed page is seen decoded, unless raw (DISCARD,
 * which writes the stored bytes and drops the state whatever the space),
 * or through the paging VM 0: the kernel's moves and clears go through it
 * and handle stored bytes, as physical accesses do.
 */
VmgpuAccess vmgpu_mem_data_access(const struct vmgpu_addr *a, bool raw)
{
    bool virt = le32_to_cpu(a->space) == VMGPU_SPACE_VIRTUAL &&
                le32_to_cpu(a->vm) != VMGPU_VM_PAGING;

    return virt && !raw ? VMGPU_ACCESS_DECODED : VMGPU_ACCESS_RAW;
}

bool vmgpu_mem_data_rw(VmgpuState *s, const struct vmgpu_addr *a,
                       uint64_t offset, void *buf, uint32_t len, bool write,
                       bool raw, VmgpuMemError *err)
{
    return vmgpu_mem_access(s, a, offset, buf, len, write,
                            vmgpu_mem_data_access(a, raw), err);
}

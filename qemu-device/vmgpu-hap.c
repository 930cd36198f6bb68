/*
 * vmgpu: the CPU host aperture (WDDM's CpuHostAperture).
 *
 * BAR4 is a window of 4 KiB pages. Each page is redirected by an entry of
 * the host-aperture table (in BAR0) to any VRAM page, so the CPU can reach
 * VRAM that the VRAM BAR does not cover. A DETILE entry shows a swizzled
 * page to the CPU in linear order.
 *
 * Direct windows (v1.9): a page whose entry is VALID without DETILE needs
 * the device for nothing, so an alias of its VRAM page lies over the MMIO
 * region and the CPU reaches it as it reaches BAR 2, without an exit per
 * access. DETILE and invalid entries stay MMIO. Windows onto consecutive
 * VRAM pages make one range of the memory map, and under KVM one memory
 * slot, which the host has few of: the guest must not decide how many it
 * takes, so at most host-aperture-ranges such stretches are windows and the
 * pages after them stay MMIO, with the same result. A change of the memory map
 * rebuilds every address space's flat view (hundreds of microseconds), so
 * a table write only marks its page stale. At the next read of an entry
 * (the driver's posting read after a batch) and at reset, a window that
 * must close or move does so at once; windows that only open wait for a
 * bottom half, since the MMIO path serves their pages correctly meanwhile.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bitmap.h"
#include "qemu/bswap.h"
#include "qemu/log.h"
#include "vmgpu.h"
#include "trace.h"

#define VMGPU_HAP_PTE_RESERVED \
    (~(VMGPU_HAP_PTE_VALID | VMGPU_HAP_PTE_DETILE | VMGPU_HAP_PTE_ADDR_MASK))

/* VRAM offset behind an aperture offset, or false for an unmapped page. */
static bool vmgpu_hap_translate(VmgpuState *s, hwaddr addr, unsigned size,
                                uint64_t *vram)
{
    uint64_t pte = s->hap_table[addr >> VMGPU_PAGE_SHIFT];
    uint32_t offset = addr & (VMGPU_PAGE_SIZE - 1);

    if (!(pte & VMGPU_HAP_PTE_VALID)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "vmgpu: %u-byte host aperture access at 0x%" HWADDR_PRIx
                      " through an invalid entry\n", size, addr);
        return false;
    }
    if (pte & VMGPU_HAP_PTE_DETILE) {
        offset = vmgpu_swizzle_offset(offset);
    }
    *vram = (pte & VMGPU_HAP_PTE_ADDR_MASK) + offset;
    return true;
}

/*
 * Whether one translation covers an access: a naturally aligned one never
 * crosses a 64-byte swizzle block, and a linear page's of any alignment
 * needs only to stay in its page. The CPU splits accesses at page
 * boundaries, but another device's DMA (and qtest) may not.
 */
static bool vmgpu_hap_whole(VmgpuState *s, hwaddr addr, unsigned size)
{
    if (!(addr % size)) {
        return true;
    }
    return !(s->hap_table[addr >> VMGPU_PAGE_SHIFT] & VMGPU_HAP_PTE_DETILE) &&
           addr % VMGPU_PAGE_SIZE + size <= VMGPU_PAGE_SIZE;
}

static uint64_t vmgpu_hap_read(void *opaque, hwaddr addr, unsigned size)
{
    VmgpuState *s = opaque;
    uint64_t vram, val = 0;
    unsigned i;

    if (vmgpu_hap_whole(s, addr, size)) {
        if (vmgpu_hap_translate(s, addr, size, &vram)) {
            val = ldn_le_p(s->vram_ptr + vram, size);
        }
    } else {
        for (i = 0; i < size; i++) {
            if (vmgpu_hap_translate(s, addr + i, 1, &vram)) {
                val |= (uint64_t)s->vram_ptr[vram] << (i * 8);
            }
        }
    }
    trace_vmgpu_hap_read(addr, size, val);
    return val;
}

static void vmgpu_hap_write(void *opaque, hwaddr addr, uint64_t val,
                            unsigned size)
{
    VmgpuState *s = opaque;
    uint64_t vram;
    unsigned i;

    trace_vmgpu_hap_write(addr, size, val);
    if (vmgpu_hap_whole(s, addr, size)) {
        if (vmgpu_hap_translate(s, addr, size, &vram)) {
            stn_le_p(s->vram_ptr + vram, size, val);
            memory_region_set_dirty(&s->vram, vram, size);
        }
        return;
    }
    for (i = 0; i < size; i++) {
        if (vmgpu_hap_translate(s, addr + i, 1, &vram)) {
            s->vram_ptr[vram] = val >> (i * 8);
            memory_region_set_dirty(&s->vram, vram, 1);
        }
    }
}

/*
 * Up to 8 bytes at any alignment; byte by byte where one translation does
 * not cover the access (vmgpu_hap_whole()).
 */
static const MemoryRegionOps vmgpu_hap_ops = {
    .read = vmgpu_hap_read,
    .write = vmgpu_hap_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
};

static bool vmgpu_hap_direct(uint64_t pte)
{
    return (pte & VMGPU_HAP_PTE_VALID) && !(pte & VMGPU_HAP_PTE_DETILE);
}

/*
 * Make the windows follow the table: one change of the memory map. A page
 * continues a stretch when the page before it is a window onto the VRAM
 * page before its own; a direct page that would start a stretch beyond
 * hap_max_ranges stays MMIO, and may open at a later sync.
 */
static void vmgpu_hap_sync_windows(VmgpuState *s)
{
    uint64_t next = UINT64_MAX;
    uint32_t ranges = 0;
    unsigned long i;

    if (!s->hap_stale_count) {
        return;
    }
    trace_vmgpu_hap_windows(s->hap_stale_count, s->hap_stale_open);
    memory_region_transaction_begin();
    for (i = 0; i < s->hap_pages; i++) {
        uint64_t pte = s->hap_table[i];
        uint64_t vram = pte & VMGPU_HAP_PTE_ADDR_MASK;
        bool open = vmgpu_hap_direct(pte) &&
                    (vram == next || ranges < s->hap_max_ranges);

        if (open && vram != next) {
            ranges++;
        }
        next = open ? vram + VMGPU_PAGE_SIZE : UINT64_MAX;
        if (open == test_bit(i, s->hap_open) && !test_bit(i, s->hap_stale)) {
            continue;
        }
        if (open) {
            memory_region_set_alias_offset(&s->hap_windows[i], vram);
            set_bit(i, s->hap_open);
        } else {
            clear_bit(i, s->hap_open);
        }
        memory_region_set_enabled(&s->hap_windows[i], open);
    }
    bitmap_zero(s->hap_stale, s->hap_pages);
    s->hap_stale_count = 0;
    s->hap_stale_open = false;
    memory_region_transaction_commit();
}

static void vmgpu_hap_windows_bh(void *opaque)
{
    vmgpu_hap_sync_windows(opaque);
}

static void vmgpu_hap_mark_stale(VmgpuState *s, uint32_t index)
{
    if (!test_and_set_bit(index, s->hap_stale)) {
        s->hap_stale_count++;
    }
    s->hap_stale_open |= test_bit(index, s->hap_open);
}

static bool vmgpu_hap_index(VmgpuState *s, hwaddr offset, unsigned size,
                            uint32_t *index)
{
    *index = offset / sizeof(uint64_t);
    if (*index >= s->hap_pages || (size != 4 && size != 8) ||
        offset % size) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "vmgpu: bad %u-byte access to host aperture entry at "
                      "0x%" HWADDR_PRIx "\n", size, offset);
        return false;
    }
    return true;
}

uint64_t vmgpu_hap_table_read(VmgpuState *s, hwaddr offset, unsigned size)
{
    uint64_t val;
    uint32_t index;

    if (s->hap_stale_open) {
        vmgpu_hap_sync_windows(s);
    } else if (s->hap_stale_count && s->hap_windows_bh) {
        /* (No bottom half once the device is being removed.) */
        qemu_bh_schedule(s->hap_windows_bh);
    }
    if (!vmgpu_hap_index(s, offset, size, &index)) {
        return 0;
    }
    val = s->hap_table[index] >> (offset % 8 * 8);
    if (size == 4) {
        val = (uint32_t)val;
    }
    trace_vmgpu_hap_entry_read(index, size, val);
    return val;
}

void vmgpu_hap_table_write(VmgpuState *s, hwaddr offset, uint64_t val,
                           unsigned size)
{
    uint64_t pte;
    uint32_t index;

    if (!vmgpu_hap_index(s, offset, size, &index)) {
        vmgpu_report_error(s, VMGPU_ERR_REGISTER, VMGPU_ERROR_RING_MMIO,
                           VMGPU_HAP_TABLE_OFFSET + offset, val);
        return;
    }
    pte = s->hap_table[index];
    if (size == 8) {
        pte = val;
    } else {
        pte = deposit64(pte, offset % 8 * 8, 32, val);
    }
    /*
     * The high half of a 32-bit pair arrives after the low half has made
     * the entry valid; only the whole entry's target is range checked.
     */
    if ((pte & VMGPU_HAP_PTE_RESERVED) ||
        ((pte & VMGPU_HAP_PTE_VALID) &&
         (pte & VMGPU_HAP_PTE_ADDR_MASK) >= s->vram_size)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "vmgpu: host aperture entry %u = 0x%" PRIx64
                      " rejected (reserved bits or beyond VRAM)\n", index, pte);
        vmgpu_report_error(s, VMGPU_ERR_REGISTER, VMGPU_ERROR_RING_MMIO,
                           VMGPU_HAP_TABLE_OFFSET + offset, pte);
        return;
    }
    trace_vmgpu_hap_map(index, pte);
    if (pte != s->hap_table[index] &&
        (vmgpu_hap_direct(pte) || test_bit(index, s->hap_open))) {
        vmgpu_hap_mark_stale(s, index);
    }
    s->hap_table[index] = pte;
}

void vmgpu_hap_reset(VmgpuState *s)
{
    uint32_t i;

    for (i = 0; i < s->hap_pages; i++) {
        if (test_bit(i, s->hap_open)) {
            vmgpu_hap_mark_stale(s, i);
        }
        s->hap_table[i] = 0;
    }
    vmgpu_hap_sync_windows(s);
}

/*
 * BAR 4: the MMIO region, and a window per page over it, each disabled
 * until its entry makes it direct. Created once: memory regions are not
 * made and destroyed while the device lives.
 */
void vmgpu_hap_init(VmgpuState *s)
{
    uint32_t i;

    s->hap_pages = s->host_aperture_size / VMGPU_PAGE_SIZE;
    s->hap_table = g_new0(uint64_t, s->hap_pages);
    s->hap_stale = bitmap_new(s->hap_pages);
    s->hap_open = bitmap_new(s->hap_pages);
    s->hap_windows = g_new0(MemoryRegion, s->hap_pages);
    s->hap_windows_bh = qemu_bh_new_guarded(vmgpu_hap_windows_bh, s,
                                            &DEVICE(s)->mem_reentrancy_guard);
    memory_region_init(&s->host_aperture, OBJECT(s), "vmgpu.host-aperture",
                       s->host_aperture_size);
    memory_region_init_io(&s->hap_mmio, OBJECT(s), &vmgpu_hap_ops, s,
                          "vmgpu.host-aperture-mmio", s->host_aperture_size);
    memory_region_transaction_begin();
    memory_region_add_subregion(&s->host_aperture, 0, &s->hap_mmio);
    for (i = 0; i < s->hap_pages; i++) {
        g_autofree char *name = g_strdup_printf("vmgpu.hap-window-%u", i);

        memory_region_init_alias(&s->hap_windows[i], OBJECT(s), name,
                                 &s->vram, 0, VMGPU_PAGE_SIZE);
        memory_region_set_enabled(&s->hap_windows[i], false);
        memory_region_add_subregion_overlap(&s->host_aperture,
                                            (hwaddr)i * VMGPU_PAGE_SIZE,
                                            &s->hap_windows[i], 1);
    }
    memory_region_transaction_commit();
}

/* Out of BAR 4 before the device goes (see vmgpu_exit_vram()). */
void vmgpu_hap_exit(VmgpuState *s)
{
    uint32_t i;

    if (s->hap_windows_bh) {
        qemu_bh_delete(s->hap_windows_bh);
        s->hap_windows_bh = NULL;
    }
    if (s->hap_windows) {
        memory_region_transaction_begin();
        for (i = 0; i < s->hap_pages; i++) {
            memory_region_del_subregion(&s->host_aperture, &s->hap_windows[i]);
        }
        memory_region_del_subregion(&s->host_aperture, &s->hap_mmio);
        memory_region_transaction_commit();
    }
}

/*
 * After the device's memory regions are gone (instance_finalize): a vCPU
 * that found the MMIO region before its removal may still be on its way
 * into it, so the table lives as long as the device.
 */
void vmgpu_hap_finalize(VmgpuState *s)
{
    g_free(s->hap_open);
    s->hap_open = NULL;
    g_free(s->hap_table);
    s->hap_table = NULL;
    g_free(s->hap_stale);
    s->hap_stale = NULL;
    g_free(s->hap_windows);
    s->hap_windows = NULL;
}

/*
 * vmgpu: the CPU host aperture (WDDM's CpuHostAperture).
 *
 * BAR4 is a window of 4 KiB pages. Each page is redirected by an entry of
 * the host-aperture table (in BAR0) to any VRAM page, so the CPU can reach
 * VRAM that the VRAM BAR does not cover. A DETILE entry shows a swizzled
 * page to the CPU in linear order.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
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

static uint64_t vmgpu_hap_read(void *opaque, hwaddr addr, unsigned size)
{
    VmgpuState *s = opaque;
    uint64_t vram;

    if (!vmgpu_hap_translate(s, addr, size, &vram)) {
        return 0;
    }
    return ldn_le_p(s->vram_ptr + vram, size);
}

static void vmgpu_hap_write(void *opaque, hwaddr addr, uint64_t val,
                            unsigned size)
{
    VmgpuState *s = opaque;
    uint64_t vram;

    if (vmgpu_hap_translate(s, addr, size, &vram)) {
        stn_le_p(s->vram_ptr + vram, size, val);
        memory_region_set_dirty(&s->vram, vram, size);
    }
}

/*
 * Accesses are naturally aligned and at most 8 bytes, so one never crosses
 * a 64-byte swizzle block and a single translation covers it. They reach
 * the device whole, as they would reach VRAM through BAR 2.
 */
const MemoryRegionOps vmgpu_hap_ops = {
    .read = vmgpu_hap_read,
    .write = vmgpu_hap_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = false,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
};

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
    uint32_t index;

    if (!vmgpu_hap_index(s, offset, size, &index)) {
        return 0;
    }
    if (size == 8) {
        return s->hap_table[index];
    }
    return s->hap_table[index] >> (offset % 8 * 8);
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
    s->hap_table[index] = pte;
}

void vmgpu_hap_reset(VmgpuState *s)
{
    if (s->hap_table) {
        memset(s->hap_table, 0, s->hap_pages * sizeof(uint64_t));
    }
}

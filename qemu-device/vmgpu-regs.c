/*
 * vmgpu: the register file of BAR0 (hardware contract, *Registers*).
 *
 * Every guest access is checked here: a write the contract does not allow
 * is reported in the error registers and logged, never half applied.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "vmgpu.h"
#include "trace.h"

static void vmgpu_bad_register(VmgpuState *s, hwaddr addr, uint64_t val,
                               const char *why)
{
    qemu_log_mask(LOG_GUEST_ERROR,
                  "vmgpu: write 0x%" PRIx64 " to register 0x%" HWADDR_PRIx
                  " ignored: %s\n", val, addr, why);
    vmgpu_report_error(s, VMGPU_ERR_REGISTER, VMGPU_ERROR_RING_MMIO, addr, val);
}

static uint32_t vmgpu_caps(VmgpuState *s)
{
    uint32_t caps = VMGPU_CAP_PAGING_ENGINE | VMGPU_CAP_GPU_MMU |
                    VMGPU_CAP_COMPRESSION | VMGPU_CAP_DISPLAY;

    if (s->rebar) {
        caps |= VMGPU_CAP_REBAR;
    }
    if (s->hap_pages) {
        caps |= VMGPU_CAP_HOST_APERTURE | VMGPU_CAP_SWIZZLE;
    }
    if (s->noncoherent) {
        caps |= VMGPU_CAP_NONCOHERENT;
    }
    if (s->iommu_dma) {
        caps |= VMGPU_CAP_IOMMU_DMA;
    }
    return caps;
}

static bool vmgpu_segment_reg(VmgpuState *s, hwaddr addr, uint32_t *val)
{
    unsigned index = (addr - VMGPU_REG_SEG(0)) / 0x20;
    const VmgpuSegment *seg;

    if (index >= s->num_segments) {
        return false;
    }
    seg = &s->segments[index];
    switch ((addr - VMGPU_REG_SEG(0)) % 0x20) {
    case VMGPU_SEG_BASE_LO:
        *val = seg->base;
        return true;
    case VMGPU_SEG_BASE_HI:
        *val = seg->base >> 32;
        return true;
    case VMGPU_SEG_SIZE_LO:
        *val = seg->size;
        return true;
    case VMGPU_SEG_SIZE_HI:
        *val = seg->size >> 32;
        return true;
    case VMGPU_SEG_PAGE_SHIFT:
        *val = seg->page_shift;
        return true;
    }
    return false;
}

static bool vmgpu_vm_reg_read(VmgpuState *s, hwaddr addr, uint32_t *val)
{
    const VmgpuVm *vm = &s->vms[(addr - VMGPU_REG_VM(0)) / 0x10];

    switch ((addr - VMGPU_REG_VM(0)) % 0x10) {
    case VMGPU_VM_ROOT_LO:
        *val = vm->root;
        return true;
    case VMGPU_VM_ROOT_HI:
        *val = vm->root >> 32;
        return true;
    case VMGPU_VM_CTRL:
        *val = (vm->enabled ? VMGPU_VM_CTRL_ENABLE : 0) |
               vm->root_space << VMGPU_VM_CTRL_SPACE_SHIFT;
        return true;
    case VMGPU_VM_GENERATION:
        *val = vm->generation;
        return true;
    }
    return false;
}

static bool vmgpu_is_vm_asid_reg(hwaddr addr)
{
    return addr >= VMGPU_REG_VM_ASID(0) &&
           addr < VMGPU_REG_VM_ASID(VMGPU_MAX_VMS);
}

/*
 * VM_ASID(v): whose compressed pages VIRTUAL accesses through VM v decode.
 * Written before CTRL; the paging VM's is 0 for good.
 */
static const char *vmgpu_vm_asid_write(VmgpuState *s, unsigned vm,
                                       uint32_t val)
{
    if (vm == VMGPU_VM_PAGING) {
        return "the paging VM's ASID is 0";
    }
    s->vms[vm].asid = val;
    trace_vmgpu_vm_asid(vm, val);
    return NULL;
}

static const char *vmgpu_vm_reg_write(VmgpuState *s, hwaddr addr, uint32_t val)
{
    VmgpuVm *vm = &s->vms[(addr - VMGPU_REG_VM(0)) / 0x10];
    uint32_t space;

    switch ((addr - VMGPU_REG_VM(0)) % 0x10) {
    case VMGPU_VM_ROOT_LO:
        if (val & (VMGPU_PAGE_SIZE - 1)) {
            return "page-table root not page aligned";
        }
        vm->root = deposit64(vm->root, 0, 32, val);
        return NULL;
    case VMGPU_VM_ROOT_HI:
        vm->root = deposit64(vm->root, 32, 32, val);
        return NULL;
    case VMGPU_VM_CTRL:
        space = (val & VMGPU_VM_CTRL_SPACE_MASK) >> VMGPU_VM_CTRL_SPACE_SHIFT;
        if ((val & ~(VMGPU_VM_CTRL_ENABLE | VMGPU_VM_CTRL_SPACE_MASK)) ||
            space == VMGPU_SPACE_VIRTUAL) {
            return "bad VM control value";
        }
        vm->enabled = val & VMGPU_VM_CTRL_ENABLE;
        vm->root_space = space;
        /* Rings bound to the VM as it was lose it (SET_VM). */
        vm->generation++;
        trace_vmgpu_vm_ctrl((addr - VMGPU_REG_VM(0)) / 0x10, val, vm->generation);
        return NULL;
    }
    return "unknown VM register";
}

static bool vmgpu_reg_read(VmgpuState *s, hwaddr addr, uint32_t *val)
{
    switch (addr) {
    case VMGPU_REG_MAGIC:
        *val = VMGPU_MAGIC;
        return true;
    case VMGPU_REG_VERSION:
        *val = VMGPU_VERSION_MAJOR << 16 | VMGPU_VERSION_MINOR;
        return true;
    case VMGPU_REG_CAPS:
        *val = vmgpu_caps(s);
        return true;
    case VMGPU_REG_VRAM_SIZE_LO:
        *val = s->vram_size;
        return true;
    case VMGPU_REG_VRAM_SIZE_HI:
        *val = s->vram_size >> 32;
        return true;
    case VMGPU_REG_VRAM_BAR_SIZE_LO:
        *val = vmgpu_vram_bar_size(s);
        return true;
    case VMGPU_REG_VRAM_BAR_SIZE_HI:
        *val = vmgpu_vram_bar_size(s) >> 32;
        return true;
    case VMGPU_REG_HOST_APERTURE_PAGES:
        *val = s->hap_pages;
        return true;
    case VMGPU_REG_GART_MAX_PAGES:
        *val = s->gart_max_pages;
        return true;
    case VMGPU_REG_PAGING_VA_SIZE_MB:
        *val = s->paging_va_mb;
        return true;
    case VMGPU_REG_NUM_SEGMENTS:
        *val = s->num_segments;
        return true;
    case VMGPU_REG_NUM_RINGS:
        *val = VMGPU_MAX_RINGS;
        return true;
    case VMGPU_REG_NUM_VMS:
        *val = VMGPU_MAX_VMS;
        return true;
    case VMGPU_REG_GART_BASE_LO:
        *val = s->gart_base;
        return true;
    case VMGPU_REG_GART_BASE_HI:
        *val = s->gart_base >> 32;
        return true;
    case VMGPU_REG_GART_NUM_PAGES:
        *val = s->gart_num_pages;
        return true;
    case VMGPU_REG_CACHE_MODE:
        *val = s->cache_mode;
        return true;
    case VMGPU_REG_COMPRESS_PAGES:
        *val = s->compress_pages;
        return true;
    case VMGPU_REG_COMPRESS_QUOTA:
        *val = s->compress_quota;
        return true;
    case VMGPU_REG_COMPRESS_SKIPPED:
        *val = s->compress_skipped;
        return true;
    case VMGPU_REG_INT_STATUS:
        *val = s->int_status;
        return true;
    case VMGPU_REG_INT_MASK:
        *val = s->int_mask;
        return true;
    case VMGPU_REG_FENCE_RINGS:
        *val = s->fence_rings;
        return true;
    case VMGPU_REG_ERROR_CODE:
        *val = s->error_code;
        return true;
    case VMGPU_REG_ERROR_RING:
        *val = s->error_ring;
        return true;
    case VMGPU_REG_ERROR_SLOT:
        *val = s->error_slot;
        return true;
    case VMGPU_REG_ERROR_ADDR_LO:
        *val = s->error_addr;
        return true;
    case VMGPU_REG_ERROR_ADDR_HI:
        *val = s->error_addr >> 32;
        return true;
    case VMGPU_REG_ERROR_COUNT:
        *val = s->error_count;
        return true;
    }
    if (addr >= VMGPU_REG_SEG(0) && addr < VMGPU_REG_SEG(VMGPU_MAX_SEGMENTS)) {
        return vmgpu_segment_reg(s, addr, val);
    }
    if (addr >= VMGPU_REG_VM(0) && addr < VMGPU_REG_VM(VMGPU_MAX_VMS)) {
        return vmgpu_vm_reg_read(s, addr, val);
    }
    if (vmgpu_is_vm_asid_reg(addr)) {
        *val = s->vms[(addr - VMGPU_REG_VM_ASID(0)) / 4].asid;
        return true;
    }
    if (addr >= VMGPU_REG_RING(0) && addr < VMGPU_REG_RING(VMGPU_MAX_RINGS)) {
        bool ok;

        *val = vmgpu_ring_reg_read(s, (addr - VMGPU_REG_RING(0)) / 0x40,
                                   (addr - VMGPU_REG_RING(0)) % 0x40, &ok);
        return ok;
    }
    return vmgpu_display_reg_read(s, addr, val);
}

static void vmgpu_reg_write(VmgpuState *s, hwaddr addr, uint32_t val)
{
    const char *display_why;

    switch (addr) {
    case VMGPU_REG_RESET:
        if (val != VMGPU_RESET_VALUE) {
            vmgpu_bad_register(s, addr, val, "not VMGPU_RESET_VALUE");
            return;
        }
        trace_vmgpu_reset();
        vmgpu_reset_state(s);
        return;
    case VMGPU_REG_INT_STATUS:
        s->int_status &= ~val;
        return;
    case VMGPU_REG_FENCE_RINGS:
        s->fence_rings &= ~val;
        return;
    case VMGPU_REG_INT_MASK:
        if (val & ~(VMGPU_INT_FENCE | VMGPU_INT_ERROR | VMGPU_INT_DISPLAY)) {
            vmgpu_bad_register(s, addr, val, "unknown interrupt bits");
            return;
        }
        s->int_mask = val;
        return;
    case VMGPU_REG_ERROR_ACK:
        s->error_code = VMGPU_ERR_NONE;
        return;
    case VMGPU_REG_GART_BASE_LO:
        if (val & (VMGPU_PAGE_SIZE - 1)) {
            vmgpu_bad_register(s, addr, val, "GART table not page aligned");
            return;
        }
        s->gart_base = deposit64(s->gart_base, 0, 32, val);
        return;
    case VMGPU_REG_GART_BASE_HI:
        s->gart_base = deposit64(s->gart_base, 32, 32, val);
        return;
    case VMGPU_REG_GART_NUM_PAGES:
        if (val > s->gart_max_pages) {
            vmgpu_bad_register(s, addr, val, "more GART pages than GART_MAX_PAGES");
            return;
        }
        s->gart_num_pages = val;
        return;
    case VMGPU_REG_CACHE_MODE: {
        const char *why = vmgpu_cache_mode_write(s, val);

        if (why) {
            vmgpu_bad_register(s, addr, val, why);
        }
        return;
    }
    case VMGPU_REG_COMPRESS_QUOTA:
        if (val > s->compress_pages) {
            vmgpu_bad_register(s, addr, val, "quota above COMPRESS_PAGES");
            return;
        }
        s->compress_quota = val;
        return;
    case VMGPU_REG_COMPRESS_FORGET:
        vmgpu_compress_forget(s, val);
        return;
    }
    if (vmgpu_is_vm_asid_reg(addr)) {
        const char *why = vmgpu_vm_asid_write(s,
                                              (addr - VMGPU_REG_VM_ASID(0)) / 4,
                                              val);

        if (why) {
            vmgpu_bad_register(s, addr, val, why);
        }
        return;
    }
    if (addr >= VMGPU_REG_VM(0) && addr < VMGPU_REG_VM(VMGPU_MAX_VMS)) {
        const char *why = vmgpu_vm_reg_write(s, addr, val);

        if (why) {
            vmgpu_bad_register(s, addr, val, why);
        }
        return;
    }
    if (addr >= VMGPU_REG_RING(0) && addr < VMGPU_REG_RING(VMGPU_MAX_RINGS)) {
        const char *why = vmgpu_ring_reg_write(s, (addr - VMGPU_REG_RING(0)) / 0x40,
                                               (addr - VMGPU_REG_RING(0)) % 0x40,
                                               val);
        if (why) {
            vmgpu_bad_register(s, addr, val, why);
        }
        return;
    }
    if (vmgpu_display_reg_write(s, addr, val, &display_why)) {
        if (display_why) {
            vmgpu_bad_register(s, addr, val, display_why);
        }
        return;
    }
    vmgpu_bad_register(s, addr, val, "read-only or unimplemented register");
}

static uint64_t vmgpu_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    VmgpuState *s = opaque;
    uint32_t val = 0;

    if (s->gone) {
        return 0;
    }
    if (addr >= VMGPU_HAP_TABLE_OFFSET) {
        return vmgpu_hap_table_read(s, addr - VMGPU_HAP_TABLE_OFFSET, size);
    }
    /* The driver's invalidation read: no run translated before it goes on. */
    if (addr == VMGPU_REG_MAGIC) {
        vmgpu_offload_wait(s);
    }
    if (size != 4 || !vmgpu_reg_read(s, addr, &val)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "vmgpu: bad %u-byte read of register 0x%" HWADDR_PRIx
                      "\n", size, addr);
        return 0;
    }
    trace_vmgpu_mmio_read(addr, val);
    return val;
}

static void vmgpu_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                             unsigned size)
{
    VmgpuState *s = opaque;

    if (s->gone) {
        return;
    }
    if (addr >= VMGPU_HAP_TABLE_OFFSET) {
        vmgpu_hap_table_write(s, addr - VMGPU_HAP_TABLE_OFFSET, val, size);
        return;
    }
    trace_vmgpu_mmio_write(addr, val);
    if (size != 4) {
        vmgpu_bad_register(s, addr, val, "registers are 32-bit");
        return;
    }
    if (vmgpu_offload_reg_write_waits(addr)) {
        vmgpu_offload_wait(s);
    }
    vmgpu_reg_write(s, addr, val);
}

/*
 * Every access size reaches the device whole: one 8-byte write updates a
 * host-aperture entry at once, and a register access of the wrong size is
 * reported in the error registers instead of dropped by the memory core.
 */
const MemoryRegionOps vmgpu_mmio_ops = {
    .read = vmgpu_mmio_read,
    .write = vmgpu_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
};

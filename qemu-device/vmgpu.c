/*
 * vmgpu: a virtual GPU whose memory model follows WDDM's video memory manager.
 *
 * PCI function, properties and the register file of BAR0. The programming
 * model is Documentation/hw-contract.rst in the vmgpu tree; the numbers are
 * in vmgpu_hw.h, shared with the guest driver.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "hw/pci/msix.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "exec/address-spaces.h"
#include "vmgpu.h"
#include "trace.h"

#define VMGPU_PCIE_CAP_OFFSET   0x80
#define VMGPU_REBAR_CAP_OFFSET  0x100
#define VMGPU_DEFAULT_SEGMENTS  "192M:64K,64M:4K"

void vmgpu_raise_irq(VmgpuState *s, uint32_t cause)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    unsigned vector = ctz32(cause);

    s->int_status |= cause;
    trace_vmgpu_irq(cause, s->int_mask);
    if ((s->int_mask & cause) && msix_enabled(pdev)) {
        msix_notify(pdev, vector);
    }
}

void vmgpu_report_error(VmgpuState *s, enum vmgpu_error code, uint32_t ring,
                        uint32_t slot, uint64_t addr)
{
    trace_vmgpu_error(code, ring, slot, addr);
    s->error_count++;
    if (s->error_code == VMGPU_ERR_NONE) {
        s->error_code = code;
        s->error_ring = ring;
        s->error_slot = slot;
        s->error_addr = addr;
    }
    vmgpu_raise_irq(s, VMGPU_INT_ERROR);
}

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

static void vmgpu_reset_state(VmgpuState *s)
{
    /* Nothing of the device's may land after a reset: finish the copy. */
    vmgpu_offload_drop(s, NULL);
    s->int_status = 0;
    s->int_mask = 0;
    s->fence_rings = 0;
    s->error_code = VMGPU_ERR_NONE;
    s->error_ring = 0;
    s->error_slot = 0;
    s->error_addr = 0;
    s->error_count = 0;
    vmgpu_hap_reset(s);
    vmgpu_engine_reset(s);
    memset(s->vms, 0, sizeof(s->vms));
    vmgpu_cache_reset(s);
    vmgpu_compress_reset(s);
    vmgpu_display_reset(s);
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
static const MemoryRegionOps vmgpu_mmio_ops = {
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

/* Parse "192M:64K,64M:4K" into consecutive memory segments. */
static bool vmgpu_parse_segments(VmgpuState *s, Error **errp)
{
    g_auto(GStrv) parts = g_strsplit(s->segments_spec ?: VMGPU_DEFAULT_SEGMENTS,
                                      ",", -1);
    uint64_t base = 0;
    unsigned i;

    for (i = 0; parts[i]; i++) {
        VmgpuSegment *seg = &s->segments[i];
        const char *page;
        uint64_t size, page_size;

        if (i == VMGPU_MAX_SEGMENTS) {
            error_setg(errp, "vmgpu: at most %d segments", VMGPU_MAX_SEGMENTS);
            return false;
        }
        if (qemu_strtosz(parts[i], &page, &size) || *page != ':' ||
            qemu_strtosz(page + 1, NULL, &page_size)) {
            error_setg(errp, "vmgpu: segment '%s' is not SIZE:PAGESIZE",
                       parts[i]);
            return false;
        }
        if (page_size != 4 * KiB && page_size != 64 * KiB) {
            error_setg(errp, "vmgpu: segment page size must be 4K or 64K");
            return false;
        }
        if (!size || size % MiB) {
            error_setg(errp, "vmgpu: segment size must be a non-zero "
                       "multiple of 1M");
            return false;
        }
        if (size > UINT64_MAX - base) {
            error_setg(errp, "vmgpu: segments add up to more than 16E");
            return false;
        }
        seg->base = base;
        seg->size = size;
        seg->page_shift = ctz64(page_size);
        base += size;
    }
    if (!i) {
        error_setg(errp, "vmgpu: 'segments' lists no segment");
        return false;
    }
    s->num_segments = i;
    s->vram_size = base;
    return true;
}

static bool vmgpu_check_properties(VmgpuState *s, Error **errp)
{
    uint64_t max_bar = pow2ceil(s->vram_size);

    if (!is_power_of_2(s->initial_bar_size) || s->initial_bar_size < MiB ||
        s->initial_bar_size > max_bar) {
        error_setg(errp, "vmgpu: bar-size must be a power of two between 1M "
                   "and %" PRIu64 "M", max_bar / MiB);
        return false;
    }
    if (s->host_aperture_size &&
        (!is_power_of_2(s->host_aperture_size) ||
         s->host_aperture_size < VMGPU_PAGE_SIZE ||
         s->host_aperture_size > (uint64_t)VMGPU_HAP_MAX_PAGES * VMGPU_PAGE_SIZE)) {
        error_setg(errp, "vmgpu: host-aperture-size must be 0 or a power of "
                   "two between 4K and %uM",
                   VMGPU_HAP_MAX_PAGES * VMGPU_PAGE_SIZE / (unsigned)MiB);
        return false;
    }
    if (!s->gart_max_pages) {
        error_setg(errp, "vmgpu: gart-pages must not be 0");
        return false;
    }
    if (s->copy_budget < VMGPU_PAGE_SIZE || s->copy_budget > GiB ||
        s->copy_budget % VMGPU_PAGE_SIZE) {
        error_setg(errp, "vmgpu: copy-budget must be a multiple of 4K "
                   "between 4K and 1G");
        return false;
    }
    if (!s->cache_lines || s->cache_lines > VMGPU_CACHE_MAX_LINES) {
        error_setg(errp, "vmgpu: cache-lines must be between 1 and %u",
                   VMGPU_CACHE_MAX_LINES);
        return false;
    }
    if (!s->compress_pages || s->compress_pages > VMGPU_COMPRESS_MAX_PAGES) {
        error_setg(errp, "vmgpu: compress-pages must be between 1 and %u",
                   VMGPU_COMPRESS_MAX_PAGES);
        return false;
    }
    return true;
}

static bool vmgpu_init_vram(VmgpuState *s, Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint8_t type = PCI_BASE_ADDRESS_SPACE_MEMORY | PCI_BASE_ADDRESS_MEM_TYPE_64 |
                   PCI_BASE_ADDRESS_MEM_PREFETCH;

    if (!memory_region_init_ram(&s->vram, OBJECT(s), "vmgpu.vram",
                                s->vram_size, errp)) {
        return false;
    }
    s->vram_ptr = memory_region_get_ram_ptr(&s->vram);

    memory_region_init(&s->vram_bar, OBJECT(s), "vmgpu.vram-bar",
                       s->initial_bar_size);
    memory_region_init_alias(&s->vram_window, OBJECT(s), "vmgpu.vram-window",
                             &s->vram, 0,
                             MIN(s->initial_bar_size, s->vram_size));
    memory_region_add_subregion(&s->vram_bar, 0, &s->vram_window);
    pci_register_bar(pdev, VMGPU_BAR_VRAM, type, &s->vram_bar);

    if (s->host_aperture_size) {
        vmgpu_hap_init(s);
        pci_register_bar(pdev, VMGPU_BAR_HOST_APERTURE, type,
                         &s->host_aperture);
    }
    return true;
}

/*
 * Undo vmgpu_init_vram()'s subregions: each holds a reference to the
 * device, which would otherwise never be finalized.
 */
static void vmgpu_exit_vram(VmgpuState *s)
{
    memory_region_del_subregion(&s->vram_bar, &s->vram_window);
    vmgpu_hap_exit(s);
}

static void vmgpu_realize(PCIDevice *pdev, Error **errp)
{
    VmgpuState *s = VMGPU(pdev);
    unsigned i;

    if (!vmgpu_parse_segments(s, errp) || !vmgpu_check_properties(s, errp)) {
        return;
    }

    if (pcie_endpoint_cap_init(pdev, VMGPU_PCIE_CAP_OFFSET) < 0) {
        error_setg(errp, "vmgpu: cannot add the PCIe capability");
        return;
    }

    memory_region_init_io(&s->mmio, OBJECT(s), &vmgpu_mmio_ops, s,
                          "vmgpu.mmio", VMGPU_MMIO_SIZE);
    pci_register_bar(pdev, VMGPU_BAR_MMIO, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->mmio);

    if (msix_init_exclusive_bar(pdev, VMGPU_MSIX_NUM_VECTORS, VMGPU_BAR_MSIX,
                                errp)) {
        return;
    }
    for (i = 0; i < VMGPU_MSIX_NUM_VECTORS; i++) {
        msix_vector_use(pdev, i);
    }

    if (!vmgpu_init_vram(s, errp)) {
        msix_uninit_exclusive_bar(pdev);
        return;
    }
    if (s->rebar) {
        vmgpu_rebar_init(s, VMGPU_REBAR_CAP_OFFSET);
    }
    if (!vmgpu_display_init(s, errp)) {
        vmgpu_display_exit(s);
        msix_uninit_exclusive_bar(pdev);
        vmgpu_exit_vram(s);
        return;
    }
    vmgpu_engine_init(s);
    vmgpu_cache_init(s);
    vmgpu_compress_init(s);
    /*
     * CAP_IOMMU_DMA: an IOMMU translates this function's DMA, so system
     * addresses are IOVAs. The IOMMU must exist when the device is created
     * (intel-iommu before vmgpu on the command line).
     */
    s->iommu_dma =
        pci_device_iommu_address_space(pdev) != &address_space_memory;
}

static void vmgpu_exit(PCIDevice *pdev)
{
    VmgpuState *s = VMGPU(pdev);

    /* A vCPU may still be on its way into BAR0: nothing it does counts. */
    s->gone = true;
    vmgpu_engine_exit(s);
    vmgpu_cache_exit(s);
    vmgpu_compress_exit(s);
    vmgpu_display_exit(s);
    msix_uninit_exclusive_bar(pdev);
    vmgpu_exit_vram(s);
}

static void vmgpu_instance_finalize(Object *obj)
{
    vmgpu_hap_finalize(VMGPU(obj));
    vmgpu_offload_finalize(VMGPU(obj));
}

static void vmgpu_config_write(PCIDevice *pdev, uint32_t addr, uint32_t val,
                               int len)
{
    VmgpuState *s = VMGPU(pdev);

    /* No DMA after Bus Master Enable goes off: let a run finish first. */
    vmgpu_offload_wait(s);
    pci_default_write_config(pdev, addr, val, len);
    if (s->rebar) {
        vmgpu_rebar_config_write(s, addr, len);
    }
}

/*
 * Before any object's hold phase, which may load memory again (ROMs, the
 * generic loader): no copy of the device's lands over what it loads.
 */
static void vmgpu_reset_enter(Object *obj, ResetType type)
{
    vmgpu_offload_wait(VMGPU(obj));
}

/* Device (PCI function, bus or system) reset: RESET plus the VRAM BAR size. */
static void vmgpu_reset_hold(Object *obj, ResetType type)
{
    VmgpuState *s = VMGPU(obj);

    vmgpu_reset_state(s);
    if (s->rebar) {
        vmgpu_rebar_reset(s);
    }
}

/*
 * Ring, VM, GART and host-aperture state is not saved yet: refuse
 * migration and snapshots rather than lose it silently.
 */
static const VMStateDescription vmstate_vmgpu = {
    .name = TYPE_VMGPU,
    .unmigratable = 1,
};

static const Property vmgpu_properties[] = {
    DEFINE_PROP_STRING("segments", VmgpuState, segments_spec),
    DEFINE_PROP_SIZE("bar-size", VmgpuState, initial_bar_size, 64 * MiB),
    DEFINE_PROP_BOOL("rebar", VmgpuState, rebar, true),
    DEFINE_PROP_SIZE("host-aperture-size", VmgpuState, host_aperture_size,
                     16 * MiB),
    DEFINE_PROP_UINT32("host-aperture-ranges", VmgpuState, hap_max_ranges,
                       256),
    DEFINE_PROP_UINT32("gart-pages", VmgpuState, gart_max_pages, 65536),
    DEFINE_PROP_UINT32("paging-va-mb", VmgpuState, paging_va_mb, 0),
    DEFINE_PROP_SIZE("copy-budget", VmgpuState, copy_budget, 1 * MiB),
    DEFINE_PROP_BOOL("noncoherent", VmgpuState, noncoherent, false),
    DEFINE_PROP_UINT32("cache-lines", VmgpuState, cache_lines,
                       VMGPU_CACHE_DEFAULT_LINES),
    DEFINE_PROP_UINT32("compress-pages", VmgpuState, compress_pages,
                       VMGPU_COMPRESS_MAX_PAGES),
    DEFINE_PROP_UINT32("heads", VmgpuState, num_heads, 1),
    DEFINE_EDID_PROPERTIES(VmgpuState, edid_info),
};

static void vmgpu_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);

    k->realize = vmgpu_realize;
    k->exit = vmgpu_exit;
    k->config_write = vmgpu_config_write;
    k->vendor_id = VMGPU_PCI_VENDOR_ID;
    k->device_id = VMGPU_PCI_DEVICE_ID;
    k->revision = VMGPU_PCI_REVISION;
    k->class_id = PCI_CLASS_DISPLAY_OTHER;
    dc->desc = "vmgpu virtual GPU (WDDM VidMm memory model)";
    dc->vmsd = &vmstate_vmgpu;
    device_class_set_props(dc, vmgpu_properties);
    rc->phases.enter = vmgpu_reset_enter;
    rc->phases.hold = vmgpu_reset_hold;
    set_bit(DEVICE_CATEGORY_DISPLAY, dc->categories);
}

static void vmgpu_register_types(void)
{
    static InterfaceInfo interfaces[] = {
        { INTERFACE_PCIE_DEVICE },
        { },
    };
    static const TypeInfo vmgpu_info = {
        .name = TYPE_VMGPU,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(VmgpuState),
        .instance_finalize = vmgpu_instance_finalize,
        .class_init = vmgpu_class_init,
        .interfaces = interfaces,
    };

    type_register_static(&vmgpu_info);
}

type_init(vmgpu_register_types)

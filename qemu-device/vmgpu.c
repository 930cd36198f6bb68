/*
 * vmgpu: a virtual GPU whose memory model follows WDDM's video memory manager.
 *
 * PCI function, properties, reset and realize; the register file of BAR0
 * is vmgpu-regs.c. The programming model is Documentation/hw-contract.rst
 * in the vmgpu tree; the numbers are in vmgpu_hw.h, shared with the guest
 * driver.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/cutils.h"
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
    MemReentrancyGuard *guard = &DEVICE(s)->mem_reentrancy_guard;
    unsigned vector = ctz32(cause);
    bool engaged;

    s->int_status |= cause;
    trace_vmgpu_irq(cause, s->int_mask);
    if ((s->int_mask & cause) && msix_enabled(pdev)) {
        /*
         * The message is a write to wherever the guest aimed it. At the
         * device's own registers it must not run them in the middle of
         * what raised it: a vblank or a console refresh is no MMIO
         * dispatch, which would have engaged the guard itself.
         */
        engaged = guard->engaged_in_io;
        guard->engaged_in_io = true;
        msix_notify(pdev, vector);
        guard->engaged_in_io = engaged;
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

/* RESET and device reset: see the contract, *Reset*. */
void vmgpu_reset_state(VmgpuState *s)
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

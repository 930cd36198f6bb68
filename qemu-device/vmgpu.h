/*
 * vmgpu: a virtual GPU whose memory model follows WDDM's video memory manager.
 *
 * Device state shared by the files of the device model.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_VMGPU_H
#define HW_VMGPU_H

#include "hw/display/edid.h"
#include "hw/pci/pci_device.h"
#include "hw/vmgpu/vmgpu_hw.h"
#include "qemu/queue.h"
#include "qemu/thread.h"
#include "qemu/timer.h"
#include "qom/object.h"
#include "system/runstate.h"

#define TYPE_VMGPU "vmgpu"
OBJECT_DECLARE_SIMPLE_TYPE(VmgpuState, VMGPU)

typedef struct VmgpuRing {
    struct VmgpuState *owner;
    uint64_t base;
    uint64_t fence_addr;        /* bus address FENCE_FLAG_RING writes */
    uint32_t size_shift;
    uint32_t head;
    uint32_t tail;
    uint32_t mode;              /* VMGPU_RING_MODE_*, user rings only */
    bool enabled;
    bool halted;
    QEMUTimer delay;            /* a NOP's busy time */
    QEMUTimer wait_timer;       /* re-reads an unmet WAIT, for CPU writes */
    bool waiting;               /* HEAD is an unmet WAIT */
    bool wait_recheck;          /* its value may have changed: read again */
    union vmgpu_cmd cmd;        /* the command at HEAD, read once */
    bool cmd_fetched;           /* cmd holds it */
    uint64_t cmd_done;          /* cursor: bytes of it already done */
    bool cmd_delayed;           /* a NOP whose delay has been started */
    bool vm_bound;              /* a SET_VM ran since the ring was enabled */
    uint32_t bound_vm;          /* ... naming this VM */
    uint32_t bound_generation;  /* ... as of this VMGPU_VM_GENERATION */
} VmgpuRing;

/* A run of host memory a FILL or TRANSFER reaches (vmgpu-run.c). */
typedef struct VmgpuRun {
    uint8_t *host;
    uint64_t len;
    bool dma;                   /* from dma_memory_map, else VRAM */
    uint64_t vram_offset;
} VmgpuRun;

typedef enum VmgpuOffloadState {
    VMGPU_OFFLOAD_IDLE,         /* runs may be queued */
    VMGPU_OFFLOAD_RUNNING,      /* the copy thread has the batch */
    VMGPU_OFFLOAD_DONE,         /* copied; the engine unmaps it */
} VmgpuOffloadState;

/* Runs a batch for the copy thread holds at most. */
#define VMGPU_OFFLOAD_RUNS  256

typedef struct VmgpuOffloadRun {
    VmgpuRun dst, src;          /* src for TRANSFER only */
    uint64_t len;
} VmgpuOffloadRun;

/* Runs of one command, mapped under the BQL, copied without it. */
typedef struct VmgpuOffload {
    QemuThread thread;
    QemuMutex lock;             /* state, stop */
    QemuCond cond;              /* state changed, or stop */
    VmgpuOffloadState state;
    bool stop;
    bool ready;                 /* lock and cond initialised */
    VmgpuRing *ring;            /* whose command queued the batch */
    bool last;                  /* the batch ends that command */
    bool fill;                  /* FILL or DISCARD: pattern, no src */
    uint32_t pattern;
    unsigned count;
    uint64_t bytes;
    VmgpuOffloadRun runs[VMGPU_OFFLOAD_RUNS];
} VmgpuOffload;

typedef struct VmgpuVm {
    uint64_t root;              /* top-level table */
    uint32_t root_space;        /* enum vmgpu_space of the root */
    bool enabled;
    uint32_t generation;        /* VMGPU_VM_GENERATION: CTRL writes */
    uint32_t asid;              /* VMGPU_REG_VM_ASID: owner of compression */
} VmgpuVm;

typedef struct VmgpuMemError {
    enum vmgpu_error code;
    uint64_t addr;
} VmgpuMemError;

/* What running a command, or a slice of it, came to. */
typedef enum VmgpuCmdStatus {
    VMGPU_CMD_DONE,
    VMGPU_CMD_MORE,             /* budget spent: go on in the next slice */
    VMGPU_CMD_WAIT,             /* the ring waits: NOP delay, unmet WAIT */
    VMGPU_CMD_FAILED,           /* VmgpuMemError says why */
} VmgpuCmdStatus;

/*
 * Say why an access or a command failed, for the error registers: the
 * one place that fills a VmgpuMemError. Returns false, or with
 * vmgpu_cmd_fail() VMGPU_CMD_FAILED, for the caller to return.
 */
static inline bool vmgpu_fail(VmgpuMemError *err, enum vmgpu_error code,
                              uint64_t addr)
{
    err->code = code;
    err->addr = addr;
    return false;
}

static inline VmgpuCmdStatus vmgpu_cmd_fail(VmgpuMemError *err,
                                            enum vmgpu_error code,
                                            uint64_t addr)
{
    vmgpu_fail(err, code, addr);
    return VMGPU_CMD_FAILED;
}

/* The cache-lines property: 4 MiB by default, at most 256 MiB. */
#define VMGPU_CACHE_DEFAULT_LINES   1024
#define VMGPU_CACHE_MAX_LINES       65536

/* One line of the non-coherent mode's write-back cache: a system page. */
typedef struct VmgpuCacheLine {
    uint64_t tag;               /* bus address of the page, the map's key */
    uint8_t *data;              /* a line of bytes, kept once used */
    bool valid;
    bool dirty;                 /* newer than memory */
    QTAILQ_ENTRY(VmgpuCacheLine) link;  /* on lru if valid, else on free */
} VmgpuCacheLine;

typedef struct VmgpuCache {
    VmgpuCacheLine *lines;      /* cache-lines slots */
    uint32_t num_lines;
    uint32_t used;              /* valid lines */
    GHashTable *map;            /* &tag -> valid line */
    QTAILQ_HEAD(, VmgpuCacheLine) lru;  /* least recently used first */
    QTAILQ_HEAD(, VmgpuCacheLine) free;
} VmgpuCache;

/* How a memory access meets the cache and the compression state. */
typedef enum VmgpuAccess {
    VMGPU_ACCESS_COHERENT,      /* FENCE, WAIT, table walks: memory as is */
    VMGPU_ACCESS_RAW,           /* data: stored bytes; a write drops state */
    VMGPU_ACCESS_DECODED,       /* data through VIRTUAL: plain words */
    VMGPU_ACCESS_UNCACHED,      /* FILL_FLAG_COHERENT: memory as is, the
                                   page's cached line written back first */
} VmgpuAccess;

/* A head's mode, primary and cursor: pending, or latched by COMMIT. */
typedef struct VmgpuHeadRegs {
    uint32_t ctrl;              /* VMGPU_HEAD_CTRL_* */
    uint32_t hdisplay, vdisplay, htotal, vtotal, clock_khz;
    uint64_t fb_addr;
    uint32_t fb_space, fb_stride, fb_format;
    uint32_t cursor_ctrl;
    uint64_t cursor_addr;
    uint32_t cursor_space;
    int32_t cursor_x, cursor_y;
    uint32_t cursor_hot;
} VmgpuHeadRegs;

typedef struct VmgpuHead {
    struct VmgpuState *owner;
    unsigned index;
    VmgpuHeadRegs pending;
    VmgpuHeadRegs committed;    /* pending as COMMIT 1 found them */
    VmgpuHeadRegs active;       /* what the head scans out */
    bool latch_pending;         /* committed waits for the next vblank */
    bool blanked;               /* a bad source: black until a COMMIT */
    bool connected;             /* headN-connected, QMP hotplug */
    QEMUTimer vblank;
    int64_t next_vblank;        /* virtual-clock ns */
    uint32_t frame_count;
    int64_t frame_time;
    uint32_t crc, crc_frame;
    uint32_t cursor[VMGPU_CURSOR_SIZE * VMGPU_CURSOR_SIZE];
    uint32_t *line;             /* one composed line, XRGB8888 */
    QemuConsole *con;
    bool surface_stale;         /* the console's surface is not active's */
    bool surface_copies;        /* ... and is a copy, not over VRAM */
    bool copying;               /* a copy into it runs over main-loop slices */
    unsigned copy_y;            /* ... and goes on at this line */
    QEMUBH *copy_bh;
    uint8_t edid[VMGPU_EDID_SIZE];
    MemoryRegion edid_mr;
} VmgpuHead;

typedef struct VmgpuSegment {
    uint64_t base;              /* VRAM offset */
    uint64_t size;
    uint32_t page_shift;
} VmgpuSegment;

struct VmgpuState {
    PCIDevice parent_obj;

    /* Properties */
    char *segments_spec;        /* "SIZE:PAGE[,SIZE:PAGE...]" */
    uint64_t initial_bar_size;
    bool rebar;
    uint64_t host_aperture_size;
    uint32_t gart_max_pages;
    uint32_t paging_va_mb;
    uint64_t copy_budget;       /* FILL/TRANSFER bytes per engine slice,
                                   console copy bytes per display slice */
    bool noncoherent;           /* CACHE_MODE may be NONCOHERENT */
    uint32_t cache_lines;       /* its cache's capacity in 4 KiB lines */
    uint32_t compress_pages;    /* capacity of the compressed-page set */
    uint32_t num_heads;         /* display heads */
    qemu_edid_info edid_info;   /* xres, yres, ...: every head's EDID */

    /* Memory */
    VmgpuSegment segments[VMGPU_MAX_SEGMENTS];
    uint32_t num_segments;
    uint64_t vram_size;
    uint8_t *vram_ptr;
    MemoryRegion vram;          /* all VRAM */
    MemoryRegion vram_bar;      /* BAR2: container that ReBAR resizes */
    MemoryRegion vram_window;   /* alias of the VRAM that BAR2 decodes */
    MemoryRegion mmio;          /* BAR0 */
    MemoryRegion host_aperture; /* BAR4: container of hap_mmio, windows */
    MemoryRegion hap_mmio;      /* every page, through the table */

    /* Resizable BAR extended capability */
    uint16_t rebar_offset;

    /* Host aperture page table, VMGPU_HAP_PTE_*, and direct windows */
    uint64_t *hap_table;
    uint32_t hap_pages;
    uint32_t hap_max_ranges;    /* stretches of windows, at most */
    MemoryRegion *hap_windows;  /* per page: alias of its VRAM page */
    unsigned long *hap_open;    /* windows enabled now */
    unsigned long *hap_stale;   /* windows behind the table */
    uint32_t hap_stale_count;
    bool hap_stale_open;        /* one of them is open: close it at once */
    QEMUBH *hap_windows_bh;     /* opens the others */

    /* Paging engine and the aperture segment */
    VmgpuRing rings[VMGPU_MAX_RINGS];
    VmgpuVm vms[VMGPU_MAX_VMS];
    QEMUBH *engine_bh;
    VMChangeStateEntry *engine_vm_state;
    bool engine_vm_running;     /* stopped: no slice, no display error */
    unsigned next_ring;         /* first ring of the next slice */
    VmgpuOffload offload;       /* runs copied without the BQL */
    uint64_t gart_base;
    uint32_t gart_num_pages;

    /* I/O coherency */
    uint32_t cache_mode;        /* VMGPU_CACHE_MODE_* */
    VmgpuCache cache;

    /* Compression: the set of compressed bus pages (vmgpu-compress.c) */
    GHashTable *compressed;     /* &bus -> owner ASID */
    GHashTable *compress_owned; /* ASID other than 0 -> pages it owns */
    uint32_t compress_quota;    /* VMGPU_REG_COMPRESS_QUOTA */
    uint32_t compress_skipped;  /* VMGPU_REG_COMPRESS_SKIPPED */

    /* Display controller (vmgpu-display.c, vmgpu-scanout.c) */
    VmgpuHead heads[VMGPU_MAX_HEADS];
    uint32_t display_events;    /* VMGPU_DISPLAY_EVENT_* */
    uint32_t display_event_mask;
    uint32_t display_time_hi;   /* latched by reading DISPLAY_TIME_LO */

    /* DMA goes through an IOMMU (VMGPU_CAP_IOMMU_DMA), known at realize */
    bool iommu_dma;

    /* Unrealized: an access that found BAR0 before its removal is ignored */
    bool gone;

    /* Interrupts and errors */
    uint32_t int_status;
    uint32_t int_mask;
    uint32_t fence_rings;       /* FENCE_RINGS: bit r, ring r's IRQ fence */
    uint32_t error_code;
    uint32_t error_ring;
    uint32_t error_slot;
    uint64_t error_addr;
    uint32_t error_count;
};

/* vmgpu.c */
void vmgpu_raise_irq(VmgpuState *s, uint32_t cause);
void vmgpu_reset_state(VmgpuState *s);
void vmgpu_report_error(VmgpuState *s, enum vmgpu_error code, uint32_t ring,
                        uint32_t slot, uint64_t addr);

/* vmgpu-regs.c */
extern const MemoryRegionOps vmgpu_mmio_ops;

/* vmgpu-rebar.c */
void vmgpu_rebar_init(VmgpuState *s, uint16_t offset);
void vmgpu_rebar_config_write(VmgpuState *s, uint32_t addr, int len);
void vmgpu_rebar_reset(VmgpuState *s);
uint64_t vmgpu_vram_bar_size(VmgpuState *s);

/* vmgpu-engine.c */
void vmgpu_engine_init(VmgpuState *s);
void vmgpu_engine_reset(VmgpuState *s);
void vmgpu_engine_exit(VmgpuState *s);
uint32_t vmgpu_ring_reg_read(VmgpuState *s, unsigned index, hwaddr reg,
                             bool *ok);
const char *vmgpu_ring_reg_write(VmgpuState *s, unsigned index, hwaddr reg,
                                 uint32_t val);

/* vmgpu-wait.c */
void vmgpu_wait_init(VmgpuRing *ring);
VmgpuCmdStatus vmgpu_exec_wait(VmgpuState *s, VmgpuRing *ring,
                               const struct vmgpu_cmd_wait *c,
                               VmgpuMemError *err);
bool vmgpu_wait_blocked(const VmgpuRing *ring);
void vmgpu_wait_kick(VmgpuState *s);
void vmgpu_wait_drop(VmgpuRing *ring);

/* vmgpu-copy.c: the cursor is ring->cmd_done */
void vmgpu_copy_pattern(uint8_t *p, uint64_t n, uint32_t pattern);
VmgpuCmdStatus vmgpu_copy_fill(VmgpuState *s, VmgpuRing *ring,
                               const struct vmgpu_addr *dst, uint64_t size,
                               uint32_t pattern, bool discard, bool uncached,
                               uint64_t *budget, VmgpuMemError *err);
VmgpuCmdStatus vmgpu_copy_transfer(VmgpuState *s, VmgpuRing *ring,
                                   const struct vmgpu_cmd_transfer *c,
                                   uint64_t *budget, VmgpuMemError *err);

/* vmgpu-offload.c */
void vmgpu_offload_init(VmgpuState *s);
void vmgpu_offload_exit(VmgpuState *s);
void vmgpu_offload_finalize(VmgpuState *s);
bool vmgpu_offload_reg_write_waits(hwaddr addr);
uint64_t vmgpu_offload_room(const VmgpuState *s);
void vmgpu_offload_add(VmgpuState *s, VmgpuRing *ring, const VmgpuRun *dst,
                       const VmgpuRun *src, uint64_t len);
bool vmgpu_offload_flush(VmgpuState *s, uint32_t pattern, bool last,
                         uint64_t *budget);
void vmgpu_offload_wait(VmgpuState *s);
bool vmgpu_offload_settle(VmgpuState *s, VmgpuRing **finished);
void vmgpu_offload_drop(VmgpuState *s, VmgpuRing *ring);

/* vmgpu-mem.c */
static inline unsigned vmgpu_vm_index(uint64_t va, int level)
{
    return (va >> (VMGPU_PAGE_SHIFT + 9 * level)) & (VMGPU_PT_ENTRIES - 1);
}

bool vmgpu_vm_leaf_table(VmgpuState *s, uint32_t vm, uint64_t va,
                         uint32_t *space, uint64_t *table, VmgpuMemError *err);
bool vmgpu_vm_leaf_page(uint64_t pte, bool write, uint32_t *space,
                        uint64_t *page);
MemTxResult vmgpu_dma_rw(VmgpuState *s, dma_addr_t bus, void *buf,
                         dma_addr_t len, bool write);
bool vmgpu_mem_table_read(VmgpuState *s, uint32_t space, uint64_t table,
                          unsigned index, uint64_t *entries, unsigned count,
                          VmgpuMemError *err);
bool vmgpu_mem_check_addr(const struct vmgpu_addr *a, VmgpuMemError *err);
bool vmgpu_mem_rw(VmgpuState *s, const struct vmgpu_addr *a, uint64_t offset,
                  void *buf, uint32_t len, bool write, VmgpuMemError *err);
VmgpuAccess vmgpu_mem_data_access(const struct vmgpu_addr *a, bool raw);
bool vmgpu_mem_data_rw(VmgpuState *s, const struct vmgpu_addr *a,
                       uint64_t offset, void *buf, uint32_t len, bool write,
                       bool raw, VmgpuMemError *err);
bool vmgpu_mem_uncached_rw(VmgpuState *s, const struct vmgpu_addr *a,
                           uint64_t offset, void *buf, uint32_t len,
                           bool write, VmgpuMemError *err);
bool vmgpu_mem_bus_rw(VmgpuState *s, uint64_t bus, void *buf, uint32_t len,
                      bool write, VmgpuMemError *err);
bool vmgpu_mem_resolve(VmgpuState *s, const struct vmgpu_addr *a,
                       uint64_t offset, bool write, bool *system,
                       uint64_t *bus, VmgpuMemError *err);

/* vmgpu-run.c */
#define VMGPU_RUN_WINDOW    64  /* entries a translation window holds */

/*
 * Translations read for one slice of one command, never kept longer:
 * VIRTUAL leaf entries and GART entries, a window of each.
 */
typedef struct VmgpuXlate {
    uint32_t vm;                /* the leaf window's VM */
    uint64_t leaf_va;           /* va of leaf[0] */
    unsigned leaf_count;        /* 0: empty */
    uint64_t leaf[VMGPU_RUN_WINDOW];
    uint64_t gart_index;        /* GART page of gart[0] */
    unsigned gart_count;
    uint64_t gart[VMGPU_RUN_WINDOW];
} VmgpuXlate;

bool vmgpu_run_map(VmgpuState *s, VmgpuXlate *x, const struct vmgpu_addr *a,
                   uint64_t offset, uint64_t len, bool write,
                   VmgpuAccess access, VmgpuRun *run);
void vmgpu_run_unmap(VmgpuState *s, VmgpuRun *run, uint64_t used, bool write);
bool vmgpu_run_resolve(VmgpuState *s, VmgpuXlate *x, const struct vmgpu_addr *a,
                       uint64_t offset, bool write, bool *system,
                       uint64_t *bus, VmgpuMemError *err);

/* vmgpu-cache.c */
void vmgpu_cache_init(VmgpuState *s);
void vmgpu_cache_exit(VmgpuState *s);
void vmgpu_cache_reset(VmgpuState *s);
const char *vmgpu_cache_mode_write(VmgpuState *s, uint32_t val);
bool vmgpu_cache_rw(VmgpuState *s, uint64_t bus, void *buf, uint32_t len,
                    bool write, VmgpuMemError *err);
VmgpuCmdStatus vmgpu_cache_flush(VmgpuState *s, const struct vmgpu_cmd_range *c,
                                 uint64_t *cursor, uint64_t *budget,
                                 VmgpuMemError *err);
bool vmgpu_cache_release(VmgpuState *s, uint64_t bus, VmgpuMemError *err);

/* vmgpu-compress.c */
void vmgpu_compress_init(VmgpuState *s);
void vmgpu_compress_exit(VmgpuState *s);
void vmgpu_compress_reset(VmgpuState *s);
bool vmgpu_compress_holds(VmgpuState *s, uint64_t page);
bool vmgpu_compress_rw(VmgpuState *s, uint64_t bus, void *buf, uint32_t len,
                       bool write, VmgpuAccess access, uint32_t asid,
                       VmgpuMemError *err);
void vmgpu_compress_forget(VmgpuState *s, uint32_t asid);
VmgpuCmdStatus vmgpu_compress_exec(VmgpuState *s, unsigned ring,
                                   const struct vmgpu_cmd_range *c,
                                   uint64_t *done, uint64_t *budget,
                                   VmgpuMemError *err);

/* vmgpu-display.c */
bool vmgpu_display_init(VmgpuState *s, Error **errp);
void vmgpu_display_exit(VmgpuState *s);
void vmgpu_display_reset(VmgpuState *s);
bool vmgpu_display_reg_read(VmgpuState *s, hwaddr addr, uint32_t *val);
bool vmgpu_display_reg_write(VmgpuState *s, hwaddr addr, uint32_t val,
                             const char **why);
void vmgpu_head_blank(VmgpuHead *head, enum vmgpu_error code,
                      unsigned reg, uint64_t addr, const char *why);

/* vmgpu-scanout.c */
unsigned vmgpu_format_cpp(uint32_t format);
uint64_t vmgpu_head_fb_bytes(const VmgpuHeadRegs *r);
void vmgpu_head_crc(VmgpuHead *head);
QemuConsole *vmgpu_head_console_init(VmgpuHead *head);
void vmgpu_head_console_exit(VmgpuHead *head);

/* vmgpu-hap.c */
uint64_t vmgpu_hap_table_read(VmgpuState *s, hwaddr offset, unsigned size);
void vmgpu_hap_table_write(VmgpuState *s, hwaddr offset, uint64_t val,
                           unsigned size);
void vmgpu_hap_reset(VmgpuState *s);
void vmgpu_hap_init(VmgpuState *s);
void vmgpu_hap_exit(VmgpuState *s);
void vmgpu_hap_finalize(VmgpuState *s);

#endif

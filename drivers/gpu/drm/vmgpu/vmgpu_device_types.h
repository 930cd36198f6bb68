/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_DEVICE_TYPES_H_
#define _VMGPU_DEVICE_TYPES_H_

#include <linux/atomic.h>
#include <linux/gpu_buddy.h>
#include <linux/idr.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/types.h>
#include <linux/wait.h>

#include <drm/drm_device.h>

#include "vmgpu_display_types.h"
#include <drm/drm_mm.h>
#include <drm/gpu_scheduler.h>
#include <drm/ttm/ttm_device.h>
#include <drm/ttm/ttm_placement.h>
#include <drm/ttm/ttm_resource.h>

#include "hw/vmgpu_hw.h"

struct vmgpu_vm;

/*
 * Memory segments become TTM memory types from TTM_PL_VRAM on; TTM has
 * TTM_NUM_MEM_TYPES of them, SYSTEM and TT taken.
 */
#define VMGPU_TTM_FIRST_SEGMENT		TTM_PL_VRAM
#define VMGPU_MAX_DRIVER_SEGMENTS	(TTM_NUM_MEM_TYPES - TTM_PL_VRAM)

/**
 * struct vmgpu_segment - a memory segment: a range of VRAM the device
 * describes, managed as a pool of pages of one size
 */
struct vmgpu_segment {
	/** @id: driver segment id; memory segments are numbered from 1. */
	u32 id;
	/** @page_size: allocation granule, 4 KiB or 64 KiB. */
	u32 page_size;
	/** @vram_base: offset of the segment in VRAM. */
	u64 vram_base;
	/** @size: bytes in the segment. */
	u64 size;
	/** @mem_type: the TTM memory type that manages it. */
	u32 mem_type;
};

/**
 * struct vmgpu_vram_resource - an allocation's pages in a memory segment
 */
struct vmgpu_vram_resource {
	/** @base: the TTM resource. */
	struct ttm_resource base;
	/** @blocks: its buddy blocks, in no particular order. */
	struct list_head blocks;
	/**
	 * @clear_fence: if every block was scrubbed when it was allocated,
	 * the segment's &vmgpu_vram_mgr.scrub_fence then, whose error covers
	 * the scrubs that cleared them; NULL otherwise.
	 */
	struct dma_fence *clear_fence;
};

/**
 * struct vmgpu_vram_mgr - page pool of one memory segment, on a buddy
 * allocator whose chunk is the segment's page size
 */
struct vmgpu_vram_mgr {
	/** @manager: the TTM resource manager. */
	struct ttm_resource_manager manager;
	/** @mm: the buddy allocator, offsets relative to the segment. */
	struct gpu_buddy mm;
	/** @lock: protects @mm and the scrub state below. */
	struct mutex lock;
	/** @segment: the segment managed. */
	const struct vmgpu_segment *segment;
	/**
	 * @cpu_visible: bytes of the segment, from its start, that the VRAM
	 * BAR reaches; 0 if not known.
	 */
	u64 cpu_visible;
	/**
	 * @scrub_fence: the last scrub queued (DOC: scrubbing freed VRAM);
	 * each one continues the one before, so its error is that of every
	 * scrub since the chain was last restarted.
	 */
	struct dma_fence *scrub_fence;
	/**
	 * @scrub_done: queues the scrub work when @scrub_fence signals, if
	 * @scrub_waiting.
	 */
	struct dma_fence_cb scrub_done;
	/** @scrub_waiting: @scrub_done is on @scrub_fence, maybe running. */
	bool scrub_waiting;
	/** @scrub_res: the blocks a scrub is taking, walked like a backing. */
	struct vmgpu_vram_resource scrub_res;
	/** @scrubs: scrubs queued since probe. */
	u64 scrubs;
	/** @scrubbed: bytes they cleared. */
	u64 scrubbed;
	/** @scrub_failures: failed scrubs found, each restarting the chain. */
	u64 scrub_failures;
	/** @scrub_retry: jiffies before which no scrub follows a failed one. */
	unsigned long scrub_retry;
};

/**
 * struct vmgpu_gart_resource - an allocation in system memory (TT)
 */
struct vmgpu_gart_resource {
	/** @base: the TTM resource. */
	struct ttm_resource base;
	/** @node: its aperture range, if it is mapped into the aperture. */
	struct drm_mm_node node;
};

/**
 * struct vmgpu_gart - the aperture segment: the device's GART table and the
 * manager of the TT memory type (system memory, optionally mapped)
 */
struct vmgpu_gart {
	/** @manager: TTM manager of TTM_PL_TT. */
	struct ttm_resource_manager manager;
	/** @mm: aperture ranges, in pages. */
	struct drm_mm mm;
	/** @lock: protects @mm and @mapped_bytes. */
	spinlock_t lock;
	/** @table: CPU address of the GART entries. */
	__le64 *table;
	/** @table_bus: bus address of the table, as the device sees it. */
	dma_addr_t table_bus;
	/** @num_pages: entries in the table. */
	u32 num_pages;
	/** @mapped_bytes: bytes of allocations mapped into the aperture. */
	u64 mapped_bytes;
};

/**
 * struct vmgpu_ring - one of the device's command rings and its scheduler
 *
 * The paging ring is ring 0, the user engines are the others. Only the
 * kernel writes any of them.
 */
struct vmgpu_ring {
	/** @vdev: the device. */
	struct vmgpu_device *vdev;
	/** @index: the device's ring number (VMGPU_REG_RING()). */
	u32 index;
	/** @name: for fences and logs. */
	const char *name;
	/** @sched: orders jobs after their dependencies, detects hangs. */
	struct drm_gpu_scheduler sched;
	/**
	 * @entity: the kernel's entity on @sched, for the paging ring;
	 * user engines get theirs from contexts.
	 */
	struct drm_sched_entity entity;
	/**
	 * @push_lock: arms and pushes jobs on @entity (drm_sched's rule),
	 * and keeps the jobs of one paging operation together in its
	 * queue: a chunk's paging-VA entries and its work may be in two
	 * jobs, and no other job may run between them.
	 */
	struct mutex push_lock;
	/** @live: vmgpu_ring_init() set the ring up. */
	bool live;
	/** @mode: user engines: VMGPU_RING_MODE_*, how commands address. */
	u32 mode;
	/**
	 * @last_done_ns: when the ring's last job completed; a job's busy
	 * time starts at the later of this and its run_job. Written as
	 * fences signal, in the ring's order, under @fence_lock.
	 */
	u64 last_done_ns;
	/** @busy_ns: time the ring's jobs kept it busy, as for @last_done_ns. */
	atomic64_t busy_ns;
	/** @jobs_done: jobs whose fence signalled. */
	atomic64_t jobs_done;
	/** @cmds: the ring's command slots. */
	union vmgpu_cmd *cmds;
	/** @cmds_bus: bus address of @cmds. */
	dma_addr_t cmds_bus;
	/** @num_slots: slots in the ring, a power of two. */
	u32 num_slots;
	/**
	 * @reset_lock: serialises hang recovery with unplug; never held
	 * while waiting for a fence that recovery signals.
	 */
	struct mutex reset_lock;
	/** @lock: protects @tail, @next_seqno, @dead and the doorbell. */
	spinlock_t lock;
	/**
	 * @dead: the device is going away; run_job refuses jobs and
	 * recovery only fails them. Set under @reset_lock and @lock.
	 */
	bool dead;
	/** @tail: next slot to write. */
	u32 tail;
	/** @next_seqno: seqno of the last fence emitted. */
	u64 next_seqno;
	/** @seqno_cpu: where the device writes completed fence seqnos. */
	u64 *seqno_cpu;
	/** @seqno_bus: bus address of @seqno_cpu. */
	dma_addr_t seqno_bus;
	/** @fence_context: dma-fence context of the ring's fences. */
	u64 fence_context;
	/** @fence_lock: protects @pending and the fences' state. */
	spinlock_t fence_lock;
	/** @pending: emitted fences not yet signalled, in seqno order. */
	struct list_head pending;
};

/**
 * struct vmgpu_paging_vm - the paging process GPU VA space (device VM 0)
 * and its page tables, which cover all of it from probe on
 */
struct vmgpu_paging_vm {
	/** @size: bytes of VA, from 0; a multiple of the page size. */
	u64 size;
	/**
	 * @leaf_bus: bus addresses of the last-level tables, in VA order.
	 * Only the paging ring writes them (vmgpu_paging_op_map()).
	 */
	dma_addr_t *leaf_bus;
};

/**
 * struct vmgpu_job_pool - jobs of one kind in the paging job reserve
 */
struct vmgpu_job_pool {
	/** @ready: jobs the scheduler can take, empty, with their fences. */
	struct list_head ready;
	/** @spent: jobs back from the scheduler, to be made ready again. */
	struct list_head spent;
	/** @jobs: jobs of the pool, wherever they are. */
	u32 jobs;
	/** @num_ready: jobs in @ready. */
	u32 num_ready;
	/** @waits: times a paging operation waited for a ready job. */
	u64 waits;
};

/**
 * struct vmgpu_job_reserve - the paging ring's jobs, made ready ahead of
 * the paging operations that take them (DOC: paging job reserve)
 */
struct vmgpu_job_reserve {
	/** @lock: protects the pools, @refills, @move_waits and @gone. */
	spinlock_t lock;
	/** @ops: jobs with command room and staging memory. */
	struct vmgpu_job_pool ops;
	/** @gates: empty jobs, each holding one fence for an operation. */
	struct vmgpu_job_pool gates;
	/** @wq: runs @refill; may run while memory is short. */
	struct workqueue_struct *wq;
	/** @refill: makes spent jobs ready, outside any paging operation. */
	struct delayed_work refill;
	/** @ready_wq: woken when a job is ready. */
	wait_queue_head_t ready_wq;
	/** @refills: jobs made ready again. */
	u64 refills;
	/**
	 * @move_waits: times a move waited for a ready job or gates before
	 * its operation (vmgpu_job_reserve_wait()); the pools' waits count
	 * the waits inside operations.
	 */
	u64 move_waits;
	/**
	 * @gone: the reserve was released with the DRM device: jobs the
	 * scheduler frees later free themselves.
	 */
	bool gone;
};

/**
 * struct vmgpu_vm_slots - which GPU VA space holds each device VM
 */
struct vmgpu_vm_slots {
	/** @lock: protects the slots and the spaces' slot state. */
	struct mutex lock;
	/** @owner: the space holding each device VM, or NULL. */
	struct vmgpu_vm *owner[VMGPU_MAX_VMS];
	/**
	 * @generation: each device VM's VMGPU_VM_GENERATION since it was
	 * last programmed: what a job's SET_VM names.
	 */
	u32 generation[VMGPU_MAX_VMS];
	/** @lru: spaces holding one, least recently submitting first. */
	struct list_head lru;
};

/**
 * struct vmgpu_hap - the CPU host aperture: BAR 4 pages lent one by one to
 * allocations' VRAM pages beyond the VRAM BAR
 */
struct vmgpu_hap {
	/**
	 * @lock: protects @used, @num_free, @lru, @steals and the
	 * allocations' host-aperture state. Taken under reservations; other
	 * allocations' reservations are only trylocked under it.
	 */
	struct mutex lock;
	/** @num_pages: pages of BAR 4 in use by the driver, 0 if none. */
	u32 num_pages;
	/** @num_free: pages of @used not set. */
	u32 num_free;
	/** @used: one bit per page: lent to an allocation. */
	unsigned long *used;
	/**
	 * @lru: unlocked allocations holding pages, least recently mapped
	 * first; locked ones are on no list, their pages stay.
	 */
	struct list_head lru;
	/** @bar_start: CPU physical address of BAR 4. */
	resource_size_t bar_start;
	/** @steals: allocations whose pages were taken back, since probe. */
	u64 steals;
};

/**
 * struct vmgpu_inject - fault-injection state, driven through debugfs
 */
struct vmgpu_inject {
	/** @lock: protects @before, @bad and @after. */
	struct mutex lock;
	/** @before: error of the job queued before the bad one. */
	long before;
	/** @bad: error of the job with the rejected command. */
	long bad;
	/** @after: error of the job queued after the bad one. */
	long after;
	/** @paging_faults: paging operations still to fail. */
	atomic_t paging_faults;
	/** @scrub_faults: scrubs of freed VRAM still to fail. */
	atomic_t scrub_faults;
	/**
	 * @import_evict_faults: evictions of imports for their exporter
	 * still to fail (inject_import_evict_fault).
	 */
	atomic_t import_evict_faults;
	/**
	 * @scrub_delay_ms: how much longer freed VRAM waits for its scrub
	 * (inject_scrub_delay_ms).
	 */
	u32 scrub_delay_ms;
	/**
	 * @vm_free_delay_ms: how long a dying GPU VA space waits before it
	 * is released, holding its device VM (inject_vm_free_delay_ms).
	 */
	u32 vm_free_delay_ms;
	/**
	 * @reset_delay_ms: how long a hang reset waits between finding the
	 * job unfinished and stopping its ring (inject_reset_delay_ms).
	 */
	u32 reset_delay_ms;
	/**
	 * @display_events_lost: the display interrupt drops the heads'
	 * FLIP_DONE and VBLANK events (inject_display_events_lost).
	 */
	bool display_events_lost;
	/**
	 * @display_commit_lost: a flip's COMMIT at the next vblank is not
	 * written (inject_display_commit_lost).
	 */
	bool display_commit_lost;
	/**
	 * @vm_free_sync: a GPU VA space's last put waits for its release,
	 * which then drops its device reference first (inject_vm_free_sync).
	 */
	bool vm_free_sync;
	/**
	 * @free_job_delay_ms: how long the scheduler's free of a job waits
	 * first (inject_free_job_delay_ms).
	 */
	u32 free_job_delay_ms;
};

/**
 * struct vmgpu_device - one vmgpu PCI function
 */
struct vmgpu_device {
	/** @drm: the DRM device, first so that drmm can free us. */
	struct drm_device drm;
	/** @mmio: BAR0 registers. */
	void __iomem *mmio;
	/** @hw_version: VMGPU_REG_VERSION. */
	u32 hw_version;
	/** @caps: VMGPU_CAP_* bits the device reports. */
	u32 caps;
	/**
	 * @noncoherent: the device runs its non-coherent mode: its data
	 * accesses to system memory go through its write-back cache.
	 */
	bool noncoherent;
	/**
	 * @iommu_dma: the device DMAs by IOMMU address (CAP_IOMMU_DMA) and
	 * the kernel translates its DMA: the seed's IOMMU addressing model.
	 */
	bool iommu_dma;
	/**
	 * @irq: Linux interrupt numbers of the MSI-X vectors, looked up
	 * once: pci_irq_vector() takes a mutex that allocates under it, which
	 * the fence-signalling paths must not.
	 */
	int irq[VMGPU_MSIX_NUM_VECTORS];

	/** @vram: VRAM and the BAR the CPU reaches it through. */
	struct {
		/** @vram.size: total bytes over all memory segments. */
		u64 size;
		/** @vram.bar_probe_size: BAR2 length before any resize. */
		u64 bar_probe_size;
		/** @vram.bar_size: BAR2 length now. */
		u64 bar_size;
		/** @vram.bar_start: CPU physical address of BAR2. */
		resource_size_t bar_start;
		/** @vram.host_aperture_size: BAR4 length, 0 if none. */
		u64 host_aperture_size;
	} vram;

	/** @segments: memory segments, in device order. */
	struct vmgpu_segment segments[VMGPU_MAX_DRIVER_SEGMENTS];
	/** @num_segments: valid entries of @segments. */
	u32 num_segments;
	/** @gart_pages: pages in the aperture segment. */
	u32 gart_pages;
	/** @paging_vm: the paging process GPU VA space, device VM 0. */
	struct vmgpu_paging_vm paging_vm;
	/** @job_reserve: the paging ring's jobs. */
	struct vmgpu_job_reserve job_reserve;

	/** @ttm: the TTM device. */
	struct ttm_device ttm;
	/** @vram_mgrs: one manager per memory segment. */
	struct vmgpu_vram_mgr vram_mgrs[VMGPU_MAX_DRIVER_SEGMENTS];
	/** @vram_scrub: clears freed VRAM in batches (vmgpu_vram_scrub.c). */
	struct delayed_work vram_scrub;
	/**
	 * @vram_scrub_on: allocations take scrubbed VRAM and freed VRAM is
	 * scrubbed; debugfs vram_scrub turns it off for tests of the clear
	 * of each new backing.
	 */
	bool vram_scrub_on;
	/** @gart: the aperture segment. */
	struct vmgpu_gart gart;
	/** @rings: the paging ring, then the user engines. */
	struct vmgpu_ring rings[VMGPU_MAX_RINGS];
	/** @hap: the CPU host aperture. */
	struct vmgpu_hap hap;
	/** @display: the display controller (vmgpu_display.c). */
	struct vmgpu_display display;
	/** @vm_slots: the device VMs, lent to GPU VA spaces. */
	struct vmgpu_vm_slots vm_slots;
	/** @num_vms: device VMs, the paging VM included. */
	u32 num_vms;
	/**
	 * @vms: every GPU VA space, for unplug: their page tables are DMA
	 * memory of the device.
	 */
	struct list_head vms;
	/** @vms_lock: protects @vms and @vms_unplugged; taken before pt_lock. */
	struct mutex vms_lock;
	/** @vms_unplugged: the device is gone: no new table is mapped. */
	bool vms_unplugged;
	/** @asids: the ASIDs of live spaces (&vmgpu_vm.asid). */
	struct ida asids;
	/**
	 * @deferred_queued: deferred destructions queued and not yet done;
	 * vmgpu_remove() waits for them (vmgpu_vm_wait_deferred()).
	 */
	atomic_t deferred_queued;
	/**
	 * @unplug_sem: written around TTM's LRU walk at unplug, which spins
	 * on an allocation whose last reference is being dropped while it
	 * holds the LRU lock that release needs. Read around every first
	 * release of an object on an LRU: the GEM free of an allocation, the
	 * close of a CPU mapping (which holds a TTM reference) and the
	 * hand-over of a move's old backing to a ghost. A ghost's own delayed
	 * delete, which drops its parent, runs in TTM's workqueue: removal
	 * flushes that after drm_dev_unplug(), once no move can make ghosts.
	 */
	struct rw_semaphore unplug_sem;

	/**
	 * @contents_lost: allocations whose data a failed paging operation
	 * lost since probe, as amdgpu counts VRAM loss.
	 */
	atomic64_t contents_lost;
	/**
	 * @compressing_spaces: GPU VA spaces that have compressed and whose
	 * device state is not forgotten yet; while there are none, no page
	 * has compression state (DOC: compression owners).
	 */
	atomic_t compressing_spaces;

	/** @inject: fault injection for tests. */
	struct vmgpu_inject inject;

	/** @bos: every allocation, for debugfs. */
	struct list_head bos;
	/** @bos_lock: protects @bos. */
	struct mutex bos_lock;
	/**
	 * @imports_attached: imports still attached to their dma-buf, which
	 * unplug waits to be none (vmgpu_prime.c).
	 */
	atomic_t imports_attached;
};

#endif

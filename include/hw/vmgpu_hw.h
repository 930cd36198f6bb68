/* SPDX-License-Identifier: MIT */
/*
 * vmgpu hardware contract: registers, memory layouts and command formats.
 *
 * This header is the single source of truth shared by the QEMU device
 * (qemu-device/) and the Linux driver (drivers/gpu/drm/vmgpu/). Everything
 * here is little endian. Documentation/hw-contract.rst explains the model
 * and says which parts are implemented yet; this file only gives it names
 * and numbers.
 */
#ifndef VMGPU_HW_H
#define VMGPU_HW_H

#ifdef __KERNEL__
#include <linux/types.h>
/* Command fields are little endian on the wire; sparse checks the kernel. */
typedef __le16 vmgpu_le16;
typedef __le32 vmgpu_le32;
typedef __le64 vmgpu_le64;
#else
#include <stdint.h>
typedef uint16_t vmgpu_le16;
typedef uint32_t vmgpu_le32;
typedef uint64_t vmgpu_le64;
#endif

/* PCI identity: the experimental range of QEMU's docs/specs/pci-ids.rst. */
#define VMGPU_PCI_VENDOR_ID		0x1af4
#define VMGPU_PCI_DEVICE_ID		0x10f7
#define VMGPU_PCI_REVISION		0x01

/* BARs. 64-bit BARs take two slots, hence the gaps. */
#define VMGPU_BAR_MMIO			0	/* registers + host-aperture table */
#define VMGPU_BAR_MSIX			1	/* MSI-X table and PBA */
#define VMGPU_BAR_VRAM			2	/* 64-bit prefetchable, resizable */
#define VMGPU_BAR_HOST_APERTURE		4	/* 64-bit prefetchable */

#define VMGPU_MMIO_SIZE			0x20000
#define VMGPU_MAGIC			0x55504756	/* "VGPU" */
#define VMGPU_VERSION_MAJOR		1
#define VMGPU_VERSION_MINOR		12

/* Page sizes the device understands. */
#define VMGPU_PAGE_SHIFT		12
#define VMGPU_PAGE_SIZE			(1u << VMGPU_PAGE_SHIFT)
#define VMGPU_PAGE_SHIFT_64K		16

/* ---------------------------------------------------------------------
 * Identification and global registers (BAR0, 32-bit accesses)
 */
#define VMGPU_REG_MAGIC			0x0000	/* RO */
#define VMGPU_REG_VERSION		0x0004	/* RO: major << 16 | minor */
#define VMGPU_REG_CAPS			0x0008	/* RO: VMGPU_CAP_* */
#define VMGPU_REG_RESET			0x000c	/* WO: VMGPU_RESET_VALUE */
#define VMGPU_REG_VRAM_SIZE_LO		0x0010	/* RO: total VRAM bytes */
#define VMGPU_REG_VRAM_SIZE_HI		0x0014
#define VMGPU_REG_VRAM_BAR_SIZE_LO	0x0018	/* RO: bytes BAR2 decodes now */
#define VMGPU_REG_VRAM_BAR_SIZE_HI	0x001c
#define VMGPU_REG_HOST_APERTURE_PAGES	0x0020	/* RO: 4 KiB pages in BAR4 */
#define VMGPU_REG_GART_MAX_PAGES	0x0024	/* RO: aperture segment limit */
#define VMGPU_REG_PAGING_VA_SIZE_MB	0x0028	/* RO: 0 = driver chooses */
#define VMGPU_REG_NUM_SEGMENTS		0x002c	/* RO: memory segments */
#define VMGPU_REG_NUM_RINGS		0x0030	/* RO */
#define VMGPU_REG_NUM_VMS		0x0034	/* RO */

#define VMGPU_RESET_VALUE		0x1

/*
 * The hardware scheduling log buffers: the floor of the paging process GPU
 * VA size when PAGING_VA_SIZE_MB is 0 (WDDM: the greater of a quarter of
 * the largest memory segment and this).
 */
#define VMGPU_SCHED_LOG_SIZE		(16u << 20)

#define VMGPU_CAP_REBAR			(1u << 0)  /* BAR2 has a ReBAR capability */
#define VMGPU_CAP_HOST_APERTURE		(1u << 1)  /* BAR4 + page table */
#define VMGPU_CAP_GPU_MMU		(1u << 2)  /* VMGPU_SPACE_VIRTUAL works */
#define VMGPU_CAP_IOMMU_DMA		(1u << 3)  /* system addresses are IOVAs */
#define VMGPU_CAP_NONCOHERENT		(1u << 4)  /* VMGPU_CACHE_MODE_NONCOHERENT */
#define VMGPU_CAP_SWIZZLE		(1u << 5)  /* swizzling transfers, detiling */
#define VMGPU_CAP_COMPRESSION		(1u << 6)  /* COMPRESS / DECOMPRESS */
#define VMGPU_CAP_DISPLAY		(1u << 7)  /* scanout registers */
#define VMGPU_CAP_PAGING_ENGINE		(1u << 8)  /* rings and commands */

/* Interrupts: one MSI-X vector per cause, status bits are write-1-to-clear. */
#define VMGPU_REG_INT_STATUS		0x0040
#define VMGPU_REG_INT_MASK		0x0044	/* 1 = cause enabled */
#define VMGPU_INT_FENCE			(1u << 0)
#define VMGPU_INT_ERROR			(1u << 1)
#define VMGPU_INT_DISPLAY		(1u << 2)	/* DISPLAY_EVENTS */
/* RW1C: bit r is set when ring r ran a FENCE with VMGPU_FENCE_FLAG_IRQ. */
#define VMGPU_REG_FENCE_RINGS		0x0048

#define VMGPU_MSIX_VEC_FENCE		0
#define VMGPU_MSIX_VEC_ERROR		1
#define VMGPU_MSIX_VEC_DISPLAY		2
#define VMGPU_MSIX_NUM_VECTORS		3

/*
 * Error reporting. The first error is latched until ERROR_ACK is written;
 * ERROR_COUNT counts every error since reset, latched or not.
 */
#define VMGPU_REG_ERROR_CODE		0x0050	/* RO: VMGPU_ERR_* */
#define VMGPU_REG_ERROR_RING		0x0054	/* RO: ring, or ~0 for MMIO */
#define VMGPU_REG_ERROR_SLOT		0x0058	/* RO: ring slot / register */
#define VMGPU_REG_ERROR_ADDR_LO		0x005c	/* RO: faulting address */
#define VMGPU_REG_ERROR_ADDR_HI		0x0060
#define VMGPU_REG_ERROR_ACK		0x0064	/* WO: any value */
#define VMGPU_REG_ERROR_COUNT		0x0068	/* RO */

#define VMGPU_ERROR_RING_MMIO		0xffffffffu

enum vmgpu_error {
	VMGPU_ERR_NONE = 0,
	VMGPU_ERR_BAD_OPCODE = 1,	/* unknown opcode */
	VMGPU_ERR_BAD_FIELD = 2,	/* reserved bits, flags, alignment */
	VMGPU_ERR_RANGE = 3,		/* outside VRAM / aperture / VA */
	VMGPU_ERR_DMA = 4,		/* system access failed (IOMMU) */
	VMGPU_ERR_GART_FAULT = 5,	/* aperture entry not valid */
	VMGPU_ERR_VM_FAULT = 6,		/* GPU page-table walk failed */
	VMGPU_ERR_RING_SETUP = 7,	/* ring registers unusable */
	VMGPU_ERR_PRIVILEGE = 8,	/* paging-only command on a user ring */
	VMGPU_ERR_REGISTER = 9,		/* bad value written to a register */
};

/* ---------------------------------------------------------------------
 * Aperture segment (GART): a table of VMGPU_GART_MAX_PAGES 8-byte entries in
 * system memory, read by DMA on every access (no TLB, no flush needed).
 */
#define VMGPU_REG_GART_BASE_LO		0x0070	/* bus address, 4 KiB aligned */
#define VMGPU_REG_GART_BASE_HI		0x0074
#define VMGPU_REG_GART_NUM_PAGES	0x0078	/* entries; 0 = disabled */

#define VMGPU_GART_PTE_VALID		(1ull << 0)
#define VMGPU_GART_PTE_ADDR_MASK	0xfffffffffffff000ull

/* ---------------------------------------------------------------------
 * I/O coherency. Coherent: every system access snoops. Non-coherent (only
 * with VMGPU_CAP_NONCOHERENT): the data accesses of FILL, DISCARD and
 * TRANSFER to system memory go through a device write-back cache of 4 KiB
 * lines, keyed by bus page address. Memory sees a dirty line only when
 * CACHE_FLUSH writes it back or the cache evicts it (least recently used
 * first); an invalidate, the switch back to COHERENT and reset drop lines
 * without writing them back. Ring fetches, table walks, FENCE and WAIT
 * never go through the cache.
 */
#define VMGPU_REG_CACHE_MODE		0x0080	/* RW: VMGPU_CACHE_MODE_* */
#define VMGPU_CACHE_MODE_COHERENT	0
#define VMGPU_CACHE_MODE_NONCOHERENT	1
#define VMGPU_CACHE_LINE_SIZE		VMGPU_PAGE_SIZE

/* ---------------------------------------------------------------------
 * Memory segments: consecutive ranges of VRAM, described read-only.
 * Driver segment ids are the index + 1; id 0 is the implicit system segment.
 */
#define VMGPU_MAX_SEGMENTS		8
#define VMGPU_REG_SEG(i)		(0x0100 + (i) * 0x20)
#define VMGPU_SEG_BASE_LO		0x00	/* VRAM offset */
#define VMGPU_SEG_BASE_HI		0x04
#define VMGPU_SEG_SIZE_LO		0x08
#define VMGPU_SEG_SIZE_HI		0x0c
#define VMGPU_SEG_PAGE_SHIFT		0x10	/* 12 or 16 */

/* ---------------------------------------------------------------------
 * Command rings: power-of-two arrays of struct vmgpu_cmd in system memory.
 * Ring 0 is the privileged paging ring; the others are user rings.
 */
#define VMGPU_MAX_RINGS			4
#define VMGPU_RING_PAGING		0
#define VMGPU_REG_RING(r)		(0x0400 + (r) * 0x40)
#define VMGPU_RING_BASE_LO		0x00	/* bus address, 4 KiB aligned */
#define VMGPU_RING_BASE_HI		0x04
#define VMGPU_RING_SIZE_SHIFT		0x08	/* log2(entries), 4..16 */
#define VMGPU_RING_HEAD			0x0c	/* RO: next slot to execute */
#define VMGPU_RING_TAIL			0x10	/* doorbell: slot after last */
#define VMGPU_RING_CTRL			0x14
#define VMGPU_RING_STATUS		0x18	/* RO */
#define VMGPU_RING_MODE			0x1c	/* user rings: VMGPU_RING_MODE_* */
#define VMGPU_RING_FENCE_ADDR_LO	0x20	/* bus address, 8-byte aligned */
#define VMGPU_RING_FENCE_ADDR_HI	0x24

#define VMGPU_RING_SIZE_SHIFT_MIN	4
#define VMGPU_RING_SIZE_SHIFT_MAX	16

#define VMGPU_RING_CTRL_ENABLE		(1u << 0)
#define VMGPU_RING_CTRL_RESUME		(1u << 1)  /* WO: skip failed command */

#define VMGPU_RING_STATUS_ENABLED	(1u << 0)
#define VMGPU_RING_STATUS_BUSY		(1u << 1)
#define VMGPU_RING_STATUS_HALTED	(1u << 2)  /* stopped on an error */
#define VMGPU_RING_STATUS_WAITING	(1u << 3)  /* HEAD is an unmet WAIT */

/*
 * What a user ring's commands may address. GPU-VA engine: VIRTUAL only, in
 * any VM but the paging VM. Physical engine: VRAM and GART only, the
 * physical references the kernel patched in.
 */
#define VMGPU_RING_MODE_VIRTUAL		0
#define VMGPU_RING_MODE_PHYSICAL	1

/* ---------------------------------------------------------------------
 * GPU virtual memory: per-VM 4-level page tables, 48-bit VA, 4 KiB pages.
 * Entries at every level share one format; SPACE says where the next table
 * (or, in the last level, the page) lives. VM 0 is the paging process VM.
 */
#define VMGPU_MAX_VMS			16
#define VMGPU_VM_PAGING			0
#define VMGPU_REG_VM(v)			(0x0800 + (v) * 0x10)
#define VMGPU_VM_ROOT_LO		0x00	/* level-3 table, 4 KiB aligned */
#define VMGPU_VM_ROOT_HI		0x04
#define VMGPU_VM_CTRL			0x08
#define VMGPU_VM_GENERATION		0x0c	/* RO: +1 on every CTRL write */

#define VMGPU_VM_CTRL_ENABLE		(1u << 0)
#define VMGPU_VM_CTRL_SPACE_SHIFT	4	/* space of the root table */
#define VMGPU_VM_CTRL_SPACE_MASK	(0x3u << VMGPU_VM_CTRL_SPACE_SHIFT)

#define VMGPU_VA_BITS			48
#define VMGPU_PT_LEVELS			4
#define VMGPU_PT_ENTRIES		512
#define VMGPU_PTE_VALID			(1ull << 0)
#define VMGPU_PTE_WRITE			(1ull << 1)
#define VMGPU_PTE_SPACE_SHIFT		2
#define VMGPU_PTE_SPACE_MASK		(0x3ull << VMGPU_PTE_SPACE_SHIFT)
#define VMGPU_PTE_ADDR_MASK		0x000ffffffffff000ull

/* ---------------------------------------------------------------------
 * Display controller (v1.6): HEADS scanout heads, each a primary plane
 * and a 64x64 cursor plane whose sources are physical references (VRAM or
 * aperture-segment offsets). The plane, mode and CTRL registers are
 * pending copies: COMMIT latches them, as it finds them, at the next
 * vblank (or at once; 1.8).
 */
#define VMGPU_MAX_HEADS			4
#define VMGPU_HEAD_BANK_SIZE		0x80
#define VMGPU_REG_HEAD(h)		(0x0c00 + (h) * VMGPU_HEAD_BANK_SIZE)
#define VMGPU_HEAD_STATUS		0x00	/* RO: VMGPU_HEAD_STATUS_* */
#define VMGPU_HEAD_CTRL			0x04	/* VMGPU_HEAD_CTRL_* */
#define VMGPU_HEAD_COMMIT		0x08	/* WO: VMGPU_HEAD_COMMIT_* */
#define VMGPU_HEAD_HDISPLAY		0x0c	/* mode: active pixels */
#define VMGPU_HEAD_VDISPLAY		0x10	/* mode: active lines */
#define VMGPU_HEAD_HTOTAL		0x14	/* mode: pixels per line */
#define VMGPU_HEAD_VTOTAL		0x18	/* mode: lines per frame */
#define VMGPU_HEAD_CLOCK_KHZ		0x1c	/* mode: pixel clock */
#define VMGPU_HEAD_FB_ADDR_LO		0x20	/* primary: source offset */
#define VMGPU_HEAD_FB_ADDR_HI		0x24
#define VMGPU_HEAD_FB_SPACE		0x28	/* VRAM or GART */
#define VMGPU_HEAD_FB_STRIDE		0x2c	/* bytes per line */
#define VMGPU_HEAD_FB_FORMAT		0x30	/* VMGPU_FORMAT_* */
#define VMGPU_HEAD_CURSOR_CTRL		0x34	/* bit 0: enable */
#define VMGPU_HEAD_CURSOR_ADDR_LO	0x38	/* 64x64 ARGB8888, stride 256 */
#define VMGPU_HEAD_CURSOR_ADDR_HI	0x3c
#define VMGPU_HEAD_CURSOR_SPACE		0x40	/* VRAM or GART */
#define VMGPU_HEAD_CURSOR_X		0x44	/* signed: top left corner */
#define VMGPU_HEAD_CURSOR_Y		0x48
#define VMGPU_HEAD_CURSOR_HOT		0x4c	/* hot spot: x | y << 16 */
#define VMGPU_HEAD_FRAME_COUNT		0x50	/* RO: vblanks since enabled */
#define VMGPU_HEAD_FRAME_TIME_LO	0x54	/* RO: ns of that vblank */
#define VMGPU_HEAD_FRAME_TIME_HI	0x58
#define VMGPU_HEAD_CRC			0x5c	/* RO: CRC32 of frame CRC_FRAME */
#define VMGPU_HEAD_CRC_FRAME		0x60	/* RO */
/*
 * RO (1.8): ns from FRAME_TIME to now, in one read; at most
 * VMGPU_HEAD_VBLANK_AGE_MAX, VMGPU_HEAD_VBLANK_AGE_OFF on a head that is off.
 */
#define VMGPU_HEAD_VBLANK_AGE		0x64
#define VMGPU_HEAD_VBLANK_AGE_MAX	0xfffffffeu
#define VMGPU_HEAD_VBLANK_AGE_OFF	0xffffffffu

#define VMGPU_HEAD_STATUS_CONNECTED	(1u << 0)
#define VMGPU_HEAD_STATUS_ACTIVE	(1u << 1)	/* scanning out */
#define VMGPU_HEAD_STATUS_FLIP_PENDING	(1u << 2)	/* COMMIT not latched */
#define VMGPU_HEAD_STATUS_BLANKED	(1u << 3)	/* bad source: black */

#define VMGPU_HEAD_CTRL_ENABLE		(1u << 0)
#define VMGPU_HEAD_CTRL_CRC		(1u << 1)	/* compute frame CRCs */
/* No primary plane: black under the cursor, FB_* ignored (1.7). */
#define VMGPU_HEAD_CTRL_PRIMARY_OFF	(1u << 2)

#define VMGPU_HEAD_COMMIT_VBLANK	1	/* latch at the next vblank */
#define VMGPU_HEAD_COMMIT_NOW		2	/* latch now */
#define VMGPU_HEAD_COMMIT_CURSOR	3	/* latch the cursor alone, now (1.7) */

#define VMGPU_CURSOR_SIZE		64

enum vmgpu_format {
	VMGPU_FORMAT_XRGB8888 = 1,
	VMGPU_FORMAT_ARGB8888 = 2,	/* scanned out as XRGB8888 */
	VMGPU_FORMAT_RGB565 = 3,
};

/* Global display registers; events are write-1-to-clear. */
#define VMGPU_REG_DISPLAY_HEADS		0x0e00	/* RO: number of heads */
#define VMGPU_REG_DISPLAY_EVENTS	0x0e04	/* RW1C: VMGPU_DISPLAY_EVENT_* */
#define VMGPU_REG_DISPLAY_EVENT_MASK	0x0e08	/* events that interrupt */
/* RO (1.7): the clock of FRAME_TIME, now; reading LO latches HI. */
#define VMGPU_REG_DISPLAY_TIME_LO	0x0e0c
#define VMGPU_REG_DISPLAY_TIME_HI	0x0e10
#define VMGPU_DISPLAY_EVENT_VBLANK(h)	(1u << (h))
#define VMGPU_DISPLAY_EVENT_FLIP_DONE(h) (1u << (8 + (h)))
#define VMGPU_DISPLAY_EVENT_HOTPLUG(h)	(1u << (16 + (h)))
#define VMGPU_DISPLAY_EVENTS_ALL	0x000f0f0fu

/* Each head's EDID, 256 bytes, read-only. */
#define VMGPU_REG_EDID(h)		(0x1000 + (h) * 0x100)
#define VMGPU_EDID_SIZE			256

/* ---------------------------------------------------------------------
 * CPU host aperture: BAR4 is HOST_APERTURE_PAGES pages, each redirected by
 * an 8-byte entry in BAR0 to a VRAM page. DETILE presents a swizzled page
 * to the CPU in linear order (reads and writes).
 */
#define VMGPU_HAP_TABLE_OFFSET		0x10000
#define VMGPU_HAP_MAX_PAGES		8192
#define VMGPU_HAP_PTE_VALID		(1ull << 0)
#define VMGPU_HAP_PTE_DETILE		(1ull << 1)
#define VMGPU_HAP_PTE_ADDR_MASK		0x000ffffffffff000ull	/* VRAM offset */

/*
 * The one swizzle format: each 4 KiB page is an 8 x 8 grid of 64-byte
 * blocks stored transposed. Linear block b lives at swizzled block
 * ((b & 7) << 3) | (b >> 3); the mapping is its own inverse.
 */
#define VMGPU_SWIZZLE_BLOCK_SHIFT	6

static inline uint32_t vmgpu_swizzle_offset(uint32_t page_offset)
{
	uint32_t block = (page_offset >> VMGPU_SWIZZLE_BLOCK_SHIFT) & 63;
	uint32_t swizzled = ((block & 7) << 3) | (block >> 3);

	return (swizzled << VMGPU_SWIZZLE_BLOCK_SHIFT) |
	       (page_offset & ((1u << VMGPU_SWIZZLE_BLOCK_SHIFT) - 1));
}

/* ---------------------------------------------------------------------
 * Commands: 64-byte slots. Reserved fields must be zero
 * (VMGPU_ERR_BAD_FIELD otherwise).
 */
enum vmgpu_space {
	VMGPU_SPACE_VRAM = 0,		/* VRAM offset */
	VMGPU_SPACE_GART = 1,		/* aperture segment offset */
	VMGPU_SPACE_SYSTEM = 2,		/* bus address (IOMMU translated) */
	VMGPU_SPACE_VIRTUAL = 3,	/* GPU VA in vmgpu_addr.vm */
};

enum vmgpu_opcode {
	VMGPU_OP_NOP = 0,		/* optionally busy for delay_us */
	VMGPU_OP_FENCE = 1,		/* write a 64-bit value, IRQ */
	VMGPU_OP_FILL = 2,		/* Fill / FillVirtual */
	VMGPU_OP_TRANSFER = 3,		/* Transfer / TransferVirtual */
	VMGPU_OP_DISCARD = 4,		/* contents become undefined */
	VMGPU_OP_NOTIFY = 5,		/* NotifyEviction / NotifyIoMmuUnmap */
	VMGPU_OP_COMPRESS = 6,
	VMGPU_OP_DECOMPRESS = 7,
	VMGPU_OP_CACHE_FLUSH = 8,	/* non-coherent cache maintenance */
	VMGPU_OP_WAIT = 9,		/* stall until *addr >= value */
	VMGPU_OP_SET_VM = 10,		/* VIRTUAL ring: the VM its job runs in */
	VMGPU_OP_COUNT
};

#define VMGPU_FENCE_FLAG_IRQ		(1u << 0)
#define VMGPU_FENCE_FLAG_RING		(1u << 1)  /* dst: the ring's FENCE_ADDR */
#define VMGPU_FILL_FLAG_COHERENT	(1u << 0)  /* ring 0: bypass the cache */
#define VMGPU_TRANSFER_FLAG_SWIZZLE	(1u << 0)  /* dst gets swizzled src */
#define VMGPU_TRANSFER_FLAG_UNSWIZZLE	(1u << 1)  /* dst gets linear src */
#define VMGPU_NOTIFY_FLAG_EVICTION	(1u << 0)
#define VMGPU_NOTIFY_FLAG_IOMMU_UNMAP	(1u << 1)
#define VMGPU_CACHE_FLAG_WRITEBACK	(1u << 0)
#define VMGPU_CACHE_FLAG_INVALIDATE	(1u << 1)

/*
 * Compression (COMPRESS, DECOMPRESS, NOTIFY). The device keeps a set of
 * compressed 4 KiB system pages, keyed by bus address, at most
 * VMGPU_COMPRESS_MAX_PAGES. Each 32-bit little-endian word of such a page
 * is stored XORed with VMGPU_COMPRESS_XOR: VIRTUAL data accesses see the
 * plain words, physical accesses the stored ones.
 */
#define VMGPU_COMPRESS_XOR		0x5a5ac0deu
#define VMGPU_COMPRESS_MAX_PAGES	65536

/*
 * Owners (v1.5). Each compressed page belongs to the address space that
 * compressed it: the ASID of the VM a VIRTUAL address named (VMGPU_REG_VM_ASID),
 * 0 for a physical address. A VIRTUAL access decodes only pages its VM's
 * ASID owns; to every other VM the page is raw. An ASID other than 0 owns
 * at most COMPRESS_QUOTA pages; FORGET drops every page an ASID owns.
 * A page past the quota or the capacity stays raw, which is not an error
 * (v1.9); COMPRESS_SKIPPED counts those pages since reset, modulo 2^32.
 */
#define VMGPU_REG_COMPRESS_PAGES	0x0084	/* RO: capacity of the set */
#define VMGPU_REG_COMPRESS_QUOTA	0x0088	/* RW: pages per ASID != 0 */
#define VMGPU_REG_COMPRESS_FORGET	0x008c	/* WO: an ASID */
#define VMGPU_REG_COMPRESS_SKIPPED	0x0090	/* RO: pages left raw (v1.9) */
#define VMGPU_REG_VM_ASID(v)		(0x0900 + (v) * 4)	/* RW, v != 0 */

/* Filled into discarded ranges so that reliance on them shows. */
#define VMGPU_DISCARD_PATTERN		0xd15ca4deu

#define VMGPU_NOP_MAX_DELAY_US		1000000u

/* An unmet WAIT is re-checked at least this often (virtual clock). */
#define VMGPU_WAIT_RECHECK_US		100u

struct vmgpu_addr {
	vmgpu_le64 addr;
	vmgpu_le32 space;		/* enum vmgpu_space */
	vmgpu_le32 vm;			/* VMGPU_SPACE_VIRTUAL only, else 0 */
};

struct vmgpu_cmd_header {
	vmgpu_le16 opcode;		/* enum vmgpu_opcode */
	vmgpu_le16 flags;
	vmgpu_le32 reserved;
};

struct vmgpu_cmd_nop {
	struct vmgpu_cmd_header hdr;
	vmgpu_le32 delay_us;		/* <= VMGPU_NOP_MAX_DELAY_US */
	vmgpu_le32 reserved[13];
};

struct vmgpu_cmd_fence {
	struct vmgpu_cmd_header hdr;
	struct vmgpu_addr dst;		/* 8-byte aligned */
	vmgpu_le64 value;
	vmgpu_le64 reserved[4];
};

struct vmgpu_cmd_fill {
	struct vmgpu_cmd_header hdr;
	struct vmgpu_addr dst;		/* 4-byte aligned */
	vmgpu_le64 size;		/* multiple of 4 */
	vmgpu_le32 pattern;
	vmgpu_le32 reserved[7];
};

struct vmgpu_cmd_transfer {
	struct vmgpu_cmd_header hdr;	/* VMGPU_TRANSFER_FLAG_* */
	struct vmgpu_addr src;
	struct vmgpu_addr dst;
	vmgpu_le64 size;		/* page multiple when swizzling */
	vmgpu_le64 reserved[2];
};

/* DISCARD, NOTIFY, COMPRESS, DECOMPRESS and CACHE_FLUSH act on a range. */
struct vmgpu_cmd_range {
	struct vmgpu_cmd_header hdr;
	struct vmgpu_addr addr;
	vmgpu_le64 size;		/* CACHE_FLUSH: 0 = whole cache, addr 0 */
	vmgpu_le64 reserved[4];
};

struct vmgpu_cmd_wait {
	struct vmgpu_cmd_header hdr;
	struct vmgpu_addr addr;		/* 8-byte aligned */
	vmgpu_le64 value;
	vmgpu_le64 reserved[4];
};

/*
 * SET_VM binds a VIRTUAL-mode user ring to one device VM as it is now:
 * until the next SET_VM, the ring's VIRTUAL addresses must name @vm, and
 * @generation must still be the VM's VMGPU_VM_GENERATION, else the
 * access is VMGPU_ERR_PRIVILEGE. Enabling or stopping the ring unbinds it.
 * The kernel writes one at the start of each job; user commands never
 * contain one.
 */
struct vmgpu_cmd_set_vm {
	struct vmgpu_cmd_header hdr;
	vmgpu_le32 vm;			/* 1 .. VMGPU_MAX_VMS - 1 */
	vmgpu_le32 generation;
	vmgpu_le64 reserved[6];
};

union vmgpu_cmd {
	struct vmgpu_cmd_header hdr;
	struct vmgpu_cmd_nop nop;
	struct vmgpu_cmd_fence fence;
	struct vmgpu_cmd_fill fill;
	struct vmgpu_cmd_transfer transfer;
	struct vmgpu_cmd_range range;
	struct vmgpu_cmd_wait wait;
	struct vmgpu_cmd_set_vm set_vm;
	uint8_t bytes[64];
};

#define VMGPU_CMD_SIZE			64

_Static_assert(sizeof(union vmgpu_cmd) == VMGPU_CMD_SIZE, "command slot size");
_Static_assert(sizeof(struct vmgpu_cmd_range) == VMGPU_CMD_SIZE, "range size");
_Static_assert(sizeof(struct vmgpu_cmd_transfer) == VMGPU_CMD_SIZE, "transfer size");
_Static_assert(sizeof(struct vmgpu_cmd_set_vm) == VMGPU_CMD_SIZE, "set_vm size");

#endif /* VMGPU_HW_H */

/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the vmgpu guest tests.
 *
 * The host boots each device configuration with the same settings in the
 * QEMU command line and in the guest environment (VMGPU_*), so that tests
 * can check what the driver reports against what the device was given.
 */
#ifndef VMGPU_TESTLIB_H
#define VMGPU_TESTLIB_H

#include <stdint.h>
#include <stddef.h>
#include <time.h>

#include "libvmgpu.h"
#include "vmgpu_card.h"

struct vmgpu_expect {
	uint32_t num_segments;
	uint64_t segment_size[8];
	uint32_t segment_page_size[8];
	int rebar;			/* ReBAR capability present */
	int bar_full;			/* the BAR is expected to cover VRAM */
	uint64_t bar_size;		/* VRAM BAR size at power-on */
	uint64_t host_aperture_size;
};

/*
 * Fill *e from VMGPU_SEGMENTS, VMGPU_REBAR, VMGPU_BAR_EXPECT (full or
 * initial), VMGPU_BAR_SIZE and VMGPU_HOST_APERTURE.
 */
int vmgpu_test_expect(struct vmgpu_expect *e);
/* Parse "64M", "4K", "1G" or plain bytes; returns 0 on success. */
int vmgpu_test_parse_size(const char *s, uint64_t *out, const char **end);
/* /sys/bus/pci/devices/<address> of the device behind dev. */
int vmgpu_test_pci_path(vmgpu_device *dev, char *buf, size_t len);
/* Length of a BAR from the sysfs resource file. */
int vmgpu_test_bar_size(const char *pci_path, int bar, uint64_t *size);
/* Run a shell command, return its exit status (or -1). */
int vmgpu_test_run(const char *cmd);

/* Kernel log lines holding text (a fixed string) so far, or -1. */
int vmgpu_test_dmesg_count(const char *text);

/* Issue any ioctl on dev's fd as is, for malformed requests: 0 or -errno. */
int vmgpu_test_ioctl(vmgpu_device *dev, unsigned long request, void *arg);
/* The entry of segment id in s, NULL if there is none. */
const struct drm_vmgpu_segment *
vmgpu_test_segment(const struct drm_vmgpu_query_segments *s, uint32_t id);
/* Bit mask (bit n = id n) of the memory segments in s. */
uint32_t vmgpu_test_memory_segments(const struct drm_vmgpu_query_segments *s);
/*
 * A memory segment the BAR shows whole, whose CPU-access allocations need no
 * move for a fault: the smallest such one (quicker to fill), with its size and
 * page size; 0 if there is none.
 */
uint32_t vmgpu_test_visible_segment(vmgpu_device *dev, uint64_t *size, uint32_t *page_size);
/* The `used` bytes the query reports for segment id now. */
int vmgpu_test_segment_used(vmgpu_device *dev, uint32_t id, uint64_t *used);

/* /sys/kernel/debug/dri/<n>/<name> of the vmgpu device, if it exists. */
int vmgpu_test_debugfs_path(const char *name, char *path, size_t len);
/* Write text to a file: 0 or the open's or write's -errno. */
int vmgpu_test_write_file(const char *path, const char *text);
/* The aperture segment's id, 0 if the query fails. */
uint32_t vmgpu_test_aperture(vmgpu_device *dev);

/* A dumb buffer, CPU-mapped, and a framebuffer of it. */
struct vmgpu_test_fb {
	uint32_t handle, id, pitch;
	uint64_t size;
	uint32_t *map;
};

/* Create, map and ADDFB2 a w x h dumb buffer of format: 0 or -errno. */
int vmgpu_test_dumb_fb(int card, uint32_t w, uint32_t h, uint32_t format,
		       struct vmgpu_test_fb *fb);
/* The id of object's property name (type a DRM_MODE_OBJECT_*), 0 if none. */
uint32_t vmgpu_test_prop_id(int card, uint32_t object, uint32_t type, const char *name);
/* vgem's card node, loading the module if needed: an fd or -errno. */
int vmgpu_test_open_vgem(void);
/*
 * The debug kernel's dynamic dma-buf exporter (tests/exporter), loading its
 * module if needed: an fd of /dev/vmgpu-test-exporter or -errno.
 */
int vmgpu_test_open_exporter(void);
/*
 * A w x h 32-bit dumb buffer of vgem's, mapped, and exported as a dma-buf
 * (read-write) in *dmabuf: 0 or -errno. fb->id is 0: no framebuffer.
 */
int vmgpu_test_vgem_buffer(int vgem, uint32_t w, uint32_t h, struct vmgpu_test_fb *fb,
			   int *dmabuf);
/* vgem's fences (include/uapi/drm/vgem_drm.h; libdrm ships no copy). */
struct vgem_fence_attach {
	uint32_t handle;
	uint32_t flags;
	uint32_t out_fence;
	uint32_t pad;
};

struct vgem_fence_signal {
	uint32_t fence;
	uint32_t flags;
};

#define VGEM_FENCE_WRITE		0x1
#define DRM_IOCTL_VGEM_FENCE_ATTACH	DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct vgem_fence_attach)
#define DRM_IOCTL_VGEM_FENCE_SIGNAL	DRM_IOW(DRM_COMMAND_BASE + 0x2, struct vgem_fence_signal)

/*
 * A write fence of vgem's on buffer handle (its id in *fence, for
 * VGEM_FENCE_SIGNAL), and a sync_file of it from the buffer's dma-buf in
 * *sync_file: 0 or -errno. vgem signals it itself after 10 s.
 */
int vmgpu_test_vgem_fence(int vgem, uint32_t handle, int dmabuf, uint32_t *fence,
			  int *sync_file);
/* CRC-32 (zlib's) of len bytes, continuing crc (0 to start). */
uint32_t vmgpu_test_crc32(uint32_t crc, const void *buf, size_t len);
/* The frame CRCs of head (debugfs crtc-N/crc, source "auto"): an fd or -errno. */
int vmgpu_test_crc_open(unsigned int head);
/* The next frame's entry: 0, -ETIMEDOUT after 10 s, or -errno. */
int vmgpu_test_crc_next(int crc_fd, uint32_t *frame, uint32_t *crc);
/*
 * Within 60 frames the head shows want, and still does the frame after:
 * 0, -EAGAIN (seen is the last CRC read) or -errno.
 */
int vmgpu_test_crc_wait(int crc_fd, uint32_t want, uint32_t *seen);
/* Write text to the device's debugfs file name: 0 or the write's -errno. */
int vmgpu_test_debugfs_write(const char *name, const char *text);
/* Read the device's debugfs file name into buf (NUL-terminated): 0 or -errno. */
int vmgpu_test_debugfs_read(const char *name, char *buf, size_t len);
/*
 * Turn the scrub of freed VRAM on (1) or off (0): debugfs vram_scrub. Off,
 * every new backing in VRAM is cleared by a paging job of its own, which
 * tests of that path need. 0 or -errno.
 */
int vmgpu_test_vram_scrub(int on);
/*
 * Wait, at most 10 s, until segment holds no free memory left to scrub
 * and, if idle, no scrub runs either; *scrubs and *failed are its scrub
 * counters then (debugfs segment_managers). 0, -ETIMEDOUT, or -errno.
 */
int vmgpu_test_vram_scrubbed(uint32_t segment, int idle, uint64_t *scrubs, uint64_t *failed);

/* Pattern word i of a buffer keyed by key; every word differs. */
static inline uint64_t vmgpu_test_word(uint64_t key, uint64_t i)
{
	return key ^ (i * 0x9e3779b97f4a7c15ull);
}

/* Fill buf with the pattern of key: word i is vmgpu_test_word(key, i). */
void vmgpu_test_fill(void *buf, uint64_t size, uint64_t key);
/* Bytes of buf that differ from the pattern; *first is the first bad offset. */
uint64_t vmgpu_test_check(const void *buf, uint64_t size, uint64_t key, uint64_t *first);
/* Bytes of buf that are not zero; *first is the offset of the first one. */
uint64_t vmgpu_test_nonzero(const void *buf, uint64_t size, uint64_t *first);
/*
 * Leave bytes of segment id full of non-zero garbage: CPU-accessible
 * allocations filled with 0xa5 and freed. Later allocations there get
 * that memory unless something clears it.
 */
int vmgpu_test_dirty_segment(vmgpu_device *dev, uint32_t id, uint32_t aperture,
			     uint64_t bytes);
/* mmap() read-write and unmap again: 0, or the errno mmap() failed with. */
int vmgpu_test_try_mmap(int fd, uint64_t size, uint64_t offset);

/* An allocation in segments (bit n = id n), preferring segment preferred. */
int vmgpu_test_create(vmgpu_device *dev, uint64_t size, uint32_t flags,
		      uint32_t segments, uint32_t preferred, vmgpu_bo **bo);
/* The same with CPU access added to flags, mapped at *cpu; none left on failure. */
int vmgpu_test_create_mapped(vmgpu_device *dev, uint64_t size, uint32_t flags,
			     uint32_t segments, uint32_t preferred, vmgpu_bo **bo,
			     void **cpu);
/* vmgpu_test_create_mapped(), and bound whole at GPU VA va of dev's VM. */
int vmgpu_test_create_at_va(vmgpu_device *dev, uint64_t size, uint32_t flags,
			    uint32_t segments, uint32_t preferred, uint64_t va,
			    vmgpu_bo **bo, void **cpu);
/* A CPU-accessible allocation preferring segment id, the aperture allowed. */
int vmgpu_test_create_mappable(vmgpu_device *dev, uint32_t id, uint32_t aperture,
			       uint64_t size, vmgpu_bo **bo, void **cpu);

/* CLOCK_MONOTONIC, for tests that time what they wait for. */
static inline int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000ll + ts.tv_nsec / 1000;
}

static inline int64_t now_ms(void)
{
	return now_us() / 1000;
}

/* Poll segment id's `used` until <= target, timeout_ms at most: the last read, or UINT64_MAX. */
uint64_t vmgpu_test_used_drops_to(vmgpu_device *dev, uint32_t id, uint64_t target,
				  unsigned int timeout_ms);

#endif

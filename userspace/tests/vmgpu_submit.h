/* SPDX-License-Identifier: MIT */
/*
 * Building and running user jobs in the guest tests: commands with
 * virtual addresses, submission with a syncobj, waits.
 */
#ifndef VMGPU_SUBMIT_H
#define VMGPU_SUBMIT_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xf86drm.h>

#include "libvmgpu.h"
#include "vmgpu_testlib.h"

#define WAIT_NS			(10 * 1000000000ll)

static inline struct vmgpu_addr va_addr(uint64_t va)
{
	return (struct vmgpu_addr){ .addr = va, .space = VMGPU_SPACE_VIRTUAL };
}

static inline union vmgpu_cmd cmd_fill(uint64_t va, uint64_t size, uint32_t pattern)
{
	union vmgpu_cmd c = { 0 };

	c.fill.hdr.opcode = VMGPU_OP_FILL;
	c.fill.dst = va_addr(va);
	c.fill.size = size;
	c.fill.pattern = pattern;
	return c;
}

static inline union vmgpu_cmd cmd_transfer(uint64_t src, uint64_t dst, uint64_t size)
{
	union vmgpu_cmd c = { 0 };

	c.transfer.hdr.opcode = VMGPU_OP_TRANSFER;
	c.transfer.src = va_addr(src);
	c.transfer.dst = va_addr(dst);
	c.transfer.size = size;
	return c;
}

static inline union vmgpu_cmd cmd_nop(uint32_t delay_us)
{
	union vmgpu_cmd c = { 0 };

	c.nop.hdr.opcode = VMGPU_OP_NOP;
	c.nop.delay_us = delay_us;
	return c;
}

static inline union vmgpu_cmd cmd_wait(uint64_t va, uint64_t value)
{
	union vmgpu_cmd c = { 0 };

	c.wait.hdr.opcode = VMGPU_OP_WAIT;
	c.wait.addr = va_addr(va);
	c.wait.value = value;
	return c;
}

static inline union vmgpu_cmd cmd_fence(uint64_t va, uint64_t value)
{
	union vmgpu_cmd c = { 0 };

	c.fence.hdr.opcode = VMGPU_OP_FENCE;
	c.fence.dst = va_addr(va);
	c.fence.value = value;
	return c;
}

/* Submit cmds and signal a fresh binary syncobj, returned in *syncobj. */
static inline int submit_signal(vmgpu_context *ctx, int fd, const union vmgpu_cmd *cmds,
			 uint32_t n, uint32_t *syncobj, uint64_t *seqno)
{
	struct vmgpu_sync out;
	int ret;

	ret = drmSyncobjCreate(fd, 0, syncobj);
	if (ret)
		return -errno;
	out = (struct vmgpu_sync){ .syncobj = *syncobj };
	return vmgpu_context_submit(ctx, cmds, n, NULL, 0, &out, 1, seqno);
}

static inline int wait_syncobj(int fd, uint32_t syncobj)
{
	struct timespec ts;
	int64_t deadline;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	deadline = ts.tv_sec * 1000000000ll + ts.tv_nsec + WAIT_NS;
	return drmSyncobjWait(fd, &syncobj, 1, deadline, 0, NULL) ? -errno : 0;
}

/* Submit, wait for completion, destroy the syncobj. */
static inline int run(vmgpu_context *ctx, int fd, const union vmgpu_cmd *cmds, uint32_t n)
{
	uint32_t syncobj;
	int ret;

	ret = submit_signal(ctx, fd, cmds, n, &syncobj, NULL);
	if (!ret)
		ret = wait_syncobj(fd, syncobj);
	drmSyncobjDestroy(fd, syncobj);
	return ret;
}

static inline uint64_t count_not(const void *buf, uint64_t size, uint32_t pattern)
{
	const uint32_t *w = buf;
	uint64_t i, bad = 0;

	for (i = 0; i < size / 4; i++)
		bad += w[i] != pattern;
	return bad * 4;
}

/* A CPU-visible allocation preferring segment id, mapped at va. */
static inline int make_mapped(vmgpu_device *dev, uint32_t id, uint32_t aperture,
		       uint64_t va, uint64_t size, vmgpu_bo **bo, void **cpu)
{
	return vmgpu_test_create_at_va(dev, size, 0, 1u << id | 1u << aperture, id, va,
				       bo, cpu);
}

/*
 * The same in the aperture segment: only allocations that need a physical
 * reference are mapped into it, the others live in the system segment.
 */
static inline int make_mapped_in_aperture(vmgpu_device *dev, uint32_t aperture,
				   uint64_t va, uint64_t size, vmgpu_bo **bo,
				   void **cpu)
{
	return vmgpu_test_create_at_va(dev, size, DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY,
				       1u << aperture, aperture, va, bo, cpu);
}

static inline uint32_t segment_of(vmgpu_bo *bo)
{
	struct drm_vmgpu_gem_info info;

	if (vmgpu_bo_info_flags(bo, DRM_VMGPU_GEM_INFO_WAIT, &info))
		return ~0u;
	return info.segment_id;
}

/* The first memory segment with at least min_visible CPU-visible bytes. */
static inline const struct drm_vmgpu_segment *
visible_memory_segment(const struct drm_vmgpu_query_segments *s, uint64_t min_visible)
{
	uint32_t i;

	for (i = 0; i < s->num_segments; i++)
		if (s->segments[i].kind == DRM_VMGPU_SEGMENT_MEMORY &&
		    s->segments[i].cpu_visible_size >= min_visible)
			return &s->segments[i];
	return NULL;
}

/*
 * The aperture segment's id, and in *seg the first memory segment with at
 * least min_visible CPU-visible bytes (all zero if none has).
 */
static inline int find_segments(vmgpu_device *dev, uint64_t min_visible,
				uint32_t *aperture, struct drm_vmgpu_segment *seg)
{
	const struct drm_vmgpu_segment *found;
	struct drm_vmgpu_query_segments *s;
	int ret = vmgpu_query_segments(dev, &s);

	if (ret)
		return ret;
	*aperture = vmgpu_aperture_segment_id(s);
	found = visible_memory_segment(s, min_visible);
	if (found)
		*seg = *found;
	else
		memset(seg, 0, sizeof(*seg));
	free(s);
	return 0;
}

#endif

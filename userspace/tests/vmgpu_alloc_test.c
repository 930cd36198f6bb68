// SPDX-License-Identifier: MIT
/*
 * Allocations: create, info and close; placement in the preferred segment,
 * physical references, size rounding, the segments' `used` accounting, and
 * rejection of malformed requests.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "vmgpu_testlib.h"

#define MiB			(1ull << 20)
#define BAD_HANDLE		0xdeadbeef
/* How long a closed allocation may take to leave the `used` counters. */
#define USED_SETTLE_MS		2000

FIXTURE(alloc) {
	vmgpu_device *dev;
	struct vmgpu_expect expect;
	struct drm_vmgpu_query_segments *s;
	uint32_t aperture;		/* aperture segment id */
	uint32_t memory;		/* mask of the memory segments */
	uint32_t all;			/* memory segments and aperture */
};

FIXTURE_SETUP(alloc)
{
	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	ASSERT_EQ(0, vmgpu_test_expect(&self->expect))
		TH_LOG("VMGPU_* environment missing or malformed");
	ASSERT_EQ(0, vmgpu_query_segments(self->dev, &self->s));
	ASSERT_EQ(self->expect.num_segments + 2, self->s->num_segments);
	self->aperture = vmgpu_aperture_segment_id(self->s);
	ASSERT_EQ(self->expect.num_segments + 1, self->aperture);
	self->memory = vmgpu_test_memory_segments(self->s);
	self->all = self->memory | 1u << self->aperture;
}

FIXTURE_TEARDOWN(alloc)
{
	free(self->s);
	vmgpu_device_unref(self->dev);
}

/* GEM_CREATE as given; a handle it unexpectedly returns is closed again. */
static int create_raw(vmgpu_device *dev, const struct drm_vmgpu_gem_create *in)
{
	struct drm_vmgpu_gem_create c = *in;
	int ret = vmgpu_test_ioctl(dev, DRM_IOCTL_VMGPU_GEM_CREATE, &c);

	if (!ret) {
		struct drm_gem_close close_args = { .handle = c.handle };

		vmgpu_test_ioctl(dev, DRM_IOCTL_GEM_CLOSE, &close_args);
	}
	return ret;
}

/*
 * Residency of a small allocation without CPU access in memory segment
 * @id: placed top-down, so beyond the BAR unless the BAR covers it all.
 */
static uint32_t resident_in(const struct drm_vmgpu_query_segments *s, uint32_t id)
{
	const struct drm_vmgpu_segment *seg = vmgpu_test_segment(s, id);

	return DRM_VMGPU_RESIDENCY_RESIDENT |
	       (seg->cpu_visible_size < seg->size ? DRM_VMGPU_RESIDENCY_CPU_INVISIBLE : 0);
}

static uint64_t round_up(uint64_t v, uint64_t align)
{
	return (v + align - 1) / align * align;
}

static uint32_t largest_page(const struct drm_vmgpu_query_segments *s,
			     uint32_t set)
{
	uint32_t i, page = 0;

	for (i = 0; i < s->num_segments; i++)
		if (s->segments[i].id < 32 && set & 1u << s->segments[i].id &&
		    s->segments[i].page_size > page)
			page = s->segments[i].page_size;
	return page;
}

TEST_F(alloc, create_info_close)
{
	struct drm_vmgpu_gem_info info;
	uint32_t handle;
	vmgpu_bo *bo;

	ASSERT_EQ(0, vmgpu_test_create(self->dev, MiB, 0, self->all, 1, &bo));
	handle = vmgpu_bo_handle(bo);
	EXPECT_NE(0, handle);
	ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
	EXPECT_EQ(handle, info.handle);
	EXPECT_EQ(MiB, info.size);
	EXPECT_EQ(info.size, vmgpu_bo_size(bo));
	EXPECT_EQ(0, info.flags);
	EXPECT_EQ(self->all, info.segments);
	/* Nothing else is allocated: the preferred segment has room. */
	EXPECT_EQ(1, info.segment_id);
	EXPECT_EQ(resident_in(self->s, 1), info.residency);
	EXPECT_EQ(0, info.reserved[0]);
	EXPECT_EQ(0, info.reserved[1]);
	vmgpu_bo_unref(bo);

	/* Closed: the handle is gone. */
	info = (struct drm_vmgpu_gem_info){ .handle = handle };
	EXPECT_EQ(-ENOENT, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_INFO,
					    &info));
}

TEST_F(alloc, refcount)
{
	struct drm_vmgpu_gem_info info;
	vmgpu_bo *bo, *again;
	uint32_t handle;

	ASSERT_EQ(0, vmgpu_test_create(self->dev, MiB, 0, self->all, self->aperture, &bo));
	handle = vmgpu_bo_handle(bo);
	again = vmgpu_bo_ref(bo);
	ASSERT_EQ(bo, again);
	vmgpu_bo_unref(bo);
	/* Still referenced once: the handle is still open. */
	EXPECT_EQ(0, vmgpu_bo_info(again, &info));
	vmgpu_bo_unref(again);
	info = (struct drm_vmgpu_gem_info){ .handle = handle };
	EXPECT_EQ(-ENOENT, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_INFO,
					    &info));
}

/* Flags without placement rules of their own are stored and reported. */
TEST_F(alloc, flags_reported)
{
	const uint32_t flags = DRM_VMGPU_ALLOC_CPU_ACCESS |
			       DRM_VMGPU_ALLOC_SWIZZLED |
			       DRM_VMGPU_ALLOC_NOTIFY_EVICTION |
			       DRM_VMGPU_ALLOC_NOTIFY_IOMMU_UNMAP;
	struct drm_vmgpu_gem_info info;
	vmgpu_bo *bo;

	ASSERT_EQ(0, vmgpu_test_create(self->dev, MiB, flags, self->all, 1, &bo));
	ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
	EXPECT_EQ(flags, info.flags);
	vmgpu_bo_unref(bo);

	ASSERT_EQ(0, vmgpu_test_create(self->dev, MiB, DRM_VMGPU_ALLOC_CACHED,
				       1u << self->aperture, self->aperture, &bo));
	ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
	EXPECT_EQ(DRM_VMGPU_ALLOC_CACHED, info.flags);
	vmgpu_bo_unref(bo);
}

/* With nothing else allocated, the preferred memory segment has room. */
TEST_F(alloc, placement_memory)
{
	struct drm_vmgpu_gem_info info;
	uint32_t id;
	vmgpu_bo *bo;

	for (id = 1; id < self->aperture; id++) {
		ASSERT_EQ(0, vmgpu_test_create(self->dev, MiB, 0, self->all, id, &bo));
		ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
		EXPECT_EQ(id, info.segment_id);
		/* Contiguous or not, only physically accessed ones get a reference. */
		EXPECT_EQ(0, info.residency & DRM_VMGPU_RESIDENCY_PHYSICAL);
		EXPECT_EQ(0, info.offset);
		vmgpu_bo_unref(bo);
	}
}

/*
 * Preferring the aperture means system memory. Only allocations accessed
 * physically are mapped into the aperture; the others are system pages
 * (segment 0) with no physical reference.
 */
TEST_F(alloc, placement_aperture)
{
	const struct drm_vmgpu_segment *ap =
		vmgpu_test_segment(self->s, self->aperture);
	struct drm_vmgpu_gem_info info;
	vmgpu_bo *bo;

	ASSERT_EQ(0, vmgpu_test_create(self->dev, MiB, 0, self->all, self->aperture, &bo));
	ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
	EXPECT_EQ(0, info.segment_id);
	/* System memory the device reaches: resident, not physical. */
	EXPECT_EQ(DRM_VMGPU_RESIDENCY_RESIDENT, info.residency);
	EXPECT_EQ(0, info.offset);
	vmgpu_bo_unref(bo);

	ASSERT_EQ(0, vmgpu_test_create(self->dev, MiB, DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY,
				       self->all, self->aperture, &bo));
	ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
	EXPECT_EQ(self->aperture, info.segment_id);
	EXPECT_TRUE(info.residency & DRM_VMGPU_RESIDENCY_PHYSICAL);
	EXPECT_EQ(0, info.offset % ap->page_size);
	EXPECT_LT(info.offset, ap->size);
	EXPECT_LE(info.offset + info.size, ap->size);
	vmgpu_bo_unref(bo);
}

/*
 * Allocations accessed physically, and primaries, are contiguous in a
 * memory segment: a physical reference inside the segment, aligned to its
 * page size, not overlapping any other.
 */
TEST_F(alloc, physical_in_memory)
{
	static const uint32_t flags[] = {
		DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY,
		DRM_VMGPU_ALLOC_PRIMARY,
	};
	uint32_t f, id, k;

	for (f = 0; f < 2; f++) {
		for (id = 1; id < self->aperture; id++) {
			const struct drm_vmgpu_segment *seg =
				vmgpu_test_segment(self->s, id);
			struct drm_vmgpu_gem_info info[2];
			vmgpu_bo *bo[2];

			for (k = 0; k < 2; k++) {
				ASSERT_EQ(0, vmgpu_test_create(self->dev, MiB, flags[f],
							       1u << id, id, &bo[k]));
				ASSERT_EQ(0, vmgpu_bo_info(bo[k], &info[k]));
				EXPECT_EQ(id, info[k].segment_id);
				EXPECT_TRUE(info[k].residency &
					    DRM_VMGPU_RESIDENCY_PHYSICAL)
					TH_LOG("flags %#x segment %u", flags[f], id);
				EXPECT_EQ(0, info[k].offset % seg->page_size);
				EXPECT_LE(info[k].offset + info[k].size, seg->size);
			}
			EXPECT_TRUE(info[0].offset + info[0].size <= info[1].offset ||
				    info[1].offset + info[1].size <= info[0].offset)
				TH_LOG("flags %#x segment %u: [%#llx, +%#llx) and [%#llx, +%#llx) overlap",
				       flags[f], id,
				       (unsigned long long)info[0].offset,
				       (unsigned long long)info[0].size,
				       (unsigned long long)info[1].offset,
				       (unsigned long long)info[1].size);
			vmgpu_bo_unref(bo[0]);
			vmgpu_bo_unref(bo[1]);
		}
	}
}

/*
 * In a memory segment the VRAM BAR covers only in part, allocations without
 * CPU access go top-down, leaving the visible part to those that need it,
 * and go back there after an eviction; CPU-accessible ones stay in the
 * visible part. Checked on physical allocations, whose offset is reported.
 */
TEST_F(alloc, top_down_beyond_the_bar)
{
	uint32_t id, checked = 0;

	for (id = 1; id < self->aperture; id++) {
		const struct drm_vmgpu_segment *seg = vmgpu_test_segment(self->s, id);
		struct drm_vmgpu_gem_info info;
		vmgpu_bo *gpu, *cpu;

		if (!seg->cpu_visible_size || seg->cpu_visible_size == seg->size)
			continue;
		/*
		 * The CPU-accessible one first: it splits the visible part, so
		 * that a smaller free block lies there; the buddy allocator's
		 * default order would take it, only top-down does not.
		 */
		ASSERT_EQ(0, vmgpu_test_create(self->dev, MiB,
					       DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY |
					       DRM_VMGPU_ALLOC_CPU_ACCESS,
					       1u << id | 1u << self->aperture, id, &cpu));
		ASSERT_EQ(0, vmgpu_test_create(self->dev, MiB, DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY,
					       1u << id | 1u << self->aperture, id, &gpu));
		ASSERT_EQ(0, vmgpu_bo_info(gpu, &info));
		EXPECT_EQ(id, info.segment_id);
		EXPECT_GE(info.offset, seg->cpu_visible_size);
		ASSERT_EQ(0, vmgpu_bo_evict(gpu));
		ASSERT_EQ(0, vmgpu_bo_info(gpu, &info));
		EXPECT_EQ(self->aperture, info.segment_id);
		ASSERT_EQ(0, vmgpu_bo_make_resident(gpu));
		ASSERT_EQ(0, vmgpu_bo_info(gpu, &info));
		EXPECT_EQ(id, info.segment_id);
		EXPECT_GE(info.offset, seg->cpu_visible_size);

		ASSERT_EQ(0, vmgpu_bo_info(cpu, &info));
		EXPECT_EQ(id, info.segment_id);
		EXPECT_LE(info.offset + info.size, seg->cpu_visible_size);
		vmgpu_bo_unref(gpu);
		vmgpu_bo_unref(cpu);
		checked++;
	}
	if (!checked)
		SKIP(return, "no memory segment is partly CPU-visible here");
}

/* Sizes are rounded up to the largest page size of the set. */
TEST_F(alloc, size_rounding)
{
	static const uint64_t extra[] = { 1, 4096, 4097 };
	uint32_t id, i, page;
	vmgpu_bo *bo;

	for (id = 1; id <= self->aperture; id++) {
		page = vmgpu_test_segment(self->s, id)->page_size;
		for (i = 0; i < 3; i++) {
			ASSERT_EQ(0, vmgpu_test_create(self->dev, extra[i], 0, 1u << id, id, &bo));
			EXPECT_EQ(round_up(extra[i], page), vmgpu_bo_size(bo))
				TH_LOG("segment %u, %llu bytes asked", id,
				       (unsigned long long)extra[i]);
			vmgpu_bo_unref(bo);
		}
	}

	page = largest_page(self->s, self->all);
	ASSERT_EQ(0, vmgpu_test_create(self->dev, 4096, 0, self->all, self->aperture, &bo));
	EXPECT_EQ(round_up(4096, page), vmgpu_bo_size(bo));
	vmgpu_bo_unref(bo);
}

/*
 * `used` grows by at least the allocation's size in the segment it lands in
 * and shrinks back once it is closed: memory segments, system memory
 * (segment 0) and the aperture.
 */
TEST_F(alloc, used_accounting)
{
	struct used_case {
		uint32_t flags, set, preferred, where;
	} cases[10];
	uint32_t id, n = 0, i;

	for (id = 1; id < self->aperture; id++)
		cases[n++] = (struct used_case){ 0, 1u << id, id, id };
	cases[n++] = (struct used_case){
		0, 1u << self->aperture, self->aperture, 0
	};
	cases[n++] = (struct used_case){
		DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY, 1u << self->aperture,
		self->aperture, self->aperture
	};

	for (i = 0; i < n; i++) {
		const struct used_case *c = &cases[i];
		struct drm_vmgpu_gem_info info;
		uint64_t before, during, after;
		vmgpu_bo *bo;

		ASSERT_EQ(0, vmgpu_test_segment_used(self->dev, c->where, &before));
		ASSERT_EQ(0, vmgpu_test_create(self->dev, 4 * MiB, c->flags, c->set,
					       c->preferred, &bo));
		ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
		EXPECT_EQ(c->where, info.segment_id);
		ASSERT_EQ(0, vmgpu_test_segment_used(self->dev, c->where, &during));
		EXPECT_GE(during, before + vmgpu_bo_size(bo))
			TH_LOG("segment %u: used %llu before, %llu with a %llu byte allocation",
			       c->where, (unsigned long long)before,
			       (unsigned long long)during,
			       (unsigned long long)vmgpu_bo_size(bo));
		vmgpu_bo_unref(bo);
		after = vmgpu_test_used_drops_to(self->dev, c->where, before, USED_SETTLE_MS);
		EXPECT_LE(after, before)
			TH_LOG("segment %u: used %llu before, %llu %d ms after close",
			       c->where, (unsigned long long)before,
			       (unsigned long long)after, USED_SETTLE_MS);
	}
}

TEST_F(alloc, rejects_bad_create)
{
	const uint32_t ap_bit = 1u << self->aperture;
	const struct drm_vmgpu_gem_create good = {
		.size = MiB,
		.segments = ap_bit,
		.preferred_segment = self->aperture,
	};
	struct drm_vmgpu_gem_create c;

	c = good;
	ASSERT_EQ(0, create_raw(self->dev, &c));

	c = good;
	c.flags = 1u << 31;
	EXPECT_EQ(-EINVAL, create_raw(self->dev, &c));
	c = good;
	c.extensions = 1;
	EXPECT_EQ(-EINVAL, create_raw(self->dev, &c));
	c = good;
	c.reserved[0] = 1;
	EXPECT_EQ(-EINVAL, create_raw(self->dev, &c));
	c = good;
	c.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, create_raw(self->dev, &c));
	c = good;
	c.segments = 0;
	EXPECT_EQ(-EINVAL, create_raw(self->dev, &c));
	/* System memory is asked for through the aperture's id, never 0. */
	c = good;
	c.segments = ap_bit | 1;
	EXPECT_EQ(-EINVAL, create_raw(self->dev, &c));
	c = good;
	c.segments = ap_bit << 1;
	c.preferred_segment = self->aperture + 1;
	EXPECT_EQ(-EINVAL, create_raw(self->dev, &c));
	c = good;
	c.segments = ap_bit | 1u << 31;
	EXPECT_EQ(-EINVAL, create_raw(self->dev, &c));
	c = good;
	c.preferred_segment = 1;
	EXPECT_EQ(-EINVAL, create_raw(self->dev, &c));
	c = good;
	c.preferred_segment = 0;
	EXPECT_EQ(-EINVAL, create_raw(self->dev, &c));
	c = good;
	c.preferred_segment = 99;
	EXPECT_EQ(-EINVAL, create_raw(self->dev, &c));
	/* The CPU cannot cache a memory segment coherently. */
	c = good;
	c.flags = DRM_VMGPU_ALLOC_CACHED;
	c.segments = ap_bit | self->memory;
	EXPECT_EQ(-EINVAL, create_raw(self->dev, &c));
	c = good;
	c.size = 0;
	EXPECT_EQ(-EINVAL, create_raw(self->dev, &c));
}

/* No memory segment can ever hold more than its size. */
TEST_F(alloc, rejects_too_big)
{
	struct drm_vmgpu_gem_create c = {
		.size = 1ull << 40,
		.segments = self->memory,
		.preferred_segment = 1,
	};
	uint64_t largest = 0;
	uint32_t id;

	EXPECT_EQ(-E2BIG, create_raw(self->dev, &c));

	for (id = 1; id < self->aperture; id++)
		if (vmgpu_test_segment(self->s, id)->size > largest)
			largest = vmgpu_test_segment(self->s, id)->size;
	c.size = largest + largest_page(self->s, self->memory);
	EXPECT_EQ(-E2BIG, create_raw(self->dev, &c));
}

/*
 * CPU_ACCESS in a memory segment the BAR does not wholly cover needs the
 * aperture in the set too, so that the allocation can always be placed
 * where the CPU reaches it.
 */
TEST_F(alloc, cpu_access_rules)
{
	struct drm_vmgpu_gem_create c = {
		.size = MiB,
		.flags = DRM_VMGPU_ALLOC_CPU_ACCESS,
	};
	uint32_t id;

	for (id = 1; id < self->aperture; id++) {
		const struct drm_vmgpu_segment *seg =
			vmgpu_test_segment(self->s, id);

		c.segments = 1u << id;
		c.preferred_segment = id;
		EXPECT_EQ(seg->cpu_visible_size == seg->size ? 0 : -EINVAL,
			  create_raw(self->dev, &c))
			TH_LOG("segment %u: %llu of %llu bytes CPU-visible", id,
			       (unsigned long long)seg->cpu_visible_size,
			       (unsigned long long)seg->size);
		c.segments |= 1u << self->aperture;
		EXPECT_EQ(0, create_raw(self->dev, &c));
	}
}

TEST_F(alloc, unknown_handle)
{
	struct drm_vmgpu_gem_info info = { .handle = BAD_HANDLE };
	struct drm_vmgpu_gem_mmap_offset mmap_offset = { .handle = BAD_HANDLE };
	struct drm_vmgpu_gem_make_resident resident = { .handle = BAD_HANDLE };

	EXPECT_EQ(-ENOENT, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_INFO,
					    &info));
	EXPECT_EQ(-ENOENT, vmgpu_test_ioctl(self->dev,
					    DRM_IOCTL_VMGPU_GEM_MMAP_OFFSET,
					    &mmap_offset));
	EXPECT_EQ(-ENOENT, vmgpu_test_ioctl(self->dev,
					    DRM_IOCTL_VMGPU_GEM_MAKE_RESIDENT,
					    &resident));
}

TEST_F(alloc, mmap_needs_cpu_access)
{
	struct drm_vmgpu_gem_mmap_offset args = { 0 };
	void *cpu;
	vmgpu_bo *bo;

	ASSERT_EQ(0, vmgpu_test_create(self->dev, MiB, 0, self->all, self->aperture, &bo));
	args.handle = vmgpu_bo_handle(bo);
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev,
					    DRM_IOCTL_VMGPU_GEM_MMAP_OFFSET,
					    &args));
	EXPECT_EQ(-EINVAL, vmgpu_bo_map(bo, &cpu));
	vmgpu_bo_unref(bo);
}

TEST_F(alloc, rejects_bad_args)
{
	struct drm_vmgpu_gem_mmap_offset mmap_offset, mmap_good = { 0 };
	struct drm_vmgpu_gem_make_resident resident, resident_good = { 0 };
	struct drm_vmgpu_gem_info info, info_good = { 0 };
	vmgpu_bo *bo;

	ASSERT_EQ(0, vmgpu_test_create(self->dev, MiB, DRM_VMGPU_ALLOC_CPU_ACCESS,
				       self->all, 1, &bo));
	info_good.handle = vmgpu_bo_handle(bo);
	mmap_good.handle = vmgpu_bo_handle(bo);
	resident_good.handle = vmgpu_bo_handle(bo);

#define EXPECT_IOCTL(ret, request, arg) \
	EXPECT_EQ(ret, vmgpu_test_ioctl(self->dev, request, &arg))

	info = info_good;
	EXPECT_IOCTL(0, DRM_IOCTL_VMGPU_GEM_INFO, info);
	info = info_good;
	info.info_flags = 1u << 31;
	EXPECT_IOCTL(-EINVAL, DRM_IOCTL_VMGPU_GEM_INFO, info);
	info = info_good;
	info.reserved[0] = 1;
	EXPECT_IOCTL(-EINVAL, DRM_IOCTL_VMGPU_GEM_INFO, info);
	info = info_good;
	info.reserved[1] = 1;
	EXPECT_IOCTL(-EINVAL, DRM_IOCTL_VMGPU_GEM_INFO, info);

	mmap_offset = mmap_good;
	EXPECT_IOCTL(0, DRM_IOCTL_VMGPU_GEM_MMAP_OFFSET, mmap_offset);
	mmap_offset = mmap_good;
	mmap_offset.flags = 1;
	EXPECT_IOCTL(-EINVAL, DRM_IOCTL_VMGPU_GEM_MMAP_OFFSET, mmap_offset);
	mmap_offset = mmap_good;
	mmap_offset.reserved[0] = 1;
	EXPECT_IOCTL(-EINVAL, DRM_IOCTL_VMGPU_GEM_MMAP_OFFSET, mmap_offset);
	mmap_offset = mmap_good;
	mmap_offset.reserved[1] = 1;
	EXPECT_IOCTL(-EINVAL, DRM_IOCTL_VMGPU_GEM_MMAP_OFFSET, mmap_offset);

	resident = resident_good;
	EXPECT_IOCTL(0, DRM_IOCTL_VMGPU_GEM_MAKE_RESIDENT, resident);
	resident = resident_good;
	resident.flags = 1;
	EXPECT_IOCTL(-EINVAL, DRM_IOCTL_VMGPU_GEM_MAKE_RESIDENT, resident);
	resident = resident_good;
	resident.reserved[0] = 1;
	EXPECT_IOCTL(-EINVAL, DRM_IOCTL_VMGPU_GEM_MAKE_RESIDENT, resident);
	resident = resident_good;
	resident.reserved[1] = 1;
	EXPECT_IOCTL(-EINVAL, DRM_IOCTL_VMGPU_GEM_MAKE_RESIDENT, resident);

#undef EXPECT_IOCTL
	vmgpu_bo_unref(bo);
}

/*
 * One mapping per allocation, valid across moves; MakeResident brings an
 * evicted allocation back to its preferred segment, every byte with it.
 */
TEST_F(alloc, map_and_make_resident)
{
	struct drm_vmgpu_gem_info info;
	void *cpu, *again;
	uint32_t *words;
	uint64_t i, n;
	vmgpu_bo *bo;

	ASSERT_EQ(0, vmgpu_test_create(self->dev, MiB, DRM_VMGPU_ALLOC_CPU_ACCESS,
				       self->all, 1, &bo));
	ASSERT_EQ(0, vmgpu_bo_map(bo, &cpu));
	ASSERT_EQ(0, vmgpu_bo_map(bo, &again));
	EXPECT_EQ(cpu, again);
	words = cpu;

	n = vmgpu_bo_size(bo) / sizeof(*words);
	for (i = 0; i < n; i++)
		words[i] = i * 2654435761u;
	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
	ASSERT_EQ(0, info.segment_id);
	ASSERT_EQ(0, vmgpu_bo_make_resident(bo));
	ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
	EXPECT_EQ(1, info.segment_id);
	for (i = 0; i < n; i++)
		if (words[i] != (uint32_t)(i * 2654435761u))
			break;
	EXPECT_EQ(n, i) TH_LOG("word %llu differs", (unsigned long long)i);
	vmgpu_bo_unref(bo);
}

/* Evict sends it to system memory; MakeResident brings it back, data intact. */
TEST_F(alloc, evict_and_make_resident)
{
	struct drm_vmgpu_gem_info info;
	uint32_t *words;
	uint64_t i, n;
	vmgpu_bo *bo;

	ASSERT_EQ(0, vmgpu_test_create(self->dev, MiB, DRM_VMGPU_ALLOC_CPU_ACCESS,
				       self->all, 1, &bo));
	ASSERT_EQ(0, vmgpu_bo_map(bo, (void **)&words));
	n = vmgpu_bo_size(bo) / sizeof(*words);
	for (i = 0; i < n; i++)
		words[i] = ~i;

	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
	EXPECT_EQ(0, info.segment_id);
	/* The aperture is in the set: evicted to system memory, still resident. */
	EXPECT_EQ(DRM_VMGPU_RESIDENCY_RESIDENT, info.residency);
	for (i = 0; i < n && words[i] == (uint32_t)~i; i++)
		;
	EXPECT_EQ(n, i) TH_LOG("word %llu differs after eviction", (unsigned long long)i);
	/* Evicting what is already in system memory changes nothing. */
	EXPECT_EQ(0, vmgpu_bo_evict(bo));

	ASSERT_EQ(0, vmgpu_bo_make_resident(bo));
	ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
	EXPECT_EQ(1, info.segment_id);
	EXPECT_EQ(DRM_VMGPU_RESIDENCY_RESIDENT, info.residency);
	for (i = 0; i < n && words[i] == (uint32_t)~i; i++)
		;
	EXPECT_EQ(n, i) TH_LOG("word %llu differs after restore", (unsigned long long)i);
	vmgpu_bo_unref(bo);
}

/*
 * Without the aperture segment in its set, an evicted allocation leaves the
 * device's reach: segment 0, not resident, data intact; MakeResident
 * brings it back. Data is checked where a segment is wholly CPU-visible
 * (CPU access to a partly visible one needs the aperture in the set).
 */
TEST_F(alloc, evict_out_of_reach)
{
	struct drm_vmgpu_gem_info info;
	uint32_t id, visible = 0, flags = 0;
	uint32_t *words = NULL;
	uint64_t i, n = 0;
	vmgpu_bo *bo;

	for (id = self->aperture - 1; id >= 1; id--) {
		const struct drm_vmgpu_segment *seg = vmgpu_test_segment(self->s, id);

		if (seg->cpu_visible_size == seg->size)
			visible = id;
	}
	if (visible)
		flags = DRM_VMGPU_ALLOC_CPU_ACCESS;
	id = visible ?: 1;
	ASSERT_EQ(0, vmgpu_test_create(self->dev, MiB, flags, 1u << id, id, &bo));
	if (visible) {
		ASSERT_EQ(0, vmgpu_bo_map(bo, (void **)&words));
		n = vmgpu_bo_size(bo) / sizeof(*words);
		for (i = 0; i < n; i++)
			words[i] = i ^ 0x5a5a5a5a;
	}

	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
	EXPECT_EQ(0, info.segment_id);
	EXPECT_EQ(0, info.residency);
	for (i = 0; i < n && words[i] == (uint32_t)(i ^ 0x5a5a5a5a); i++)
		;
	EXPECT_EQ(n, i) TH_LOG("word %llu differs after eviction", (unsigned long long)i);

	ASSERT_EQ(0, vmgpu_bo_make_resident(bo));
	ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
	EXPECT_EQ(id, info.segment_id);
	EXPECT_EQ(resident_in(self->s, id), info.residency);
	for (i = 0; i < n && words[i] == (uint32_t)(i ^ 0x5a5a5a5a); i++)
		;
	EXPECT_EQ(n, i) TH_LOG("word %llu differs after restore", (unsigned long long)i);
	vmgpu_bo_unref(bo);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: MIT
/*
 * DRM_IOCTL_VMGPU_QUERY: the device and its segment table, and rejection of
 * malformed requests.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "hw/vmgpu_hw.h"
#include "vmgpu_testlib.h"

FIXTURE(query) {
	vmgpu_device *dev;
	struct vmgpu_expect expect;
};

FIXTURE_SETUP(query)
{
	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	ASSERT_EQ(0, vmgpu_test_expect(&self->expect))
		TH_LOG("VMGPU_* environment missing or malformed");
}

FIXTURE_TEARDOWN(query)
{
	vmgpu_device_unref(self->dev);
}

TEST_F(query, device)
{
	struct drm_vmgpu_query_device info;
	uint64_t vram = 0;
	uint32_t i;

	/* paging_va_size: vmgpu_notify_test checks the seed's rule. */
	for (i = 0; i < self->expect.num_segments; i++)
		vram += self->expect.segment_size[i];

	ASSERT_EQ(0, vmgpu_query_device(self->dev, &info));
	EXPECT_EQ(VMGPU_PCI_VENDOR_ID, info.pci_vendor);
	EXPECT_EQ(VMGPU_PCI_DEVICE_ID, info.pci_device);
	EXPECT_EQ(VMGPU_VERSION_MAJOR, info.hw_version >> 16);
	EXPECT_EQ(self->expect.num_segments + 2, info.num_segments);
	EXPECT_EQ(vram, info.vram_size);
	EXPECT_EQ(self->expect.host_aperture_size, info.host_aperture_size);
	EXPECT_EQ(!!self->expect.rebar, !!(info.flags & DRM_VMGPU_DEVICE_REBAR));
	/* The driver maps VRAM beyond the BAR through any host aperture. */
	EXPECT_EQ(!!info.host_aperture_size, !!(info.flags & DRM_VMGPU_DEVICE_HOST_APERTURE));
	for (i = 0; i < ARRAY_SIZE(info.reserved); i++)
		EXPECT_EQ(0, info.reserved[i]);
}

/*
 * The paging engine's counters follow its work: the clear of a new
 * allocation in VRAM (its own: the scrub of freed VRAM is off) is one
 * more job at least, and busy time.
 */
TEST_F(query, device_counts_paging_work)
{
	struct drm_vmgpu_query_device before, after;
	struct drm_vmgpu_gem_info info;
	vmgpu_bo *bo;
	int ret;

	ASSERT_EQ(0, vmgpu_query_device(self->dev, &before));
	EXPECT_GE(before.host_aperture_size, before.host_aperture_used);
	ASSERT_EQ(0, vmgpu_test_vram_scrub(0));
	ret = vmgpu_test_create(self->dev, 1 << 20, 0, 1u << 1, 1, &bo);
	vmgpu_test_vram_scrub(1);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, vmgpu_bo_info_flags(bo, DRM_VMGPU_GEM_INFO_WAIT, &info));
	ASSERT_EQ(0, vmgpu_query_device(self->dev, &after));
	EXPECT_LT(before.paging_jobs, after.paging_jobs);
	EXPECT_LT(before.paging_busy_ns, after.paging_busy_ns);
	vmgpu_bo_unref(bo);
}

TEST_F(query, segments)
{
	struct drm_vmgpu_query_segments *s;
	const struct drm_vmgpu_segment *seg;
	uint32_t i, n = self->expect.num_segments;

	ASSERT_EQ(0, vmgpu_query_segments(self->dev, &s));
	ASSERT_EQ(n + 2, s->num_segments);

	seg = &s->segments[0];
	EXPECT_EQ(0, seg->id);
	EXPECT_EQ(DRM_VMGPU_SEGMENT_SYSTEM, seg->kind);
	EXPECT_NE(0, seg->size);

	for (i = 0; i < n; i++) {
		seg = &s->segments[i + 1];
		EXPECT_EQ(i + 1, seg->id);
		EXPECT_EQ(DRM_VMGPU_SEGMENT_MEMORY, seg->kind);
		EXPECT_EQ(self->expect.segment_size[i], seg->size);
		EXPECT_EQ(self->expect.segment_page_size[i], seg->page_size);
		EXPECT_LE(seg->cpu_visible_size, seg->size);
		EXPECT_EQ(seg->cpu_visible_size == seg->size,
			  !!(seg->flags & DRM_VMGPU_SEGMENT_CPU_VISIBLE));
	}

	seg = &s->segments[n + 1];
	EXPECT_EQ(n + 1, seg->id);
	EXPECT_EQ(DRM_VMGPU_SEGMENT_APERTURE, seg->kind);
	EXPECT_EQ(4096, seg->page_size);
	EXPECT_NE(0, seg->size);
	free(s);
}

TEST_F(query, size_probe)
{
	struct drm_vmgpu_query q = { .query = DRM_VMGPU_QUERY_DEVICE };

	ASSERT_EQ(0, vmgpu_query_raw(self->dev, &q));
	EXPECT_EQ(sizeof(struct drm_vmgpu_query_device), q.size);

	q = (struct drm_vmgpu_query){ .query = DRM_VMGPU_QUERY_SEGMENTS };
	ASSERT_EQ(0, vmgpu_query_raw(self->dev, &q));
	EXPECT_EQ(sizeof(struct drm_vmgpu_query_segments) +
		  (self->expect.num_segments + 2) * sizeof(struct drm_vmgpu_segment),
		  q.size);
}

TEST_F(query, rejects_bad_input)
{
	struct drm_vmgpu_query_device info;
	struct drm_vmgpu_query good = {
		.query = DRM_VMGPU_QUERY_DEVICE,
		.size = sizeof(info),
		.data = (uintptr_t)&info,
	};
	struct drm_vmgpu_query q;

	q = good;
	q.extensions = 1;
	EXPECT_EQ(-EINVAL, vmgpu_query_raw(self->dev, &q));
	q = good;
	q.reserved[0] = 1;
	EXPECT_EQ(-EINVAL, vmgpu_query_raw(self->dev, &q));
	q = good;
	q.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, vmgpu_query_raw(self->dev, &q));
	q = good;
	q.query = 0x1000;
	EXPECT_EQ(-EINVAL, vmgpu_query_raw(self->dev, &q));
	q = good;
	q.size = sizeof(info) - 8;
	EXPECT_EQ(-EINVAL, vmgpu_query_raw(self->dev, &q));
	EXPECT_EQ(sizeof(info), q.size);
	q = good;
	q.data = 8;
	EXPECT_EQ(-EFAULT, vmgpu_query_raw(self->dev, &q));
	q = good;
	EXPECT_EQ(0, vmgpu_query_raw(self->dev, &q));
}

/*
 * Answers can grow: a buffer larger than today's answer gets the same
 * answer, its size, and zeros past it.
 */
TEST_F(query, larger_buffer)
{
	struct drm_vmgpu_query_device exact;
	uint8_t big[sizeof(exact) + 64];
	struct drm_vmgpu_query q = {
		.query = DRM_VMGPU_QUERY_DEVICE,
		.size = sizeof(big),
		.data = (uintptr_t)big,
	};
	size_t i;

	ASSERT_EQ(0, vmgpu_query_device(self->dev, &exact));
	memset(big, 0xa5, sizeof(big));
	ASSERT_EQ(0, vmgpu_query_raw(self->dev, &q));
	EXPECT_EQ(sizeof(exact), q.size);
	EXPECT_EQ(0, memcmp(&exact, big, sizeof(exact)));
	for (i = sizeof(exact); i < sizeof(big); i++)
		if (big[i])
			break;
	EXPECT_EQ(sizeof(big), i) TH_LOG("byte %zu past the answer not zeroed", i);
}

TEST_HARNESS_MAIN

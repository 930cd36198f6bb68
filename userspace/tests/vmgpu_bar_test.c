// SPDX-License-Identifier: MIT
/*
 * The VRAM BAR: grown to cover all VRAM when the device has a Resizable BAR
 * capability and the platform has room, left at its power-on size when it
 * has none or the resize fails; the query and sysfs agree either way.
 */
#include <stdio.h>
#include <stdlib.h>

#include "kselftest_harness.h"
#include "hw/vmgpu_hw.h"
#include "vmgpu_testlib.h"

FIXTURE(bar) {
	vmgpu_device *dev;
	struct vmgpu_expect expect;
	struct drm_vmgpu_query_device info;
	char pci_path[256];
};

FIXTURE_SETUP(bar)
{
	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	ASSERT_EQ(0, vmgpu_test_expect(&self->expect));
	ASSERT_EQ(0, vmgpu_query_device(self->dev, &self->info));
	ASSERT_EQ(0, vmgpu_test_pci_path(self->dev, self->pci_path,
					 sizeof(self->pci_path)));
}

FIXTURE_TEARDOWN(bar)
{
	vmgpu_device_unref(self->dev);
}

TEST_F(bar, sysfs_agrees)
{
	uint64_t vram_bar, hap_bar;

	ASSERT_EQ(0, vmgpu_test_bar_size(self->pci_path, VMGPU_BAR_VRAM, &vram_bar));
	EXPECT_EQ(vram_bar, self->info.vram_bar_size);
	ASSERT_EQ(0, vmgpu_test_bar_size(self->pci_path, VMGPU_BAR_HOST_APERTURE,
					 &hap_bar));
	EXPECT_EQ(hap_bar, self->info.host_aperture_size);
}

TEST_F(bar, resized_to_cover_vram)
{
	char cmd[160];

	if (!self->expect.bar_full)
		SKIP(return, "configuration leaves the BAR at its power-on size");
	EXPECT_GE(self->info.vram_bar_size, self->info.vram_size);
	/*
	 * The BAR was at its power-on size when the driver first probed, or
	 * this is a later probe (reload, rescan) of a BAR the first one grew.
	 */
	if (self->info.vram_bar_probe_size != self->expect.bar_size)
		EXPECT_EQ(self->info.vram_bar_size, self->info.vram_bar_probe_size);
	snprintf(cmd, sizeof(cmd), "dmesg | grep -q 'BAR %llu MiB (was %llu MiB)'",
		 (unsigned long long)(self->info.vram_bar_size >> 20),
		 (unsigned long long)(self->expect.bar_size >> 20));
	EXPECT_EQ(0, vmgpu_test_run(cmd)) TH_LOG("no probe grew the BAR from its power-on size");
}

TEST_F(bar, stays_at_power_on_size)
{
	if (self->expect.bar_full)
		SKIP(return, "configuration lets the BAR cover VRAM");
	EXPECT_EQ(self->expect.bar_size, self->info.vram_bar_size);
	EXPECT_EQ(self->expect.bar_size, self->info.vram_bar_probe_size);
}

/*
 * What the BAR does not reach is not CPU-visible; a segment with such bytes
 * is reached through the host aperture exactly when the device has one.
 */
TEST_F(bar, segments_follow_bar)
{
	struct drm_vmgpu_query_segments *s;
	uint64_t visible = 0;
	uint32_t i;

	ASSERT_EQ(0, vmgpu_query_segments(self->dev, &s));
	for (i = 0; i < s->num_segments; i++) {
		const struct drm_vmgpu_segment *seg = &s->segments[i];

		if (seg->kind != DRM_VMGPU_SEGMENT_MEMORY)
			continue;
		visible += seg->cpu_visible_size;
		EXPECT_EQ(seg->cpu_visible_size < seg->size && self->info.host_aperture_size,
			  !!(seg->flags & DRM_VMGPU_SEGMENT_HOST_APERTURE))
			TH_LOG("segment %u: %llu of %llu bytes CPU-visible", seg->id,
			       (unsigned long long)seg->cpu_visible_size,
			       (unsigned long long)seg->size);
	}
	if (self->info.vram_bar_size < self->info.vram_size) {
		EXPECT_EQ(self->info.vram_bar_size, visible);
	} else {
		EXPECT_EQ(self->info.vram_size, visible);
	}
	free(s);
}

TEST_HARNESS_MAIN

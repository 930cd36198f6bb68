// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/string.h>

#include <drm/drm_debugfs_crc.h>
#include <drm/drm_drv.h>
#include <drm/drm_vblank.h>

#include "vmgpu_device.h"
#include "vmgpu_display.h"

/**
 * DOC: display CRCs
 *
 * DRM's CRC capture (debugfs crtc-N/crc, source "auto") on the device's
 * frame CRCs (hardware contract, *Display controller*: CRCs): with
 * CTRL.CRC set, the device computes the CRC of each frame it composes at
 * the frame's vblank, and the vblank interrupt adds it as the entry of
 * that vblank. A mode over the device's CRC pixel rate gets none: its CRC
 * registers keep an older frame's, which is never reported.
 */

static const char * const vmgpu_crc_sources[] = { "auto" };

/**
 * vmgpu_crtc_verify_crc_source() - &drm_crtc_funcs.verify_crc_source
 * @crtc: the CRTC
 * @source: the source asked for, NULL for none
 * @values_cnt: set to the number of values per entry
 *
 * Return: 0, or -EINVAL for a source other than "auto".
 */
int vmgpu_crtc_verify_crc_source(struct drm_crtc *crtc, const char *source,
				 size_t *values_cnt)
{
	if (source && strcmp(source, "auto"))
		return -EINVAL;
	*values_cnt = 1;
	return 0;
}

/**
 * vmgpu_crtc_get_crc_sources() - &drm_crtc_funcs.get_crc_sources
 * @crtc: the CRTC
 * @count: set to the number of sources
 *
 * Return: the sources: "auto" alone.
 */
const char *const *vmgpu_crtc_get_crc_sources(struct drm_crtc *crtc, size_t *count)
{
	*count = ARRAY_SIZE(vmgpu_crc_sources);
	return vmgpu_crc_sources;
}

/**
 * vmgpu_crtc_set_crc_source() - &drm_crtc_funcs.set_crc_source
 * @crtc: the CRTC
 * @source: "auto" to capture, NULL to stop
 *
 * CTRL.CRC takes effect at once (contract: it is not latched), so that a
 * CRC switch never COMMITs a commit's half-written registers. It keeps
 * the pending ENABLE and PRIMARY_OFF bits as the last commit wrote them.
 * Vblank interrupts deliver the CRCs: a reference holds them on while
 * capture runs.
 *
 * Return: 0, or -ENODEV after unplug.
 */
int vmgpu_crtc_set_crc_source(struct drm_crtc *crtc, const char *source)
{
	struct vmgpu_head *head = crtc_to_head(crtc);
	struct vmgpu_display *display = &head->vdev->display;
	bool on = source && !strcmp(source, "auto");
	unsigned long flags;
	u32 latched;
	int idx;

	if (!drm_dev_enter(crtc->dev, &idx))
		return -ENODEV;
	if (on && !head->crc_vblank) {
		head->crc_vblank = !drm_crtc_vblank_get(crtc);
	} else if (!on && head->crc_vblank) {
		drm_crtc_vblank_put(crtc);
		head->crc_vblank = false;
	}
	spin_lock_irqsave(&display->lock, flags);
	/* What CRC holds now is stale: no frame of this capture. */
	if (on && !head->crc)
		head->crc_frame = vmgpu_head_read(head, VMGPU_HEAD_CRC_FRAME);
	WRITE_ONCE(head->crc, on);
	latched = vmgpu_head_read(head, VMGPU_HEAD_CTRL) &
		  (VMGPU_HEAD_CTRL_ENABLE | VMGPU_HEAD_CTRL_PRIMARY_OFF);
	vmgpu_head_write(head, VMGPU_HEAD_CTRL, vmgpu_head_ctrl(head, latched));
	spin_unlock_irqrestore(&display->lock, flags);
	drm_dev_exit(idx);
	return 0;
}

/**
 * vmgpu_head_crc_vblank() - add the CRC of the frame a vblank showed
 * @head: the head, in its vblank interrupt
 *
 * Only a CRC the device computed for the frame just counted, and not
 * reported yet, is added.
 */
void vmgpu_head_crc_vblank(struct vmgpu_head *head)
{
	struct vmgpu_display *display = &head->vdev->display;
	bool fresh = false;
	u32 frame, crc;

	/* Without capture, no lock taken in the handler. */
	if (!READ_ONCE(head->crc))
		return;
	spin_lock(&display->lock);
	if (head->crc) {
		frame = vmgpu_head_read(head, VMGPU_HEAD_CRC_FRAME);
		crc = vmgpu_head_read(head, VMGPU_HEAD_CRC);
		fresh = frame != head->crc_frame &&
			frame == vmgpu_head_read(head, VMGPU_HEAD_FRAME_COUNT);
		if (fresh)
			head->crc_frame = frame;
	}
	spin_unlock(&display->lock);
	if (fresh)
		drm_crtc_add_crc_entry(&head->crtc, true, drm_crtc_vblank_count(&head->crtc),
				       &crc);
}

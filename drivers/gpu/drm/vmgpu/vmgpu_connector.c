// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <drm/drm_atomic_state_helper.h>
#include <drm/drm_connector.h>
#include <drm/drm_drv.h>
#include <drm/drm_edid.h>
#include <drm/drm_modeset_helper_vtables.h>
#include <drm/drm_probe_helper.h>

#include "vmgpu_device.h"
#include "vmgpu_display.h"

/**
 * DOC: connectors
 *
 * Each head has one virtual connector (hardware contract, *Display
 * controller*): its modes come from the head's EDID window, or, without a
 * usable EDID, DRM's no-EDID list up to the largest mode the head takes,
 * 1024x768 preferred. Whether it is connected is the head's STATUS; a
 * HOTPLUG interrupt makes DRM probe it again (DOC: display).
 */

static int vmgpu_connector_get_modes(struct drm_connector *connector)
{
	struct vmgpu_head *head = container_of(connector, struct vmgpu_head, connector);
	const struct drm_edid *drm_edid;
	__le32 edid[VMGPU_EDID_SIZE / 4];
	int i, count, idx;

	if (!drm_dev_enter(connector->dev, &idx))
		return 0;
	for (i = 0; i < ARRAY_SIZE(edid); i++)
		edid[i] = cpu_to_le32(vmgpu_read32(head->vdev,
						   VMGPU_REG_EDID(head->index) + 4 * i));
	drm_dev_exit(idx);
	drm_edid = drm_edid_alloc(edid, sizeof(edid));
	drm_edid_connector_update(connector, drm_edid);
	count = drm_edid_connector_add_modes(connector);
	drm_edid_free(drm_edid);
	if (!count) {
		count = drm_add_modes_noedid(connector, VMGPU_MAX_MODE, VMGPU_MAX_MODE);
		drm_set_preferred_mode(connector, 1024, 768);
	}
	return count;
}

static int vmgpu_connector_detect(struct drm_connector *connector,
				  struct drm_modeset_acquire_ctx *ctx, bool force)
{
	struct vmgpu_head *head = container_of(connector, struct vmgpu_head, connector);
	u32 status;
	int idx;

	if (!drm_dev_enter(connector->dev, &idx))
		return connector_status_disconnected;
	status = vmgpu_head_read(head, VMGPU_HEAD_STATUS);
	drm_dev_exit(idx);
	return status & VMGPU_HEAD_STATUS_CONNECTED ? connector_status_connected :
						      connector_status_disconnected;
}

static const struct drm_connector_helper_funcs vmgpu_connector_helper_funcs = {
	.get_modes = vmgpu_connector_get_modes,
	.detect_ctx = vmgpu_connector_detect,
};

static const struct drm_connector_funcs vmgpu_connector_funcs = {
	.fill_modes = drm_helper_probe_single_connector_modes,
	.destroy = drm_connector_cleanup,
	.reset = drm_atomic_helper_connector_reset,
	.atomic_duplicate_state = drm_atomic_helper_connector_duplicate_state,
	.atomic_destroy_state = drm_atomic_helper_connector_destroy_state,
};

/**
 * vmgpu_connector_init() - the connector of a head, attached to its encoder
 * @head: the head, its encoder initialized
 *
 * Return: 0 or a negative errno.
 */
int vmgpu_connector_init(struct vmgpu_head *head)
{
	struct drm_connector *connector = &head->connector;
	int ret;

	ret = drm_connector_init(&head->vdev->drm, connector, &vmgpu_connector_funcs,
				 DRM_MODE_CONNECTOR_VIRTUAL);
	if (ret)
		return ret;
	drm_connector_helper_add(connector, &vmgpu_connector_helper_funcs);
	connector->polled = DRM_CONNECTOR_POLL_HPD;
	return drm_connector_attach_encoder(connector, &head->encoder);
}

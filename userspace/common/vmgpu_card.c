// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <xf86drm.h>
#include <xf86drmMode.h>

#include "vmgpu_card.h"

int vmgpu_open_card(const char *driver)
{
	drmDevicePtr devices[16];
	int count, i, fd = -ENODEV;

	count = drmGetDevices2(0, devices, 16);
	for (i = 0; i < count && fd < 0; i++) {
		drmVersionPtr v;

		if (!(devices[i]->available_nodes & (1 << DRM_NODE_PRIMARY)))
			continue;
		fd = open(devices[i]->nodes[DRM_NODE_PRIMARY], O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			fd = -errno;
			continue;
		}
		v = drmGetVersion(fd);
		if (!v || strcmp(v->name, driver)) {
			close(fd);
			fd = -ENODEV;
		}
		drmFreeVersion(v);
	}
	if (count > 0)
		drmFreeDevices(devices, count);
	return fd;
}

int vmgpu_card_head0(int fd, uint32_t width, uint32_t height, struct vmgpu_card_head *head)
{
	drmModeConnector *conn;
	drmModeRes *res;
	int i, best = -1, ret = 0;

	res = drmModeGetResources(fd);
	if (!res)
		return -errno;
	if (!res->count_crtcs || !res->count_connectors) {
		drmModeFreeResources(res);
		return -ENODEV;
	}
	head->crtc = res->crtcs[0];
	head->connector = res->connectors[0];
	/* A head without a cursor plane answers ENXIO: nothing to turn off. */
	for (i = 0; i < res->count_crtcs && !ret; i++)
		if (drmModeSetCursor(fd, res->crtcs[i], 0, 0, 0) && errno != ENXIO)
			ret = -errno;
	drmModeFreeResources(res);
	if (ret)
		return ret;

	conn = drmModeGetConnector(fd, head->connector);
	if (!conn)
		return -errno;
	for (i = 0; i < conn->count_modes; i++) {
		const drmModeModeInfo *m = &conn->modes[i];

		if (width) {
			if (m->hdisplay == width && m->vdisplay == height) {
				best = i;
				break;
			}
		} else if (best < 0 || m->hdisplay * m->vdisplay <
			   conn->modes[best].hdisplay * conn->modes[best].vdisplay) {
			best = i;
		}
	}
	if (conn->connection != DRM_MODE_CONNECTED)
		ret = -ENOLINK;
	else if (best < 0)
		ret = -ENOENT;
	else
		head->mode = conn->modes[best];
	drmModeFreeConnector(conn);
	return ret;
}

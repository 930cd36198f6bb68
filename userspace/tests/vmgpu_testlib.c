// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "vmgpu_testlib.h"

int vmgpu_test_parse_size(const char *s, uint64_t *out, const char **end)
{
	char *suffix;
	uint64_t v = strtoull(s, &suffix, 0);

	if (suffix == s)
		return -EINVAL;
	switch (*suffix) {
	case 'G':
		v <<= 10;
		/* fallthrough */
	case 'M':
		v <<= 10;
		/* fallthrough */
	case 'K':
		v <<= 10;
		suffix++;
		break;
	}
	*out = v;
	if (end)
		*end = suffix;
	else if (*suffix)
		return -EINVAL;
	return 0;
}

static int env_size(const char *name, uint64_t *out)
{
	const char *v = getenv(name);

	return v ? vmgpu_test_parse_size(v, out, NULL) : -ENOENT;
}

int vmgpu_test_expect(struct vmgpu_expect *e)
{
	const char *p = getenv("VMGPU_SEGMENTS");
	const char *rebar = getenv("VMGPU_REBAR");
	const char *bar = getenv("VMGPU_BAR_EXPECT");

	memset(e, 0, sizeof(*e));
	if (!p || !rebar || !bar || env_size("VMGPU_BAR_SIZE", &e->bar_size) ||
	    env_size("VMGPU_HOST_APERTURE", &e->host_aperture_size))
		return -ENOENT;
	e->rebar = !strcmp(rebar, "on");
	e->bar_full = !strcmp(bar, "full");

	while (*p && e->num_segments < 8) {
		uint64_t page;
		uint32_t i = e->num_segments++;

		if (vmgpu_test_parse_size(p, &e->segment_size[i], &p) || *p != ':' ||
		    vmgpu_test_parse_size(p + 1, &page, &p))
			return -EINVAL;
		e->segment_page_size[i] = page;
		if (*p == ',')
			p++;
	}
	return *p ? -EINVAL : 0;
}

int vmgpu_test_pci_path(vmgpu_device *dev, char *buf, size_t len)
{
	drmDevicePtr d;
	int ret;

	ret = drmGetDevice2(vmgpu_device_fd(dev), 0, &d);
	if (ret)
		return ret;
	snprintf(buf, len, "/sys/bus/pci/devices/%04x:%02x:%02x.%u",
		 d->businfo.pci->domain, d->businfo.pci->bus,
		 d->businfo.pci->dev, d->businfo.pci->func);
	drmFreeDevice(&d);
	return 0;
}

int vmgpu_test_bar_size(const char *pci_path, int bar, uint64_t *size)
{
	unsigned long long start, end, flags;
	char path[256];
	FILE *f;
	int i, ret = -EIO;

	snprintf(path, sizeof(path), "%s/resource", pci_path);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	for (i = 0; i <= bar; i++) {
		if (fscanf(f, "%llx %llx %llx", &start, &end, &flags) != 3)
			goto out;
	}
	*size = end ? end - start + 1 : 0;
	ret = 0;
out:
	fclose(f);
	return ret;
}

int vmgpu_test_run(const char *cmd)
{
	int status = system(cmd);

	if (status < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

int vmgpu_test_dmesg_count(const char *text)
{
	char cmd[256];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "dmesg | grep -cF '%s'", text);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	if (fscanf(p, "%d", &n) != 1)
		n = -1;
	pclose(p);
	return n;
}

int vmgpu_test_ioctl(vmgpu_device *dev, unsigned long request, void *arg)
{
	return drmIoctl(vmgpu_device_fd(dev), request, arg) ? -errno : 0;
}

const struct drm_vmgpu_segment *
vmgpu_test_segment(const struct drm_vmgpu_query_segments *s, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < s->num_segments; i++)
		if (s->segments[i].id == id)
			return &s->segments[i];
	return NULL;
}

uint32_t vmgpu_test_memory_segments(const struct drm_vmgpu_query_segments *s)
{
	uint32_t i, mask = 0;

	for (i = 0; i < s->num_segments; i++)
		if (s->segments[i].kind == DRM_VMGPU_SEGMENT_MEMORY &&
		    s->segments[i].id < 32)
			mask |= 1u << s->segments[i].id;
	return mask;
}

uint32_t vmgpu_test_visible_segment(vmgpu_device *dev, uint64_t *size, uint32_t *page_size)
{
	struct drm_vmgpu_query_segments *s;
	uint32_t mask, id, best = 0;

	if (vmgpu_query_segments(dev, &s))
		return 0;
	mask = vmgpu_test_memory_segments(s);
	for (id = 1; id < 32; id++) {
		const struct drm_vmgpu_segment *seg = vmgpu_test_segment(s, id);

		if (!(mask & (1u << id)) || !seg || seg->cpu_visible_size < seg->size)
			continue;
		if (!best || seg->size < *size) {
			best = id;
			*size = seg->size;
			*page_size = seg->page_size;
		}
	}
	free(s);
	return best;
}

int vmgpu_test_segment_used(vmgpu_device *dev, uint32_t id, uint64_t *used)
{
	const struct drm_vmgpu_segment *seg;
	struct drm_vmgpu_query_segments *s;
	int ret;

	ret = vmgpu_query_segments(dev, &s);
	if (ret)
		return ret;
	seg = vmgpu_test_segment(s, id);
	if (seg)
		*used = seg->used;
	free(s);
	return seg ? 0 : -ENOENT;
}

int vmgpu_test_debugfs_path(const char *name, char *path, size_t len)
{
	DIR *dri = opendir("/sys/kernel/debug/dri");
	struct dirent *e;
	int ret = -ENOENT;

	if (!dri)
		return -errno;
	while (ret && (e = readdir(dri))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, len, "/sys/kernel/debug/dri/%s/%s", e->d_name, name);
		if (!access(path, F_OK))
			ret = 0;
	}
	closedir(dri);
	return ret;
}

int vmgpu_test_write_file(const char *path, const char *text)
{
	/* O_TRUNC: writing nothing to tracefs "trace" only clears it so. */
	int fd = open(path, O_WRONLY | O_TRUNC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, text, strlen(text)) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

uint32_t vmgpu_test_aperture(vmgpu_device *dev)
{
	struct drm_vmgpu_query_segments *s;
	uint32_t id;

	if (vmgpu_query_segments(dev, &s))
		return 0;
	id = vmgpu_aperture_segment_id(s);
	free(s);
	return id;
}

int vmgpu_test_debugfs_write(const char *name, const char *text)
{
	char path[300];
	int ret;

	ret = vmgpu_test_debugfs_path(name, path, sizeof(path));
	return ret ?: vmgpu_test_write_file(path, text);
}

int vmgpu_test_debugfs_read(const char *name, char *buf, size_t len)
{
	char path[300];
	ssize_t n;
	int fd, ret;

	ret = vmgpu_test_debugfs_path(name, path, sizeof(path));
	if (ret)
		return ret;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	ret = n < 0 ? -errno : 0;
	buf[n < 0 ? 0 : n] = 0;
	close(fd);
	return ret;
}

int vmgpu_test_vram_scrub(int on)
{
	return vmgpu_test_debugfs_write("vram_scrub", on ? "1" : "0");
}

int vmgpu_test_vram_scrubbed(uint32_t segment, int idle, uint64_t *scrubs, uint64_t *failed)
{
	static char text[65536];
	char key[32];
	int tries, ret;

	snprintf(key, sizeof(key), "segment %u scrub: ", segment);
	for (tries = 0; tries < 1000; tries++) {
		unsigned long long dirty, n, bytes, f;
		unsigned int running;
		const char *line;

		ret = vmgpu_test_debugfs_read("segment_managers", text, sizeof(text));
		if (ret)
			return ret;
		line = strstr(text, key);
		if (!line || sscanf(line + strlen(key),
				    "%llu bytes dirty, %llu scrubs of %llu bytes, %llu failed, %u running",
				    &dirty, &n, &bytes, &f, &running) != 5)
			return -ENOENT;
		*scrubs = n;
		*failed = f;
		if (!dirty && !(idle && running))
			return 0;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

void vmgpu_test_fill(void *buf, uint64_t size, uint64_t key)
{
	uint64_t *words = buf;
	uint64_t i;

	for (i = 0; i < size / 8; i++)
		words[i] = vmgpu_test_word(key, i);
}

uint64_t vmgpu_test_check(const void *buf, uint64_t size, uint64_t key, uint64_t *first)
{
	const uint64_t *words = buf;
	uint64_t i, diff, bad = 0;
	int b;

	for (i = 0; i < size / 8; i++) {
		diff = words[i] ^ vmgpu_test_word(key, i);
		if (!diff)
			continue;
		if (!bad)
			*first = i * 8;
		for (b = 0; b < 8; b++)
			bad += !!(diff >> (8 * b) & 0xff);
	}
	return bad;
}

uint64_t vmgpu_test_nonzero(const void *buf, uint64_t size, uint64_t *first)
{
	const uint64_t *words = buf;
	uint64_t i, count = 0;
	int b;

	for (i = 0; i < size / 8; i++) {
		if (!words[i])
			continue;
		/* Little-endian: byte b of the word is at offset i * 8 + b. */
		for (b = 0; b < 8; b++) {
			if (!(words[i] >> (8 * b) & 0xff))
				continue;
			if (!count)
				*first = i * 8 + b;
			count++;
		}
	}
	return count;
}

int vmgpu_test_create(vmgpu_device *dev, uint64_t size, uint32_t flags,
		      uint32_t segments, uint32_t preferred, vmgpu_bo **bo)
{
	const struct vmgpu_bo_create_info info = {
		.size = size,
		.flags = flags,
		.segments = segments,
		.preferred_segment = preferred,
	};

	return vmgpu_bo_create(dev, &info, bo);
}

int vmgpu_test_create_mapped(vmgpu_device *dev, uint64_t size, uint32_t flags,
			     uint32_t segments, uint32_t preferred, vmgpu_bo **bo,
			     void **cpu)
{
	int ret = vmgpu_test_create(dev, size, DRM_VMGPU_ALLOC_CPU_ACCESS | flags,
				    segments, preferred, bo);

	if (ret)
		return ret;
	ret = vmgpu_bo_map(*bo, cpu);
	if (ret) {
		/* NULL, so that a fixture's teardown may unref it all the same. */
		vmgpu_bo_unref(*bo);
		*bo = NULL;
	}
	return ret;
}

int vmgpu_test_create_at_va(vmgpu_device *dev, uint64_t size, uint32_t flags,
			    uint32_t segments, uint32_t preferred, uint64_t va,
			    vmgpu_bo **bo, void **cpu)
{
	int ret = vmgpu_test_create_mapped(dev, size, flags, segments, preferred, bo, cpu);

	if (ret)
		return ret;
	ret = vmgpu_vm_map(*bo, 0, va, size, 0);
	if (ret) {
		vmgpu_bo_unref(*bo);
		*bo = NULL;
	}
	return ret;
}

int vmgpu_test_create_mappable(vmgpu_device *dev, uint32_t id, uint32_t aperture,
			       uint64_t size, vmgpu_bo **bo, void **cpu)
{
	return vmgpu_test_create_mapped(dev, size, 0, 1u << id | 1u << aperture, id, bo, cpu);
}

uint64_t vmgpu_test_used_drops_to(vmgpu_device *dev, uint32_t id, uint64_t target,
				  unsigned int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	uint64_t used;

	for (;;) {
		if (vmgpu_test_segment_used(dev, id, &used))
			return UINT64_MAX;
		if (used <= target || now_ms() >= deadline)
			return used;
		/* Fine steps: a caller may time the wait, coarse ones add to it. */
		usleep(1000);
	}
}

int vmgpu_test_dirty_segment(vmgpu_device *dev, uint32_t id, uint32_t aperture,
			     uint64_t bytes)
{
	const uint64_t chunk = 1ull << 20;
	vmgpu_bo *bos[256];
	uint32_t n = 0, i;
	int ret = 0;
	void *cpu;

	while (!ret && n < 256 && n * chunk < bytes) {
		ret = vmgpu_test_create_mappable(dev, id, aperture, chunk, &bos[n], &cpu);
		if (!ret)
			memset(cpu, 0xa5, chunk);
		n += !ret;
	}
	for (i = 0; i < n; i++)
		vmgpu_bo_unref(bos[i]);
	return ret;
}

int vmgpu_test_try_mmap(int fd, uint64_t size, uint64_t offset)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset);

	if (p == MAP_FAILED)
		return errno;
	munmap(p, size);
	return 0;
}

/* A w x h 32-bit dumb buffer of card's, mapped: 0 or -errno. */
static int dumb_buffer(int card, uint32_t w, uint32_t h, struct vmgpu_test_fb *fb)
{
	struct drm_mode_create_dumb create = { .width = w, .height = h, .bpp = 32 };
	struct drm_mode_map_dumb map = { 0 };

	fb->id = 0;
	if (drmIoctl(card, DRM_IOCTL_MODE_CREATE_DUMB, &create))
		return -errno;
	fb->handle = create.handle;
	fb->pitch = create.pitch;
	fb->size = create.size;
	map.handle = create.handle;
	if (drmIoctl(card, DRM_IOCTL_MODE_MAP_DUMB, &map))
		return -errno;
	fb->map = mmap(NULL, fb->size, PROT_READ | PROT_WRITE, MAP_SHARED, card, map.offset);
	return fb->map == MAP_FAILED ? -errno : 0;
}

int vmgpu_test_dumb_fb(int card, uint32_t w, uint32_t h, uint32_t format,
		       struct vmgpu_test_fb *fb)
{
	uint32_t handles[4] = { 0 }, pitches[4] = { 0 }, offsets[4] = { 0 };
	int ret = dumb_buffer(card, w, h, fb);

	if (ret)
		return ret;
	handles[0] = fb->handle;
	pitches[0] = fb->pitch;
	if (drmModeAddFB2(card, w, h, format, handles, pitches, offsets, &fb->id, 0))
		return -errno;
	return 0;
}

uint32_t vmgpu_test_prop_id(int card, uint32_t object, uint32_t type, const char *name)
{
	drmModeObjectProperties *props = drmModeObjectGetProperties(card, object, type);
	uint32_t id = 0;

	for (uint32_t i = 0; props && !id && i < props->count_props; i++) {
		drmModePropertyRes *prop = drmModeGetProperty(card, props->props[i]);

		if (prop && !strcmp(prop->name, name))
			id = prop->prop_id;
		drmModeFreeProperty(prop);
	}
	drmModeFreeObjectProperties(props);
	return id;
}

int vmgpu_test_open_vgem(void)
{
	int fd = vmgpu_open_card("vgem");

	if (fd == -ENODEV && !vmgpu_test_run("modprobe vgem"))
		fd = vmgpu_open_card("vgem");
	return fd;
}

int vmgpu_test_open_exporter(void)
{
	int fd = open("/dev/vmgpu-test-exporter", O_RDWR | O_CLOEXEC);

	if (fd < 0 && !vmgpu_test_run("insmod /usr/lib/vmgpu/modules/vmgpu_test_exporter.ko"))
		fd = open("/dev/vmgpu-test-exporter", O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int vmgpu_test_vgem_buffer(int vgem, uint32_t w, uint32_t h, struct vmgpu_test_fb *fb,
			   int *dmabuf)
{
	int ret = dumb_buffer(vgem, w, h, fb);

	if (ret)
		return ret;
	return drmPrimeHandleToFD(vgem, fb->handle, DRM_CLOEXEC | DRM_RDWR, dmabuf) ? -errno : 0;
}

int vmgpu_test_vgem_fence(int vgem, uint32_t handle, int dmabuf, uint32_t *fence,
			  int *sync_file)
{
	struct vgem_fence_attach attach = { .handle = handle, .flags = VGEM_FENCE_WRITE };
	struct dma_buf_export_sync_file export = { .flags = DMA_BUF_SYNC_RW };

	if (drmIoctl(vgem, DRM_IOCTL_VGEM_FENCE_ATTACH, &attach))
		return -errno;
	*fence = attach.out_fence;
	if (drmIoctl(dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &export))
		return -errno;
	*sync_file = export.fd;
	return 0;
}

uint32_t vmgpu_test_crc32(uint32_t crc, const void *buf, size_t len)
{
	static uint32_t table[256];
	const uint8_t *p = buf;

	if (!table[1]) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;

			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	}
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

int vmgpu_test_crc_open(unsigned int head)
{
	char name[64], path[256];
	int ret;

	snprintf(name, sizeof(name), "crtc-%u/crc/control", head);
	ret = vmgpu_test_debugfs_path(name, path, sizeof(path));
	if (ret)
		return ret;
	ret = vmgpu_test_write_file(path, "auto");
	if (ret)
		return ret;
	strcpy(strrchr(path, '/'), "/data");
	ret = open(path, O_RDONLY | O_CLOEXEC);
	return ret < 0 ? -errno : ret;
}

int vmgpu_test_crc_next(int crc_fd, uint32_t *frame, uint32_t *crc)
{
	char line[64];
	struct pollfd p = { .fd = crc_fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, 10000) != 1)
		return -ETIMEDOUT;
	n = read(crc_fd, line, sizeof(line) - 1);
	/* "0x%08x 0x%08x\n" and its NUL: LINE_LEN of one value. */
	if (n != 23)
		return n < 0 ? -errno : -EIO;
	line[n] = 0;
	return sscanf(line, "%x %x", frame, crc) == 2 ? 0 : -EIO;
}

int vmgpu_test_crc_wait(int crc_fd, uint32_t want, uint32_t *seen)
{
	uint32_t frame, crc = 0;
	int i, ret;

	for (i = 0; i < 60; i++) {
		ret = vmgpu_test_crc_next(crc_fd, &frame, &crc);
		if (ret)
			return ret;
		if (crc == want) {
			ret = vmgpu_test_crc_next(crc_fd, &frame, &crc);
			*seen = crc;
			return ret ?: (crc == want ? 0 : -EAGAIN);
		}
	}
	*seen = crc;
	return -EAGAIN;
}

// SPDX-License-Identifier: MIT
/*
 * vmgpu-top: what the video memory manager is doing, live. Each segment's
 * occupancy as a bar, the CPU host aperture and the paging engine (from
 * DRM_IOCTL_VMGPU_QUERY), and per client (from every process's fdinfo,
 * as gputop and nvtop find them; root sees every process) its memory per
 * region, engine time and the memory manager's work for it (the vmgpu-*
 * keys): VOUT and VIN are the bytes paged out of and into VRAM.
 *
 *   vmgpu-top [--once] [--interval MS] [--iterations N] [--png FILE]
 *
 * --once prints one frame without terminal control codes, for scripts;
 * --png also draws the segments' bars into a PNG image (libpng).
 */
#include <dirent.h>
#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libvmgpu.h"

#define MAX_CLIENTS	64
#define MAX_KEYS	96
#define BAR_WIDTH	32

struct fdinfo_key {
	char name[48];
	unsigned long long value;	/* bytes for KiB/MiB values */
};

struct client {
	int pid;
	char comm[20];
	unsigned long long id;
	unsigned int num_keys;
	struct fdinfo_key keys[MAX_KEYS];
};

struct sample {
	double time;
	struct drm_vmgpu_query_device info;
	struct drm_vmgpu_query_segments *segments;
	unsigned int num_clients;
	struct client clients[MAX_CLIENTS];
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static unsigned long long key_value(const struct client *c, const char *name)
{
	unsigned int i;

	for (i = 0; i < c->num_keys; i++)
		if (!strcmp(c->keys[i].name, name))
			return c->keys[i].value;
	return 0;
}

/* "key:\tvalue [KiB|MiB]" lines of a vmgpu file's fdinfo; 0 if it is not one. */
static int read_fdinfo(const char *path, struct client *c)
{
	char line[256], name[48], unit[8];
	unsigned long long value;
	int vmgpu = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	c->num_keys = 0;
	while (fgets(line, sizeof(line), f)) {
		unit[0] = 0;
		if (sscanf(line, "%47[^:]: %llu %7s", name, &value, unit) < 2) {
			if (!strncmp(line, "drm-driver:", 11) && strstr(line, "vmgpu"))
				vmgpu = 1;
			continue;
		}
		if (!strcmp(unit, "KiB"))
			value <<= 10;
		else if (!strcmp(unit, "MiB"))
			value <<= 20;
		if (!strcmp(name, "drm-client-id"))
			c->id = value;
		else if (c->num_keys < MAX_KEYS) {
			snprintf(c->keys[c->num_keys].name, sizeof(c->keys[0].name), "%s", name);
			c->keys[c->num_keys++].value = value;
		}
	}
	fclose(f);
	return vmgpu;
}

static void read_comm(int pid, char *comm, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "r");
	if (!f || !fgets(comm, len, f))
		snprintf(comm, len, "?");
	else
		comm[strcspn(comm, "\n")] = 0;
	if (f)
		fclose(f);
	/* Any process names itself: no control codes to the terminal, one column. */
	for (; *comm; comm++)
		if (*comm <= ' ' || *comm == 0x7f)
			*comm = '_';
}

/* Every vmgpu DRM file open in any process, once per client id. */
static void scan_clients(struct sample *s)
{
	DIR *proc = opendir("/proc"), *fds;
	struct dirent *p, *fd;
	char path[300];
	unsigned int i;

	s->num_clients = 0;
	while (proc && (p = readdir(proc)) && s->num_clients < MAX_CLIENTS) {
		int pid = atoi(p->d_name);

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
		fds = opendir(path);
		while (fds && (fd = readdir(fds)) && s->num_clients < MAX_CLIENTS) {
			struct client *c = &s->clients[s->num_clients];

			if (fd->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, fd->d_name);
			if (!read_fdinfo(path, c))
				continue;
			for (i = 0; i < s->num_clients && s->clients[i].id != c->id; i++)
				;
			if (i < s->num_clients)
				continue;
			c->pid = pid;
			read_comm(pid, c->comm, sizeof(c->comm));
			s->num_clients++;
		}
		if (fds)
			closedir(fds);
	}
	if (proc)
		closedir(proc);
}

static int take_sample(vmgpu_device *dev, struct sample *s)
{
	int ret;

	s->time = now();
	ret = vmgpu_query_device(dev, &s->info);
	if (!ret)
		ret = vmgpu_query_segments(dev, &s->segments);
	if (!ret)
		scan_clients(s);
	return ret;
}

/* The fdinfo region name of a segment. */
static void region_name(const struct drm_vmgpu_segment *seg, char *buf, size_t len)
{
	if (seg->kind == DRM_VMGPU_SEGMENT_MEMORY)
		snprintf(buf, len, "vram%u", seg->id);
	else if (seg->kind == DRM_VMGPU_SEGMENT_APERTURE)
		snprintf(buf, len, "aperture");
	else
		snprintf(buf, len, "system");
}

/* Bytes in use and size of a segment; the system segment's are the device's reach. */
static void segment_use(const struct sample *s, const struct drm_vmgpu_segment *seg,
			unsigned long long *used, unsigned long long *size)
{
	if (seg->kind == DRM_VMGPU_SEGMENT_SYSTEM) {
		*used = s->info.resident_system_used;
		*size = s->info.resident_system_size;
	} else {
		*used = seg->used;
		*size = seg->size;
	}
}

static void print_bar(const char *name, unsigned long long used, unsigned long long size)
{
	int fill = size ? (int)(used * BAR_WIDTH / size) : 0, i;

	printf("%-14s %9llu / %9llu KiB [", name, used >> 10, size >> 10);
	for (i = 0; i < BAR_WIDTH; i++)
		putchar(i < fill ? '#' : '.');
	printf("] %3d%%\n", size ? (int)(used * 100 / size) : 0);
}

static const struct client *find_client(const struct sample *s, unsigned long long id)
{
	unsigned int i;

	for (i = 0; s && i < s->num_clients; i++)
		if (s->clients[i].id == id)
			return &s->clients[i];
	return NULL;
}

/*
 * How much a counter grew since the previous sample; fdinfo's may dip
 * (drm-usage-stats.rst), which is no growth.
 */
static unsigned long long growth(const struct client *c, const struct client *p,
				 const char *key)
{
	unsigned long long now = key_value(c, key), before = key_value(p, key);

	return now > before ? now - before : 0;
}

/* Rates need the previous sample; --once prints totals only. */
static void print_frame(const struct sample *s, const struct sample *prev)
{
	static const char *const engines[] = { "gpuva0", "gpuva1", "physical" };
	double dt = prev ? s->time - prev->time : 0;
	const struct drm_vmgpu_segment *seg;
	unsigned long long used, size;
	char region[16], key[64];
	unsigned int i, j, k;

	printf("vmgpu-top: contract %u.%u, %u segments\n", s->info.hw_version >> 16,
	       s->info.hw_version & 0xffff, s->segments->num_segments);
	for (i = 0; i < s->segments->num_segments; i++) {
		seg = &s->segments->segments[i];
		region_name(seg, region, sizeof(region));
		segment_use(s, seg, &used, &size);
		print_bar(region, used, size);
	}
	print_bar("host-aperture", s->info.host_aperture_used, s->info.host_aperture_size);
	printf("paging engine  %llu jobs, busy %llu ms", s->info.paging_jobs,
	       s->info.paging_busy_ns / 1000000);
	if (dt > 0)
		printf(" (%.0f jobs/s, %.1f%% busy)",
		       (s->info.paging_jobs - prev->info.paging_jobs) / dt,
		       (s->info.paging_busy_ns - prev->info.paging_busy_ns) / (dt * 1e7));
	printf("\n\n%7s %-15s", "PID", "COMMAND");
	for (i = 0; i < s->segments->num_segments; i++) {
		region_name(&s->segments->segments[i], region, sizeof(region));
		printf(" %9s", region);
	}
	printf(" %7s %7s %7s %8s %8s %6s %5s %4s %6s\n", "GPUVA0", "GPUVA1", "PHYS",
	       "VOUT-KiB", "VIN-KiB", "NOTIFY", "LOCKM", "LOST", "HAP");
	for (k = 0; k < s->num_clients; k++) {
		const struct client *c = &s->clients[k], *p = find_client(prev, c->id);
		unsigned long long out = 0, in = 0;

		printf("%7d %-15s", c->pid, c->comm);
		for (i = 0; i < s->segments->num_segments; i++) {
			region_name(&s->segments->segments[i], region, sizeof(region));
			snprintf(key, sizeof(key), "drm-total-%s", region);
			printf(" %9llu", key_value(c, key) >> 10);
			if (s->segments->segments[i].kind != DRM_VMGPU_SEGMENT_MEMORY)
				continue;
			snprintf(key, sizeof(key), "vmgpu-paged-out-%s", region);
			out += key_value(c, key);
			snprintf(key, sizeof(key), "vmgpu-paged-in-%s", region);
			in += key_value(c, key);
		}
		/* Engine time: ms in total, or per cent of the interval. */
		for (j = 0; j < 3; j++) {
			snprintf(key, sizeof(key), "drm-engine-%s", engines[j]);
			if (p && dt > 0)
				printf(" %6.1f%%", growth(c, p, key) / (dt * 1e7));
			else
				printf(" %5llums", key_value(c, key) / 1000000);
		}
		printf(" %8llu %8llu %6llu %5llu %4llu %6llu\n", out >> 10, in >> 10,
		       key_value(c, "vmgpu-notify-eviction") +
		       key_value(c, "vmgpu-notify-iommu-unmap"),
		       key_value(c, "vmgpu-lock-moves"), key_value(c, "vmgpu-contents-lost"),
		       key_value(c, "vmgpu-host-aperture") >> 10);
	}
}

/* Each segment and the host aperture as a bar: used in colour, free in grey. */
static int write_png(const struct sample *s, const char *file)
{
	static const unsigned char colours[][3] = {
		{ 0x3b, 0x82, 0xf6 }, { 0x10, 0xb9, 0x81 }, { 0xf5, 0x9e, 0x0b },
		{ 0xef, 0x44, 0x44 }, { 0x8b, 0x5c, 0xf6 },
	};
	const unsigned int width = 640, row = 40, margin = 8;
	unsigned int bars = s->segments->num_segments + 1, height = bars * row;
	png_image image = { .version = PNG_IMAGE_VERSION, .width = width,
			    .height = height, .format = PNG_FORMAT_RGB };
	unsigned char *pixels = malloc((size_t)width * height * 3);
	unsigned long long used, size;
	unsigned int b, x, y;
	int ok;

	if (!pixels)
		return -ENOMEM;
	memset(pixels, 0xff, (size_t)width * height * 3);
	for (b = 0; b < bars; b++) {
		unsigned int fill;

		if (b < s->segments->num_segments) {
			segment_use(s, &s->segments->segments[b], &used, &size);
		} else {
			used = s->info.host_aperture_used;
			size = s->info.host_aperture_size;
		}
		fill = size ? (unsigned int)(used * (width - 2 * margin) / size) : 0;
		for (y = b * row + margin; y < (b + 1) * row - margin; y++)
			for (x = margin; x < width - margin; x++) {
				unsigned char *px = pixels + ((size_t)y * width + x) * 3;
				const unsigned char *c = colours[b % 5];
				int on = x - margin < fill;

				px[0] = on ? c[0] : 0xd1;
				px[1] = on ? c[1] : 0xd5;
				px[2] = on ? c[2] : 0xdb;
			}
	}
	ok = png_image_write_to_file(&image, file, 0, pixels, 0, NULL);
	free(pixels);
	if (!ok) {
		fprintf(stderr, "vmgpu-top: %s: %s\n", file, image.message);
		return -EIO;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: vmgpu-top [--once] [--interval MS] [--iterations N] [--png FILE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int once = 0, interval_ms = 1000, iterations = -1, i, ret;
	struct sample *s = calloc(2, sizeof(*s)), *cur, *prev = NULL;
	const char *png = NULL;
	vmgpu_device *dev;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--once"))
			once = 1;
		else if (!strcmp(argv[i], "--interval") && i + 1 < argc)
			interval_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--iterations") && i + 1 < argc)
			iterations = atoi(argv[++i]) ?: -2;
		else if (!strcmp(argv[i], "--png") && i + 1 < argc)
			png = argv[++i];
		else
			usage();
	}
	if (!s || interval_ms <= 0 || interval_ms > 3600000 || (iterations != -1 && iterations <= 0))
		usage();
	ret = vmgpu_device_open(&dev);
	if (ret) {
		fprintf(stderr, "vmgpu-top: no vmgpu device: %s\n", strerror(-ret));
		return 1;
	}
	for (i = 0; once ? i < 1 : iterations < 0 || i < iterations; i++) {
		cur = &s[i & 1];
		free(cur->segments);
		cur->segments = NULL;
		ret = take_sample(dev, cur);
		if (ret) {
			fprintf(stderr, "vmgpu-top: query failed: %s\n", strerror(-ret));
			break;
		}
		if (!once)
			printf("\033[H\033[2J");
		print_frame(cur, prev);
		fflush(stdout);
		if (png) {
			ret = write_png(cur, png);
			if (ret)
				break;
		}
		prev = cur;
		if (!once && (iterations < 0 || i + 1 < iterations))
			usleep((useconds_t)interval_ms * 1000);
	}
	free(s[0].segments);
	free(s[1].segments);
	free(s);
	vmgpu_device_unref(dev);
	return ret ? 1 : 0;
}

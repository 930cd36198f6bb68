// SPDX-License-Identifier: MIT
/*
 * vmgpu-top: what it prints agrees with the query and with the test's own
 * fdinfo, and its --png picture is a PNG of the segments' bars.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define PNG_FILE	"/tmp/vmgpu-top-test-%d.png"

/* vmgpu-top --once's output, or NULL. */
static char *top_once(const char *args)
{
	static char out[65536];
	char cmd[256];
	size_t len = 0, n;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "vmgpu-top --once %s", args);
	p = popen(cmd, "r");
	if (!p)
		return NULL;
	while ((n = fread(out + len, 1, sizeof(out) - 1 - len, p)) > 0)
		len += n;
	out[len] = 0;
	return pclose(p) ? NULL : out;
}

/* The line that starts with name and a space, or NULL. */
static const char *find_line(const char *out, const char *name)
{
	size_t len = strlen(name);
	const char *line;

	for (line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (!strncmp(line, name, len) && line[len] == ' ')
			return line;
	return NULL;
}

/* "<name> <used> / <size> KiB [...]": 0, or -1 if absent. */
static int bar_of(const char *out, const char *name, unsigned long long *used,
		  unsigned long long *size)
{
	const char *line = find_line(out, name);

	return line && sscanf(line + strlen(name), " %llu / %llu KiB", used, size) == 2 ? 0 : -1;
}

/* This process's row: the column after PID and COMMAND numbered col (0: first region). */
static long long client_column(const char *out, int col)
{
	char pid[16];
	const char *line;
	long long v = -1;
	int i;

	snprintf(pid, sizeof(pid), "%d", getpid());
	for (line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char first[16], comm[32];
		int used;

		if (sscanf(line, "%15s %31s%n", first, comm, &used) != 2 || strcmp(first, pid))
			continue;
		line += used;
		for (i = 0; i <= col; i++) {
			if (sscanf(line, " %lld%n", &v, &used) != 1)
				return -1;
			line += used;
			/* Engine time columns end in "ms" or "%". */
			line += strspn(line, "ms%");
		}
		return v;
	}
	return -1;
}

FIXTURE(top) {
	vmgpu_device *dev;
	struct drm_vmgpu_query_segments *s;
	uint32_t aperture;
};

FIXTURE_SETUP(top)
{
	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	ASSERT_EQ(0, vmgpu_query_segments(self->dev, &self->s));
	self->aperture = vmgpu_aperture_segment_id(self->s);
	ASSERT_NE(0, self->aperture);
}

FIXTURE_TEARDOWN(top)
{
	free(self->s);
	vmgpu_device_unref(self->dev);
}

/*
 * The segments' bars are the query's numbers; this process's row has its
 * allocations per region and, once one moved, its paging traffic.
 */
TEST_F(top, agrees_with_query_and_fdinfo)
{
	struct drm_vmgpu_query_segments *now;
	struct drm_vmgpu_query_device info;
	unsigned long long used, size;
	vmgpu_bo *vram, *aper;
	const char *out;
	uint32_t i;

	ASSERT_EQ(0, vmgpu_test_create(self->dev, 2 << 20, 0, 1u << 1 | 1u << self->aperture, 1,
				       &vram));
	ASSERT_EQ(0, vmgpu_test_create(self->dev, 1 << 20, DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY,
				       1u << self->aperture, self->aperture, &aper));
	ASSERT_EQ(1, segment_of(vram));
	ASSERT_EQ(self->aperture, segment_of(aper));
	out = top_once("");
	ASSERT_NE(NULL, out);
	ASSERT_EQ(0, vmgpu_query_segments(self->dev, &now));
	ASSERT_EQ(0, vmgpu_query_device(self->dev, &info));
	for (i = 1; i < now->num_segments; i++) {
		char name[16];

		if (i == self->aperture)
			snprintf(name, sizeof(name), "aperture");
		else
			snprintf(name, sizeof(name), "vram%u", i);
		ASSERT_EQ(0, bar_of(out, name, &used, &size)) TH_LOG("no bar for %s", name);
		EXPECT_EQ(now->segments[i].used >> 10, used) TH_LOG("%s", name);
		EXPECT_EQ(now->segments[i].size >> 10, size) TH_LOG("%s", name);
	}
	free(now);
	/* The system segment's bar: the system memory the device reaches. */
	ASSERT_EQ(0, bar_of(out, "system", &used, &size));
	EXPECT_EQ(info.resident_system_used >> 10, used);
	EXPECT_EQ(info.resident_system_size >> 10, size);
	ASSERT_EQ(0, bar_of(out, "host-aperture", &used, &size));
	EXPECT_EQ(info.host_aperture_used >> 10, used);
	EXPECT_EQ(info.host_aperture_size >> 10, size);
	/* Columns: one per segment, system first, in the query's order. */
	EXPECT_EQ(2048, client_column(out, 1));
	EXPECT_EQ(1024, client_column(out, self->aperture));
	EXPECT_EQ(0, client_column(out, 0));

	ASSERT_EQ(0, vmgpu_bo_evict(vram));
	out = top_once("");
	ASSERT_NE(NULL, out);
	EXPECT_EQ(0, client_column(out, 1));
	EXPECT_EQ(2048, client_column(out, 0));
	/* VOUT-KiB and VIN-KiB, after the regions and three engines: VRAM only. */
	EXPECT_EQ(2048, client_column(out, self->s->num_segments + 3));
	EXPECT_EQ(0, client_column(out, self->s->num_segments + 4));
	ASSERT_EQ(0, vmgpu_bo_make_resident(vram));
	out = top_once("");
	ASSERT_NE(NULL, out);
	EXPECT_EQ(2048, client_column(out, 1));
	EXPECT_EQ(2048, client_column(out, self->s->num_segments + 3));
	EXPECT_EQ(2048, client_column(out, self->s->num_segments + 4));
	vmgpu_bo_unref(aper);
	vmgpu_bo_unref(vram);
}

/* --png: a PNG with one bar per segment and one for the host aperture. */
TEST_F(top, png_of_the_segments)
{
	static const unsigned char signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	unsigned char head[24];
	char png[64], args[80];
	FILE *f;

	snprintf(png, sizeof(png), PNG_FILE, getpid());
	snprintf(args, sizeof(args), "--png %s", png);
	unlink(png);
	ASSERT_NE(NULL, top_once(args));
	f = fopen(png, "rb");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(sizeof(head), fread(head, 1, sizeof(head), f));
	fclose(f);
	EXPECT_EQ(0, memcmp(head, signature, sizeof(signature)));
	EXPECT_EQ(0, memcmp(head + 12, "IHDR", 4));
	/* Big-endian width and height. */
	EXPECT_EQ(640, head[18] << 8 | head[19]);
	EXPECT_EQ((self->s->num_segments + 1) * 40, head[22] << 8 | head[23]);
	unlink(png);
}

/* Bad arguments: usage and exit status 2, nothing drawn. */
TEST_F(top, bad_arguments)
{
	int status = system("vmgpu-top --bogus >/dev/null 2>&1");

	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(2, WEXITSTATUS(status));
	status = system("vmgpu-top --interval 0 >/dev/null 2>&1");
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(2, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: MIT
/*
 * fbdev emulation: the guest's console is on head 0, /dev/fb0 writes reach
 * the head pixel for pixel (its frame CRC proves it), and when the last
 * DRM client closes, the console comes back without what that client left
 * on the planes (its cursor in particular).
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/fb.h>

#include <drm_fourcc.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "kselftest_harness.h"
#include "vmgpu_testlib.h"

/* The /sys/class/vtconsole entry of fbcon: 0, or -errno. */
static int fbcon_bind_path(char *path, size_t len)
{
	DIR *dir = opendir("/sys/class/vtconsole");
	struct dirent *d;
	char name[256];
	int ret = -ENOENT;

	if (!dir)
		return -errno;
	while (ret && (d = readdir(dir))) {
		FILE *f;

		if (strncmp(d->d_name, "vtcon", 5))
			continue;
		snprintf(path, len, "/sys/class/vtconsole/%.32s/name", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) && strstr(name, "frame buffer device")) {
			snprintf(path, len, "/sys/class/vtconsole/%.32s/bind", d->d_name);
			ret = 0;
		}
		fclose(f);
	}
	closedir(dir);
	return ret;
}

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ret = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		ret = -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return ret;
}

/* The X byte varies: the display must not show it. */
static uint32_t pixel(uint32_t x, uint32_t y, uint32_t key)
{
	return (x ^ key) << 24 | ((x * 5 + y * 257 + key * 977) & 0xffffff);
}

FIXTURE(fbdev) {
	int fb;
	struct fb_var_screeninfo var;
	struct fb_fix_screeninfo fix;
	char bind[256];
	int crc_fd;
};

FIXTURE_SETUP(fbdev)
{
	char name[64];

	self->crc_fd = -1;
	self->bind[0] = 0;
	ASSERT_EQ(0, read_line("/sys/class/graphics/fb0/name", name, sizeof(name)))
		TH_LOG("no fb0: fbdev emulation is not there");
	ASSERT_STREQ("vmgpudrmfb", name);
	self->fb = open("/dev/fb0", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fb);
	ASSERT_EQ(0, ioctl(self->fb, FBIOGET_VSCREENINFO, &self->var));
	ASSERT_EQ(0, ioctl(self->fb, FBIOGET_FSCREENINFO, &self->fix));
	ASSERT_EQ(32, self->var.bits_per_pixel);
	ASSERT_EQ(0, fbcon_bind_path(self->bind, sizeof(self->bind)))
		TH_LOG("fbcon has no vtconsole");
}

FIXTURE_TEARDOWN(fbdev)
{
	if (self->crc_fd >= 0)
		close(self->crc_fd);
	if (self->bind[0])
		vmgpu_test_write_file(self->bind, "1");
	close(self->fb);
}

/*
 * Fill fb0 with the pattern of key, in one write as `cat` would (fbdev's
 * damage tracking takes a write of exactly one whole line for none): its
 * frame CRC, or 0 on failure.
 */
static uint32_t draw(FIXTURE_DATA(fbdev) *self, uint32_t key)
{
	uint32_t w = self->var.xres, h = self->var.yres, words = self->fix.line_length / 4;
	size_t size = (size_t)self->fix.line_length * h;
	uint32_t *image = calloc(1, size), crc = 0;

	if (!image)
		return 0;
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++)
			image[y * words + x] = pixel(x, y, key);
	if (pwrite(self->fb, image, size, 0) != (ssize_t)size) {
		free(image);
		return 0;
	}
	for (uint32_t y = 0; y < h; y++) {
		for (uint32_t x = 0; x < w; x++)
			image[y * words + x] &= 0xffffff;
		crc = vmgpu_test_crc32(crc, image + y * words, w * 4);
	}
	free(image);
	return crc;
}

TEST_F(fbdev, console_is_on_the_display)
{
	char state[8];

	ASSERT_EQ(0, read_line(self->bind, state, sizeof(state)));
	EXPECT_STREQ("1", state) TH_LOG("fbcon is not bound to a VT");
	/* Head 0 shows fb0 at the size of its mode, 1024x768 unless configured. */
	EXPECT_EQ(1024, self->var.xres);
	EXPECT_EQ(768, self->var.yres);
	EXPECT_LE(self->var.xres * 4, self->fix.line_length);
}

TEST_F(fbdev, fb0_writes_reach_the_head)
{
	uint32_t want, seen;

	/* Without fbcon, nothing but this test draws on fb0. */
	ASSERT_EQ(0, vmgpu_test_write_file(self->bind, "0"));
	want = draw(self, 1);
	ASSERT_NE(0, want);
	self->crc_fd = vmgpu_test_crc_open(0);
	ASSERT_LE(0, self->crc_fd) TH_LOG("no crtc-0/crc in debugfs");
	EXPECT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, want, &seen))
		TH_LOG("head shows CRC 0x%08x, fb0 is 0x%08x", seen, want);
	/* The negative: another picture is another CRC, and the head follows. */
	ASSERT_NE(want, (want = draw(self, 2)));
	EXPECT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, want, &seen))
		TH_LOG("head shows CRC 0x%08x, fb0 is 0x%08x", seen, want);
}

/* The client's frame: 0x5a everywhere, under a white 64x64 cursor at 64,64. */
static uint32_t client_crc(uint32_t w, uint32_t h, bool cursor)
{
	uint32_t *line = malloc(w * 4), crc = 0;

	for (uint32_t y = 0; line && y < h; y++) {
		for (uint32_t x = 0; x < w; x++)
			line[x] = cursor && x >= 64 && x < 128 && y >= 64 && y < 128 ?
				  0xffffff : 0x5a5a5a;
		crc = vmgpu_test_crc32(crc, line, w * 4);
	}
	free(line);
	return crc;
}

TEST_F(fbdev, console_comes_back_when_the_last_client_closes)
{
	struct vmgpu_test_fb mine, cursor;
	struct vmgpu_card_head head;
	uint32_t want, seen, mine_crc;
	int card;

	ASSERT_EQ(0, vmgpu_test_write_file(self->bind, "0"));
	want = draw(self, 3);
	self->crc_fd = vmgpu_test_crc_open(0);
	ASSERT_LE(0, self->crc_fd);
	ASSERT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, want, &seen));

	/* A client takes the display and leaves a cursor on it. */
	card = vmgpu_open_card("vmgpu");
	ASSERT_LE(0, card);
	ASSERT_EQ(0, vmgpu_card_head0(card, 0, 0, &head));
	ASSERT_EQ(0, vmgpu_test_dumb_fb(card, head.mode.hdisplay, head.mode.vdisplay,
					DRM_FORMAT_XRGB8888, &mine));
	memset(mine.map, 0x5a, mine.size);
	ASSERT_EQ(0, vmgpu_test_dumb_fb(card, 64, 64, DRM_FORMAT_ARGB8888, &cursor));
	memset(cursor.map, 0xff, cursor.size);
	ASSERT_EQ(0, drmModeSetCrtc(card, head.crtc, mine.id, 0, 0, &head.connector, 1,
				    &head.mode));
	ASSERT_EQ(0, drmModeSetCursor(card, head.crtc, cursor.handle, 64, 64));
	ASSERT_EQ(0, drmModeMoveCursor(card, head.crtc, 64, 64));
	mine_crc = client_crc(head.mode.hdisplay, head.mode.vdisplay, true);
	ASSERT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, mine_crc, &seen))
		TH_LOG("head shows CRC 0x%08x, the client's picture is 0x%08x", seen, mine_crc);

	/* Its last close (mappings hold the file too) restores fb0, and no cursor over it. */
	munmap(mine.map, mine.size);
	munmap(cursor.map, cursor.size);
	close(card);
	EXPECT_EQ(0, vmgpu_test_crc_wait(self->crc_fd, want, &seen))
		TH_LOG("head shows CRC 0x%08x after the close, fb0 is 0x%08x, the client's 0x%08x without cursor", seen, want, client_crc(head.mode.hdisplay, head.mode.vdisplay, false));
}

TEST_HARNESS_MAIN

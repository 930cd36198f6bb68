// SPDX-License-Identifier: MIT
/*
 * A real KMS client no one here wrote: libdrm's modetest (Debian's
 * libdrm-tests) sets a mode on vmgpu with its own dumb buffers and flips
 * between them with vsync. It prints the flip rate every 60 flips: flips
 * must happen, and never faster than the mode's vblanks.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xf86drm.h>
#include <xf86drmMode.h>

#include "kselftest_harness.h"
#include "vmgpu_testlib.h"

#define MODETEST	"/usr/bin/modetest"
#define RUN_SECONDS	12

TEST(modetest_sets_a_mode_and_flips_with_vsync)
{
	char out_path[] = "/tmp/modetest.XXXXXX", setting[64], line[256];
	int card, out, in[2], status, freqs = 0;
	struct vmgpu_card_head head;
	double refresh, max_freq = 0;
	FILE *f;
	pid_t pid;

	ASSERT_EQ(0, access(MODETEST, X_OK)) TH_LOG("modetest missing from the guest");
	card = vmgpu_open_card("vmgpu");
	ASSERT_LE(0, card);
	/* The smallest mode: modetest fills its buffers with the CPU. */
	ASSERT_EQ(0, vmgpu_card_head0(card, 0, 0, &head));
	/* modetest becomes master itself. */
	close(card);
	refresh = head.mode.clock * 1000.0 / (head.mode.htotal * head.mode.vtotal);
	snprintf(setting, sizeof(setting), "%u@%u:%s", head.connector, head.crtc,
		 head.mode.name);

	out = mkstemp(out_path);
	ASSERT_LE(0, out);
	/* Its flip loop ends when stdin turns readable: a pipe never written. */
	ASSERT_EQ(0, pipe(in));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		dup2(in[0], 0);
		dup2(out, 1);
		dup2(out, 2);
		execl(MODETEST, "modetest", "-M", "vmgpu", "-s", setting, "-v", NULL);
		_exit(127);
	}
	sleep(RUN_SECONDS);
	kill(pid, SIGTERM);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	close(in[0]);
	close(in[1]);
	EXPECT_FALSE(WIFEXITED(status)) TH_LOG("modetest exited early (status %d)",
					       WEXITSTATUS(status));

	f = fdopen(out, "r");
	ASSERT_NE(NULL, f);
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		double freq;

		printf("# modetest: %s", line);
		/* The display controller has no gamma LUT (README). */
		if (strstr(line, "failed to set gamma"))
			continue;
		EXPECT_EQ(NULL, strstr(line, "failed")) TH_LOG("%s", line);
		if (sscanf(line, "freq: %lfHz", &freq) == 1) {
			freqs++;
			if (freq > max_freq)
				max_freq = freq;
		}
	}
	fclose(f);
	unlink(out_path);
	EXPECT_LE(1, freqs) TH_LOG("no 60 flips in %d s", RUN_SECONDS);
	/* Vsynced: one flip per vblank at most (5 % for timer slack). */
	EXPECT_GE(refresh * 1.05, max_freq) TH_LOG("%.2f flips/s on a %.2f Hz mode", max_freq,
						   refresh);
}

TEST_HARNESS_MAIN

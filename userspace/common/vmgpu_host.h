/* SPDX-License-Identifier: MIT */
#ifndef VMGPU_HOST_H
#define VMGPU_HOST_H

/*
 * Ask the host agent for request, e.g. "connect head=0 value=0", and wait
 * up to timeout_ms for its answer on ttyS1: 0 once done, -EIO if it
 * failed, -ETIMEDOUT (no agent: a guest run by hand), or -errno.
 */
int vmgpu_host_ask(const char *request, int timeout_ms);

#endif

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include "hw/vmgpu_hw.h"

#define CREATE_TRACE_POINTS
#include "vmgpu_trace.h"

// SPDX-License-Identifier: GPL-3.0-or-later
// The server's allocator settings: it allocates the same few buffer sizes over and over (a connection's reads,
// a response's chunks of 256 KiB), and glibc's defaults hand each freed one back to the system, so the next is
// faulted in again, page by page, while the kernel copies a file into it.
#include "csandbox.h"

#include <malloc.h>

void metascrub_keep_freed_buffers(void) {
    // Up to 1 MiB from the heap rather than a mapping of its own (a fixed threshold: glibc's moving one still
    // unmaps the first chunks), and up to 4 MiB free at the top of each of its heaps before that is given back.
    // The price: after a burst the server keeps what the burst used, up to those 4 MiB per heap (one per thread
    // that allocates, at most 8 per core).
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    mallopt(M_TRIM_THRESHOLD, 4 << 20);
}

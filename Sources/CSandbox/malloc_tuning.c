// SPDX-License-Identifier: GPL-3.0-or-later
// The server's allocator settings: it allocates the same few buffer sizes over and over (a connection's reads,
// a response's chunks), and glibc's defaults hand each freed one back to the system, so the next is faulted in
// again, page by page, while the kernel copies a file into it.
#include "csandbox.h"

#include <malloc.h>

void metascrub_keep_freed_buffers(void) {
    // Up to 4 MiB from the heap rather than a mapping of its own (a fixed threshold: glibc's moving one still
    // unmaps the first chunks), and up to 32 MiB free at a heap's top before it is trimmed. Bounded by what is in
    // use at once: every upload and response in flight holds a few chunks of 256 KiB.
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    mallopt(M_TRIM_THRESHOLD, 32 << 20);
}

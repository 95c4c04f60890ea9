// SPDX-License-Identifier: GPL-3.0-or-later
// The fork server's code on huge pages. A forked child does not inherit the parent's page tables for code mapped
// from the executable file (fork copies them only for mappings with anonymous pages), so every child faulted its
// code in again, 64 KiB at a time, and tore those mappings down when it exited: a tenth of a JPEG job. A copy of
// the code in anonymous transparent huge pages, moved over the original, is inherited as a handful of 2 MiB entries
// instead. The same technique as HHVM's and Chromium's "huge text"; the bytes are the executable's own, and no page
// is writable and executable at once.
#define _GNU_SOURCE
#include "csandbox.h"

#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

struct text_range { uintptr_t start, end; };

/// The first object dl_iterate_phdr reports is the executable; its executable PT_LOAD segment is the code.
static int executable_code(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct text_range *range = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type == PT_LOAD && (segment->p_flags & PF_X)) {
            range->start = info->dlpi_addr + segment->p_vaddr;
            range->end = range->start + segment->p_memsz;
            break;
        }
    }
    return 1;
}

static uintptr_t huge_page_size(void) {
    FILE *file = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "re");
    unsigned long long size = 0;
    if (file) {
        if (fscanf(file, "%llu", &size) != 1) size = 0;
        fclose(file);
    }
    // A power of two, so the masks below align.
    return size >= 4096 && (size & (size - 1)) == 0 ? (uintptr_t)size : 0;
}

int metascrub_text_on_huge_pages(void) {
    uintptr_t huge = huge_page_size();
    if (huge == 0) return -ENOTSUP;
    struct text_range code = { 0, 0 };
    dl_iterate_phdr(executable_code, &code);
    // Only whole huge pages inside the code: the rest stays mapped from the file.
    uintptr_t start = (code.start + huge - 1) & ~(huge - 1), end = code.end & ~(huge - 1);
    if (end <= start) return -ERANGE;
    size_t length = end - start;
    char *raw = mmap(NULL, length + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return -errno;
    char *copy = (char *)(((uintptr_t)raw + huge - 1) & ~(huge - 1));
    int rc = 0;
    if (madvise(copy, length, MADV_HUGEPAGE) != 0) rc = -errno;
    if (rc == 0) memcpy(copy, (const void *)start, length);
    // Huge pages or nothing: on small pages every fork would copy thousands of entries, costlier than the faults.
    if (rc == 0 && madvise(copy, length, MADV_COLLAPSE) != 0) rc = -errno;
    if (rc == 0 && mprotect(copy, length, PROT_READ | PROT_EXEC) != 0) rc = -errno;
    // Atomic: the old mapping is replaced by the copy in one step (this function may well run from inside it).
    if (rc == 0 && mremap(copy, length, length, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)start) != (void *)start) {
        rc = -errno;
    }
    // The alignment slack, and the whole copy when it was not moved.
    if (rc != 0) {
        munmap(raw, length + huge);
        return rc;
    }
    if (copy > raw) munmap(raw, (size_t)(copy - raw));
    if (copy + length < raw + length + huge) munmap(copy + length, (size_t)(raw + length + huge - (copy + length)));
    return 0;
}

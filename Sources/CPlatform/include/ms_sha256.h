// SPDX-License-Identifier: GPL-3.0-or-later
// SHA-256 for the report's before/after digests. In C so it can use the CPU's SHA extensions (x86 SHA-NI):
// the pure-Swift digest ran at ~0.2 GB/s and dominated cleaning a large video (see docs/benchmarks.md).
#ifndef METASCRUB_SHA256_H
#define METASCRUB_SHA256_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t state[8];
    uint64_t length;
    uint8_t buffer[64];
    size_t buffered;
} ms_sha256_ctx;

void ms_sha256_init(ms_sha256_ctx *ctx);
void ms_sha256_update(ms_sha256_ctx *ctx, const void *data, size_t len);
void ms_sha256_final(ms_sha256_ctx *ctx, uint8_t digest[32]);

/// Digest of `len` bytes of `fd` from `offset`, read with pread into one reused buffer (no per-block
/// allocation). Returns 0, or -1 with errno set (a short file sets EIO).
int ms_sha256_fd(int fd, long long offset, long long len, uint8_t digest[32]);

/// 1 when the hardware path is used (for the benchmark notes and tests).
int ms_sha256_accelerated(void);

#endif

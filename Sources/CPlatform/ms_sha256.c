// SPDX-License-Identifier: GPL-3.0-or-later
// SHA-256 (FIPS 180-4): a portable C core, and an x86 SHA-NI core chosen at run time when the CPU has it.
#define _GNU_SOURCE
#include "ms_sha256.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define MS_SHA_X86 1
#endif

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void blocks_portable(uint32_t s[8], const uint8_t *p, size_t blocks) {
    uint32_t w[64];
    while (blocks--) {
        for (int i = 0; i < 16; i++)
            w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
        for (int i = 16; i < 64; i++) {
            uint32_t s0 = ROTR(w[i - 15], 7) ^ ROTR(w[i - 15], 18) ^ (w[i - 15] >> 3);
            uint32_t s1 = ROTR(w[i - 2], 17) ^ ROTR(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        uint32_t a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
        for (int i = 0; i < 64; i++) {
            uint32_t t1 = h + (ROTR(e, 6) ^ ROTR(e, 11) ^ ROTR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
            uint32_t t2 = (ROTR(a, 2) ^ ROTR(a, 13) ^ ROTR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
        }
        s[0] += a; s[1] += b; s[2] += c; s[3] += d; s[4] += e; s[5] += f; s[6] += g; s[7] += h;
        p += 64;
    }
}

#ifdef MS_SHA_X86
// Four rounds per step with the SHA-NI instructions; the message schedule for group g (g >= 4) is
// msg2(msg1(W[g-4], W[g-3]) + alignr(W[g-1], W[g-2]), W[g-1]), the standard formulation.
__attribute__((target("sha,sse4.1,ssse3")))
static void blocks_shani(uint32_t s[8], const uint8_t *p, size_t blocks) {
    const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i tmp = _mm_loadu_si128((const __m128i *)&s[0]);
    __m128i state1 = _mm_loadu_si128((const __m128i *)&s[4]);
    tmp = _mm_shuffle_epi32(tmp, 0xB1);              // CDAB
    state1 = _mm_shuffle_epi32(state1, 0x1B);        // EFGH
    __m128i state0 = _mm_alignr_epi8(tmp, state1, 8); // ABEF
    state1 = _mm_blend_epi16(state1, tmp, 0xF0);      // CDGH
    while (blocks--) {
        const __m128i abef = state0, cdgh = state1;
        __m128i w[4];
        for (int g = 0; g < 16; g++) {
            __m128i m;
            if (g < 4) {
                m = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), mask);
            } else {
                __m128i x = _mm_sha256msg1_epu32(w[g & 3], w[(g + 1) & 3]);
                x = _mm_add_epi32(x, _mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4));
                m = _mm_sha256msg2_epu32(x, w[(g + 3) & 3]);
            }
            w[g & 3] = m;
            __m128i k = _mm_add_epi32(m, _mm_loadu_si128((const __m128i *)&K[4 * g]));
            state1 = _mm_sha256rnds2_epu32(state1, state0, k);
            k = _mm_shuffle_epi32(k, 0x0E);
            state0 = _mm_sha256rnds2_epu32(state0, state1, k);
        }
        state0 = _mm_add_epi32(state0, abef);
        state1 = _mm_add_epi32(state1, cdgh);
        p += 64;
    }
    tmp = _mm_shuffle_epi32(state0, 0x1B);          // FEBA
    state1 = _mm_shuffle_epi32(state1, 0xB1);       // DCHG
    state0 = _mm_blend_epi16(tmp, state1, 0xF0);    // DCBA
    state1 = _mm_alignr_epi8(state1, tmp, 8);       // ABEF
    _mm_storeu_si128((__m128i *)&s[0], state0);
    _mm_storeu_si128((__m128i *)&s[4], state1);
}

static int cpu_has_shani(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    if (!(c & (1u << 19)) || !(c & (1u << 9))) return 0; // SSE4.1, SSSE3
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (b & (1u << 29)) != 0;                          // SHA
}
#endif

typedef void (*blocks_fn)(uint32_t *, const uint8_t *, size_t);

static blocks_fn pick(void) {
#ifdef MS_SHA_X86
    if (cpu_has_shani()) return blocks_shani;
#endif
    return blocks_portable;
}

// Chosen once; a racing first call from two threads picks the same function, so no lock is needed.
static blocks_fn chosen;

static void run_blocks(uint32_t s[8], const uint8_t *p, size_t blocks) {
    blocks_fn fn = __atomic_load_n(&chosen, __ATOMIC_RELAXED);
    if (!fn) {
        fn = pick();
        __atomic_store_n(&chosen, fn, __ATOMIC_RELAXED);
    }
    fn(s, p, blocks);
}

int ms_sha256_accelerated(void) {
#ifdef MS_SHA_X86
    return cpu_has_shani();
#else
    return 0;
#endif
}

void ms_sha256_init(ms_sha256_ctx *ctx) {
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(ctx->state, iv, sizeof iv);
    ctx->length = 0;
    ctx->buffered = 0;
}

void ms_sha256_update(ms_sha256_ctx *ctx, const void *data, size_t len) {
    const uint8_t *p = data;
    ctx->length += len;
    if (ctx->buffered) {
        size_t take = 64 - ctx->buffered < len ? 64 - ctx->buffered : len;
        memcpy(ctx->buffer + ctx->buffered, p, take);
        ctx->buffered += take;
        p += take;
        len -= take;
        if (ctx->buffered < 64) return;
        run_blocks(ctx->state, ctx->buffer, 1);
        ctx->buffered = 0;
    }
    if (len >= 64) {
        run_blocks(ctx->state, p, len / 64);
        p += len & ~(size_t)63;
        len &= 63;
    }
    if (len) {
        memcpy(ctx->buffer, p, len);
        ctx->buffered = len;
    }
}

void ms_sha256_final(ms_sha256_ctx *ctx, uint8_t digest[32]) {
    uint64_t bits = ctx->length * 8;
    uint8_t pad[72] = {0x80};
    size_t padlen = (ctx->buffered < 56 ? 56 : 120) - ctx->buffered;
    for (int i = 0; i < 8; i++) pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
    ms_sha256_update(ctx, pad, padlen + 8);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (uint8_t)(ctx->state[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(ctx->state[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(ctx->state[i] >> 8);
        digest[4 * i + 3] = (uint8_t)ctx->state[i];
    }
}

int ms_sha256_fd(int fd, long long offset, long long len, uint8_t digest[32]) {
    // 1 MiB: large enough that syscall cost vanishes, small enough to stay in L2/L3 while hashing.
    enum { CHUNK = 1 << 20 };
    uint8_t *buf = malloc(CHUNK);
    if (!buf) { errno = ENOMEM; return -1; }
    ms_sha256_ctx ctx;
    ms_sha256_init(&ctx);
    while (len > 0) {
        size_t want = len < CHUNK ? (size_t)len : CHUNK;
        ssize_t n = pread(fd, buf, want, (off_t)offset);
        if (n < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            free(buf);
            errno = e;
            return -1;
        }
        if (n == 0) { free(buf); errno = EIO; return -1; }
        ms_sha256_update(&ctx, buf, (size_t)n);
        offset += n;
        len -= n;
    }
    free(buf);
    ms_sha256_final(&ctx, digest);
    return 0;
}

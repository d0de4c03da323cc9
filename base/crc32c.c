/* CRC32C: a slice-by-8 table implementation, and the SSE4.2 crc32
 * instruction when the CPU reports it (checked once at run time). The
 * instruction has a latency of 3 cycles and a throughput of 1: long buffers
 * run three streams over three adjacent stripes at once, and the CRCs of
 * the first two are moved past the stripes after them with a precomputed
 * linear operator ("append STRIPE zero bytes", as tables). */
#include "base/crc32c.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#define CRC32C_POLY 0x82f63b78u /* reflected Castagnoli polynomial */

#define STRIPE 1024 /* bytes per stream per round: WAL records and blocks are KiBs */

static uint32_t crc_table[8][256];
static uint32_t shift_table[4][256]; /* register after STRIPE zero bytes, per input byte */
static bool crc_has_sse42;
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
    /* The raw register update over zero bytes is linear: tabulate it per
     * byte of the register from its 32 basis vectors. */
    uint32_t basis[32];
    for (int b = 0; b < 32; b++) {
        uint32_t c = 1u << b;
        for (int i = 0; i < STRIPE; i++)
            c = (c >> 8) ^ crc_table[0][c & 0xff];
        basis[b] = c;
    }
    for (int k = 0; k < 4; k++)
        for (uint32_t v = 0; v < 256; v++) {
            uint32_t c = 0;
            for (int j = 0; j < 8; j++)
                if (v & (1u << j))
                    c ^= basis[8 * k + j];
            shift_table[k][v] = c;
        }
#if defined(__x86_64__)
    __builtin_cpu_init();
    crc_has_sse42 = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t crc_sw(uint32_t crc, const unsigned char *p, size_t n)
{
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= crc; /* little-endian host assumed for the word path */
        crc = crc_table[7][w & 0xff] ^ crc_table[6][(w >> 8) & 0xff] ^
              crc_table[5][(w >> 16) & 0xff] ^ crc_table[4][(w >> 24) & 0xff] ^
              crc_table[3][(w >> 32) & 0xff] ^ crc_table[2][(w >> 40) & 0xff] ^
              crc_table[1][(w >> 48) & 0xff] ^ crc_table[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n--)
        crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
    return crc;
}

#if defined(__x86_64__)
static uint32_t shift_stripe(uint32_t c)
{
    return shift_table[0][c & 0xff] ^ shift_table[1][(c >> 8) & 0xff] ^
           shift_table[2][(c >> 16) & 0xff] ^ shift_table[3][c >> 24];
}

__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const unsigned char *p,
                                                         size_t n)
{
    uint64_t c = crc;
    while (n >= 3 * STRIPE) {
        uint64_t c1 = 0, c2 = 0;
        for (size_t i = 0; i < STRIPE; i += 8) {
            uint64_t w0, w1, w2;
            memcpy(&w0, p + i, 8);
            memcpy(&w1, p + STRIPE + i, 8);
            memcpy(&w2, p + 2 * STRIPE + i, 8);
            c = __builtin_ia32_crc32di(c, w0);
            c1 = __builtin_ia32_crc32di(c1, w1);
            c2 = __builtin_ia32_crc32di(c2, w2);
        }
        /* crc(A B C) = shift(shift(crc(A)) ^ crc(B)) ^ crc(C), raw registers */
        c = shift_stripe(shift_stripe((uint32_t)c) ^ (uint32_t)c1) ^ (uint32_t)c2;
        p += 3 * STRIPE;
        n -= 3 * STRIPE;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n--)
        c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32;
}
#endif

uint32_t crc32c_extend(uint32_t crc, const void *p, size_t n)
{
    pthread_once(&crc_once, crc_init);
    crc = ~crc;
#if defined(__x86_64__)
    if (crc_has_sse42)
        return ~crc_hw(crc, p, n);
#endif
    return ~crc_sw(crc, p, n);
}

uint32_t crc32c_test_sw(const void *p, size_t n)
{
    pthread_once(&crc_once, crc_init);
    return ~crc_sw(~0u, p, n);
}

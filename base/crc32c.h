/* CRC32C (Castagnoli) with LevelDB-style masking for stored checksums: a
 * CRC stored next to data that itself holds CRCs is masked so that the CRC
 * of a string with embedded CRCs stays well distributed. Thread-safe. */
#ifndef LB_CRC32C_H
#define LB_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Extends crc (0 to start) with n bytes. Uses SSE4.2 when the CPU has it. */
uint32_t crc32c_extend(uint32_t crc, const void *p, size_t n);

static inline uint32_t crc32c(const void *p, size_t n)
{
    return crc32c_extend(0, p, n);
}

/* Test hook: the table-driven path whatever the CPU. */
uint32_t crc32c_test_sw(const void *p, size_t n);

#define CRC32C_MASK_DELTA 0xa282ead8u

static inline uint32_t crc32c_mask(uint32_t crc)
{
    return ((crc >> 15) | (crc << 17)) + CRC32C_MASK_DELTA;
}

static inline uint32_t crc32c_unmask(uint32_t masked)
{
    uint32_t rot = masked - CRC32C_MASK_DELTA;
    return (rot >> 17) | (rot << 15);
}

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Little-endian fields at any alignment.  The formats the project reads and
 * writes itself (the allowlist, the event datagram) and the ones it reads
 * from glibc and the kernel (ld.so.cache, core-dump notes) are
 * little-endian whatever the host.  Byte by byte, not memcpy: the preload
 * runs this before the C library is ready for every call (preload/sys.h);
 * compilers turn each into one load or store on x86.
 */
#ifndef SHSTK_LE_H
#define SHSTK_LE_H

#include <stdint.h>

static inline uint16_t shstk_get_le16(const void *p)
{
	const uint8_t *b = p;

	return (uint16_t)(b[0] | b[1] << 8);
}

static inline uint32_t shstk_get_le32(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static inline uint64_t shstk_get_le64(const void *p)
{
	return (uint64_t)shstk_get_le32(p) | (uint64_t)shstk_get_le32((const uint8_t *)p + 4) << 32;
}

static inline void shstk_put_le16(void *p, uint16_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
}

static inline void shstk_put_le32(void *p, uint32_t v)
{
	uint8_t *b = p;

	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static inline void shstk_put_le64(void *p, uint64_t v)
{
	shstk_put_le32(p, (uint32_t)v);
	shstk_put_le32((uint8_t *)p + 4, (uint32_t)(v >> 32));
}

#endif

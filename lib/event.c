/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The event datagram the preload sends to shstkd (layout in preload/README.md):
 * a fixed little-endian header of 104 bytes followed by an optional name.
 */
#include <errno.h>
#include <string.h>

#include "event.h"
#include "le.h"

size_t shstk_ev_encode(const struct shstk_event *ev, uint8_t *buf)
{
	size_t name_len = ev->name ? ev->name_len : 0;

	if (name_len > SHSTK_EV_NAME_MAX)
		name_len = SHSTK_EV_NAME_MAX; /* the tail of a path is the informative part */
	memset(buf, 0, SHSTK_EV_HEADER_SIZE);
	shstk_put_le32(buf + 0, SHSTK_EV_MAGIC);
	buf[4] = SHSTK_EV_VERSION;
	buf[5] = ev->type;
	buf[6] = ev->decision;
	buf[7] = ev->applied;
	shstk_put_le32(buf + 8, ev->pid);
	buf[12] = ev->source;
	buf[13] = ev->enabled_by;
	buf[14] = ev->key.kind;
	buf[15] = ev->key.kind ? ev->key.len : 0;
	shstk_put_le32(buf + 16, ev->flags);
	shstk_put_le32(buf + 20, (uint32_t)ev->err);
	shstk_put_le32(buf + 24, (uint32_t)ev->generation);
	shstk_put_le32(buf + 28, (uint32_t)(ev->generation >> 32));
	if (ev->key.kind)
		memcpy(buf + 32, ev->key.bytes, SHSTK_AL_KEY_MAX);
	buf[96] = (uint8_t)name_len;
	buf[97] = (uint8_t)(name_len >> 8);
	buf[98] = ev->listed;
	buf[99] = ev->kernel_policy;
	/* A loop, not memcpy: this runs at every exec (see sys.h). */
	for (size_t i = 0; i < name_len; i++)
		buf[SHSTK_EV_HEADER_SIZE + i] = (uint8_t)ev->name[ev->name_len - name_len + i];
	return SHSTK_EV_HEADER_SIZE + name_len;
}

int shstk_ev_decode(const uint8_t *buf, size_t len, struct shstk_event *ret)
{
	size_t name_len;

	if (len < SHSTK_EV_HEADER_SIZE || shstk_get_le32(buf) != SHSTK_EV_MAGIC || buf[4] != SHSTK_EV_VERSION)
		return -EBADMSG;
	name_len = (size_t)buf[96] | (size_t)buf[97] << 8;
	if (name_len > SHSTK_EV_NAME_MAX || len != SHSTK_EV_HEADER_SIZE + name_len ||
	    buf[15] > SHSTK_AL_KEY_MAX)
		return -EBADMSG;
	memset(ret, 0, sizeof(*ret));
	ret->type = buf[5];
	ret->decision = buf[6];
	ret->applied = buf[7];
	ret->pid = shstk_get_le32(buf + 8);
	ret->source = buf[12];
	ret->enabled_by = buf[13];
	ret->key.kind = buf[14];
	ret->key.len = buf[15];
	memcpy(ret->key.bytes, buf + 32, SHSTK_AL_KEY_MAX);
	ret->flags = shstk_get_le32(buf + 16);
	ret->err = (int32_t)shstk_get_le32(buf + 20);
	ret->generation = (uint64_t)shstk_get_le32(buf + 24) | (uint64_t)shstk_get_le32(buf + 28) << 32;
	ret->listed = buf[98];
	ret->kernel_policy = buf[99];
	ret->name = name_len ? (const char *)buf + SHSTK_EV_HEADER_SIZE : NULL;
	ret->name_len = name_len;
	return 0;
}

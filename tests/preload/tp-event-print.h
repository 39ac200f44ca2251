/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Test helpers: one readable line per preload event, shared by tp-probe and tp-evrecv. */
#ifndef TP_EVENT_PRINT_H
#define TP_EVENT_PRINT_H

#include <stdio.h>

#include "event.h"

static const char *const tp_sources[] = { "unlisted", "allowlist", "override", "no-allowlist",
					  "bad-allowlist", "no-identity", "disabled" };
static const char *const tp_kpolicies[] = { "unknown", "none", "off", "audit", "enforce" };
static const char *const tp_enablers[] = { "nobody", "preload", "libc" };
static const char *const tp_flags[] = { "secure", "override-used", "override-ignored", "demoted-unmarked",
					"locked", "audit-refused", "lock-failed", "disable-failed",
					"tcb-set", "no-kernel", "no-cpu", "dlopen-refused",
					"dlopen-unmarked", "dlopen-denied", "all-marked", "libc-marked",
					"" /* wants-ack: the transport's, not the process's */,
					"compat", "mark-failed" };

static inline void tp_print_event(FILE *f, const struct shstk_event *ev)
{
	const char *sep = "";

	fprintf(f, "event type=%s pid=%u decision=%s applied=%s source=%s by=%s listed=%s err=%d gen=%llu flags=",
		ev->type == SHSTK_EV_START ? "start" : ev->type == SHSTK_EV_DLOPEN ? "dlopen" : "?",
		ev->pid, shstk_decision_to_string(ev->decision), shstk_decision_to_string(ev->applied),
		ev->source < sizeof(tp_sources) / sizeof(*tp_sources) ? tp_sources[ev->source] : "?",
		ev->enabled_by < 3 ? tp_enablers[ev->enabled_by] : "?",
		ev->listed == 0xff ? "-" : shstk_decision_to_string(ev->listed), ev->err,
		(unsigned long long)ev->generation);
	for (unsigned i = 0; i < sizeof(tp_flags) / sizeof(*tp_flags); i++)
		if ((ev->flags & (1u << i)) && tp_flags[i][0]) {
			fprintf(f, "%s%s", sep, tp_flags[i]);
			sep = ",";
		}
	fprintf(f, "%s kpolicy=%s key=%s:", sep[0] ? "" : "-",
		ev->kernel_policy < 5 ? tp_kpolicies[ev->kernel_policy] : "?",
		ev->key.kind == SHSTK_AL_KEY_BUILD_ID ? "build-id" : ev->key.kind == SHSTK_AL_KEY_FILE ? "file" : "none");
	for (unsigned i = 0; ev->key.kind && i < ev->key.len; i++)
		fprintf(f, "%02x", ev->key.bytes[i]);
	fprintf(f, " name=%.*s\n", (int)ev->name_len, ev->name ? ev->name : "");
}

#endif

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Guest probe: does the kernel refuse userfaultfd on shadow-stack memory?
 *
 * Upstream's test_shadow_stack (6.12) expects UFFDIO_REGISTER on a shadow
 * stack to work. Linux 6.12.y since "userfaultfd: prevent registration of
 * special VMAs" (CVE-2026-68166; include/linux/userfaultfd_k.h,
 * vma_can_userfault(): VM_SHADOW_STACK -> false) refuses it with EINVAL,
 * because UFFDIO_COPY into a discarded shadow-stack page would let a process
 * plant the return addresses its shadow stack is meant to vouch for. This
 * probe names that cause directly: userfaultfd works on ordinary anonymous
 * memory, and only the shadow-stack mapping is refused.
 *
 * Kselftest conventions: [OK]/[FAIL]/[SKIP] lines, exit 0 all passed, 1 a
 * failure, 4 (KSFT_SKIP) without user shadow stacks. The thread never
 * enables a shadow stack itself: map_shadow_stack() only needs the CPU
 * feature, so the probe runs as any plain static program.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ABI constants, as the upstream selftests define them (no new headers) */
#ifndef __NR_map_shadow_stack
#define __NR_map_shadow_stack 453
#endif
#define SHADOW_STACK_SET_TOKEN (1ULL << 0)
#define KSFT_SKIP 4
#define PAGE 4096UL

/* Registers [addr, addr + PAGE) for missing faults; 0 or an errno value. */
static int uffd_register(int uffd, void *addr)
{
	struct uffdio_register reg;

	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)addr;
	reg.range.len = PAGE;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) < 0)
		return errno;
	return 0;
}

static int uffd_open(void)
{
	struct uffdio_api api;
	int uffd;

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		return -errno;
	memset(&api, 0, sizeof(api));
	api.api = UFFD_API;
	if (ioctl(uffd, UFFDIO_API, &api) < 0) {
		int r = -errno;

		close(uffd);
		return r;
	}
	return uffd;
}

int main(void)
{
	void *anon, *shstk;
	int uffd, r, fails = 0;

	uffd = uffd_open();
	if (uffd < 0) {
		printf("[FAIL]\tuserfaultfd()/UFFDIO_API: %s (CONFIG_USERFAULTFD is in the fragment)\n",
		       strerror(-uffd));
		return 1;
	}

	/* The control: without it an EINVAL below could mean anything. */
	anon = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED) {
		printf("[FAIL]\tmmap: %s\n", strerror(errno));
		return 1;
	}
	r = uffd_register(uffd, anon);
	if (r) {
		printf("[FAIL]\tUFFDIO_REGISTER on anonymous memory: %s\n", strerror(r));
		fails++;
	} else {
		printf("[OK]\tUFFDIO_REGISTER on anonymous memory works\n");
	}

	shstk = (void *)syscall(__NR_map_shadow_stack, 0UL, PAGE,
				SHADOW_STACK_SET_TOKEN);
	if (shstk == MAP_FAILED) {
		r = errno;
		if (r == EOPNOTSUPP || r == ENOSYS) {
			printf("[SKIP]\tmap_shadow_stack: %s (no user shadow stacks)\n",
			       strerror(r));
			return fails ? 1 : KSFT_SKIP;
		}
		printf("[FAIL]\tmap_shadow_stack: %s\n", strerror(r));
		return 1;
	}
	r = uffd_register(uffd, shstk);
	if (r == EINVAL) {
		printf("[OK]\tUFFDIO_REGISTER on a shadow stack is refused: EINVAL\n");
	} else if (r == 0) {
		printf("[FAIL]\tUFFDIO_REGISTER on a shadow stack succeeded: its pages could be replaced by UFFDIO_COPY\n");
		fails++;
	} else {
		printf("[FAIL]\tUFFDIO_REGISTER on a shadow stack: %s, expected EINVAL\n",
		       strerror(r));
		fails++;
	}

	munmap(shstk, PAGE);
	munmap(anon, PAGE);
	close(uffd);
	return fails ? 1 : 0;
}

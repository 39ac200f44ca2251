// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Sample cxx-exception: a C++ exception thrown 20 frames deep and caught at
 * the top, 100 times, with a destructor to run in every frame on the way.
 *
 * C++ unwinding does not use glibc's longjmp: libgcc's unwinder
 * (_Unwind_RaiseException, _Unwind_Resume) walks the frames with the DWARF
 * CFI and "returns" into each landing pad (uw_install_context).  That jump
 * abandons frames whose return addresses are still on the shadow stack, so
 * it keeps the shadow stack in step only if libgcc was compiled with
 * -fcf-protection (gcc --enable-cet): then its _Unwind_Frames_Extra pops
 * them (rdssp/incssp).  Debian 12's (gcc 12) and Debian 13's (gcc 14)
 * libgcc_s.so.1 and libgcc_eh.a contain that code (README.md); this sample
 * measures whether it works, in a marked program.
 *
 * Output: "SAMPLE cxx-exception: done throws=100 depth=20 dtors=2000"; exit
 * 0 when every throw was caught at the top and every frame's destructor ran.
 */
#include <stdexcept>

#include "sample.h"

#define DEPTH 20
#define THROWS 100

static long dtors;
static volatile int never; // a path back, so the recursion is finite to the compiler

namespace {
// One per frame: its destructor is a cleanup landing pad the unwinder enters.
struct frame_guard {
	~frame_guard() { dtors++; }
};
} // namespace

static int __attribute__((noinline)) descend(int depth)
{
	frame_guard g;
	int r;

	if (depth == DEPTH)
		throw std::runtime_error("deep");
	if (never)
		return 0;
	r = descend(depth + 1);
	__asm__ volatile("" ::: "memory"); // not a tail call: a frame per level
	return r + 1;
}

int main()
{
	int caught = 0;

	sample_report("cxx-exception", "start");
	for (int i = 0; i < THROWS; i++) {
		try {
			descend(1);
		} catch (const std::runtime_error &) {
			caught++;
		}
	}
	if (caught != THROWS || dtors != (long)THROWS * DEPTH) {
		sample_report("cxx-exception", "FAILED throws=%d dtors=%ld", caught, dtors);
		return 1;
	}
	sample_report("cxx-exception", "done throws=%d depth=%d dtors=%ld", caught, DEPTH, dtors);
	return 0;
}

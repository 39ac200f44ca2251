/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An empty shared library: LD_PRELOAD of it is the benchmark's second baseline. */
int shstk_bench_empty_unused;

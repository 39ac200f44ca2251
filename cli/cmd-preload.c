/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl preload: add or remove the preload in /etc/ld.so.preload, atomically, keeping every other line. */
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "common.h"
#include "config.h"
#include "kabi.h"

/* PREFIX/$LIB/libshstk_preload.so where the install has a library per ABI (see meson.build). */
#define PRELOAD_LIB SHSTK_PRELOAD_LINE
#define PRELOAD_FILE "/etc/ld.so.preload"
/* ld.so.preload is small; anything larger is not a file to rewrite blindly. */
#define PRELOAD_FILE_MAX (64 * 1024)

enum { PRELOAD_EXIT_DISABLED = 3 };

static void help(void)
{
	fputs("Usage: shstkctl preload enable|disable|status [--library PATH] [--root DIR]\n"
	      "                                            [--kernel-abis auto|all|LIST]\n"
	      "\n"
	      "The preload (libshstk_preload.so) applies the published decisions at every\n"
	      "process start once it is listed in /etc/ld.so.preload.  Installing the\n"
	      "package does not list it: switching it on system-wide is this explicit step.\n"
	      "\n"
	      "  enable   appends the library's path as a line of its own, unless the file\n"
	      "           already names it; refuses when the library does not exist (a\n"
	      "           missing preload only makes ld.so complain at every start)\n"
	      "           The path is written with $LIB (" PRELOAD_LIB "):\n"
	      "           ld.so expands it per ABI, so i386 and x32 programs load a\n"
	      "           library of their own class that does nothing, instead of\n"
	      "           printing \"wrong ELF class\" errors.  enable refuses when such a\n"
	      "           program's ld.so is installed, its library is not, and the\n"
	      "           kernel runs programs of that ABI (see --kernel-abis); it\n"
	      "           replaces a line naming the x86-64 library without $LIB\n"
	      "  disable  removes every occurrence of the library's path (with $LIB or\n"
	      "           expanded for x86-64) and nothing else;\n"
	      "           a file left empty is removed (no file and an empty one mean the\n"
	      "           same to ld.so), so enable then disable restores the file as it was\n"
	      "  status   says whether the file names the library, and for i386 and x32\n"
	      "           whether their ld.so and library are installed and whether the\n"
	      "           kernel runs such programs; when the file names the library\n"
	      "           and an ABI the kernel runs (or may: no answer) has no library\n"
	      "           of its own, a \"problem:\" line says so and status exits 1 (so\n"
	      "           does enable when the line is already there): what a host\n"
	      "           enabled without the i386 library shows once it boots a kernel\n"
	      "           that runs i386 programs\n"
	      "Both edits write a temporary file beside it, fsync it and rename it over the\n"
	      "old one: a crash leaves the old file or the new, never a half-written one.\n"
	      "Other entries and comments are kept as they are.  Running processes are not\n"
	      "affected; new ones are.\n"
	      "\n"
	      "Options:\n"
	      "  --library PATH  the preload (default " PRELOAD_LIB "); may contain $LIB\n"
	      "  --root DIR      edit DIR/etc/ld.so.preload, for a guest or image root; PATH\n"
	      "                  is the path inside DIR\n"
	      "  --kernel-abis auto|all|LIST\n"
	      "                  which program ABIs the kernel that runs the root executes,\n"
	      "                  besides x86-64.  auto (the default without --root) asks the\n"
	      "                  running kernel: it executes a program of a few bytes of\n"
	      "                  each ABI, which a kernel without IA32 emulation (or booted\n"
	      "                  with ia32_emulation=false) refuses with ENOEXEC, and one\n"
	      "                  whose x32 system calls are off (syscall.x32=n) loads but\n"
	      "                  does not serve.  all (the default with --root, whose kernel\n"
	      "                  is not this one) assumes every ABI with an installed ld.so\n"
	      "                  runs.  LIST names them: i386,x32, or x86-64 for neither.\n"
	      "                  An ABI the kernel does not run needs no library: no such\n"
	      "                  program can start.  When the kernel gives no answer (its\n"
	      "                  probe program killed, by a seccomp filter say), enable\n"
	      "                  refuses and says so: name the ABIs with --kernel-abis\n"
	      "  -h, --help      this help\n"
	      "\n"
	      "Exit status: 0 done (nothing to do counts as done) or, for status, enabled;\n"
	      "1 failure (library missing, the kernel not answering, a problem: line,\n"
	      "file unreadable or not writable); 2 usage; 3 status: not enabled.\n"
	      "\n"
	      "Rescue: see the preload's README (': > /etc/ld.so.preload' from a root shell).\n"
	      "\n"
	      "Examples:\n"
	      "  shstkctl preload enable\n"
	      "  shstkctl preload disable --root /srv/guest\n"
	      "  shstkctl preload enable --root /srv/image --kernel-abis x86-64\n",
	      stdout);
}

/* ld.so's separators in ld.so.preload (glibc elf/rtld.c): blanks, newlines, ':'. */
static bool is_sep(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == ':';
}

/* Whether @text names @lib as an entry outside a '#' comment. */
static bool names_lib(const char *text, size_t len, const char *lib)
{
	size_t l = strlen(lib);

	for (size_t i = 0; i < len;) {
		size_t s;

		if (text[i] == '#') {
			while (i < len && text[i] != '\n')
				i++;
			continue;
		}
		if (is_sep(text[i])) {
			i++;
			continue;
		}
		s = i;
		while (i < len && !is_sep(text[i]) && text[i] != '#')
			i++;
		if (i - s == l && memcmp(text + s, lib, l) == 0)
			return true;
	}
	return false;
}

/* 1 and the file's bytes (NUL-terminated), 0 when it is absent (*ret NULL,
 * *ret_len 0), or -errno. */
static int read_file(const char *path, char **ret, size_t *ret_len, struct stat *ret_st)
{
	int k;

	*ret = NULL;
	*ret_len = 0;
	k = shstk_read_file(path, PRELOAD_FILE_MAX, ret, ret_len, ret_st);
	if (k == -ENOENT)
		return 0;
	return k < 0 ? k : 1;
}

/* Replaces @path with @len bytes of @text (mode and owner of @old when it existed, else 0644). */
static int write_atomic(const char *path, const char *text, size_t len, const struct stat *old)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	_cleanup_close_ int fd = -1, dfd = -1;
	size_t n = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.shstkctl-XXXXXX", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, old ? old->st_mode & 07777 : 0644) < 0 || (old && fchown(fd, old->st_uid, old->st_gid) < 0 &&
								   geteuid() == 0))
		goto fail;
	while (n < len) {
		ssize_t k = write(fd, text + n, len - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			goto fail;
		n += (size_t)k;
	}
	if (fsync(fd) < 0 || rename(tmp, path) < 0)
		goto fail;
	snprintf(dir, sizeof(dir), "%s", path);
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		(void)fsync(dfd); /* the rename is durable; best effort */
	return 0;
fail:
	n = (size_t)errno;
	(void)unlink(tmp);
	return -(int)n;
}

/* The file without any entry @lib: a line holding only it goes whole; within a
 * line with other entries, only the name goes. */
static size_t strip_lib(const char *text, size_t len, const char *lib, char *out)
{
	size_t l = strlen(lib), o = 0;

	for (size_t i = 0; i < len;) {
		size_t e = i, line_start = o;
		bool removed = false, other = false;

		while (e < len && text[e] != '\n')
			e++;
		/* Copy the line [i, e), leaving out entries equal to lib before any '#'. */
		for (size_t k = i; k < e;) {
			size_t s = k;

			if (text[k] == '#') {
				memcpy(out + o, text + k, e - k);
				o += e - k;
				other = true;
				break;
			}
			if (is_sep(text[k])) {
				out[o++] = text[k++];
				continue;
			}
			while (k < e && !is_sep(text[k]) && text[k] != '#')
				k++;
			if (k - s == l && memcmp(text + s, lib, l) == 0) {
				removed = true;
				continue;
			}
			memcpy(out + o, text + s, k - s);
			o += k - s;
			other = true;
		}
		if (removed && !other) {
			o = line_start; /* the line was only the library (and blanks) */
			i = e < len ? e + 1 : e;
			continue;
		}
		if (e < len)
			out[o++] = '\n';
		i = e + 1;
	}
	return o;
}

#ifdef SHSTK_PRELOAD_LIB_NATIVE
/* The ABIs besides x86-64 whose ld.so may read /etc/ld.so.preload, and what each expands $LIB to. */
static const struct {
	enum shstk_abi abi;
	const char *loader, *libs;
} other_abis[] = {
	{ SHSTK_ABI_I386, "/lib/ld-linux.so.2", SHSTK_PRELOAD_LIB_I386 },
	{ SHSTK_ABI_X32, "/libx32/ld-linux-x32.so.2", SHSTK_PRELOAD_LIB_X32 },
};
#endif

/* --kernel-abis: ask this kernel, assume every ABI, or a list (bit per enum shstk_abi). */
struct kernel_abis {
	bool ask;
	bool assumed; /* "all" by default, for --root */
	unsigned runs;
};

/* 1 when the kernel runs programs of @abi, 0 when not, -errno when asking failed;
 * *@why says how that is known. */
static int kernel_runs(const struct kernel_abis *ka, enum shstk_abi abi, char *why, size_t size)
{
	struct shstk_abi_probe p;
	int r;

	if (ka->assumed) {
		snprintf(why, size, "assumed to run them: the kernel of another root is not this one "
			 "(--kernel-abis says which it runs)");
		return 1;
	}
	if (!ka->ask) {
		snprintf(why, size, "--kernel-abis says the kernel %s", ka->runs & (1u << abi) ? "runs them" : "does not run them");
		return !!(ka->runs & (1u << abi));
	}
	r = shstk_abi_probe(abi, &p);
	if (r == -EIO) {
		snprintf(why, size, "no answer from the kernel: the %s probe program was loaded but killed "
			 "or exited oddly (a seccomp filter? --kernel-abis says which ABIs it runs)",
			 shstk_abi_name(abi));
		return r;
	}
	if (r < 0) {
		snprintf(why, size, "the kernel could not be asked: %s", strerror(-r));
		return r;
	}
	if (p.verdict == SHSTK_ABI_NOEXEC)
		snprintf(why, size, "this kernel refuses to execute %s programs: %s", shstk_abi_name(abi),
			 strerror(p.detail));
	else if (p.verdict == SHSTK_ABI_NOSYSCALL)
		snprintf(why, size, "this kernel loads %s programs but does not serve their system calls%s",
			 shstk_abi_name(abi), abi == SHSTK_ABI_X32 ? " (syscall.x32=n)" : "");
	else
		snprintf(why, size, "this kernel runs %s programs", shstk_abi_name(abi));
	return p.verdict == SHSTK_ABI_RUNS;
}

static int parse_kernel_abis(const char *s, struct kernel_abis *ret)
{
	*ret = (struct kernel_abis){ .runs = 1u << SHSTK_ABI_X86_64 };
	if (!*s)
		return -EINVAL; /* say "x86-64" for that, not nothing */
	if (strcmp(s, "auto") == 0) {
		ret->ask = true;
		return 0;
	}
	if (strcmp(s, "all") == 0) {
		ret->runs = (1u << _SHSTK_ABI_MAX) - 1;
		return 0;
	}
	while (*s) {
		size_t n = strcspn(s, ",");
		enum shstk_abi a;

		for (a = 0; a < _SHSTK_ABI_MAX; a++)
			if (strlen(shstk_abi_name(a)) == n && strncmp(s, shstk_abi_name(a), n) == 0)
				break;
		if (a == _SHSTK_ABI_MAX)
			return -EINVAL;
		ret->runs |= 1u << a;
		s += n + (s[n] == ',');
	}
	return 0;
}

/* @lib with its first "$LIB" replaced by @len bytes of @dir, in @buf; false when it does not fit. */
static bool expand_lib(const char *lib, const char *dir, size_t len, char *buf, size_t size)
{
	const char *t = strstr(lib, "$LIB");

	if (!t)
		return (size_t)snprintf(buf, size, "%s", lib) < size;
	return (size_t)snprintf(buf, size, "%.*s%.*s%s", (int)(t - lib), lib, (int)len, dir, t + 4) < size;
}

#ifdef SHSTK_PRELOAD_LIB_NATIVE
/* Whether @abi's ld.so is installed under @root (1), and whether its library is (into *@ret_found). */
static bool abi_installed(size_t i, const char *lib, const char *root, bool *ret_found)
{
	const char *d = other_abis[i].libs;
	char path[PATH_MAX];
	struct stat st;

	*ret_found = false;
	if ((size_t)snprintf(path, sizeof(path), "%s%s", root ? root : "", other_abis[i].loader) >= sizeof(path) ||
	    access(path, F_OK) < 0)
		return false;
	while (*d && !*ret_found) {
		size_t n = strcspn(d, ":");
		char full[PATH_MAX], exp[PATH_MAX];

		if (expand_lib(lib, d, n, exp, sizeof(exp)) &&
		    (size_t)snprintf(full, sizeof(full), "%s%s", root ? root : "", exp) < sizeof(full) &&
		    stat(full, &st) == 0 && S_ISREG(st.st_mode))
			*ret_found = true;
		d += n + (d[n] == ':');
	}
	return true;
}
#endif

/* 0 when the library for every installed ABI the kernel runs exists under @root, else an error printed. */
static int check_libraries(const char *lib, const char *root, const struct kernel_abis *ka, char *ret_native,
			   size_t size)
{
	char path[PATH_MAX];
	struct stat st;

	if (strstr(lib, "$LIB")) {
#ifdef SHSTK_PRELOAD_LIB_NATIVE
		if (!expand_lib(lib, SHSTK_PRELOAD_LIB_NATIVE, strlen(SHSTK_PRELOAD_LIB_NATIVE), ret_native, size))
			return shstkctl_error("%s: path too long", lib);
#else
		return shstkctl_error("refusing to enable: %s uses $LIB, and this build does not know what "
				      "x86-64's ld.so expands it to", lib);
#endif
	} else if ((size_t)snprintf(ret_native, size, "%s", lib) >= size) {
		return shstkctl_error("%s: path too long", lib);
	}
	if ((size_t)snprintf(path, sizeof(path), "%s%s", root ? root : "", ret_native) >= sizeof(path))
		return shstkctl_error("%s: path too long", root);
	if (stat(path, &st) < 0)
		return shstkctl_error_errno(-errno, "refusing to enable: the preload %s", path);
	if (!S_ISREG(st.st_mode))
		return shstkctl_error("refusing to enable: the preload %s is not a regular file", path);
#ifdef SHSTK_PRELOAD_LIB_NATIVE
	/* A program of another ABI whose ld.so finds no library prints an error at every start. */
	for (size_t i = 0; strstr(lib, "$LIB") && i < ELEMENTSOF(other_abis); i++) {
		const char *name = shstk_abi_name(other_abis[i].abi);
		char why[160];
		bool found;
		int k;

		if (!abi_installed(i, lib, root, &found) || found)
			continue;
		k = kernel_runs(ka, other_abis[i].abi, why, sizeof(why));
		if (k == 0) {
			/* No such process can start, so none can meet the wrong class. */
			printf("note: %s programs (their ld.so is %s) would find no library of their class, but %s: "
			       "not needed now; install the package's %s library before such a kernel runs this "
			       "system\n", name, other_abis[i].loader, why, name);
			continue;
		}
		return shstkctl_error("refusing to enable: %s programs (their ld.so is %s) would find no "
				      "library of their class for %s (in any of %s) and print an error at "
				      "every start (%s); install the package's %s library",
				      name, other_abis[i].loader, lib, other_abis[i].libs, why, name);
	}
#else
	(void)ka;
#endif
	return 0;
}

/* @text without the entries @a and @b (b may be NULL), into a new buffer. */
static int strip_both(const char *text, size_t len, const char *a, const char *b, char **ret, size_t *ret_len)
{
	_cleanup_free_ char *o1 = malloc(len + 1), *o2 = malloc(len + 1);
	size_t n;

	if (!o1 || !o2)
		return -ENOMEM;
	n = strip_lib(text, len, a, o1);
	if (b)
		n = strip_lib(o1, n, b, o2);
	*ret = b ? TAKE_PTR(o2) : TAKE_PTR(o1);
	*ret_len = n;
	return 0;
}

/*
 * status: for each other ABI whose ld.so is installed, its library and
 * whether the kernel runs it.  The number of problems: ABIs whose programs
 * print an error at every start (or may: the kernel gave no answer) when
 * the file names @lib, which is how a host enabled without the i386
 * library shows it later booted a kernel that runs i386 programs.
 */
static int print_abis(const char *lib, const char *root, const struct kernel_abis *ka, bool enabled)
{
	int problems = 0;
#ifdef SHSTK_PRELOAD_LIB_NATIVE
	for (size_t i = 0; strstr(lib, "$LIB") && i < ELEMENTSOF(other_abis); i++) {
		const char *name = shstk_abi_name(other_abis[i].abi);
		char why[200];
		bool found;
		int k;

		if (!abi_installed(i, lib, root, &found))
			continue;
		k = kernel_runs(ka, other_abis[i].abi, why, sizeof(why));
		printf("  %s: ld.so %s installed, library %s; %s\n", name, other_abis[i].loader,
		       found ? "installed" : "not installed", why);
		if (enabled && !found && k != 0) {
			printf("problem: %s programs %s print \"wrong ELF class\" at every start: no library "
			       "of their class for %s (in any of %s); install the package's %s library\n",
			       name, k > 0 ? "will" : "may", lib, other_abis[i].libs, name);
			problems++;
		}
	}
#else
	(void)lib;
	(void)root;
	(void)ka;
	(void)enabled;
#endif
	return problems;
}

static int run(const char *verb, const char *lib, const char *root, const struct kernel_abis *ka)
{
	char file[PATH_MAX], native[PATH_MAX];
	_cleanup_free_ char *text = NULL, *out = NULL;
	const char *legacy = NULL;
	struct stat st;
	size_t len, n;
	bool named, named_legacy;
	int r;

	if ((size_t)snprintf(file, sizeof(file), "%s%s", root ? root : "", PRELOAD_FILE) >= sizeof(file))
		return shstkctl_error("%s: path too long", root);
	r = read_file(file, &text, &len, &st);
	if (r == -EINVAL)
		return shstkctl_error("%s: not a regular file; not touching it", file);
	if (r == -EFBIG)
		return shstkctl_error("%s: larger than %d bytes; not touching it", file, PRELOAD_FILE_MAX);
	if (r < 0)
		return shstkctl_error_errno(r, "%s", file);
	named = text && names_lib(text, len, lib);
#ifdef SHSTK_PRELOAD_LIB_NATIVE
	/* The same library named the old way, for x86-64 only (what enable wrote before $LIB). */
	if (strstr(lib, "$LIB") &&
	    expand_lib(lib, SHSTK_PRELOAD_LIB_NATIVE, strlen(SHSTK_PRELOAD_LIB_NATIVE), native, sizeof(native)))
		legacy = native;
#endif
	named_legacy = text && legacy && names_lib(text, len, legacy);

	if (strcmp(verb, "status") == 0) {
		printf("preload %s: %s %s %s%s\n", named || named_legacy ? "enabled" : "disabled",
		       text ? file : PRELOAD_FILE " (none)", named || named_legacy ? "names" : "does not name",
		       named || !named_legacy ? lib : legacy,
		       !named && named_legacy ? " (x86-64 only: enable again to cover every ABI)" : "");
		if (print_abis(lib, root, ka, named) > 0)
			return SHSTKCTL_EXIT_FAILURE;
		return named || named_legacy ? SHSTKCTL_EXIT_OK : PRELOAD_EXIT_DISABLED;
	}
	if (strcmp(verb, "enable") == 0) {
		_cleanup_free_ char *kept = NULL;

		if (named) {
			/* nothing to write; what status would call a problem still is one */
			printf("%s already names %s\n", file, lib);
			return print_abis(lib, root, ka, true) > 0 ? SHSTKCTL_EXIT_FAILURE : SHSTKCTL_EXIT_OK;
		}
		r = check_libraries(lib, root, ka, native, sizeof(native));
		if (r != 0)
			return r;
		if (named_legacy) {
			r = strip_both(text, len, legacy, NULL, &kept, &len);
			if (r < 0)
				return shstkctl_error_errno(r, "%s", file);
		}
		out = malloc(len + strlen(lib) + 3);
		if (!out)
			return shstkctl_error_errno(-ENOMEM, "%s", file);
		n = 0;
		if (len) {
			memcpy(out, kept ? kept : text, len);
			n = len;
			if (out[len - 1] != '\n')
				out[n++] = '\n';
		}
		n += (size_t)sprintf(out + n, "%s\n", lib);
		r = write_atomic(file, out, n, text ? &st : NULL);
		if (r < 0)
			return shstkctl_error_errno(r, "writing %s", file);
		printf("enabled: %s now names %s (new processes load it)\n", file, lib);
		return SHSTKCTL_EXIT_OK;
	}
	/* disable */
	if (!named && !named_legacy) {
		printf("%s does not name %s; nothing to do\n", text ? file : PRELOAD_FILE, lib);
		return SHSTKCTL_EXIT_OK;
	}
	r = strip_both(text, len, lib, legacy, &out, &n);
	if (r < 0)
		return shstkctl_error_errno(r, "%s", file);
	if (n == 0) {
		if (unlink(file) < 0)
			return shstkctl_error_errno(-errno, "removing %s", file);
	} else {
		r = write_atomic(file, out, n, &st);
		if (r < 0)
			return shstkctl_error_errno(r, "writing %s", file);
	}
	printf("disabled: %s no longer names %s%s\n", file, lib, n == 0 ? " (it held nothing else: removed)" : "");
	return SHSTKCTL_EXIT_OK;
}

int cmd_preload(int argc, char **argv, struct shstkctl *ctl)
{
	static const struct option options[] = {
		{ "library", required_argument, NULL, 'l' },
		{ "root", required_argument, NULL, 'r' },
		{ "kernel-abis", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		SHSTKCTL_DB_OPTION,
		{}
	};
	const char *lib = PRELOAD_LIB, *root = NULL, *abis = NULL, *verb;
	struct kernel_abis ka;
	int opt, r;

	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case 'l':
			lib = optarg;
			break;
		case 'r':
			root = optarg;
			break;
		case 'k':
			abis = optarg;
			break;
		case 'h':
			help();
			return SHSTKCTL_EXIT_OK;
		default:
			r = shstkctl_common_option(ctl, "preload", opt);
			if (r != SHSTKCTL_CONTINUE)
				return r;
		}
	}
	if (optind + 1 != argc)
		return shstkctl_usage_error("preload", optind >= argc ? "what? (enable, disable or status)"
								     : "one of enable, disable or status");
	verb = argv[optind];
	if (strcmp(verb, "enable") && strcmp(verb, "disable") && strcmp(verb, "status"))
		return shstkctl_usage_error("preload", "unknown preload command '%s' (enable, disable, status)", verb);
	/* ld.so splits the file at blanks and ':': such a path cannot be listed. */
	if (lib[0] != '/' || strpbrk(lib, " \t\n:#") || (strchr(lib, '$') && !strstr(lib, "$LIB")))
		return shstkctl_usage_error("preload", "--library wants an absolute path without blanks, ':', '#' or a '$' other than $LIB");
	if (root && (root[0] == '\0' || strcmp(root, "/") == 0))
		root = NULL;
	/* Another root is booted by a kernel that is not necessarily this one. */
	if (parse_kernel_abis(abis ? abis : root ? "all" : "auto", &ka) < 0)
		return shstkctl_usage_error("preload", "--kernel-abis wants auto, all or a list of x86-64, i386, x32");
	ka.assumed = !abis && root;
	return run(verb, lib, root, &ka);
}

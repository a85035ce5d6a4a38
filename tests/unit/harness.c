// SPDX-License-Identifier: GPL-2.0
/*
 * Runs the TEST()s linked into one unit-test binary. Each test runs in a forked child so that a
 * crash, an abort from a sanitizer or a hang (alarm) fails that test and not the whole binary.
 */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern const struct ps_test __start_ps_tests[], __stop_ps_tests[];

static int failed;
static char tmpdir[256];
static int result_fd = -1;

void ps_test_fail(const char *file, int line, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "%s:%d: ", file, line);
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	/* Only the first failure is the reason; later ones are printed as detail. */
	if (!failed && result_fd >= 0 && write(result_fd, "F", 1) != 1)
		abort();
	fprintf(stderr, "    %s\n", buf);
	failed++;
}

void ps_test_skip(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (result_fd >= 0 && (write(result_fd, "S", 1) != 1 ||
			       write(result_fd, buf, strlen(buf)) != (ssize_t)strlen(buf)))
		abort();
}

const char *ps_test_tmpdir(void)
{
	if (!tmpdir[0]) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/pstest.XXXXXX");
		if (!mkdtemp(tmpdir)) {
			perror("mkdtemp");
			abort();
		}
	}
	return tmpdir;
}

const char *ps_test_srcpath(const char *rel)
{
	static char buf[4][1024];
	static int i;
	const char *top = getenv("PS_SRCDIR");

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", top ? top : ".", rel);
	return buf[i];
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(p);
}

static int run_one(const struct ps_test *t)
{
	int pfd[2];
	char res[600] = "";
	ssize_t n, got = 0;
	int status;
	pid_t pid;

	if (pipe(pfd))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(pfd[0]);
		result_fd = pfd[1];
		alarm(getenv("PS_TEST_TIMEOUT") ? atoi(getenv("PS_TEST_TIMEOUT")) : 120);
		t->fn();
		if (tmpdir[0] && !getenv("PS_TEST_KEEP"))
			nftw(tmpdir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
		fflush(stdout);
		_exit(failed ? 1 : 0);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], res + got, sizeof(res) - 1 - got)) > 0)
		got += n;
	close(pfd[0]);
	res[got] = 0;
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (WIFSIGNALED(status)) {
		printf("FAIL %s: killed by signal %d%s\n", t->name, WTERMSIG(status),
		       WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
		return 1;
	}
	if (res[0] == 'F' || WEXITSTATUS(status) != 0) {
		printf("FAIL %s\n", t->name);
		return 1;
	}
	if (res[0] == 'S') {
		printf("skip %s: %s\n", t->name, res + 1);
		return 2;
	}
	printf("ok %s\n", t->name);
	return 0;
}

int main(int argc, char **argv)
{
	int fail = 0;

	for (const struct ps_test *t = __start_ps_tests; t < __stop_ps_tests; t++) {
		bool wanted = argc < 2;

		for (int i = 1; i < argc; i++)
			if (!strcmp(argv[i], t->name))
				wanted = true;
		if (!wanted)
			continue;
		/* tests/run.sh counts the ok/FAIL/skip lines; the exit code is for direct use. */
		if (run_one(t) == 1)
			fail++;
	}
	fflush(stdout);
	return fail ? 1 : 0;
}

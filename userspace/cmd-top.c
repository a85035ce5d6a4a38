// SPDX-License-Identifier: GPL-2.0
/*
 * poolscope top: a live view of a trace, like slabtop and poolmon. With TRACE it follows a
 * trace that `record -o TRACE` is writing (SQLite WAL: a reader sees each committed interval);
 * without, it runs `poolscope record` itself into a private temporary trace, removed at the
 * end. Every interval it reads the trace again and draws the frame of top/screen.c; keys change
 * the sort and the filters. Not a terminal, or --batch N: N frames as plain text.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "userspace/datafile.h"
#include "userspace/poolscope.h"
#include "userspace/lib/util/util.h"
#include "userspace/lib/trace/trace.h"
#include "userspace/lib/trace/schema.h"
#include "userspace/top/screen.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: poolscope top [TRACE] [--sort KEY] [--domain D] [--interval N]\n"
"                     [--batch N] [--rules FILE]\n"
"\n"
"A live view of per-tag kernel memory, redrawn every interval: the biggest\n"
"growers with their path and domain, the verdict so far, drops. With TRACE,\n"
"follows the trace a running 'poolscope record' writes; without, records by\n"
"itself into a temporary trace (root, as record).\n"
"\n"
"options:\n"
"      --sort KEY     rate (default), growth, live or allocs\n"
"      --domain D     kernel (default), reclaimable, user or all\n"
"  -i, --interval N   redraw every N (default 1s)\n"
"      --batch N      print N frames as plain text, one an interval, and exit\n"
"  -r, --rules FILE   attribution rules (default analysis/rules/default.rules)\n"
"\n"
"keys: r g l a sort by rate, growth, live, allocs; d domain; p path; k kind;\n"
"      / tag glob (Enter sets, Esc cancels); c clear filters; q quit\n"
"\n"
"EXAMPLES\n"
"  poolscope top\n"
"  poolscope top run.db\n");
}

static struct termios saved_tio;
static bool tty_raw;

static void tty_restore(void)
{
	if (!tty_raw)
		return;
	/* leave the alternate screen, show the cursor, cooked mode again */
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
	tty_raw = false;
}

static int tty_setup(void)
{
	struct termios t;

	if (tcgetattr(STDIN_FILENO, &saved_tio))
		return -errno;
	t = saved_tio;
	t.c_lflag &= ~(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t))
		return -errno;
	tty_raw = true;
	/*
	 * A terminal's stdout is line-buffered: each frame would go out a line at a time, and a
	 * terminal that draws between two of them shows the screen just cleared and half written
	 * (tests/cli/top.sh once read an empty table that way). Fully buffered, the fflush() after
	 * each frame sends all of it in one write.
	 */
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	fputs("\033[?1049h\033[?25l", stdout);
	return 0;
}

static void term_size(int *rows, int *cols)
{
	struct winsize ws;
	const char *c = getenv("COLUMNS"), *l = getenv("LINES");

	*rows = l && atoi(l) > 0 ? atoi(l) : 24;
	*cols = c && atoi(c) > 0 ? atoi(c) : 80;
	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/* A file shorter than SQLite's header that is what its start will be: being created. */
static bool creating(const char *path)
{
	static const char magic[16] = "SQLite format 3";
	char head[16];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, head, sizeof(head));
	close(fd);
	return n >= 0 && !memcmp(head, magic, (size_t)n);
}

/*
 * The trace as it stands; NULL with why filled while there is nothing to read, and *fatal set
 * when what is there is not a trace (a file not yet past its SQLite header, or past it without
 * the schema its writer commits first, is one being created: waited for).
 */
static struct ps_run *reload(const char *path, char *why, size_t len, bool *fatal)
{
	struct ps_run *r = NULL;
	char err[512] = "";
	struct stat sb;
	int e;

	*fatal = false;
	why[0] = '\0';
	if (stat(path, &sb) || (S_ISREG(sb.st_mode) && sb.st_size < 100 && creating(path))) {
		snprintf(why, len, "waiting for %s", path);
		return NULL;
	}
	e = ps_run_load(&r, path, err, sizeof(err));
	if (e == -PS_ERR__FOREIGN) {
		/* past the header, but its schema not yet committed: still being created */
		if (ps_trace_db_unborn(path)) {
			snprintf(why, len, "waiting for %s", path);
			return NULL;
		}
		/*
		 * Or committed between the load and that look (the writer sets the application
		 * id and the schema in one transaction, and never takes them back): the file is
		 * read once more, and only what that finds counts.
		 */
		err[0] = '\0';
		e = ps_run_load(&r, path, err, sizeof(err));
	}
	if (e) {
		snprintf(why, len, "%s", err);
		*fatal = true;
		return NULL;
	}
	return r;
}

static void draw(const struct ps_run *r, const struct ps_rules *rs, const struct ps_top_state *st,
		 const char *src, const char *why, bool tty, const char *prompt)
{
	char *buf = NULL;
	size_t len = 0;
	int rows, cols;
	FILE *m;

	term_size(&rows, &cols);
	if (!tty)
		rows = INT_MAX / 2;	/* batch: every tag that passes */
	m = open_memstream(&buf, &len);
	if (!m)
		return;
	ps_top_render(m, r, rs, st, src, why, prompt ? rows - 1 : rows, cols);
	fclose(m);
	if (tty) {
		/* home and clear, then the frame at once: no flicker; no newline after the last
		 * line, which would scroll the screen */
		if (len && buf[len - 1] == '\n')
			buf[--len] = '\0';
		fputs("\033[H\033[2J", stdout);
		for (char *p = buf; *p; p++) {
			if (*p == '\n')
				fputc('\r', stdout);
			fputc(*p, stdout);
		}
		if (prompt)
			fprintf(stdout, "tag glob: %s", prompt);
	} else {
		fputs(buf, stdout);
		fputc('\n', stdout);
	}
	/* a reader that went away (top | head): stop, cleaning up as for q */
	if (fflush(stdout) || ferror(stdout))
		stop = 1;
	free(buf);
}

/* What a key does; true when the frame must be drawn again. */
static bool key(int c, struct ps_top_state *st, const struct ps_run *r, const struct ps_rules *rs)
{
	switch (c) {
	case 'r': st->sort = PS_SORT_RATE; return true;
	case 'g': st->sort = PS_SORT_GROWTH; return true;
	case 'l': st->sort = PS_SORT_LIVE; return true;
	case 'a': st->sort = PS_SORT_ALLOCS; return true;
	case 'd': st->domain = (st->domain + 1) % PS_TOP_DOMAINS; return true;
	case 'k': st->kind = (st->kind + 1) % PS_TOP_KINDS; return true;
	case 'p': ps_top_next_path(r, rs, st->path, sizeof(st->path)); return true;
	case 'c':
		st->kind = 0;
		st->path[0] = st->glob[0] = '\0';
		return true;
	case 'q': stop = 1; return false;
	default: return false;
	}
}

static void cat_file(const char *path, FILE *out)
{
	char line[512];
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		fputs(line, out);
	if (f)
		fclose(f);
}

/* `poolscope record -o path -q` as a child, its stderr into log. */
static pid_t start_recorder(const char *path, const char *log)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	pid = fork();
	if (pid)
		return pid;
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd >= 0)
		dup2(fd, STDERR_FILENO);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
	}
	execl(self, "poolscope", "record", "-o", path, "-q", (char *)NULL);
	_exit(127);
}

static int cmd_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sort", required_argument, NULL, 's' },
		{ "domain", required_argument, NULL, 'D' },
		{ "interval", required_argument, NULL, 'i' },
		{ "batch", required_argument, NULL, 'b' },
		{ "rules", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 } };
	struct ps_top_state st = { .sort = PS_SORT_RATE };
	struct ps_rules *rs = NULL;
	struct ps_run *r = NULL;
	const char *rules_path = NULL, *src;
	char why[600] = "", dir[] = "/tmp/poolscope-top.XXXXXX";
	char tpath[PATH_MAX], log[PATH_MAX], glob[64] = "";
	uint64_t every = 1000000000ull;
	unsigned batch = 0;
	bool tty, editing = false, made_dir = false;
	pid_t child = 0;
	int c, rc = PS_EXIT_FAIL, frames = 0;

	while ((c = getopt_long(argc, argv, "i:r:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (ps_sort_parse(optarg, &st.sort) || st.sort == PS_SORT_RANK) {
				fprintf(stderr, "poolscope top: --sort: expected rate, growth, live or "
					"allocs, got '%s'\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 'D':
			for (st.domain = 0; st.domain < PS_TOP_DOMAINS &&
			     strcmp(optarg, ps_top_domain_name(st.domain)); st.domain++)
				;
			if (st.domain == PS_TOP_DOMAINS) {
				fprintf(stderr, "poolscope top: --domain: expected kernel, reclaimable, "
					"user or all, got '%s'\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 'i':
			if (ps_parse_duration_ns(optarg, &every) || every < 100000000ull) {
				fprintf(stderr, "poolscope top: --interval: expected a duration of at "
					"least 100ms, got '%s'\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 'b':
			if (ps_parse_uint(optarg, 1, 1000000, &batch)) {
				fprintf(stderr, "poolscope top: --batch: expected a number of frames "
					">= 1, got '%s'\n", optarg);
				return PS_EXIT_USAGE;
			}
			break;
		case 'r':
			rules_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return PS_EXIT_OK;
		default:
			usage(stderr);
			return PS_EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		usage(stderr);
		return PS_EXIT_USAGE;
	}
	if (ps_rules_open("top", rules_path, &rs))
		return PS_EXIT_FAIL;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	/* a closed pipe is a write error (draw() stops), not a death that skips the cleanup */
	signal(SIGPIPE, SIG_IGN);
	if (optind < argc) {
		bool fatal;

		src = argv[optind];
		ps_strlcpy(tpath, src, sizeof(tpath));
		/* a file that exists must be a trace; one that does not yet is waited for */
		r = reload(src, why, sizeof(why), &fatal);
		if (fatal) {
			fprintf(stderr, "poolscope top: %s\n", why);
			goto out;
		}
	} else {
		if (!mkdtemp(dir)) {
			fprintf(stderr, "poolscope top: mkdtemp: %s\n", strerror(errno));
			goto out;
		}
		made_dir = true;
		snprintf(tpath, sizeof(tpath), "%s/live.db", dir);
		snprintf(log, sizeof(log), "%s/record.log", dir);
		child = start_recorder(tpath, log);
		if (child < 0) {
			fprintf(stderr, "poolscope top: cannot start the recorder: %s\n",
				strerror(errno));
			child = 0;
			goto out;
		}
		src = "(recording)";
	}
	tty = !batch && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	if (tty && tty_setup()) {
		fprintf(stderr, "poolscope top: cannot set up the terminal: %s\n", strerror(errno));
		goto out;
	}
	while (!stop) {
		struct timespec t0, t1;
		int st_child;

		if (child && waitpid(child, &st_child, WNOHANG) == child) {
			child = 0;
			tty_restore();
			fprintf(stderr, "poolscope top: the recorder stopped (%s %d):\n",
				WIFEXITED(st_child) ? "exit" : "signal",
				WIFEXITED(st_child) ? WEXITSTATUS(st_child) : WTERMSIG(st_child));
			cat_file(log, stderr);
			goto out;
		}
		bool fatal;

		ps_run_free(r);
		r = reload(tpath, why, sizeof(why), &fatal);
		if (!r && child && !fatal)
			snprintf(why, sizeof(why), "starting the recorder");
		draw(r, rs, &st, src, why[0] ? why : NULL, tty, editing ? glob : NULL);
		if (batch && ++frames >= (int)batch)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (;;) {
			struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
			long left;
			char ch;

			clock_gettime(CLOCK_MONOTONIC, &t1);
			left = (long)(every / 1000000) - ((t1.tv_sec - t0.tv_sec) * 1000 +
							  (t1.tv_nsec - t0.tv_nsec) / 1000000);
			if (left <= 0 || stop)
				break;
			if (poll(&pfd, tty ? 1 : 0, (int)left) <= 0 || read(STDIN_FILENO, &ch, 1) != 1)
				continue;
			if (editing) {
				size_t n = strlen(glob);

				if (ch == '\n' || ch == '\r') {
					editing = false;
					ps_strlcpy(st.glob, glob, sizeof(st.glob));
				} else if (ch == 27) {
					editing = false;
				} else if ((ch == 127 || ch == '\b') && n) {
					glob[n - 1] = '\0';
				} else if (ch >= ' ' && ch < 127 && n + 1 < sizeof(glob)) {
					glob[n] = ch;
					glob[n + 1] = '\0';
				}
				draw(r, rs, &st, src, why[0] ? why : NULL, tty, editing ? glob : NULL);
			} else if (ch == '/') {
				editing = true;
				glob[0] = '\0';
				draw(r, rs, &st, src, why[0] ? why : NULL, tty, glob);
			} else if (key(ch, &st, r, rs)) {
				draw(r, rs, &st, src, why[0] ? why : NULL, tty, NULL);
			}
		}
	}
	rc = PS_EXIT_OK;
out:
	tty_restore();
	if (child) {
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
	}
	if (made_dir) {
		static const char *const sfx[] = { "", "-wal", "-shm" };
		char p[PATH_MAX + 16];

		/* the temporary trace and what WAL mode left beside it */
		for (size_t i = 0; i < ARRAY_SIZE(sfx); i++) {
			snprintf(p, sizeof(p), "%s%s", tpath, sfx[i]);
			unlink(p);
		}
		unlink(log);
		rmdir(dir);
	}
	ps_run_free(r);
	ps_rules_free(rs);
	return rc;
}

PS_COMMAND(top, cmd_top, "a live view of the biggest growers and the verdict so far");

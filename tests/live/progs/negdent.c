// SPDX-License-Identifier: GPL-2.0
/*
 * negdent NLOOKUPS DIR: stat()s NLOOKUPS names that do not exist in DIR, leaving that many
 * negative dentries in the dcache, and prints "done". Removing DIR frees them again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[4096];
	struct stat st;
	long n;

	if (argc != 3 || (n = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: negdent NLOOKUPS DIR\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/negdent-%d-%ld", argv[2], (int)getpid(), i);
		if (!stat(path, &st)) {
			fprintf(stderr, "negdent: %s exists\n", path);
			return 1;
		}
		if (errno != ENOENT) {
			fprintf(stderr, "negdent: %s: expected ENOENT, got errno %d\n", path, errno);
			return 1;
		}
	}
	printf("done\n");
	return 0;
}

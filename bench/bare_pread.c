/* The physical limit for a synchronous 4 KiB random read job: a bare loop of pread(2) at random
 * block-aligned offsets over one file for a fixed time, with no statistics at all. fiox's psync
 * job is measured against this (bench/bare-loop.sh). Prints "<ios> <seconds>".
 * Usage: bare_pread FILE SECONDS [BS] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s FILE SECONDS [BS]\n", argv[0]);
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	struct stat st;
	fstat(fd, &st);
	size_t bs = argc > 3 ? strtoul(argv[3], NULL, 0) : 4096;
	uint64_t blocks = st.st_size / bs;
	char *buf = aligned_alloc(4096, bs);
	double secs = atof(argv[2]);
	uint64_t x = 0x9E3779B97F4A7C15ull, ios = 0;
	double start = now(), end = start + secs;
	/* The clock is read once per 1024 I/Os: the loop measures the I/O, not the clock. */
	for (;;) {
		for (int i = 0; i < 1024; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			if (pread(fd, buf, bs, (off_t)((x % blocks) * bs)) != (ssize_t)bs) {
				perror("pread");
				return 1;
			}
		}
		ios += 1024;
		if (now() >= end)
			break;
	}
	printf("%llu %.6f\n", (unsigned long long)ios, now() - start);
	return 0;
}

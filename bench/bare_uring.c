// A bare io_uring submitter (issue 28): the least a loop can do for random 4 KiB direct reads
// at a queue depth, and what fio's default per-I/O work adds to it when asked. Not fio's code:
// written here from the kernel's and liburing's documented interfaces.
//
//   bare_uring DEV SECONDS DEPTH BATCH STATS MAP [CALLS]
//
// Submits BATCH reads at a time (registered buffers and file), waits for at least BATCH
// completions once the queue is full, then takes all there are (t/io_uring's -dD -sB -cB).
// CALLS says how a full queue's round goes to the kernel: 1, the submit waits for the
// completions in the same io_uring_enter (t/io_uring's way); 2, the submit returns first and
// a second call waits (fio's way with its statistics: slat ends when the submit returns, so
// the issue time is stamped between the two calls). The default is 2 with STATS, else 1.
// STATS=1 keeps what fio keeps per I/O by default: a start time per I/O (rdtsc, scaled to ns),
// an issue time per submitted batch and a completion time per reap, and for slat, clat and lat
// each a minimum, maximum, count, sum and sum of squares, plus a log-linear clat histogram
// (64 buckets per power of two) and a bucket of fio's latency table. MAP=1 keeps fio's random
// map: a draw that lands on a block already read this pass takes the next free one, and a full
// map starts a new pass. Offsets come from a three-component Tausworthe generator (L'Ecuyer
// 1996), the kind fio and fiox use. Prints "ios seconds checksum" (the checksum keeps the
// statistics from being optimised away).
#define _GNU_SOURCE
#include <fcntl.h>
#include <liburing.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define BS 4096

struct taus { uint32_t s1, s2, s3; };

static uint32_t taus_next(struct taus *t)
{
	t->s1 = ((t->s1 & 0xfffffffeu) << 12) ^ (((t->s1 << 13) ^ t->s1) >> 19);
	t->s2 = ((t->s2 & 0xfffffff8u) << 4) ^ (((t->s2 << 2) ^ t->s2) >> 25);
	t->s3 = ((t->s3 & 0xfffffff0u) << 17) ^ (((t->s3 << 3) ^ t->s3) >> 11);
	return t->s1 ^ t->s2 ^ t->s3;
}

struct stat1 { uint64_t n, min, max; double sum, sumsq; };

static inline void stat_add(struct stat1 *s, uint64_t v)
{
	if (s->n == 0 || v < s->min)
		s->min = v;
	if (v > s->max)
		s->max = v;
	s->n++;
	double d = (double)v;
	s->sum += d;
	s->sumsq += d * d;
}

static inline unsigned hist_idx(uint64_t v)
{
	if (v < 64)
		return (unsigned)v;
	unsigned msb = 63 - (unsigned)__builtin_clzll(v);
	return (msb - 5) * 64 + (unsigned)((v >> (msb - 6)) & 63);
}

// fio's latency table: 10 buckets each for ns and us (2, 4, 10, 20, 50, 100, 250, 500, 750,
// 1000), 12 for ms; the bucket of a value under 1000 from a table built once.
static unsigned char sub1000[1000];
static void sub1000_init(void)
{
	static const unsigned edges[] = {2, 4, 10, 20, 50, 100, 250, 500, 750};
	for (unsigned v = 0, i = 0; v < 1000; v++) {
		while (i < 9 && v >= edges[i])
			i++;
		sub1000[v] = (unsigned char)i;
	}
}

static inline unsigned lat_bucket(uint64_t ns)
{
	if (ns < 1000)
		return sub1000[ns];
	if (ns < 1000000)
		return 10 + sub1000[ns / 1000];
	return ns < 1000000000 ? 20 + sub1000[ns / 1000000] : 31;
}

static uint64_t tsc_mult; // ns = (tsc * tsc_mult) >> 32
static inline uint64_t now_ns(void)
{
	return (uint64_t)(((unsigned __int128)__rdtsc() * tsc_mult) >> 32);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void calibrate(void)
{
	uint64_t t0 = mono_ns(), c0 = __rdtsc();
	usleep(100000);
	uint64_t t1 = mono_ns(), c1 = __rdtsc();
	tsc_mult = (uint64_t)(((unsigned __int128)(t1 - t0) << 32) / (c1 - c0));
}

// The random map: one bit per block; take the drawn block, else the next free one after it.
struct map { uint64_t *w; uint64_t nbits, nwords, used; };

static uint64_t map_take(struct map *m, uint64_t b)
{
	if (m->used == m->nbits) {
		memset(m->w, 0, m->nwords * 8);
		m->used = 0;
	}
	uint64_t wi = b / 64;
	uint64_t free_bits = ~m->w[wi] & (~0ull << (b % 64));
	while (free_bits == 0) {
		wi = wi + 1 == m->nwords ? 0 : wi + 1;
		free_bits = ~m->w[wi];
	}
	uint64_t got = wi * 64 + (uint64_t)__builtin_ctzll(free_bits);
	if (got >= m->nbits) { // past the end in the last word: from the start
		wi = 0;
		while (~m->w[wi] == 0)
			wi++;
		got = wi * 64 + (uint64_t)__builtin_ctzll(~m->w[wi]);
	}
	m->w[got / 64] |= 1ull << (got % 64);
	m->used++;
	return got;
}

int main(int argc, char **argv)
{
	if (argc != 7 && argc != 8) {
		fprintf(stderr, "usage: %s DEV SECONDS DEPTH BATCH STATS MAP [CALLS]\n", argv[0]);
		return 2;
	}
	int secs = atoi(argv[2]), depth = atoi(argv[3]), batch = atoi(argv[4]);
	int stats = atoi(argv[5]), use_map = atoi(argv[6]);
	int calls = argc == 8 ? atoi(argv[7]) : (stats ? 2 : 1);
	if (calls != 1 && calls != 2) {
		fprintf(stderr, "%s: CALLS must be 1 or 2, not %s\n", argv[0], argv[7]);
		return 2;
	}
	int fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0 || depth < 1 || batch < 1 || batch > depth) {
		perror(argv[1]);
		return 1;
	}
	uint64_t size;
	struct stat st;
	fstat(fd, &st);
	if (S_ISBLK(st.st_mode))
		ioctl(fd, BLKGETSIZE64, &size);
	else
		size = (uint64_t)st.st_size;
	uint64_t nblocks = size / BS;

	struct io_uring ring;
	if (io_uring_queue_init((unsigned)depth, &ring, 0) < 0)
		return 1;
	struct iovec *iov = calloc((size_t)depth, sizeof(*iov));
	for (int i = 0; i < depth; i++) {
		iov[i].iov_base = aligned_alloc(BS, BS);
		iov[i].iov_len = BS;
	}
	if (io_uring_register_buffers(&ring, iov, (unsigned)depth) < 0 ||
	    io_uring_register_files(&ring, &fd, 1) < 0)
		return 1;

	calibrate();
	sub1000_init();
	struct taus t = {0x12345678u, 0x9abcdef0u, 0x0fedcba9u};
	struct map m = {0};
	if (use_map) {
		m.nbits = nblocks;
		m.nwords = (nblocks + 63) / 64;
		m.w = calloc(m.nwords, 8);
	}
	uint64_t *start = calloc((size_t)depth, 8), *issue = calloc((size_t)depth, 8);
	int *free_ids = malloc(sizeof(int) * (size_t)depth), nfree = depth;
	for (int i = 0; i < depth; i++)
		free_ids[i] = i;
	struct stat1 slat = {0}, clat = {0}, lat = {0};
	uint64_t *hist = calloc(64 * 64, 8), lat_buckets[32] = {0};

	uint64_t ios = 0, t_start = mono_ns(), t_end = t_start + (uint64_t)secs * 1000000000ull;
	unsigned inflight = 0, rounds = 0;
	for (;;) {
		int want = depth - (int)inflight < batch ? depth - (int)inflight : batch;
		for (int k = 0; k < want; k++) {
			uint64_t b = ((uint64_t)taus_next(&t) * nblocks) >> 32;
			if (use_map)
				b = map_take(&m, b);
			int id = free_ids[--nfree];
			if (stats)
				start[id] = now_ns();
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			io_uring_prep_read_fixed(sqe, 0, iov[id].iov_base, BS, b * BS, id);
			sqe->flags |= IOSQE_FIXED_FILE;
			sqe->user_data = (uint64_t)id;
		}
		inflight += (unsigned)want;
		unsigned wait = inflight + (unsigned)batch > (unsigned)depth ? (unsigned)batch : 0;
		// The batch's issue time (slat's end): with CALLS=2 after the submit returns and
		// before a second call waits (fio's way), with CALLS=1 before the one call that
		// submits and waits.
		if (calls == 2 && io_uring_submit(&ring) < 0)
			return 1;
		if (stats) {
			uint64_t at = now_ns();
			for (int k = 0; k < want; k++)
				issue[free_ids[nfree + k]] = at;
		}
		struct io_uring_cqe *first;
		if (calls == 2 ? wait && io_uring_wait_cqe_nr(&ring, &first, wait) < 0
			       : io_uring_submit_and_wait(&ring, wait) < 0)
			return 1;
		uint64_t now = stats ? now_ns() : 0;
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;
		io_uring_for_each_cqe(&ring, head, cqe) {
			int id = (int)cqe->user_data;
			if (cqe->res != BS) {
				fprintf(stderr, "read: %d\n", cqe->res);
				return 1;
			}
			if (stats) {
				uint64_t c = now - issue[id];
				stat_add(&clat, c);
				hist[hist_idx(c)]++;
				lat_buckets[lat_bucket(c)]++;
				stat_add(&slat, issue[id] - start[id]);
				stat_add(&lat, now - start[id]);
			}
			free_ids[nfree++] = id;
			n++;
		}
		io_uring_cq_advance(&ring, n);
		inflight -= n;
		ios += n;
		if ((++rounds & 255) == 0 && mono_ns() >= t_end)
			break;
	}
	double s = (double)(mono_ns() - t_start) / 1e9;
	uint64_t sum = clat.n + slat.max + lat.min + (uint64_t)clat.sumsq + lat_buckets[3] + hist[100];
	printf("%llu %.3f %llu\n", (unsigned long long)ios, s, (unsigned long long)sum);
	return 0;
}

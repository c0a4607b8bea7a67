/*
 * Replay driver for fuzz targets when libFuzzer is not linked (gcc builds, ASan CI pass).
 * Runs LLVMFuzzerTestOneInput on every file named on the command line (corpus regression),
 * then on FUZZ_RUNS (default 20000) pseudo-random inputs from FUZZ_SEED, bounded by
 * FUZZ_SECONDS (default 20). Random inputs are built by mutating the corpus files where
 * there are some, so they get past the first header checks.
 * With no arguments the corpus is $FUZZ_CORPUS_DIR/<name>, where the program is fuzz_<name>
 * (the test Makefiles set FUZZ_CORPUS_DIR=$(srcdir)/corpus), if that folder exists.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_INPUT (1u << 16)
#define MAX_SEEDS 256

static uint8_t *seeds[MAX_SEEDS];
static size_t seed_len[MAX_SEEDS];
static int nseeds;

static uint64_t rng_state;
static uint64_t rng(void)
{
	/* splitmix64: small, seedable, good enough to drive mutations */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "fuzz_driver: cannot open %s\n", path);
		exit(2);
	}
	uint8_t *buf = malloc(FUZZ_MAX_INPUT);
	size_t n = fread(buf, 1, FUZZ_MAX_INPUT, f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	if (nseeds < MAX_SEEDS) {
		seeds[nseeds] = buf;
		seed_len[nseeds++] = n;
	} else {
		free(buf);
	}
}

static void run_path(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "fuzz_driver: no such corpus %s\n", path);
		exit(2);
	}
	if (!S_ISDIR(st.st_mode)) {
		run_file(path);
		return;
	}
	DIR *d = opendir(path);
	struct dirent *e;
	char sub[4096];
	while (d && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		run_path(sub);
	}
	if (d)
		closedir(d);
}

int main(int argc, char **argv)
{
	const char *s;
	long runs = (s = getenv("FUZZ_RUNS")) ? atol(s) : 20000;
	long seconds = (s = getenv("FUZZ_SECONDS")) ? atol(s) : 20;
	rng_state = (s = getenv("FUZZ_SEED")) ? strtoull(s, NULL, 0) : 1;

	for (int i = 1; i < argc; i++)
		run_path(argv[i]);
	const char *cdir = getenv("FUZZ_CORPUS_DIR");
	if (argc == 1 && cdir) {
		const char *base = strrchr(argv[0], '/');
		base = base ? base + 1 : argv[0];
		if (strncmp(base, "lt-", 3) == 0)
			base += 3;
		if (strncmp(base, "fuzz_", 5) == 0)
			base += 5;
		char dir[4096];
		struct stat st;
		snprintf(dir, sizeof(dir), "%s/%s", cdir, base);
		if (stat(dir, &st) == 0)
			run_path(dir);
	}

	uint8_t *buf = malloc(FUZZ_MAX_INPUT);
	time_t end = time(NULL) + seconds;
	long done = 0;
	for (; done < runs && time(NULL) < end; done++) {
		size_t len;
		if (nseeds && (rng() & 3)) {
			int k = (int)(rng() % (uint64_t)nseeds);
			len = seed_len[k];
			memcpy(buf, seeds[k], len);
			int flips = 1 + (int)(rng() % 8);
			for (int j = 0; j < flips && len; j++)
				buf[rng() % len] ^= (uint8_t)(1u << (rng() % 8));
			if (rng() % 4 == 0)
				len = (size_t)(rng() % (len + 1)); /* truncate */
		} else {
			len = (size_t)(rng() % 4096);
			for (size_t j = 0; j < len; j++)
				buf[j] = (uint8_t)rng();
		}
		/* copy to an exact-size block so ASan sees reads past the end */
		uint8_t *exact = malloc(len ? len : 1);
		memcpy(exact, buf, len);
		LLVMFuzzerTestOneInput(exact, len);
		free(exact);
	}
	free(buf);
	for (int i = 0; i < nseeds; i++)
		free(seeds[i]);
	printf("fuzz_driver: %d corpus inputs, %ld generated inputs, no crash\n", nseeds, done);
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/* bench_compile: how long beec takes per stage on the example policies
 * and on generated ones, and what a host walk of the tables costs. Prints
 * figures; asserts nothing (the tests do that). */
#include "eval.h"
#include "image.h"
#include "libbeec.h"
#include "pack_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static const char *const defines[] = { "HOME=/home/dev", "PROJECT=/home/dev/src/app" };

static int bench_file(const char *path, const char *label)
{
	struct beec_opts o = { .sz = sizeof(o), .defines = defines, .ndefines = 2 };
	double best_load = 1e9, best_lower = 1e9, best_pack = 1e9;
	size_t rules = 0, pack_len = 0, fs_states = 0;
	for (int run = 0; run < 3; run++) {
		struct beec_policy p;
		struct diag_ctx dc;
		diag_init(&dc);
		double t0 = now();
		if (beec_policy__load(&p, path, &o, &dc) < 0) {
			diag_print(&dc, stderr);
			return -1;
		}
		double t1 = now();
		if (beec_policy__lower(&p, &o, &dc) < 0) {
			diag_print(&dc, stderr);
			return -1;
		}
		double t2 = now();
		uint8_t *buf;
		if (beec_policy__pack(&p, &o, &dc, &buf, &pack_len) < 0) {
			diag_print(&dc, stderr);
			return -1;
		}
		double t3 = now();
		struct dfa_stats st;
		dfa_stats_get(p.lw->dfa[IR_DOMAIN_FS], &st);
		fs_states = st.states;
		rules = p.ir->nrules;
		best_load = t1 - t0 < best_load ? t1 - t0 : best_load;
		best_lower = t2 - t1 < best_lower ? t2 - t1 : best_lower;
		best_pack = t3 - t2 < best_pack ? t3 - t2 : best_pack;
		free(buf);
		diag_fini(&dc);
		beec_policy__fini(&p);
	}
	printf("  %-28s %5zu rules  parse+schema %7.2f ms  lower %8.2f ms  codegen+pack %7.2f ms"
	       "  fs %5zu states  pack %zu bytes\n",
	       label ? label : path, rules, best_load * 1e3, best_lower * 1e3, best_pack * 1e3, fs_states, pack_len);
	return 0;
}

/* A policy of n fs rules over distinct project names under shared
 * prefixes, as a person would write for a large tree. */
static char *gen_policy(unsigned n)
{
	size_t cap = (size_t)n * 64 + 256, len = 0;
	char *t = malloc(cap);
	uint32_t x = 12345;
	len += (size_t)snprintf(t + len, cap - len, "version = 1\nname = \"gen\"\n[fs]\nread = [\n");
	for (unsigned i = 0; i < n; i++) {
		char name[6];
		for (int c = 0; c < 5; c++) {
			x = x * 1103515245u + 12345u;
			name[c] = (char)('a' + (x >> 16) % 26);
		}
		name[5] = '\0';
		len += (size_t)snprintf(t + len, cap - len, "  \"/srv/%s%u/{src,doc}/**\",\n", name, i % 7);
	}
	len += (size_t)snprintf(t + len, cap - len, "]\ndeny = [\"**/*.pem\"]\n");
	return t;
}

/* Writes a generated policy to a temporary file and benches it. */
static int bench_generated(unsigned n)
{
	char path[] = "/tmp/bee-bench-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	char *t = gen_policy(n);
	FILE *f = fdopen(fd, "w");
	fputs(t, f);
	fclose(f);
	free(t);
	char label[64];
	snprintf(label, sizeof(label), "generated, %u globs", n);
	int rc = bench_file(path, label);
	unlink(path);
	return rc;
}

/* Host walk of the fs image: what beec query and the tests pay. */
static void bench_walk(void)
{
	struct beec_policy p;
	struct diag_ctx dc;
	struct beec_opts o = { .sz = sizeof(o), .defines = defines, .ndefines = 2 };
	diag_init(&dc);
	if (beec_policy__load(&p, "policies/cargo-test.toml", &o, &dc) < 0 ||
	    beec_policy__lower(&p, &o, &dc) < 0) {
		diag_print(&dc, stderr);
		return;
	}
	size_t len;
	struct bee_dfa_hdr *img = image_dfa_write(p.lw->dfa[IR_DOMAIN_FS], &len);
	static char path[BEE_PATH_MAX];
	const char *seg = "/home/dev/src/app/target/debug/deps";
	for (size_t i = 0; i < sizeof(path) - 1; i++)
		path[i] = seg[i % strlen(seg)];
	size_t lens[] = { 64, 4095 };
	for (size_t k = 0; k < 2; k++) {
		unsigned runs = 200000 / (unsigned)(lens[k] / 64);
		struct bee_verdict v;
		uint32_t sink = 0;
		double t0 = now();
		for (unsigned r = 0; r < runs; r++) {
			bee_eval_dfa(img, path, lens[k], &v);
			sink += v.state;
		}
		double dt = now() - t0;
		printf("  host walk, %4zu-byte path: %7.1f ns per path, %.2f ns per byte (%u)\n", lens[k],
		       dt / runs * 1e9, dt / runs / (double)lens[k] * 1e9, sink & 1);
	}
	free(img);
	diag_fini(&dc);
	beec_policy__fini(&p);
}

int main(int argc, char **argv)
{
	printf("beec, best of 3 runs per policy:\n");
	for (int i = 1; i < argc; i++)
		if (bench_file(argv[i], NULL) < 0)
			return 1;
	if (bench_generated(1000) < 0 || bench_generated(10000) < 0)
		return 1;
	printf("evaluator:\n");
	bench_walk();
	return 0;
}

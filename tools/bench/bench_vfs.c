/* SPDX-License-Identifier: GPL-2.0-only */
/* bench_vfs: the overlay's own share of a session's start (issue 17's
 * "overlay setup cost per session"), measured step by step, N rounds,
 * medians in microseconds:
 *
 *   layers   bee_vfs_open: STATE/vfs/ID, the upper and work directories,
 *            the record (bee-load, before init's clone)
 *   mount    what init does for one overlay in its new mount namespace
 *            (mountns.c): open the layers' directory and DIR, clone the
 *            layers (open_tree), move the clone back, fsopen/fsconfig/
 *            fsmount the overlay and move it onto DIR
 *   close    bee_vfs_close at the session's end: nothing changed, so the
 *            layers and the record are removed
 *
 * Usage: bench_vfs STATE_DIR DIR [ROUNDS]   (root; STATE_DIR and DIR exist) */
#include "vfs.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return v[n / 2];
}

/* init's steps for one overlay (mountns.c), then undone (not timed) */
static int mount_steps(const char *root, const char *dir, double *us)
{
	char lower[64], upper[PATH_MAX], work[PATH_MAX];
	double t0 = now_us();
	int tfd = open(root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int vfd = (int)syscall(__NR_open_tree, AT_FDCWD, root, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	int lfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tfd < 0 || vfd < 0 || lfd < 0)
		return -errno;
	if (syscall(__NR_move_mount, vfd, "", tfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return -errno;
	snprintf(lower, sizeof(lower), "/proc/self/fd/%d", lfd);
	snprintf(upper, sizeof(upper), "/proc/self/fd/%d/0/upper.0", vfd);
	snprintf(work, sizeof(work), "/proc/self/fd/%d/0/work.0", vfd);
	int err = bee_vfs_overlay_mount(lower, upper, work, false, dir);
	*us = now_us() - t0;
	if (err)
		return err;
	umount2(dir, MNT_DETACH);
	umount2(root, MNT_DETACH);
	close(tfd);
	close(vfd);
	close(lfd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench_vfs STATE_DIR DIR [ROUNDS]\n");
		return 2;
	}
	int n = argc > 3 ? atoi(argv[3]) : 200;
	if (n < 1)
		n = 1;
	double *t_open = calloc((size_t)n, sizeof(double)), *t_mount = calloc((size_t)n, sizeof(double)),
	       *t_close = calloc((size_t)n, sizeof(double));
	if (!t_open || !t_mount || !t_close)
		return 1;
	/* the session's own mount namespace, made once: its cost is the
	 * session's, with or without an overlay */
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		perror("bench_vfs: unshare");
		return 1;
	}
	const char *spec[] = { argv[2] };
	for (int i = 0; i < n; i++) {
		char sid[17];
		struct bee_vfs *v;
		struct bee_error e;
		snprintf(sid, sizeof(sid), "bench%011d", i);
		struct bee_vfs_open_opts o = { .specs = spec, .n = 1, .policy = "bench" };
		double t0 = now_us();
		if (bee_vfs_open(argv[1], sid, &o, &v, &e) < 0) {
			fprintf(stderr, "bench_vfs: %s\n", e.msg);
			return 1;
		}
		t_open[i] = now_us() - t0;
		int err = mount_steps(bee_vfs_root(v), argv[2], &t_mount[i]);
		if (err) {
			fprintf(stderr, "bench_vfs: mount: %s\n", strerror(-err));
			return 1;
		}
		t0 = now_us();
		bee_vfs_close(v);
		t_close[i] = now_us() - t0;
	}
	double a = median(t_open, n), b = median(t_mount, n), c = median(t_close, n);
	printf("    %-44s %8.0f us\n", "layers and record (bee_vfs_open)", a);
	printf("    %-44s %8.0f us\n", "init's clone and overlay mount", b);
	printf("    %-44s %8.0f us\n", "end: nothing changed, removed (bee_vfs_close)", c);
	printf("    %-44s %8.0f us   (medians of %d; the aim: < 2000)\n", "setup per session (layers + mount)", a + b, n);
	printf("    %-44s %8.0f us\n", "setup and end together", a + b + c);
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/* bee-attach: load a BPF object and attach every program to one cgroup.
 *
 *   bee-attach OBJ CGROUP PINDIR
 *
 * Loads OBJ through the running kernel's verifier, attaches each of its
 * programs to the cgroup directory CGROUP as a BPF link (lsm_cgroup/...
 * programs become BPF_LSM_CGROUP links, cgroup/... programs their own
 * attach types) and pins each link in bpffs as PINDIR/<program name>, then
 * exits: the pins keep the programs attached. `rm -r PINDIR` detaches them.
 * On a refused load it prints the end of the verifier log. Exit status 0,
 * or 1 with a message naming the subject first and the cause last.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpflog.h"

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: bee-attach OBJ CGROUP PINDIR\n");
		return 2;
	}
	const char *path = argv[1], *cgroup = argv[2], *pindir = argv[3];
	struct bpf_object *obj = NULL;
	int cgfd = -1, rc = 1, err;

	bpflog_capture();
	cgfd = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0) {
		fprintf(stderr, "bee-attach: cgroup '%s': %s\n", cgroup, strerror(errno));
		goto out;
	}
	if (mkdir(pindir, 0700) < 0 && errno != EEXIST) {
		fprintf(stderr, "bee-attach: pin directory '%s': %s\n", pindir, strerror(errno));
		goto out;
	}
	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		fprintf(stderr, "bee-attach: '%s': cannot open: %s\n", path, strerror(errno));
		bpflog_print_tail("bee-attach", 40);
		goto out;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "bee-attach: '%s': the kernel refused the object: %s\n", path,
			strerror(-err));
		bpflog_print_tail("bee-attach", 60);
		goto out;
	}
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, obj) {
		const char *name = bpf_program__name(prog);
		const char *sec = bpf_program__section_name(prog);
		struct bpf_link *link = bpf_program__attach_cgroup(prog, cgfd);
		if (!link) {
			fprintf(stderr, "bee-attach: prog '%s' (%s): failed to attach to cgroup '%s': %s\n",
				name, sec, cgroup, strerror(errno));
			goto out;
		}
		char pin[4096];
		snprintf(pin, sizeof(pin), "%s/%s", pindir, name);
		err = bpf_link__pin(link, pin);
		if (err) {
			fprintf(stderr, "bee-attach: prog '%s': failed to pin its link at '%s': %s\n",
				name, pin, strerror(-err));
			bpf_link__destroy(link);
			goto out;
		}
		printf("bee-attach: prog '%s' (%s) attached to '%s', link pinned at '%s'\n", name,
		       sec, cgroup, pin);
		bpf_link__destroy(link);   /* closes our fd; the pin keeps the link */
	}
	rc = 0;
out:
	bpf_object__close(obj);
	if (cgfd >= 0)
		close(cgfd);
	return rc;
}

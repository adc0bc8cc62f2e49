/* SPDX-License-Identifier: GPL-2.0-only */
/* ll_walk.h: the landlock backend's plan, made at session start by
 * walking the real tree with the pack's fs and exec automata; part of
 * libbeec's public API (libbeec.h includes it).
 *
 * Landlock grants rights on one inode, or beneath a directory, and has no
 * deny. So the walk starts at the longest literal prefix of every grant
 * (fs read, fs write, exec allow) and, at each directory D, asks the
 * automata for each right whether every path below D gets the same answer
 * (the right is uniform: the states reachable from D's "D/" state all
 * grant it, or none does):
 *
 *   uniform granted   one rule on D gives the right to everything below
 *   uniform refused   nothing to add below
 *   mixed             D is read, and each entry is decided on its own: a
 *                     file gets a rule with the mixed rights it is granted,
 *                     a directory is walked the same way
 *
 * A mixed directory where the automata say that only a few names (at most
 * 128, none endless) can get a rule or a narrowing ("/usr/bin/{sh,cat}"
 * below a grant of all "/usr") is not listed: those names are looked up
 * in sorted order, and what exists is decided as the listing would decide
 * it, so the plan is the same rule for rule and narrowing for narrowing
 * (ll_walk.c says when; opts.list_all turns it off).
 *
 * Listing (Landlock's READ_DIR) follows the read right of the directory
 * listed, and Landlock extends it from a rule's directory to every
 * directory below it: so a directory gets it only when it and everything
 * below it may be read; otherwise it cannot be listed (a narrowing), and
 * where only the directory itself is refused (a grant of "D/" "**") each
 * directory directly below D gets its own.
 *
 * What this cannot make exact is reported as a narrowing (never a
 * widening): an object created after launch below a mixed directory gets
 * no rule, so the rights that are mixed there are denied to it; a
 * directory that could only be listed with too much; an exec grant on a
 * file the policy does not let read (Landlock needs both); a prefix on a
 * file system the session mounts anew (proc, cgroup2) whose rights are
 * mixed; a prefix missing at launch or reached through a symlink.
 *
 * Symlinks are never followed: Landlock decides an access by the inode it
 * resolves to, and the policy by the resolved path, so a symlink gets no
 * rule and its target is granted exactly where the target's own path is.
 *
 * Bounds: entries visited and time (opts); passing either stops the walk
 * with -E2BIG and a message naming the rule whose subtree was being walked.
 *
 * Ownership: the plan owns its narrowing records (beec_ll_plan__fini);
 * a rule handed to the callback lives for the call only.
 */
#ifndef BEE_LL_WALK_H
#define BEE_LL_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bee_dfa_hdr;

/* Rights of a plan rule: the policy's BEE_PERM_READ, WRITE, EXEC on the
 * files at (or below) its path, and listing. */
#define BEEC_LL_READ (1u << 0)
#define BEEC_LL_WRITE (1u << 1)
#define BEEC_LL_EXEC (1u << 2)
#define BEEC_LL_LIST (1u << 8)   /* READ_DIR: list it and every directory below */
/* truncate, on a place the session mounts read-only (opts.ro): the mount
 * refuses every truncate there (EROFS), and Landlock, granted it, stops
 * its walk up the path at this rule on every open below (see opts.ro) */
#define BEEC_LL_TRUNC (1u << 9)

struct beec_ll_rule {
	const char *path;     /* absolute */
	uint32_t rights;      /* BEEC_LL_* */
	bool dir;             /* on a directory: beneath it */
	bool late;            /* on a file system the session mounts anew */
	unsigned rule;        /* the policy rule whose subtree it is in */
	/* which directory dirfd is open on: a new number for each directory
	 * the walk opens, so that two rules with the same number are in the
	 * same directory even where a closed fd's number came back; 0 for a
	 * dirfd of -1 or AT_FDCWD */
	unsigned listing;
};

/* One grant rule of the policy, as the manifest lists it. */
struct beec_ll_seed {
	const char *glob;     /* the rule's text (a pinned exec: the path) */
	unsigned rule;
	unsigned line;
	const char *what;     /* "fs.read", "fs.write", "exec.allow" */
	bool pinned;
};

#define BEEC_LL_NARROWINGS(X)                                                                   \
	X(NEW_OBJECTS, "new-objects", "objects created there after launch are denied what is mixed there") \
	X(NO_LIST, "no-list", "cannot be listed: Landlock's READ_DIR would reach directories below it that the policy does not let read") \
	X(NEW_DIRS, "new-dirs", "directories created directly under it after launch cannot be listed") \
	X(EXEC_NO_READ, "exec-no-read", "exec granted, read not: Landlock executes only what it may read, so it cannot run") \
	X(LATE, "late", "on a file system the session mounts anew (proc, cgroup2) and not uniform below: not granted") \
	X(MISSING, "missing", "missing at launch: grants nothing, and cannot be created") \
	X(SYMLINK, "symlink", "reached through a symlink: grants nothing (the policy decides by the resolved path)") \
	X(UNREADABLE, "unreadable", "cannot be read by the walk: nothing below it is granted")

enum beec_ll_narrow_kind {
#define BEEC_LL_X(id, name, text) BEEC_LL_N_##id,
	BEEC_LL_NARROWINGS(BEEC_LL_X)
#undef BEEC_LL_X
	BEEC_LL_N_COUNT
};

const char *beec_ll__narrow_name(enum beec_ll_narrow_kind k);
const char *beec_ll__narrow_text(enum beec_ll_narrow_kind k);

/* The narrowings of one kind under one rule, counted; path is the first
 * place met (in the walk's order, which is sorted). */
struct beec_ll_narrowing {
	unsigned rule;
	unsigned line;
	char *what, *glob;         /* the seed's, copied */
	enum beec_ll_narrow_kind kind;
	uint32_t rights;           /* the rights concerned (BEEC_LL_*) */
	uint64_t count;
	char *path;
};

struct beec_ll_plan {
	struct beec_ll_narrowing *narrow;   /* sorted by rule, then kind */
	size_t nnarrow;
	/* entries visited: every entry of a directory listed, and each name
	 * a lookup found (a mixed directory where few names can get anything
	 * is not listed: those names are looked up, ll_walk.c) */
	uint64_t entries;
	uint64_t dirs;         /* directories listed */
	uint64_t looked_up;    /* mixed directories decided by lookups instead */
	uint64_t lookups;      /* names looked up in them (found or not) */
	uint64_t symlinks;     /* symlinks among the entries visited (never followed) */
	uint64_t dir_rules, file_rules, late_rules;
	uint64_t ns;           /* time the walk took */
	char err[1024];        /* why it failed */
};

/* The callback: one rule of the plan. dirfd and name open it without
 * following a symlink (openat(dirfd, name, O_PATH | O_NOFOLLOW)); for a
 * late rule dirfd is -1. A negative return stops the walk with it. */
typedef int (*beec_ll_rule_fn)(void *ctx, const struct beec_ll_rule *r, int dirfd, const char *name);

struct beec_ll_opts {
	size_t sz;                  /* sizeof(struct beec_ll_opts) */
	uint64_t max_entries;       /* 0: BEEC_LL_MAX_ENTRIES */
	uint64_t max_ms;            /* 0: BEEC_LL_MAX_MS */
	/* whether the directory fd is on a file system the session mounts
	 * anew (NULL: none is) */
	bool (*late)(int fd);
	/* list every mixed directory, looking no names up: the same plan
	 * (what the tests compare), only slower */
	bool list_all;
	/* the session mounts everything read-only but the places rw[] (the
	 * resolved literal prefixes of its write grants, and its writable
	 * overlays): each rule on a place outside them (neither at, below
	 * nor above one) also carries BEEC_LL_TRUNC, and each entry outside
	 * them of a directory listed that holds one gets a rule of its own
	 * with BEEC_LL_TRUNC alone (its directory's rule cannot have it).
	 * Landlock asks for truncate at every open, and without it granted
	 * its walk up the path goes on to the root. Unset: no BEEC_LL_TRUNC. */
	bool ro;
	const char *const *rw;
	size_t nrw;
};

#define BEEC_LL_MAX_ENTRIES 2000000
#define BEEC_LL_MAX_MS 60000

/* Walks the tree for the grants seeds[] with the images fs and exec
 * (checked with bee_dfa_image_check) and calls fn for every rule. 0;
 * -E2BIG with plan->err when a bound is passed; -EINVAL with plan->err for
 * a seed that is not an absolute glob; -ENOMEM; or fn's error. */
int beec_ll__walk(const struct bee_dfa_hdr *fs, const struct bee_dfa_hdr *exec, const struct beec_ll_seed *seeds,
		  size_t nseeds, const struct beec_ll_opts *opts, beec_ll_rule_fn fn, void *ctx,
		  struct beec_ll_plan *plan);
void beec_ll_plan__fini(struct beec_ll_plan *plan);

struct bee_manifest;
/* The grants of a pack's manifest (fs.read, fs.write, exec.allow), as the
 * walk starts from them: *n of them, malloc'ed; NULL when out of memory. */
struct beec_ll_seed *beec_ll__seeds(const struct bee_manifest *m, size_t *n);

/* What the automata alone say about each grant's literal prefixes, as
 * `beec show` prints it (no file system is read): fn gets each prefix of
 * seeds[i] with the rights of the prefix itself (own) and, below it, the
 * rights uniform granted (all) and mixed (mixed, walked entry by entry).
 * 0, -EINVAL (a seed without a literal prefix), -ENOMEM. */
int beec_ll__prefixes(const struct bee_dfa_hdr *fs, const struct bee_dfa_hdr *exec, const struct beec_ll_seed *seeds,
		      size_t nseeds,
		      void (*fn)(void *ctx, const struct beec_ll_seed *s, const char *prefix, uint32_t own, uint32_t all,
				 uint32_t mixed),
		      void *ctx);

/* A collected plan: every rule, sorted by path, for answering a query the
 * way Landlock will (beec query --backend landlock). */
struct beec_ll_rules {
	struct beec_ll_rule *v;   /* paths owned */
	size_t n, cap;
};

/* A beec_ll_rule_fn that appends to a struct beec_ll_rules. */
int beec_ll__collect(void *rules, const struct beec_ll_rule *r, int dirfd, const char *name);
void beec_ll_rules__sort(struct beec_ll_rules *rs);
void beec_ll_rules__fini(struct beec_ll_rules *rs);

/* What Landlock allows on path under the collected rules: want is
 * BEEC_LL_READ, WRITE or EXEC (exec needs read of the file too, as
 * Landlock checks); path is resolved as the kernel resolves it, and an
 * object that does not exist is decided as a new one (created: write
 * needs the directory's make right). Returns true to allow. */
bool beec_ll__allows(const struct beec_ll_rules *rs, const char *path, uint32_t want);

#endif

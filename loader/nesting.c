/* SPDX-License-Identifier: GPL-2.0-only */
/* nesting.c: a session started inside another session.
 *
 * A process in a live session's cgroup (or below it) that starts a session
 * gets a cgroup below the enclosing one (session.c makes the session cgroup
 * under the caller's own), so the kernel runs both sessions' cgroup
 * programs and the tool is bounded by both. The parent's Landlock domain
 * (landlock backend) belongs to its tool's processes, not to the cgroup,
 * and a launcher placed in the parent's cgroup is not in it; so the child
 * pack must also be proved a subset of every enclosing session's policy
 * before anything is created, or the launch is refused (stage NESTING):
 *
 *   - the caller's cgroup (/proc/self/cgroup) is compared with the cgroup
 *     of every registered session (the run's registry, and the default one
 *     when the run names another), live or stale (a dead bee-load's pinned
 *     links still confine its cgroup); the enclosing ones are checked
 *     innermost first;
 *   - the copy of each enclosing session's pack (the record's "pack", its
 *     load's STATE/packs/K.bpfpack; else STATE/sessions/ID.bpfpack for
 *     records that lack it) must be the
 *     pack it loaded (the record's digest) and its source must compile again
 *     to its images (bee_policy_rebuild); its revoked rules are left out,
 *     so the child is proved against what the parent grants now;
 *   - the child pack is compiled again the same way, and
 *     beec_lowered__check_subset (libbeec.h) proves it a subset, domain
 *     by domain; the first counterexample is the message.
 *
 * Anything that cannot be decided refuses (fail closed): an enclosing
 * session's pack that cannot be read or compiled again; a registry that
 * cannot be listed, or a record that cannot be read, while the caller's
 * cgroup path has a directory named as a session cgroup (bee-POLICY-ID)
 * that may be one of them.
 */
#include "internal.h"

#include "libbeec.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct enclosing {
	struct bee_registry_entry r;
	char state_dir[PATH_MAX];
};

/* 1 when cgroup self is cg or below it. */
static bool cgroup_within(const char *self, const char *cg)
{
	size_t n = strlen(cg);
	while (n > 1 && cg[n - 1] == '/')
		n--;
	return n > 0 && strncmp(self, cg, n) == 0 && (self[n] == '\0' || self[n] == '/');
}

/* 1 when a component of the cgroup path self ends with "-ID": the name
 * bee-POLICY-ID that session ID's cgroup has. */
static bool cgroup_names_id(const char *self, const char *id)
{
	size_t il = strlen(id);
	for (const char *p = self; (p = strchr(p, '/'));) {
		const char *c = ++p, *end = strchrnul(c, '/');
		size_t cl = (size_t)(end - c);
		if (cl > il + 1 && c[cl - il - 1] == '-' && strncmp(c + cl - il, id, il) == 0)
			return true;
	}
	return false;
}

/* 1 when a component of the cgroup path self is named as bee-load names a
 * session cgroup, bee-POLICY-ID (16 hex digits); cgroup v2 refuses to
 * rename a cgroup, so a process outside every such directory is in no
 * session. */
static bool cgroup_session_like(const char *self)
{
	for (const char *p = self; (p = strchr(p, '/'));) {
		const char *c = ++p, *end = strchrnul(c, '/');
		size_t cl = (size_t)(end - c);
		if (cl > 4 + 1 + 16 && strncmp(c, "bee-", 4) == 0 && c[cl - 17] == '-' &&
		    strspn(c + cl - 16, "0123456789abcdef") >= 16)
			return true;
	}
	return false;
}

/* The message, one line: control bytes of a counterexample become '?'. */
static void one_line(char *s)
{
	for (unsigned char *p = (unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
}

static const char *after_stage(const char *msg)
{
	const char *p = strstr(msg, ": ");
	return p ? p + 2 : msg;
}

static int collect(const char *self, const char *sd, struct enclosing **v, size_t *n, bee_warn_fn warn,
		   void *ctx, struct bee_error *e)
{
	char **ids = NULL;
	size_t nids = 0;
	int err = bee_registry_ids(sd, &ids, &nids);
	/* a registry this caller cannot read (not root, say) says nothing
	 * about a process that is in no session's cgroup */
	if (err && !cgroup_session_like(self))
		return 0;
	if (err)
		return bee_fail(e, BEE_STAGE_NESTING, err,
				"cannot list the sessions under '%s/sessions' to tell whether this process runs "
				"inside one: %s",
				sd, strerror(-err));
	for (size_t i = 0; i < nids && !err; i++) {
		struct bee_registry_entry r;
		int rr = bee_registry_read(sd, ids[i], &r);
		if (rr == -ENOENT) {
			/* removed since the listing: its session has ended */
		} else if (rr < 0) {
			if (cgroup_names_id(self, ids[i]))
				err = bee_fail(e, BEE_STAGE_NESTING, rr,
					       "this process's cgroup '%s' may be session %s's, whose record under "
					       "'%s/sessions' cannot be read (%s): refused",
					       self, ids[i], sd, strerror(-rr));
			else
				bee_warnf(warn, ctx, "nesting: session %s: unreadable record under '%s/sessions': %s",
					  ids[i], sd, strerror(-rr));
		} else if (*r.cgroup && cgroup_within(self, r.cgroup)) {
			bool dup = false;
			for (size_t k = 0; k < *n; k++)
				dup |= strcmp((*v)[k].r.id, r.id) == 0 && strcmp((*v)[k].r.cgroup, r.cgroup) == 0;
			struct enclosing *nv = dup ? *v : realloc(*v, (*n + 1) * sizeof(**v));
			if (!nv) {
				err = bee_fail(e, BEE_STAGE_NESTING, -ENOMEM, "out of memory");
			} else if (!dup) {
				*v = nv;
				nv[*n].r = r;
				r.revoked = NULL;   /* moved */
				snprintf(nv[*n].state_dir, sizeof(nv[*n].state_dir), "%s", sd);
				(*n)++;
			}
		}
		bee_registry_entry_fini(&r);
	}
	for (size_t i = 0; i < nids; i++)
		free(ids[i]);
	free(ids);
	return err;
}

/* innermost (longest cgroup path) first */
static int enclosing_cmp(const void *a, const void *b)
{
	const struct enclosing *x = a, *y = b;
	size_t lx = strlen(x->r.cgroup), ly = strlen(y->r.cgroup);
	return lx != ly ? (lx > ly ? -1 : 1) : strcmp(x->r.id, y->r.id);
}

/* The first widening beec_lowered__check_subset queued, with the child rule's place. */
static void first_widening(const struct diag_ctx *dc, char *buf, size_t size)
{
	buf[0] = '\0';
	for (size_t i = 0; i < dc->n; i++) {
		const struct diag *d = &dc->items[i];
		if (d->severity != DIAG_ERROR || !d->msg)
			continue;
		int len = snprintf(buf, size, "%s", d->msg);
		if (d->loc.src && len >= 0 && (size_t)len < size) {
			unsigned line, col;
			loc_linecol(d->loc, &line, &col);
			snprintf(buf + len, size - (size_t)len, " (%s:%u:%u)", d->loc.src->name, line, col);
		}
		if (dc->errors > 1) {
			len = (int)strlen(buf);
			snprintf(buf + len, size - (size_t)len, "; %u more domain%s widen%s", dc->errors - 1,
				 dc->errors > 2 ? "s" : "", dc->errors > 2 ? "" : "s");
		}
		return;
	}
	snprintf(buf, size, "child widens it");
}

/* Proves the child (rebuilt) a subset of one enclosing session. */
static int check_one(const struct beec_policy *child, const char *child_name, const struct enclosing *p,
		     struct bee_error *e)
{
	const struct bee_registry_entry *r = &p->r;
	struct bee_pack *pack = NULL;
	struct bee_manifest m;
	struct beec_policy pol;
	struct bee_error pe = { 0 };
	struct lowered *narrowed = NULL;
	struct diag_ctx dc;
	bool rebuilt = false;
	char who[256], why[1200];
	int err;
	memset(&m, 0, sizeof(m));
	diag_init(&dc);
	snprintf(who, sizeof(who), "session %s ('%s')", r->id, r->policy);
	char *fallback = *r->pack ? NULL : bee_registry_pack_path(p->state_dir, r->id);
	const char *path = *r->pack ? r->pack : fallback;
	if (!path) {
		err = bee_fail(e, BEE_STAGE_NESTING, -ENOMEM, "out of memory");
		goto out;
	}
	if ((err = bee_pack_load(path, &pack, &m, &pe)) < 0) {
		err = bee_fail(e, BEE_STAGE_NESTING, err,
			       "pack '%s' runs inside %s, whose pack '%s' cannot be read (%s): refused, as "
			       "nothing proves it a subset",
			       child_name, who, path, after_stage(pe.msg));
		goto out;
	}
	char hex[BEE_PACK_DIGEST_HEX_LEN + 1];
	bee_pack__digest_hex(pack, hex);
	if (*r->digest && strcmp(hex, r->digest) != 0) {
		err = bee_fail(e, BEE_STAGE_NESTING, -EINVAL,
			       "pack '%s' runs inside %s, whose pack copy '%s' is not the pack it loaded: refused",
			       child_name, who, path);
		goto out;
	}
	if ((err = bee_policy_rebuild(pack, &m, &pol, &pe)) < 0) {
		err = bee_fail(e, BEE_STAGE_NESTING, err,
			       "pack '%s' runs inside %s, whose policy cannot be compiled again (%s): refused, as "
			       "nothing proves it a subset",
			       child_name, who, after_stage(pe.msg));
		goto out;
	}
	rebuilt = true;
	const struct lowered *parent_lw = pol.lw;
	if (r->nrevoked) {
		/* what the parent grants now: without its revoked rules */
		bool *exclude = calloc(pol.ir->nrules + 1, sizeof(bool));
		if (!exclude) {
			err = bee_fail(e, BEE_STAGE_NESTING, -ENOMEM, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < r->nrevoked; i++)
			if (r->revoked[i] < pol.ir->nrules)
				exclude[r->revoked[i]] = true;
		int lr = beec_policy__lower_without(&pol, exclude, &dc, &narrowed);
		free(exclude);
		if (lr == -ENOMEM) {
			err = bee_fail(e, BEE_STAGE_NESTING, -ENOMEM, "pack '%s' runs inside %s: out of memory "
				       "lowering its policy without its revoked rules: refused", child_name, who);
			goto out;
		}
		if (lr < 0) {
			err = bee_fail(e, BEE_STAGE_NESTING, -EINVAL,
				       "pack '%s' runs inside %s, whose policy without its revoked rules does not "
				       "lower: refused",
				       child_name, who);
			goto out;
		}
		diag_fini(&dc);
		diag_init(&dc);
		parent_lw = narrowed;
	}
	int wider = beec_lowered__check_subset(child->lw, parent_lw, &dc);
	if (wider < 0)
		err = bee_fail(e, BEE_STAGE_NESTING, wider, "pack '%s' runs inside %s: out of memory proving it "
			       "a subset: refused", child_name, who);
	else if (wider) {
		first_widening(&dc, why, sizeof(why));
		one_line(why);
		err = bee_fail(e, BEE_STAGE_NESTING, -EPERM, "pack '%s' is not a subset of %s: %s", child_name, who,
			       why);
	}
out:
	beec_lowered__free(narrowed);
	diag_fini(&dc);
	if (rebuilt)
		beec_policy__fini(&pol);
	bee_manifest_fini(&m);
	bee_pack__close(pack);
	free(fallback);
	return err;
}

int bee_nesting_check(const struct bee_pack *pack, const struct bee_manifest *m, const char *state_dir,
		      const char *self, bee_warn_fn warn, void *ctx, struct bee_error *e)
{
	int err = bee_fault(BEE_STAGE_NESTING);
	if (err)
		return bee_fail(e, BEE_STAGE_NESTING, err, "injected fault");
	/* no cgroup v2 node: no session can enclose this process (and the
	 * cgroup stage refuses the launch) */
	if (!self)
		return 0;
	return bee_nesting_check_at(pack, m, state_dir, self, warn, ctx, e);
}

int bee_nesting_check_at(const struct bee_pack *pack, const struct bee_manifest *m, const char *state_dir,
			 const char *self, bee_warn_fn warn, void *ctx, struct bee_error *e)
{
	struct enclosing *v = NULL;
	size_t n = 0;
	int err = 0;
	/* every session's cgroup is named bee-* (a pack's bee-pack-*, the
	 * session's bee-POLICY-ID): a process with no such component in its
	 * cgroup's path is in none, and no record needs reading */
	if (!strstr(self, "/bee-"))
		return 0;
	const char *dirs[2] = { bee_state_dir(state_dir), BEE_STATE_DIR };
	size_t ndirs = strcmp(dirs[0], dirs[1]) == 0 ? 1 : 2;
	for (size_t i = 0; i < ndirs && !err; i++)
		err = collect(self, dirs[i], &v, &n, warn, ctx, e);
	if (err || n == 0)
		goto out;
	qsort(v, n, sizeof(*v), enclosing_cmp);
	struct beec_policy child;
	struct bee_error ce = { 0 };
	if ((err = bee_policy_rebuild(pack, m, &child, &ce)) < 0) {
		err = bee_fail(e, BEE_STAGE_NESTING, err,
			       "pack '%s' runs inside session %s ('%s') and cannot be proved a subset of it: %s",
			       m->name, v[0].r.id, v[0].r.policy, after_stage(ce.msg));
		goto out;
	}
	for (size_t i = 0; i < n && !err; i++)
		err = check_one(&child, m->name, &v[i], e);
	beec_policy__fini(&child);
out:
	for (size_t i = 0; i < n; i++)
		bee_registry_entry_fini(&v[i].r);
	free(v);
	return err;
}

int bee_nesting_check_file_at(const char *pack_path, const char *state_dir, const char *self, bee_warn_fn warn,
			      void *ctx, struct bee_error *e)
{
	struct bee_pack *pack;
	struct bee_manifest m;
	int err = bee_pack_load(pack_path, &pack, &m, e);
	if (err)
		return err;
	err = bee_nesting_check_at(pack, &m, state_dir, self, warn, ctx, e);
	bee_manifest_fini(&m);
	bee_pack__close(pack);
	return err;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/* user.c: the user the tool runs as, resolved in bee-load before the clone
 * (names are looked up here, never in the child, which only calls
 * setgroups, setresgid and setresuid).
 *
 *   bee-load not root          the tool keeps bee-load's ids (a --user
 *                              naming someone else is refused)
 *   --user USER|UID[:GID]      that user; without GID its passwd entry's
 *                              group and its supplementary groups
 *                              (getgrouplist), or GID = UID for a number
 *                              that has no entry; with GID that group alone
 *   no --user, SUDO_UID set    the invoking user (SUDO_UID, SUDO_GID) with
 *                              that user's supplementary groups
 *   otherwise                  65534:65534 ("nobody"/"nogroup")
 *
 * uid 0 is only ever chosen by asking for it (--user root, or 0); bee-load
 * then keeps its own ids and says once what that costs. SUDO_UID=0 (sudo
 * run by root) falls to the default.
 */
#include "internal.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BEE_USER_NOBODY 65534

static int id_parse(const char *s, size_t len, unsigned long *out)
{
	char buf[24], *end;
	if (!len || len >= sizeof(buf) || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	unsigned long v = strtoul(buf, &end, 10);
	if (errno || *end || v >= (unsigned long)(uid_t)-1)
		return -EINVAL;
	*out = v;
	return 0;
}

/* The supplementary groups of name with primary gid (getgrouplist). */
static int groups_of(const char *name, gid_t gid, struct bee_user *u)
{
	int n = 32;
	for (int tries = 0; tries < 4; tries++) {
		gid_t *g = realloc(u->groups, (size_t)n * sizeof(gid_t));
		if (!g)
			return -ENOMEM;
		u->groups = g;
		int want = n;
		if (getgrouplist(name, gid, g, &want) >= 0) {
			u->ngroups = (size_t)want;
			return 0;
		}
		n = want > n ? want : n * 2;
	}
	return -E2BIG;
}

static int groups_one(gid_t gid, struct bee_user *u)
{
	free(u->groups);
	if (!(u->groups = malloc(sizeof(gid_t))))
		return -ENOMEM;
	u->groups[0] = gid;
	u->ngroups = 1;
	return 0;
}

/* USER|UID[:GID] as ids. */
static int spec_resolve(const char *spec, struct bee_user *u, struct bee_error *e)
{
	const char *colon = strchr(spec, ':');
	size_t ulen = colon ? (size_t)(colon - spec) : strlen(spec);
	char name[LOGIN_NAME_MAX + 1];
	unsigned long v;
	const struct passwd *pw = NULL;
	if (!ulen || ulen >= sizeof(name) || (colon && !colon[1]))
		return bee_fail(e, BEE_STAGE_USER, -EINVAL, "--user '%s': expected USER, UID, USER:GROUP or UID:GID",
				spec);
	memcpy(name, spec, ulen);
	name[ulen] = '\0';
	if (id_parse(name, ulen, &v) == 0) {
		u->uid = (uid_t)v;
		pw = getpwuid(u->uid);
	} else {
		if (!(pw = getpwnam(name)))
			return bee_fail(e, BEE_STAGE_USER, -ENOENT, "--user '%s': no such user", spec);
		u->uid = pw->pw_uid;
	}
	int err;
	if (colon) {
		const struct group *gr;
		if (id_parse(colon + 1, strlen(colon + 1), &v) == 0)
			u->gid = (gid_t)v;
		else if ((gr = getgrnam(colon + 1)))
			u->gid = gr->gr_gid;
		else
			return bee_fail(e, BEE_STAGE_USER, -ENOENT, "--user '%s': no such group", spec);
		err = groups_one(u->gid, u);
	} else if (pw) {
		u->gid = pw->pw_gid;
		err = groups_of(pw->pw_name, u->gid, u);
	} else {
		u->gid = (gid_t)u->uid;
		err = groups_one(u->gid, u);
	}
	if (err)
		return bee_fail(e, BEE_STAGE_USER, err, "--user '%s': groups: %s", spec, strerror(-err));
	snprintf(u->name, sizeof(u->name), "%s", pw ? pw->pw_name : name);
	return 0;
}

/* SUDO_UID[/SUDO_GID] as ids; 1 when they name no one to switch to. */
static int sudo_resolve(const char *suid, struct bee_user *u, struct bee_error *e)
{
	unsigned long v;
	if (id_parse(suid, strlen(suid), &v) < 0)
		return bee_fail(e, BEE_STAGE_USER, -EINVAL, "SUDO_UID '%s' is not a user id", suid);
	if (v == 0)
		return 1;
	u->uid = (uid_t)v;
	const char *sgid = getenv("SUDO_GID");
	const struct passwd *pw = getpwuid(u->uid);
	if (sgid && *sgid) {
		if (id_parse(sgid, strlen(sgid), &v) < 0)
			return bee_fail(e, BEE_STAGE_USER, -EINVAL, "SUDO_GID '%s' is not a group id", sgid);
		u->gid = (gid_t)v;
	} else {
		u->gid = pw ? pw->pw_gid : (gid_t)u->uid;
	}
	int err = pw ? groups_of(pw->pw_name, u->gid, u) : groups_one(u->gid, u);
	if (err)
		return bee_fail(e, BEE_STAGE_USER, err, "SUDO_UID %s: groups: %s", suid, strerror(-err));
	if (pw)
		snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
	else
		snprintf(u->name, sizeof(u->name), "%s", suid);
	return 0;
}

int bee_user_resolve(const char *spec, struct bee_user *u, bee_warn_fn warn, void *warn_ctx,
		     struct bee_error *e)
{
	memset(u, 0, sizeof(*u));
	int err = bee_fault(BEE_STAGE_USER);
	if (err)
		return bee_fail(e, BEE_STAGE_USER, err, "injected fault");
	if (spec && !*spec)
		spec = NULL;
	if (geteuid() != 0) {
		/* no switch without root: a request for anyone else is refused */
		struct bee_user want;
		memset(&want, 0, sizeof(want));
		err = spec ? spec_resolve(spec, &want, e) : 0;
		bee_user_fini(&want);
		if (err)
			return err;
		if (spec && want.uid != geteuid())
			return bee_fail(e, BEE_STAGE_USER, -EPERM, "--user '%s': switching users needs root", spec);
		return 0;
	}
	const char *suid = getenv("SUDO_UID");
	if (spec)
		err = spec_resolve(spec, u, e);
	else if (suid && *suid)
		err = sudo_resolve(suid, u, e);
	else
		err = 1;
	if (err == 1) {
		u->uid = BEE_USER_NOBODY;
		u->gid = BEE_USER_NOBODY;
		snprintf(u->name, sizeof(u->name), "nobody");
		err = groups_one(u->gid, u);
		if (err)
			return bee_fail(e, BEE_STAGE_USER, err, "out of memory");
	}
	if (err)
		goto fail;
	if (u->uid == 0) {
		/* asked for: bee-load's own ids, capabilities dropped as always */
		bee_warnf(warn, warn_ctx,
			  "--user %s: the tool runs as uid 0: it owns every root-owned file, and bee's own objects "
			  "are then guarded only by the mount namespace, the seccomp filter and the hooks",
			  spec);
		bee_user_fini(u);
		return 0;
	}
	u->change = true;
	return 0;
fail:
	bee_user_fini(u);
	return err;
}

void bee_user_fini(struct bee_user *u)
{
	free(u->groups);
	u->groups = NULL;
	u->ngroups = 0;
	u->change = false;
}

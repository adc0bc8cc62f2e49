/* SPDX-License-Identifier: GPL-2.0-only */
/* revoke.c: taking a grant away from a live session.
 *
 * A revoke only narrows. Refused outright: a deny rule (taking it away
 * would widen), an [env] rule (the environment was fixed at launch), a
 * rule revoked already, a host name of [net] connect (the session's DNS
 * admits its addresses: dns.c), and under the landlock backend any fs or exec
 * rule (a Landlock domain cannot be narrowed once it is enforced; [net]
 * rules still can, they live in the cgroup programs' maps).
 *
 * How. The session's own copy of its pack is compiled again with its
 * defines (decide.c proves that this gives every image of the pack byte
 * for byte), then lowered again without the revoked rules (this one and
 * every earlier revoke of the session):
 *
 *   fs, exec   The map value is rewritten in place while hooks walk it,
 *              so every write must be safe to read half-done: a walk that
 *              reads part of one table and part of another could land on
 *              any state. Three ways, the first that applies:
 *              1. Lower permission words only. The new permissions of a
 *                 live state are the AND, over the product of the live
 *                 automaton and the narrowed one, of the narrowed
 *                 automaton's permissions at every state paired with it.
 *                 When each live state is paired with one value this is
 *                 exact, and one write does it: a half-written word is
 *                 between the old and the new permissions.
 *              2. Otherwise (the live table merged strings that now
 *                 differ, e.g. two files read alike, one revoked), the
 *                 narrowed automaton replaces the table if it fits the
 *                 live layout (no more states, no more byte classes), in
 *                 three writes: every permission word to 0 (a walk gets
 *                 0 whatever it reads); the new table with the live state
 *                 count, permission words still 0 (the permission words
 *                 sit where they sat, all 0, so any mixture answers 0);
 *                 the new permission words (the table is whole; a word is
 *                 0 or new). For the microseconds between the first and
 *                 the last write the session is refused everything the
 *                 automaton decides: fail closed.
 *              3. Otherwise the AND of 1., narrower than the policy
 *                 without the rule, never wider; the result says which
 *                 string lost more.
 *   net        Each LPM entry keeps its key (deleting one would let its
 *              addresses fall through to a shorter prefix) and gets the
 *              ports of the rules that contain it (the pack's
 *              net_provenance) minus the revoked ones; the same
 *              computation without exclusions must give the pack's value
 *              first. An entry's value is replaced whole (the trie swaps
 *              nodes under RCU).
 *   pins       A revoked pinned exec rule's entries leave bee_pins.
 *
 * The session's maps are its own: the first revoke that changes an image
 * (or its pins) gives the session a copy of what it decides with, in its
 * slot of the pack's per-session map, before anything is written
 * (cache.c), so that the other sessions of the pack keep theirs.
 *
 * Every new value is checked to be a subset of the live one before it is
 * written; then bee_state.gen is bumped (the programs' cached "may map
 * executable" answers expire), the rule joins the session's revoked list,
 * and a record "bee:revoke:RULE" is appended to the session's audit log.
 */
#include "internal.h"

#include "bee_dfa.h"
#include "bee_names.h"
#include "bee_net.h"
#include "bee_session.h"
#include "libbeec.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- net: every port new allows, old allows ------------------------------------------------ */

static bool net_subset(const struct bee_net_value *n, const struct bee_net_value *o)
{
	for (unsigned i = 0; i < n->nranges && i < BEE_NET_MAX_RANGES; i++) {
		bool in = false;
		for (unsigned j = 0; j < o->nranges && j < BEE_NET_MAX_RANGES; j++)
			in |= o->ranges[j].lo <= n->ranges[i].lo && n->ranges[i].hi <= o->ranges[j].hi;
		if (!in)
			return false;
	}
	return true;
}

/* ---- the revoke ------------------------------------------------------------------------- */

struct revoke {
	const char *state_dir;
	struct bee_registry_entry reg;
	struct bee_pack *pack;
	struct bee_manifest m;
	struct beec_policy pol;
	bool rebuilt;
	const struct bee_mf_rule *rule;
	bool *exclude;
	uint64_t sess;              /* the session's key in its pack's maps */
	struct bee_revoke_result *res;
	struct bee_error *e;
	bee_warn_fn warn;
	void *warn_ctx;
};

/* The map the session decides with: its own copy of an image or of its
 * pins (made at the first revoke that changes it, so that no other session
 * of the pack sees the change: cache.c), the keyed map of bee_state. */
static int pinned_map(struct revoke *rv, const char *name)
{
	struct stat st;
	int id = bee_map_find(name);
	if (id < 0 || !*rv->reg.cache || stat(rv->reg.cgroup, &st) < 0)
		return bee_fail(rv->e, BEE_STAGE_SESSION, -ENOENT, "session %s: no map '%s' of its pack's load (cgroup '%s')",
				rv->reg.id, name, rv->reg.cgroup);
	rv->sess = st.st_ino;    /* the session's key: its cgroup's id */
	return bee_session_map(rv->reg.cache, rv->reg.bpffs, (enum bee_map_id)id, rv->sess, rv->e);
}

/* Finds RULE by index or by its text. */
static int find_rule(struct revoke *rv, const char *spec)
{
	char buf[4300];
	const struct bee_mf_rule *hit = NULL;
	unsigned hits = 0;
	if (*spec && strspn(spec, "0123456789") == strlen(spec)) {
		unsigned long i = strtoul(spec, NULL, 10);
		hit = i < rv->m.nrules ? &rv->m.rules[i] : NULL;
		hits = hit != NULL;
	} else {
		for (size_t i = 0; i < rv->m.nrules; i++) {
			const struct bee_mf_rule *r = &rv->m.rules[i];
			bee_rule_format(r, buf, sizeof(buf));
			if (strcmp(spec, buf) == 0 || strcmp(spec, r->text) == 0) {
				hit = hit ? hit : r;
				hits++;
			}
		}
	}
	if (hits == 0)
		return bee_fail(rv->e, BEE_STAGE_REVOKE, -ENOENT, "policy '%s' has no rule '%s' (give its index or its text as `beec show` lists it)",
				rv->m.name, spec);
	if (hits > 1)
		return bee_fail(rv->e, BEE_STAGE_REVOKE, -EINVAL,
				"'%s' names %u rules of policy '%s': give the rule's index (`beec show`)", spec, hits,
				rv->m.name);
	rv->rule = hit;
	return 0;
}

/* What cannot be revoked, and why. */
static int revocable(struct revoke *rv)
{
	const struct bee_mf_rule *r = rv->rule;
	char t[4300];
	bee_rule_format(r, t, sizeof(t));
	if (r->rkind == BEE_RULE_FS_DENY || r->rkind == BEE_RULE_NET_DENY)
		return bee_fail(rv->e, BEE_STAGE_REVOKE, -EPERM,
				"rule %u '%s' is a deny: revoking it would widen the session, and a revoke only narrows",
				r->index, t);
	if (r->rdomain == BEE_DOMAIN_ENV)
		return bee_fail(rv->e, BEE_STAGE_REVOKE, -EPERM,
				"rule %u '%s': the environment was fixed when the tool started; env rules cannot be revoked live",
				r->index, t);
	/* a host name has no entry of the pack to narrow: its addresses are the
	 * DNS stub's admissions (dns.c); refused rather than a revoke that
	 * changes nothing */
	const struct bee_pack_section_info *hs = bee_pack_image(rv->pack, bee_map_name(BEE_MAP_HOSTS));
	for (uint64_t i = 0; hs && hs->elem_width == sizeof(struct bee_host_rec) && i < hs->elem_count; i++) {
		const struct bee_host_rec *h = (const struct bee_host_rec *)hs->data + i;
		if (h->kind == BEE_HOST_NAME && h->rule == r->index)
			return bee_fail(rv->e, BEE_STAGE_REVOKE, -EOPNOTSUPP,
					"rule %u '%s' is a host name: the session's DNS admits its addresses, and a "
					"revoke cannot take them back yet", r->index, t);
	}
	for (size_t i = 0; i < rv->reg.nrevoked; i++)
		if (rv->reg.revoked[i] == r->index)
			return bee_fail(rv->e, BEE_STAGE_REVOKE, -EALREADY, "rule %u '%s' is revoked already", r->index, t);
	if ((r->rdomain == BEE_DOMAIN_FS || r->rdomain == BEE_DOMAIN_EXEC) &&
	    strcmp(rv->reg.backend, "landlock") == 0)
		return bee_fail(rv->e, BEE_STAGE_REVOKE, -EOPNOTSUPP,
				"rule %u '%s': session %s enforces fs and exec with Landlock, which cannot narrow a running "
				"domain; only [net] rules can be revoked under --backend landlock",
				r->index, t, rv->reg.id);
	return 0;
}

static int revoke_dfa(struct revoke *rv, enum ir_domain d, const char *map)
{
	struct lowered *lw = NULL;
	struct diag_ctx dc;
	struct beec_narrow_plan plan = { 0 };
	uint8_t *live = NULL;
	struct bpf_map_info info = { 0 };
	uint32_t info_len = sizeof(info), zero = 0;
	int fd = -1, err;
	diag_init(&dc);
	if ((err = beec_policy__lower_without(&rv->pol, rv->exclude, &dc, &lw)) < 0) {
		err = err == -ENOMEM ? bee_fail(rv->e, BEE_STAGE_REVOKE, -ENOMEM, "out of memory lowering the policy "
						"without rule %u", rv->rule->index)
				     : bee_fail(rv->e, BEE_STAGE_REVOKE, -EINVAL, "the policy without rule %u does not "
						"lower", rv->rule->index);
		goto out;
	}
	if ((fd = err = pinned_map(rv, map)) < 0)
		goto out;
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len) < 0 || info.key_size != 4 ||
	    info.value_size < sizeof(struct bee_dfa_hdr)) {
		err = bee_fail(rv->e, BEE_STAGE_REVOKE, -EINVAL, "map '%s' is not an automaton map", map);
		goto out;
	}
	if (!(live = malloc(info.value_size))) {
		err = bee_fail(rv->e, BEE_STAGE_REVOKE, -ENOMEM, "out of memory");
		goto out;
	}
	if (bpf_map_lookup_elem(fd, &zero, live) < 0) {
		err = bee_fail(rv->e, BEE_STAGE_REVOKE, -errno, "map '%s': %s", map, strerror(errno));
		goto out;
	}
	/* an earlier replacement may leave zero bytes after the image */
	const struct bee_dfa_hdr *lh = (const struct bee_dfa_hdr *)live;
	if (lh->size > info.value_size || bee_dfa_image_check(live, lh->size)) {
		err = bee_fail(rv->e, BEE_STAGE_REVOKE, -EINVAL, "map '%s' holds no well-formed automaton", map);
		goto out;
	}
	err = beec_narrow__plan(lh, info.value_size, lw->dfa[d], &plan);
	if (err) {
		bee_fail(rv->e, BEE_STAGE_REVOKE, err, "map '%s': %s", map,
			 err == -EINVAL ? "the policy without the rule would widen it: refused" : strerror(-err));
		goto out;
	}
	for (int i = 0; i < plan.nwrites && !err; i++)
		if (bpf_map_update_elem(fd, &zero, plan.writes[i], BPF_EXIST) < 0)
			err = bee_fail(rv->e, BEE_STAGE_REVOKE, -errno, "map '%s': %s%s", map, strerror(errno),
				       i ? " (it now refuses everything it decides: fail closed)" : "");
	if (err)
		goto out;
	rv->res->exact = plan.exact;
	if (plan.replaced)
		snprintf(rv->res->note, sizeof(rv->res->note),
			 "map '%s': the narrowed automaton replaced the live one (what it decides was refused "
			 "while the three writes ran)", map);
	else if (!plan.exact)
		snprintf(rv->res->note, sizeof(rv->res->note),
			 "map '%s': the narrowed automaton does not fit the live map, and the live one cannot tell "
			 "the rule's strings from others: %u of its states narrowed beyond the rule (e.g. '%s' lost "
			 "%s%s%s too)", map, plan.rep.states_over, plan.rep.example,
			 plan.rep.example_lost & BEE_PERM_READ ? "read " : "",
			 plan.rep.example_lost & BEE_PERM_WRITE ? "write " : "",
			 plan.rep.example_lost & (BEE_PERM_EXEC | BEE_PERM_EXEC_PINNED) ? "execute" : "");
out:
	if (fd >= 0)
		close(fd);
	free(live);
	beec_narrow__plan_fini(&plan);
	beec_lowered__free(lw);
	diag_fini(&dc);
	return err;
}

static int revoke_pins(struct revoke *rv)
{
	int fd = pinned_map(rv, bee_map_name(BEE_MAP_PINS));
	struct bee_pin_key k, next;
	struct bee_pin_value v;
	if (fd < 0)
		return fd;
	void *prev = NULL;
	/* collect first: deleting while iterating may skip keys */
	struct bee_pin_key dels[64];
	size_t ndel = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v) == 0 && v.rule == rv->rule->index && ndel < 64)
			dels[ndel++] = k;
	}
	for (size_t i = 0; i < ndel; i++)
		bpf_map_delete_elem(fd, &dels[i]);
	close(fd);
	return 0;
}

static int net_prov(struct revoke *rv, uint32_t prov, unsigned **out, size_t *n)
{
	const json_t *rec = json_array_get(rv->m.net_prov, prov);
	*n = json_array_size(rec);
	*out = calloc(*n + 1, sizeof(**out));
	if (!rec || !*out)
		return -EINVAL;
	for (size_t i = 0; i < *n; i++)
		(*out)[i] = (unsigned)json_integer_value(json_array_get(rec, i));
	return 0;
}

static int revoke_net_map(struct revoke *rv, const char *map)
{
	const struct bee_pack_section_info *s = bee_pack_image(rv->pack, map);
	const struct bee_mf_map *mm = bee_manifest_map(&rv->m, map);
	int fd, err = 0;
	if (!s || !mm || s->elem_count == 0)
		return 0;
	if ((fd = pinned_map(rv, map)) < 0)
		return fd;
	for (uint64_t i = 0; i < s->elem_count && !err; i++) {
		const uint8_t *rec = (const uint8_t *)s->data + i * s->elem_width;
		const uint8_t *key = rec;
		struct bee_net_value packv, live, nv;
		memcpy(&packv, rec + mm->key_size, sizeof(packv));
		unsigned dir = key[4], proto = key[5];
		unsigned *prov = NULL;
		size_t nprov = 0;
		if (net_prov(rv, packv.prov, &prov, &nprov) < 0) {
			err = bee_fail(rv->e, BEE_STAGE_PACK, -EINVAL, "map '%s': entry %llu has no provenance record",
				       map, (unsigned long long)i);
		} else if (bpf_map_lookup_elem(fd, key, &live) < 0) {
			err = bee_fail(rv->e, BEE_STAGE_REVOKE, -errno, "map '%s': entry %llu is gone from the live map",
				       map, (unsigned long long)i);
		} else {
			/* the method must give the pack's own value first */
			nv = packv;
			beec_narrow__net_value(rv->pol.ir, prov, nprov, dir, proto, NULL, &nv);
			if (memcmp(&nv, &packv, sizeof(nv)) != 0) {
				err = bee_fail(rv->e, BEE_STAGE_PACK, -EINVAL,
					       "map '%s': entry %llu is not what its rules give; cannot recompute it",
					       map, (unsigned long long)i);
			} else {
				nv = live;
				if (beec_narrow__net_value(rv->pol.ir, prov, nprov, dir, proto, rv->exclude, &nv) == 1)
					rv->res->exact = false;
				if (!net_subset(&nv, &live))
					err = bee_fail(rv->e, BEE_STAGE_REVOKE, -EINVAL,
						       "map '%s': entry %llu would widen: refused", map,
						       (unsigned long long)i);
				else if (memcmp(&nv, &live, sizeof(nv)) != 0 &&
					 bpf_map_update_elem(fd, key, &nv, BPF_EXIST) < 0)
					err = bee_fail(rv->e, BEE_STAGE_REVOKE, -errno, "map '%s': entry %llu: %s", map,
						       (unsigned long long)i, strerror(errno));
			}
		}
		free(prov);
	}
	close(fd);
	return err;
}

static int bump_gen(struct revoke *rv)
{
	int fd = pinned_map(rv, bee_map_name(BEE_MAP_STATE));
	struct bee_state st;
	if (fd < 0)
		return fd;
	int err = 0;
	if (bpf_map_lookup_elem(fd, &rv->sess, &st) < 0)
		err = -errno;
	st.gen++;
	if (!err && bpf_map_update_elem(fd, &rv->sess, &st, BPF_EXIST) < 0)
		err = -errno;
	close(fd);
	if (err)
		return bee_fail(rv->e, BEE_STAGE_REVOKE, err, "map '%s': %s", bee_map_name(BEE_MAP_STATE),
				strerror(-err));
	return 0;
}

static void audit_record(struct revoke *rv)
{
	const struct bee_mf_rule *r = rv->rule;
	if (!*rv->reg.audit_log)
		return;
	struct bee_audit_log log = { .fd = -1, .detail = rv->reg.audit_detail, .policy = rv->m.name };
	int fd = open(rv->reg.audit_log, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		bee_warnf(rv->warn, rv->warn_ctx, "audit log '%s': %s: the revoke is not recorded there",
			  rv->reg.audit_log, strerror(errno));
		return;
	}
	log.fd = fd;
	char res[4400];
	snprintf(res, sizeof(res), "bee:revoke:%s", rv->res->text);
	struct bee_audit_line l = {
		.realtime_ns = bee_clock_ns(CLOCK_REALTIME), .decision = "Deny", .resource = res,
		.resource_len = strlen(res), .pid = getpid(), .comm = "bee-load", .source = "revoke",
		.reason = "revoked", .rule = r->index,
	};
	if (r->rdomain == BEE_DOMAIN_FS) {
		l.kind = "FileSystem";
		l.action = r->rkind == BEE_RULE_FS_WRITE ? "Write" : "Read";
	} else if (r->rdomain == BEE_DOMAIN_EXEC) {
		l.kind = "Process";
		l.action = "Execute";
	} else {
		l.kind = "Network";
		l.action = r->rkind == BEE_RULE_NET_BIND ? "Listen" : "Connect";
	}
	int err = bee_audit_write(&log, &l);
	if (err)
		bee_warnf(rv->warn, rv->warn_ctx, "audit log '%s': %s", rv->reg.audit_log, strerror(-err));
	fsync(fd);
	close(fd);
}

static int revoke_steps(struct revoke *rv, const char *id, const char *spec)
{
	int err = bee_registry_read(rv->state_dir, id, &rv->reg);
	if (err)
		return bee_fail(rv->e, BEE_STAGE_SESSION, err, "no session '%s' under '%s/sessions'", id,
				rv->state_dir);
	if (!bee_pid_alive(rv->reg.pid, rv->reg.starttime))
		return bee_fail(rv->e, BEE_STAGE_SESSION, -ESRCH,
				"session %s is not live (its bee-load, pid %d, is gone; gc removes it)", id,
				(int)rv->reg.pid);
	if ((err = bee_pack_load(rv->reg.pack, &rv->pack, &rv->m, rv->e)) < 0)
		return err;
	char hex[BEE_PACK_DIGEST_HEX_LEN + 1];
	bee_pack__digest_hex(rv->pack, hex);
	if (strcmp(hex, rv->reg.digest) != 0)
		return bee_fail(rv->e, BEE_STAGE_PACK, -EINVAL, "session %s: its pack copy '%s' is not the pack it loaded",
				id, rv->reg.pack);
	if ((err = find_rule(rv, spec)) < 0 || (err = revocable(rv)) < 0)
		return err;
	rv->res->rule = rv->rule->index;
	bee_rule_format(rv->rule, rv->res->text, sizeof(rv->res->text));
	rv->res->exact = true;
	if ((err = bee_policy_rebuild(rv->pack, &rv->m, &rv->pol, rv->e)) < 0)
		return err;
	rv->rebuilt = true;
	rv->exclude = calloc(rv->pol.ir->nrules + 1, sizeof(bool));
	if (!rv->exclude)
		return bee_fail(rv->e, BEE_STAGE_REVOKE, -ENOMEM, "out of memory");
	for (size_t i = 0; i < rv->reg.nrevoked; i++)
		if (rv->reg.revoked[i] < rv->pol.ir->nrules)
			rv->exclude[rv->reg.revoked[i]] = true;
	rv->exclude[rv->rule->index] = true;
	enum bee_domain dom = rv->rule->rdomain;
	if (dom == BEE_DOMAIN_FS)
		err = revoke_dfa(rv, IR_DOMAIN_FS, bee_map_name(BEE_MAP_FS));
	else if (dom == BEE_DOMAIN_EXEC) {
		if ((err = revoke_dfa(rv, IR_DOMAIN_EXEC, bee_map_name(BEE_MAP_EXEC))) == 0 && rv->rule->pinned)
			err = revoke_pins(rv);
	} else if (dom == BEE_DOMAIN_NET) {
		if ((err = revoke_net_map(rv, bee_map_name(BEE_MAP_NET4))) == 0)
			err = revoke_net_map(rv, bee_map_name(BEE_MAP_NET6));
	} else {
		err = bee_fail(rv->e, BEE_STAGE_REVOKE, -EINVAL, "rule %u: unknown domain '%s'", rv->rule->index,
			       rv->rule->domain);
	}
	if (err)
		return err;
	if ((err = bump_gen(rv)) < 0)
		return err;
	unsigned *nr = realloc(rv->reg.revoked, (rv->reg.nrevoked + 1) * sizeof(*nr));
	if (!nr)
		return bee_fail(rv->e, BEE_STAGE_REGISTRY, -ENOMEM, "out of memory");
	rv->reg.revoked = nr;
	nr[rv->reg.nrevoked++] = rv->rule->index;
	if ((err = bee_registry_write(rv->state_dir, &rv->reg)) < 0)
		bee_warnf(rv->warn, rv->warn_ctx, "registry: the revoke is in force but not recorded: %s",
			  strerror(-err));
	audit_record(rv);
	return 0;
}

int bee_sessions__revoke(const char *id, const char *spec, const struct bee_revoke_opts *o,
			 struct bee_revoke_result *res, struct bee_error *e)
{
	struct revoke rv = { .e = e, .res = res };
	struct bee_revoke_opts oc;
	memset(res, 0, sizeof(*res));
	if (bee_opts_copy(&oc, sizeof(oc), o) < 0)
		return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "bee_revoke_opts: unknown fields set");
	rv.state_dir = bee_state_dir(oc.state_dir);
	rv.warn = oc.warn;
	rv.warn_ctx = oc.warn_ctx;
	/* one revoke at a time: each reads the revoked list the last one wrote */
	int lk = bee_registry_lock(rv.state_dir);
	if (lk < 0)
		return bee_fail(e, BEE_STAGE_REGISTRY, lk, "cannot lock '%s/lock': %s", rv.state_dir, strerror(-lk));
	int err = revoke_steps(&rv, id, spec);
	bee_registry_unlock(lk);
	if (rv.rebuilt)
		beec_policy__fini(&rv.pol);
	free(rv.exclude);
	bee_registry_entry_fini(&rv.reg);
	bee_manifest_fini(&rv.m);
	bee_pack__close(rv.pack);
	return err;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/* Attenuation soundness at the policy level, through the whole pipeline
 * (TOML -> schema -> lowering -> beec check's proof -> beec query's walk):
 *
 *   - whenever check says "subset", sampled inputs never get more from
 *     the child than from the parent;
 *   - whenever check says "not a subset", query confirms each
 *     counterexample: the child allows it and the parent does not.
 *
 * Random parent/child policies over a small alphabet (so that they overlap
 * often), with the seed printed for replay (BEE_SEED). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attenuate.h"
#include "lower.h"
#include "query.h"
#include "schema.h"
#include "seed.h"
#include "toml.h"

static uint64_t rng_state, seed;

static uint32_t rnd(uint32_t n)
{
	return (uint32_t)(test_rng_next(&rng_state) % n);
}

static const char *pick(const char *const *v, size_t n)
{
	return v[rnd((uint32_t)n)];
}
#define PICK(v) pick(v, sizeof(v) / sizeof(v[0]))

static const char *const seg_glob[] = { "a", "b", "ab", "*", "?", "**", "[ab]", "{a,b}", "a*", "*b", "[!a]" };
static const char *const seg_path[] = { "a", "b", "ab", "ba", "c", "aa", "bb" };

/* Globs stay below /a or /b: a write grant that could reach the protected
 * kernel interfaces (/sys/fs/cgroup, ...) is refused by the schema. */
static void gen_glob(char *out, size_t n)
{
	int depth = (int)rnd(3);
	snprintf(out, n, "/%s", rnd(2) ? "a" : "b");
	for (int i = 0; i < depth; i++) {
		strncat(out, "/", n - strlen(out) - 1);
		strncat(out, PICK(seg_glob), n - strlen(out) - 1);
	}
}

static void gen_path(char *out, size_t n)
{
	int depth = 1 + (int)rnd(4);
	out[0] = '\0';
	for (int i = 0; i < depth; i++) {
		strncat(out, "/", n - strlen(out) - 1);
		strncat(out, PICK(seg_path), n - strlen(out) - 1);
	}
}

static const char *const env_glob[] = { "A", "B", "AB", "A*", "B?", "[AB]*", "*", "A[!B]" };
static const char *const env_name[] = { "A", "B", "AB", "AC", "BA", "C", "ABC", "BB" };
static const char *const net_entry[] = {
	"10.0.0.0/8:80", "10.1.0.0/16:80-90", "10.1.2.0/24:*", "10.1.2.3:85/udp",
	"0.0.0.0/0:443", "[::]/0:443", "[fd00::]/8:80-90", "10.0.0.0/8:1-1024/udp",
	"[::ffff:10.1.0.0]/112:80",
};
static const char *const net_query[] = {
	"10.0.0.1:80", "10.1.2.3:85/udp", "10.1.9.9:90", "10.1.2.3:443", "11.0.0.1:443",
	"[fd00::1]:85", "[fe80::1]:443", "10.1.2.3:1000/udp", "[::ffff:10.1.0.7]:80",
};

struct gen_policy {
	char text[8192];
};

static void append(struct gen_policy *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(struct gen_policy *g, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t len = strlen(g->text);
	vsnprintf(g->text + len, sizeof(g->text) - len, fmt, ap);
	va_end(ap);
}

static void gen_list(struct gen_policy *g, const char *key, int n, int kind)
{
	append(g, "%s = [", key);
	for (int i = 0; i < n; i++) {
		char buf[256];
		switch (kind) {
		case 0:
			gen_glob(buf, sizeof(buf));
			break;
		case 1:
			snprintf(buf, sizeof(buf), "%s/bin/%s", rnd(4) == 0 ? "!" : "", rnd(3) ? PICK(seg_path) : "*");
			if (buf[0] == '!' && strchr(buf, '*'))
				buf[strlen(buf) - 1] = 'a';
			break;
		case 2:
			snprintf(buf, sizeof(buf), "%s", PICK(env_glob));
			break;
		default:
			snprintf(buf, sizeof(buf), "%s", PICK(net_entry));
			break;
		}
		append(g, "%s\"%s\"", i ? ", " : "", buf);
	}
	append(g, "]\n");
}

static void gen(struct gen_policy *g)
{
	g->text[0] = '\0';
	append(g, "version = 1\nname = \"g\"\n[fs]\n");
	gen_list(g, "read", (int)rnd(4), 0);
	gen_list(g, "write", (int)rnd(3), 0);
	gen_list(g, "deny", (int)rnd(3), 0);
	append(g, "[exec]\n");
	gen_list(g, "allow", (int)rnd(3), 1);
	append(g, "[env]\n");
	gen_list(g, "allow", (int)rnd(3), 2);
	append(g, "[net]\n");
	gen_list(g, "connect", (int)rnd(3), 3);
	gen_list(g, "bind", (int)rnd(2), 3);
	gen_list(g, "deny", (int)rnd(2), 3);
}

struct compiled {
	struct source *src;
	struct toml_doc *doc;
	struct ir_policy *ir;
	struct lowered *lw;
};

static int compile(const char *text, struct compiled *c)
{
	memset(c, 0, sizeof(*c));
	struct diag_ctx dc;
	diag_init(&dc);
	c->src = source_new("gen.toml", text, strlen(text));
	struct schema_opts so = { .sz = sizeof(so) };
	int rc = -1;
	if (toml_parse(c->src, &dc, &c->doc) == 0 && schema_build(c->doc, &so, &dc, &c->ir) == 0 &&
	    lower_policy(c->ir, NULL, &dc, &c->lw) == 0)
		rc = 0;
	if (rc < 0) {
		fprintf(stderr, "generated policy rejected:\n%s\n", text);
		diag_print(&dc, stderr);
	}
	diag_fini(&dc);
	return rc;
}

static void compiled_free(struct compiled *c)
{
	lowered_free(c->lw);
	ir_policy_free(c->ir);
	toml_doc_free(c->doc);
	source_free(c->src);
}

static struct beec_answer ask(const struct compiled *c, const char *kind, const char *action,
			       const char *resource)
{
	struct query q;
	char err[256];
	struct beec_answer r;
	if (query_parse(kind, action, resource, &q, err, sizeof(err)) < 0)
		fail_msg("query %s %s %s: %s", kind, action, resource, err);
	assert_int_equal(query_run(c->lw, &q, &r), 0);
	return r;
}

/* What the holder of a query result may do: pinned exec counts less. */
static int strength(const struct beec_answer *r)
{
	return r->allow ? (r->pinned ? 1 : 2) : 0;
}

static unsigned confirmed, sampled;

static void confirm(const struct compiled *child, const struct compiled *parent,
		    const struct attenuate_widening *w, const char *ctext, const char *ptext)
{
	char res[NETSET_CEX_STRLEN + 8];
	const char *kind = ir_domain_name(w->domain);
	bool ok = false;
	switch (w->domain) {
	case IR_DOMAIN_FS:
		for (int bit = 0; bit < 2 && !ok; bit++) {
			if (!(w->extra & (1u << bit)))
				continue;
			const char *act = bit ? "write" : "read";
			ok = ask(child, kind, act, w->example).allow && !ask(parent, kind, act, w->example).allow;
		}
		break;
	case IR_DOMAIN_EXEC: {
		struct beec_answer c = ask(child, kind, "execute", w->example);
		struct beec_answer p = ask(parent, kind, "execute", w->example);
		ok = strength(&c) > strength(&p);
		break;
	}
	case IR_DOMAIN_ENV:
		ok = ask(child, kind, "read", w->example).allow && !ask(parent, kind, "read", w->example).allow;
		break;
	case IR_DOMAIN_NET: {
		char ep[NETSET_CEX_STRLEN];
		netset_cex_format(&w->net, ep);
		/* "connect 10.0.0.0:443/tcp" -> action and endpoint */
		char *sp = strchr(ep, ' ');
		*sp = '\0';
		snprintf(res, sizeof(res), "%s", sp + 1);
		ok = ask(child, kind, ep, res).allow && !ask(parent, kind, ep, res).allow;
		break;
	}
	case IR_DOMAIN_COUNT:
		break;
	}
	if (!ok)
		fail_msg("seed %llu: query does not confirm the %s counterexample '%s'\nchild:\n%s\nparent:\n%s",
			 (unsigned long long)seed, kind, w->domain == IR_DOMAIN_NET ? res : w->example,
			 ctext, ptext);
	confirmed++;
}

static void sample_subset(const struct compiled *child, const struct compiled *parent,
			  const char *ctext, const char *ptext)
{
	for (int i = 0; i < 40; i++) {
		char path[256];
		gen_path(path, sizeof(path));
		for (int bit = 0; bit < 2; bit++) {
			const char *act = bit ? "write" : "read";
			if (ask(child, "fs", act, path).allow && !ask(parent, "fs", act, path).allow)
				fail_msg("seed %llu: check said subset, but the child may %s '%s'\nchild:\n%s\nparent:\n%s",
					 (unsigned long long)seed, act, path, ctext, ptext);
		}
		snprintf(path, sizeof(path), "/bin/%s", PICK(seg_path));
		struct beec_answer c = ask(child, "exec", "execute", path), p = ask(parent, "exec", "execute", path);
		if (strength(&c) > strength(&p))
			fail_msg("check said subset, but the child may run '%s'\nchild:\n%s\nparent:\n%s",
				 path, ctext, ptext);
		const char *name = PICK(env_name);
		if (ask(child, "env", "read", name).allow && !ask(parent, "env", "read", name).allow)
			fail_msg("check said subset, but the child reads '%s'", name);
		const char *ep = PICK(net_query), *dir = rnd(2) ? "bind" : "connect";
		if (ask(child, "net", dir, ep).allow && !ask(parent, "net", dir, ep).allow)
			fail_msg("check said subset, but the child may %s %s\nchild:\n%s\nparent:\n%s",
				 dir, ep, ctext, ptext);
		sampled++;
	}
}

static void test_soundness(void **state)
{
	(void)state;
	seed = test_seed("test_attenuate", 0);
	rng_state = seed;
	unsigned subsets = 0, wider = 0;
	long n = test_cases(6000);
	for (long i = 0; i < n; i++) {
		struct gen_policy pg, cg;
		gen(&pg);
		/* a third of the children are the parent itself, so "subset" is common */
		if (rnd(3) == 0)
			cg = pg;
		else
			gen(&cg);
		struct compiled parent, child;
		assert_int_equal(compile(pg.text, &parent), 0);
		assert_int_equal(compile(cg.text, &child), 0);
		bool widened = false;
		for (int d = 0; d < IR_DOMAIN_COUNT; d++) {
			struct attenuate_widening w;
			if (attenuate_domain(child.lw, parent.lw, (enum ir_domain)d, &w)) {
				widened = true;
				confirm(&child, &parent, &w, cg.text, pg.text);
			}
		}
		if (widened) {
			wider++;
		} else {
			subsets++;
			sample_subset(&child, &parent, cg.text, pg.text);
		}
		compiled_free(&child);
		compiled_free(&parent);
	}
	printf("test_attenuate: %u subset pairs (%u sampled inputs agreed), %u wider pairs "
	       "(%u counterexamples confirmed by query)\n", subsets, sampled * 5, wider, confirmed);
	/* about a third of each kind: both sides of the proof are exercised */
	assert_true(subsets > n / 6 && wider > n / 6);
}

/* An [fs] deny marks what it matches (IR_PERM_DENIED, which the global
 * hooks hide) and nothing else; the mark is no permission: query answers as
 * before, and a child that adds a deny is a subset of a parent without it,
 * while a child without the parent's deny is not (the control). */
static void test_deny_mark(void **state)
{
	(void)state;
	static const char parent_text[] =
		"version = 1\nname = \"p\"\n[fs]\nread = [\"/h/**\"]\nwrite = [\"/h/out/**\"]\n"
		"deny = [\"/h/.ssh/**\", \"**/*.pem\"]\n";
	static const char more_denies[] =
		"version = 1\nname = \"c\"\n[fs]\nread = [\"/h/**\"]\nwrite = [\"/h/out/**\"]\n"
		"deny = [\"/h/.ssh/**\", \"**/*.pem\", \"/h/out/**\"]\n";
	static const char no_denies[] =
		"version = 1\nname = \"c\"\n[fs]\nread = [\"/h/**\"]\nwrite = [\"/h/out/**\"]\n";
	static const struct {
		const char *path;
		uint32_t perms;
		bool read, write;          /* beec query's answers */
	} rows[] = {
		{ "/h/a.c", IR_PERM_READ, true, false },
		{ "/h/out/x", IR_PERM_READ | IR_PERM_WRITE, true, true },
		{ "/h/.ssh", IR_PERM_DENIED, false, false },
		{ "/h/.ssh/id_rsa", IR_PERM_DENIED, false, false },
		{ "/h/out/k.pem", IR_PERM_DENIED, false, false },
		{ "/etc/k.pem", IR_PERM_DENIED, false, false },
		{ "/etc/passwd", 0, false, false },     /* not granted, not denied */
		{ "/h", 0, false, false },
	};
	struct compiled parent, child;
	assert_int_equal(compile(parent_text, &parent), 0);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint32_t p;
		dfa_match(parent.lw->dfa[IR_DOMAIN_FS], rows[i].path, strlen(rows[i].path), &p, NULL);
		if (p != rows[i].perms)
			fail_msg("'%s': perms 0x%x, want 0x%x", rows[i].path, p, rows[i].perms);
		assert_int_equal(ask(&parent, "fs", "read", rows[i].path).allow, rows[i].read);
		assert_int_equal(ask(&parent, "fs", "write", rows[i].path).allow, rows[i].write);
	}
	struct diag_ctx dc;
	diag_init(&dc);
	assert_int_equal(compile(more_denies, &child), 0);
	assert_int_equal(attenuate_check(child.lw, parent.lw, &dc), 0);
	assert_int_equal(dc.errors, 0);
	compiled_free(&child);
	assert_int_equal(compile(no_denies, &child), 0);
	struct attenuate_widening w;
	assert_true(attenuate_domain(child.lw, parent.lw, IR_DOMAIN_FS, &w));
	assert_int_equal(w.extra, IR_PERM_READ);   /* at "/h/.ssh": never the mark */
	assert_int_equal(w.parent_perms & ~IR_PERM_DENIED, 0);
	/* and the other way round: the parent's denies take, they give nothing */
	assert_false(attenuate_domain(parent.lw, child.lw, IR_DOMAIN_FS, &w));
	compiled_free(&child);
	compiled_free(&parent);
	diag_fini(&dc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_soundness),
		cmocka_unit_test(test_deny_mark),
	};
	return cmocka_run_group_tests_name("attenuate", tests, NULL, NULL);
}

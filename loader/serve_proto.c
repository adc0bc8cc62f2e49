/* SPDX-License-Identifier: GPL-2.0-only */
/* serve_proto.c: the session service's request decoder and its interface
 * description (docs/serve.md "The protocol"). Pure: no I/O, no globals,
 * so that loader/fuzz/fuzz_serve.c and the tests feed it anything. A
 * request is refused unless it is exactly what its method takes: one JSON
 * object, "bee":1, a known "method", only that method's fields, each of
 * its type, and the method's number of descriptors. */
#include "serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct method_info {
	const char *name, *fields;
	size_t nfds;
};

#define BEE_SERVE_METHOD_INFO(id, n, f, k) [BEE_SERVE_##id] = { n, f, k },
static const struct method_info methods[] = { BEE_SERVE_METHODS(BEE_SERVE_METHOD_INFO) };
#undef BEE_SERVE_METHOD_INFO

#define BEE_SERVE_ERROR_INFO(id, n, d) [BEE_SERVE_E_##id] = { n, d },
static const struct {
	const char *name, *doc;
} errors[] = { BEE_SERVE_ERRORS(BEE_SERVE_ERROR_INFO) };
#undef BEE_SERVE_ERROR_INFO

const char *bee_serve_method_name(enum bee_serve_method m)
{
	return m < BEE_SERVE_METHOD_COUNT ? methods[m].name : "?";
}

const char *bee_serve_error_name(enum bee_serve_error e)
{
	return e < BEE_SERVE_E_COUNT ? errors[e].name : "?";
}

/* 1 when word is one of the space-separated words of list. */
static bool word_in(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; *p;) {
		const char *end = strchr(p, ' ');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && strncmp(p, word, n) == 0)
			return true;
		p += len;
		while (*p == ' ')
			p++;
	}
	return false;
}

static int refuse(enum bee_serve_error *err, enum bee_serve_error which, char *msg, size_t size, const char *fmt,
		  const char *a)
{
	*err = which;
	snprintf(msg, size, fmt, a);
	return -1;
}

/* A string field without NUL bytes inside; *out NULL when absent. */
static int str_field(json_t *doc, const char *key, const char **out, size_t max, enum bee_serve_error *err,
		     char *msg, size_t size)
{
	json_t *v = json_object_get(doc, key);
	*out = NULL;
	if (!v)
		return 0;
	const char *s = json_string_value(v);
	if (!s || strlen(s) != json_string_length(v) || !*s || strlen(s) > max)
		return refuse(err, BEE_SERVE_E_FIELD, msg, size, "'%s' must be a non-empty string without NUL bytes", key);
	*out = s;
	return 0;
}

static int strv_field(json_t *doc, const char *key, const char ***out, size_t *n, enum bee_serve_error *err,
		      char *msg, size_t size)
{
	json_t *a = json_object_get(doc, key);
	*out = NULL;
	*n = 0;
	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) > 4096)
		return refuse(err, BEE_SERVE_E_FIELD, msg, size, "'%s' must be an array of at most 4096 strings", key);
	const char **v = calloc(json_array_size(a) + 1, sizeof(char *));
	if (!v)
		return refuse(err, BEE_SERVE_E_FAILED, msg, size, "%s: out of memory", key);
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *s = json_array_get(a, i);
		v[i] = json_string_value(s);
		if (!v[i] || strlen(v[i]) != json_string_length(s)) {
			free(v);
			return refuse(err, BEE_SERVE_E_FIELD, msg, size, "'%s' must hold strings without NUL bytes", key);
		}
	}
	*out = v;
	*n = json_array_size(a);
	return 0;
}

static int bool_field(json_t *doc, const char *key, bool *out, enum bee_serve_error *err, char *msg, size_t size)
{
	json_t *v = json_object_get(doc, key);
	*out = false;
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return refuse(err, BEE_SERVE_E_FIELD, msg, size, "'%s' must be true or false", key);
	*out = json_is_true(v);
	return 0;
}

/* A session id names files under STATE/sessions: letters and digits only. */
static bool sid_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 31)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
			return false;
	return true;
}

int bee_serve_req_parse(const char *line, size_t len, size_t nfds, struct bee_serve_req *r,
			enum bee_serve_error *err, char *msg, size_t size)
{
	json_error_t je;
	memset(r, 0, sizeof(*r));
	if (len >= BEE_SERVE_LINE_MAX)
		return refuse(err, BEE_SERVE_E_PROTOCOL, msg, size, "a request longer than %s bytes", "65535");
	if (memchr(line, '\0', len) || memchr(line, '\n', len))
		return refuse(err, BEE_SERVE_E_PROTOCOL, msg, size, "%s", "a request must be one line of JSON");
	r->doc = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(r->doc))
		return refuse(err, BEE_SERVE_E_PROTOCOL, msg, size, "%s",
			      r->doc ? "a request must be a JSON object" : "a request that is not JSON");
	json_t *ver = json_object_get(r->doc, "bee");
	if (!json_is_integer(ver) || json_integer_value(ver) != BEE_SERVE_PROTO)
		return refuse(err, BEE_SERVE_E_VERSION, msg, size, "%s",
			      "'bee' must be 1, the protocol version this service speaks");
	const char *m = json_string_value(json_object_get(r->doc, "method"));
	int k = -1;
	for (int i = 0; m && i < BEE_SERVE_METHOD_COUNT; i++)
		if (strcmp(m, methods[i].name) == 0)
			k = i;
	if (k < 0)
		return refuse(err, BEE_SERVE_E_METHOD, msg, size,
			      "'method' must be one of start, exec, stop, ls, revoke, vfs, describe%s", "");
	r->method = (enum bee_serve_method)k;
	const char *key;
	json_t *v;
	json_object_foreach(r->doc, key, v) {
		if (strcmp(key, "bee") != 0 && strcmp(key, "method") != 0 && !word_in(methods[k].fields, key)) {
			*err = BEE_SERVE_E_FIELD;
			snprintf(msg, size, "'%.64s' is not a field of %s", key, methods[k].name);
			return -1;
		}
	}
	if (nfds != methods[k].nfds) {
		*err = BEE_SERVE_E_DESCRIPTORS;
		snprintf(msg, size, "%s takes %zu descriptor%s, %zu came", methods[k].name, methods[k].nfds,
			 methods[k].nfds == 1 ? "" : "s", nfds);
		return -1;
	}
	if (str_field(r->doc, "session", &r->session, 31, err, msg, size) < 0 ||
	    str_field(r->doc, "rule", &r->rule, 4096, err, msg, size) < 0 ||
	    str_field(r->doc, "backend", &r->backend, 16, err, msg, size) < 0 ||
	    str_field(r->doc, "user", &r->user, 256, err, msg, size) < 0 ||
	    strv_field(r->doc, "env", &r->env, &r->nenv, err, msg, size) < 0 ||
	    bool_field(r->doc, "audit_detail", &r->audit_detail, err, msg, size) < 0 ||
	    bool_field(r->doc, "no_landlock_hardening", &r->no_landlock_hardening, err, msg, size) < 0)
		return -1;
	size_t nargs;
	if (strv_field(r->doc, "args", &r->args, &nargs, err, msg, size) < 0)
		return -1;
	if (word_in(methods[k].fields, "session") && !r->session)
		return refuse(err, BEE_SERVE_E_FIELD, msg, size, "%s needs 'session'", methods[k].name);
	if (r->session && !sid_ok(r->session))
		return refuse(err, BEE_SERVE_E_FIELD, msg, size, "%s", "'session' must be a session id (letters and digits)");
	if (r->method == BEE_SERVE_REVOKE && !r->rule)
		return refuse(err, BEE_SERVE_E_FIELD, msg, size, "%s", "revoke needs 'rule'");
	for (size_t i = 0; i < r->nenv; i++)
		if (!strchr(r->env[i], '=') || r->env[i][0] == '=')
			return refuse(err, BEE_SERVE_E_FIELD, msg, size, "'env' holds '%.64s', not NAME=VALUE", r->env[i]);
	return 0;
}

void bee_serve_req_fini(struct bee_serve_req *r)
{
	free(r->env);
	free(r->args);
	json_decref(r->doc);
	memset(r, 0, sizeof(*r));
}

json_t *bee_serve_describe(void)
{
	json_t *o = json_object(), *ms = json_array(), *es = json_array();
	for (int i = 0; i < BEE_SERVE_METHOD_COUNT; i++) {
		json_t *m = json_object(), *f = json_array();
		char buf[128];
		snprintf(buf, sizeof(buf), "%s", methods[i].fields);
		for (char *save, *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save))
			json_array_append_new(f, json_string(w));
		json_object_set_new(m, "name", json_string(methods[i].name));
		json_object_set_new(m, "fields", f);
		json_object_set_new(m, "descriptors", json_integer((json_int_t)methods[i].nfds));
		json_array_append_new(ms, m);
	}
	for (int i = 0; i < BEE_SERVE_E_COUNT; i++) {
		json_t *e = json_object();
		json_object_set_new(e, "name", json_string(errors[i].name));
		json_object_set_new(e, "doc", json_string(errors[i].doc));
		json_array_append_new(es, e);
	}
	json_object_set_new(o, "bee", json_integer(BEE_SERVE_PROTO));
	json_object_set_new(o, "interface", json_string("bee.serve"));
	json_object_set_new(o, "methods", ms);
	json_object_set_new(o, "errors", es);
	return o;
}

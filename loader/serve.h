/* SPDX-License-Identifier: GPL-2.0-only */
/* serve.h: the session service, `bee-load serve` (docs/serve.md), and its
 * client. The protocol is newline-delimited JSON over a unix socket,
 * version 1; its decoder is pure (no I/O) so that a fuzzer and the tests
 * can feed it anything. */
#ifndef BEE_SERVE_H
#define BEE_SERVE_H

#include "libbee.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define BEE_SERVE_PROTO 1
#define BEE_SERVE_SOCKET "/run/bee/bee.sock"
#define BEE_SERVE_GROUP "bee"
#define BEE_SERVE_LINE_MAX 65536u      /* one request, its newline included */
#define BEE_SERVE_PACK_MAX (64u << 20) /* a pack handed to start */

/* The methods, each with the fields it takes (the interface description
 * that `describe` answers and docs/serve.md lists). vfs is reserved for
 * `bee-load vfs` (issue 17): the service refuses it by name until then. */
#define BEE_SERVE_METHODS(X)                                                                   \
	X(START, "start", "backend env audit_detail no_landlock_hardening user", 1)            \
	X(EXEC, "exec", "session", 0)                                                         \
	X(STOP, "stop", "session", 0)                                                         \
	X(LS, "ls", "", 0)                                                                    \
	X(REVOKE, "revoke", "session rule", 0)                                                \
	X(VFS, "vfs", "session args", 0)                                                      \
	X(DESCRIBE, "describe", "", 0)

#define BEE_SERVE_METHOD_ENUM(id, name, fields, nfds) BEE_SERVE_##id,
enum bee_serve_method { BEE_SERVE_METHODS(BEE_SERVE_METHOD_ENUM) BEE_SERVE_METHOD_COUNT };
#undef BEE_SERVE_METHOD_ENUM

/* The named errors of a reply {"bee":1,"error":{"name":...,"message":...}}. */
#define BEE_SERVE_ERRORS(X)                                                                     \
	X(PROTOCOL, "protocol", "not one JSON object on one line, or too long")                \
	X(VERSION, "version", "another protocol version than 1")                              \
	X(METHOD, "method", "no such method")                                                 \
	X(FIELD, "field", "a field missing, unknown or of the wrong type")                    \
	X(DESCRIPTORS, "descriptors", "a request with the wrong number of descriptors")       \
	X(DENIED, "denied", "the client may not do this")                                     \
	X(NO_SESSION, "no-session", "no such live session of the client's")                   \
	X(BUSY, "busy", "too many requests at once; try again")                               \
	X(UNSUPPORTED, "unsupported", "a method this service does not serve yet")             \
	X(FAILED, "failed", "the request was valid and failed (stage, err and message say why)")

#define BEE_SERVE_ERROR_ENUM(id, name, doc) BEE_SERVE_E_##id,
enum bee_serve_error { BEE_SERVE_ERRORS(BEE_SERVE_ERROR_ENUM) BEE_SERVE_E_COUNT };
#undef BEE_SERVE_ERROR_ENUM

const char *bee_serve_method_name(enum bee_serve_method m);
const char *bee_serve_error_name(enum bee_serve_error e);

/* A decoded request. Its strings point into doc, which it owns. */
struct bee_serve_req {
	enum bee_serve_method method;
	const char *session, *rule, *backend, *user;
	const char **env;           /* NULL-terminated; NULL when absent */
	size_t nenv;
	const char **args;          /* vfs's */
	bool audit_detail, no_landlock_hardening;
	json_t *doc;
};

/* Decodes one request line (without its newline) that came with nfds
 * descriptors. 0, or -1 with *err and msg (what is wrong, naming the
 * field). r is to be bee_serve_req_fini'ed either way. */
int bee_serve_req_parse(const char *line, size_t len, size_t nfds, struct bee_serve_req *r,
			enum bee_serve_error *err, char *msg, size_t size);
void bee_serve_req_fini(struct bee_serve_req *r);

/* The interface description: every method with its fields and every
 * error name (what `describe` answers). New reference. */
json_t *bee_serve_describe(void);

/* ---- the service ---- */

struct bee_serve_opts {
	size_t sz;
	const char *socket;         /* default BEE_SERVE_SOCKET */
	const char *group;          /* default BEE_SERVE_GROUP */
	const char *state_dir;      /* default BEE_STATE_DIR */
	const char *log;            /* the requests' audit: default STATE/serve/requests.jsonl */
	bee_warn_fn warn;
	void *warn_ctx;
};

/* Serves until SIGTERM or SIGINT; 0 then, else the setup's failure
 * (stage SUPERVISOR). Root only. */
int bee_serve_run(const struct bee_serve_opts *o, struct bee_error *e);

/* ---- the client ---- */

/* The socket to use: --socket, else $BEE_SOCKET, else the default. */
const char *bee_serve_socket_path(const char *opt);
/* Whether commands go through the service: a socket named on purpose, or
 * a caller without root. */
bool bee_serve_wanted(const char *opt);
/* Connects and checks that the peer is root. Stage SESSION. */
int bee_serve_connect(const char *path, int *fd, struct bee_error *e);
/* Sends req (taken) with nfds descriptors and reads the one reply:
 * *reply (new reference) and, when one came, *rfd. An error reply is
 * turned into e and its stage (-1 returned). */
int bee_serve_call(int fd, json_t *req, const int *fds, size_t nfds, json_t **reply, int *rfd,
		   struct bee_error *e);
/* A request object {"bee":1,"method":m}. */
json_t *bee_serve_request(const char *method);

#endif

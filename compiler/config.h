/* SPDX-License-Identifier: GPL-2.0-only */
/* config.h: the configuration files of beec and bee-load (docs/config.md).
 *
 * Layers, highest first; each overrides the ones below it key by key:
 *
 *   flags                       set by the front end (config_set_flag)
 *   --config FILE               opts->file
 *   .bee/config.toml            the first found from the working directory
 *                               upward, stopping after the first directory
 *                               that holds .git (the repository's root) or /
 *   the user's                  $XDG_CONFIG_HOME/bee/config.toml, else
 *                               $HOME/.config/bee/config.toml
 *   the system's                $BEE_SYSCONFDIR/bee/config.toml, else
 *                               /etc/bee/config.toml
 *
 * Files are TOML read by the policy's own front end (toml.h), so a bad one
 * gets the same located diagnostics as a bad policy: unknown tables and
 * keys (with "did you mean"), wrong types and bad values are errors, never
 * ignored. A file that is missing is skipped, and so is one behind a
 * directory the caller cannot search; one that exists but cannot be read,
 * or that someone other than the caller (or root) could have written, is
 * refused.
 *
 * Ownership: a struct config owns its strings and the sources of the files
 * it read (locations point into them, for diagnostics and for the origin of
 * each value); config_fini releases them. Nothing here prints to stdout or
 * exits; config_dump writes to the stream it is given.
 */
#ifndef BEE_CONFIG_H
#define BEE_CONFIG_H

#include "diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum config_type {
	CONFIG_CHOICE,    /* a string, one of the key's choices */
	CONFIG_BOOL,
	CONFIG_PATH,      /* a string; relative: against the file's directory */
	CONFIG_PATHS,     /* an array of such strings */
	CONFIG_ADDR,      /* an IP address with an optional port */
	CONFIG_ACCOUNT,   /* USER, UID, USER:GROUP or UID:GID (bee-load's --user) */
	CONFIG_DEFINES,   /* a table of NAME = "VALUE" (beec's -D) */
};

/* Every key: its id, table, name, type and default (as TOML text shows
 * it; "" for no value). */
#define CONFIG_KEYS(X)                                                      \
	X(BACKEND, "bee-load", "backend", CONFIG_CHOICE, "auto")            \
	X(FALLBACK, "bee-load", "fallback", CONFIG_BOOL, "true")            \
	X(STATE_DIR, "bee-load", "state-dir", CONFIG_PATH, "/run/bee")      \
	X(BPFFS, "bee-load", "bpffs", CONFIG_PATH, "")                      \
	X(AUDIT_LOG, "bee-load", "audit-log", CONFIG_PATH, "")              \
	X(AUDIT_DETAIL, "bee-load", "audit-detail", CONFIG_BOOL, "false")   \
	X(DNS_UPSTREAM, "bee-load", "dns-upstream", CONFIG_ADDR, "")        \
	X(USER, "bee-load", "user", CONFIG_ACCOUNT, "")                     \
	X(ABSTRACTIONS, "beec", "abstractions", CONFIG_PATHS, "")           \
	X(DEFINE, "beec", "define", CONFIG_DEFINES, "")

enum config_key {
#define CONFIG_KEY_ENUM(id, table, name, type, def) CONFIG_##id,
	CONFIG_KEYS(CONFIG_KEY_ENUM)
#undef CONFIG_KEY_ENUM
	CONFIG_KEY_COUNT
};

/* The layers of files, lowest first. */
#define CONFIG_LAYERS(X)            \
	X(SYSTEM, "system")         \
	X(USER, "user")             \
	X(PROJECT, "project")       \
	X(FILE, "--config")

enum config_layer {
#define CONFIG_LAYER_ENUM(id, name) CONFIG_LAYER_##id,
	CONFIG_LAYERS(CONFIG_LAYER_ENUM)
#undef CONFIG_LAYER_ENUM
	CONFIG_LAYER_COUNT
};

enum config_from { CONFIG_FROM_DEFAULT, CONFIG_FROM_FILE, CONFIG_FROM_FLAG };

struct config_value {
	enum config_from from;
	struct loc loc;          /* CONFIG_FROM_FILE: the value's text */
	char *str;               /* CHOICE, PATH, ADDR, ACCOUNT; "" when unset */
	bool b;                  /* BOOL */
	char **list;             /* PATHS */
	size_t n;
};

struct config_define {
	char *name, *value;
	enum config_from from;
	struct loc loc;
};

struct config_file {
	char *path;              /* NULL: no candidate (no HOME; no project file) */
	bool read;               /* found and read */
	bool unsearchable;       /* skipped: a directory on the way cannot be searched */
};

struct config {
	struct config_value v[CONFIG_KEY_COUNT];
	struct config_define *defines;     /* in the order they were first set */
	size_t ndefines, capdefines;
	struct config_file files[CONFIG_LAYER_COUNT];
	char *project_from, *project_to;   /* the directories the project search spanned */
	struct source *srcs[CONFIG_LAYER_COUNT];
};

struct config_opts {
	size_t sz;               /* sizeof(struct config_opts) */
	const char *file;        /* --config FILE; NULL: none */
	/* where to look; NULL: the process's own (getcwd, $HOME,
	 * $XDG_CONFIG_HOME, $BEE_SYSCONFDIR or /etc) */
	const char *cwd, *home, *xdg_config_home, *sysconfdir;
	bool no_user, no_system; /* skip those layers (tests) */
};

/* Fills c with the defaults and every layer's file, lowest first. Returns
 * 0; -EINVAL with located diagnostics in dc for a bad file (every bad file
 * of the run is reported); or another negative errno with one line in err
 * (a file that cannot be read or is not safe to read; --config FILE that
 * does not exist). opts may be NULL. The caller config_fini's c in every
 * case, after printing dc: the diagnostics point into c's sources. */
int config_load(struct config *c, const struct config_opts *opts, struct diag_ctx *dc, char *err,
		size_t errlen);
void config_fini(struct config *c);

/* A flag's value wins over every file (the front end has checked it).
 * These return 0 or -ENOMEM. */
int config_set_flag(struct config *c, enum config_key k, const char *value);
int config_set_flag_bool(struct config *c, enum config_key k, bool value);
/* -D NAME=VALUE from the command line: wins over a file's define of NAME. */
int config_define_flag(struct config *c, const char *name_value);

const char *config_str(const struct config *c, enum config_key k);   /* NULL when "" */
bool config_bool(const struct config *c, enum config_key k);
const char *config_key_name(enum config_key k);   /* "bee-load.backend" */
/* The shape of a user value (USER, UID, USER:GROUP, UID:GID), for
 * bee-load's --user too. */
bool config_user_ok(const char *s);

/* The defines as "NAME=VALUE" strings in c's order (a malloc'ed vector of
 * malloc'ed strings; config_defines_free). NULL when out of memory. */
char **config_defines(const struct config *c, size_t *n);
void config_defines_free(char **v, size_t n);

/* Every key with its value and where it came from, one a line as TOML
 * with a comment (`bee-load.backend = "auto"  # default`), or as one JSON
 * object (docs/config.md). Returns 0 or a negative errno. */
int config_dump(const struct config *c, bool json, FILE *out);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/* toml.y: the TOML 1.0 grammar. Pure and reentrant; every action is one
 * call to a builder in compiler/toml.c, which applies TOML's definition
 * rules and reports their violations. */
%code requires {
#include "toml_parse.h"
}

%code provides {
int toml_lex(YYSTYPE *lval, YYLTYPE *lloc, void *scanner);
}

%code {
#define YYLLOC_DEFAULT(Cur, Rhs, N)                                          \
	do {                                                                 \
		if (N) {                                                     \
			(Cur) = loc_span(YYRHSLOC(Rhs, 1), YYRHSLOC(Rhs, N)); \
		} else {                                                     \
			(Cur) = YYRHSLOC(Rhs, 0);                            \
			(Cur).off += (Cur).len;                              \
			(Cur).len = 0;                                       \
		}                                                            \
	} while (0)

static int yylex(YYSTYPE *lval, YYLTYPE *lloc, struct toml_parser *p)
{
	return toml_lex(lval, lloc, p->scanner);
}

/* Syntax errors are reported by yyreport_syntax_error; this is left for
 * the parser's own failures (its stack exhausted by absurd nesting). */
static void yyerror(YYLTYPE *l, struct toml_parser *p, const char *msg)
{
	diag_error(p->dc, *l, "%s", msg);
}

/* A failed builder check was reported; stop once the error budget is
 * spent, or at once when a limit was hit (more input only costs more). */
#define CHECK(call)                                                    \
	do {                                                           \
		if ((call) < 0 && (diag_full(p->dc) || p->limit_hit))  \
			YYABORT;                                       \
	} while (0)
}

%define api.pure full
%define api.location.type {struct loc}
%define parse.error custom
%define parse.lac full
%locations
%expect 0
%param {struct toml_parser *p}

%union {
	struct toml_key key;
	struct toml_keypath *path;
	struct toml_node *node;
}

%token <key> KEY "key"
%token <node> VALUE "value"
%token NEWLINE "newline"
%token EQUALS "'='"
%token DOT "'.'"
%token COMMA "','"
%token LBRACK "'['"
%token RBRACK "']'"
%token LLBRACK "'[['"
%token RRBRACK "']]'"
%token LBRACE "'{'"
%token RBRACE "'}'"
%token SCANERR "bad token"

%type <path> key
%type <node> value array items inline_table

%destructor { toml_keypath_free($$); } <path>
%destructor { } <key> <node>    /* arena-owned: freed with the document */

%%

document
	: lines line
	| lines error                { toml_build_recover(p); }
	;

/* After an error the rest of its line is skipped and the next one parsed
 * afresh, so one run reports every bad line (up to the error budget). */
lines
	: %empty
	| lines line NEWLINE
	| lines error NEWLINE        { toml_build_recover(p); yyerrok; if (diag_full(p->dc) || p->limit_hit) YYABORT; }
	;

line
	: %empty
	| keyval
	| LBRACK key RBRACK          { CHECK(toml_build_table(p, @$, $2, false)); }
	| LLBRACK key RRBRACK        { CHECK(toml_build_table(p, @$, $2, true)); }
	;


keyval
	: key EQUALS value           { CHECK(toml_build_keyval(p, $1, $3)); }
	;

key
	: KEY                        { $$ = toml_keypath_new($1); }
	| key DOT KEY                { $$ = toml_keypath_push($1, $3); }
	;

value
	: VALUE
	| array
	| inline_table
	;

array
	: LBRACK RBRACK              { $$ = toml_build_array(p, @$); }
	| LBRACK items RBRACK        { $$ = $2; $$->loc = @$; }
	| LBRACK items COMMA RBRACK  { $$ = $2; $$->loc = @$; }
	;

items
	: value                      { $$ = toml_build_array(p, @1); CHECK(toml_build_array_push(p, $$, $1)); }
	| items COMMA value          { $$ = $1; CHECK(toml_build_array_push(p, $$, $3)); }
	;

inline_table
	: LBRACE                     { toml_build_inline_begin(p, @1); }
	  inline_body RBRACE         { $$ = toml_build_inline_end(p, @$); }
	;

inline_body
	: %empty
	| inline_keyvals
	;

inline_keyvals
	: keyval
	| inline_keyvals COMMA keyval
	;

%%

/* "unexpected X, expected Y or Z", located at X. A token the scanner
 * already reported as invalid gets no second message. */
static int yyreport_syntax_error(const yypcontext_t *ctx, struct toml_parser *p)
{
	yysymbol_kind_t unexpected = yypcontext_token(ctx);
	/* the scanner skips to the next line unless the error is the newline */
	p->recovering = unexpected != YYSYMBOL_NEWLINE && unexpected != YYSYMBOL_YYEOF;
	if (!p->recovering)
		p->depth = 0;
	if (p->scan_error) {
		p->scan_error = false;
		return 0;
	}
	yysymbol_kind_t expected[6];
	int n = yypcontext_expected_tokens(ctx, expected, 6);
	char msg[256];
	size_t len = (size_t)snprintf(msg, sizeof(msg), "unexpected %s",
				      unexpected == YYSYMBOL_YYEOF ? "end of file"
								  : yysymbol_name(unexpected));
	for (int i = 0; i < n && i < 5 && len < sizeof(msg); i++) {
		const char *name = expected[i] == YYSYMBOL_YYEOF ? "end of file"
								 : yysymbol_name(expected[i]);
		len += (size_t)snprintf(msg + len, sizeof(msg) - len, "%s%s",
					i == 0 ? ", expected " : i == n - 1 ? " or " : ", ", name);
	}
	struct loc at = *yypcontext_location(ctx);
	diag_error(p->dc, at, "%s", msg);
	return 0;
}

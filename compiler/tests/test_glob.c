/* SPDX-License-Identifier: GPL-2.0-only */
/* test_glob: {glob, string, match?} rows through the whole automaton
 * pipeline, and {glob, error} rows for the parser.
 *
 * Many rows come from git's wildmatch corpus (t/t3070-wildmatch.sh, the
 * pathname-mode column); where git quietly fails to match a malformed
 * pattern, bee refuses the glob, and those rows sit in the error table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dfa.h"
#include "glob.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct glob_row {
	const char *glob;
	const char *text;
	int match;
};

static const struct glob_row glob_rows[] = {
	/* ---- git wildmatch: basics */
	{ "foo", "foo", 1 },
	{ "bar", "foo", 0 },
	{ "???", "foo", 1 },
	{ "??", "foo", 0 },
	{ "*", "foo", 1 },
	{ "f*", "foo", 1 },
	{ "*f", "foo", 0 },
	{ "*foo*", "foo", 1 },
	{ "*ob*a*r*", "foobar", 1 },
	{ "*ab", "aaaaaaabababab", 1 },
	{ "foo\\*", "foo*", 1 },
	{ "foo\\*bar", "foobar", 0 },
	{ "f\\\\oo", "f\\oo", 1 },
	{ "*[al]?", "ball", 1 },
	{ "[ten]", "ten", 0 },
	{ "**[!te]", "ten", 1 },
	{ "**[!ten]", "ten", 0 },
	{ "t[a-g]n", "ten", 1 },
	{ "t[!a-g]n", "ten", 0 },
	{ "t[!a-g]n", "ton", 1 },
	{ "t[^a-g]n", "ton", 1 },
	{ "a[]]b", "a]b", 1 },
	{ "a[]-]b", "a-b", 1 },
	{ "a[]-]b", "a]b", 1 },
	{ "a[]-]b", "aab", 0 },
	{ "a[]a-]b", "aab", 1 },
	{ "]", "]", 1 },
	/* ---- git wildmatch: slashes, pathname mode */
	{ "foo*bar", "foo/baz/bar", 0 },
	{ "foo**bar", "foo/baz/bar", 0 },
	{ "foo**bar", "foobazbar", 1 },
	{ "foo/**/bar", "foo/baz/bar", 1 },
	{ "foo/**/**/bar", "foo/baz/bar", 1 },
	{ "foo/**/bar", "foo/b/a/z/bar", 1 },
	{ "foo/**/**/bar", "foo/b/a/z/bar", 1 },
	{ "foo/**/bar", "foo/bar", 1 },
	{ "foo/**/**/bar", "foo/bar", 1 },
	{ "foo?bar", "foo/bar", 0 },
	{ "foo[^a-z]bar", "foo/bar", 0 },
	{ "f[^eiu][^eiu][^eiu][^eiu][^eiu]r", "foo/bar", 0 },
	{ "f[^eiu][^eiu][^eiu][^eiu][^eiu]r", "foo-bar", 1 },
	{ "**/foo", "foo", 1 },
	{ "**/foo", "XXX/foo", 1 },
	{ "**/foo", "bar/baz/foo", 1 },
	{ "*/foo", "bar/baz/foo", 0 },
	{ "**/bar*", "foo/bar/baz", 0 },
	{ "**/bar/*", "deep/foo/bar/baz", 1 },
	{ "**/bar/*", "deep/foo/bar/baz/", 0 },
	{ "**/bar/**", "deep/foo/bar/baz/", 1 },
	{ "**/bar/*", "deep/foo/bar", 0 },
	{ "**/bar/**", "deep/foo/bar/", 1 },
	{ "**/bar**", "foo/bar/baz", 0 },
	{ "*/bar/**", "foo/bar/baz/x", 1 },
	{ "*/bar/**", "deep/foo/bar/baz/x", 0 },
	{ "**/bar/*/*", "deep/foo/bar/baz/x", 1 },
	/* ---- git wildmatch: various */
	{ "a[c-c]st", "acrt", 0 },
	{ "a[c-c]rt", "acrt", 1 },
	{ "[!]-]", "]", 0 },
	{ "[!]-]", "a", 1 },
	{ "*/\\\\", "XXX/\\", 1 },
	{ "foo", "foo", 1 },
	{ "@foo", "@foo", 1 },
	{ "@foo", "foo", 0 },
	{ "\\[ab]", "[ab]", 1 },
	{ "[[]ab]", "[ab]", 1 },
	{ "[[:]ab]", "[ab]", 1 },
	{ "[[:digit]ab]", "[ab]", 1 },
	{ "[\\[:]ab]", "[ab]", 1 },
	{ "\\??\\?b", "?a?b", 1 },
	{ "\\a\\b\\c", "abc", 1 },
	{ "**/t[o]", "foo/bar/baz/to", 1 },
	/* ---- git wildmatch: classes */
	{ "[[:alpha:]][[:digit:]][[:upper:]]", "a1B", 1 },
	{ "[[:digit:][:upper:][:space:]]", "a", 0 },
	{ "[[:digit:][:upper:][:space:]]", "A", 1 },
	{ "[[:digit:][:upper:][:space:]]", "1", 1 },
	{ "[[:digit:][:upper:][:space:]]", " ", 1 },
	{ "[[:digit:][:upper:][:space:]]", ".", 0 },
	{ "[[:digit:][:punct:][:space:]]", ".", 1 },
	{ "[[:xdigit:]]", "5", 1 },
	{ "[[:xdigit:]]", "f", 1 },
	{ "[[:xdigit:]]", "D", 1 },
	{ "[[:xdigit:]]", "g", 0 },
	{ "[[:alnum:][:alpha:][:blank:][:cntrl:][:digit:][:graph:][:lower:][:print:][:punct:][:space:][:upper:][:xdigit:]]",
	  "_", 1 },
	{ "[^[:alnum:][:alpha:][:blank:][:cntrl:][:digit:][:lower:][:space:][:upper:][:xdigit:]]",
	  ".", 1 },
	{ "[a-c[:digit:]x-z]", "5", 1 },
	{ "[a-c[:digit:]x-z]", "b", 1 },
	{ "[a-c[:digit:]x-z]", "y", 1 },
	{ "[a-c[:digit:]x-z]", "q", 0 },
	{ "[[:lower:]]", "a", 1 },
	{ "[[:lower:]]", "A", 0 },
	{ "[[:upper:]]", "A", 1 },
	{ "[[:blank:]]", "\t", 1 },
	{ "[[:blank:]]", "\n", 0 },
	{ "[[:space:]]", "\n", 1 },
	{ "[[:cntrl:]]", "\x7f", 1 },
	{ "[[:cntrl:]]", "\x01", 1 },
	{ "[[:print:]]", " ", 1 },
	{ "[[:graph:]]", " ", 0 },
	{ "[[:punct:]]", "~", 1 },
	{ "[[:punct:]]", "a", 0 },
	{ "[[:alpha:]]", "\xc3", 0 },
	/* ---- git wildmatch: odd classes */
	{ "[\\\\-^]", "]", 1 },
	{ "[\\\\-^]", "[", 0 },
	{ "[\\-_]", "-", 1 },
	{ "[\\]]", "]", 1 },
	{ "[\\]]", "\\]", 0 },
	{ "[\\]]", "\\", 0 },
	{ "[-]", "-", 1 },
	{ "[--A]", "-", 1 },
	{ "[--A]", "5", 1 },
	{ "[ --]", " ", 1 },
	{ "[ --]", "$", 1 },
	{ "[ --]", "-", 1 },
	{ "[ --]", "0", 0 },
	{ "[---]", "-", 1 },
	{ "[------]", "-", 1 },
	{ "[a-e-n]", "j", 0 },
	{ "[a-e-n]", "-", 1 },
	{ "[!------]", "a", 1 },
	{ "[]-a]", "[", 0 },
	{ "[]-a]", "^", 1 },
	{ "[!]-a]", "^", 0 },
	{ "[!]-a]", "[", 1 },
	{ "[a^bc]", "^", 1 },
	{ "[a-]b]", "-b]", 1 },
	{ "[\\\\]", "\\", 1 },
	{ "[!\\\\]", "\\", 0 },
	{ "[A-\\\\]", "G", 1 },
	{ "b*a", "aaabbb", 0 },
	{ "*ba*", "aabcaa", 0 },
	{ "[,]", ",", 1 },
	{ "[\\\\,]", ",", 1 },
	{ "[\\\\,]", "\\", 1 },
	{ "[,-.]", "-", 1 },
	{ "[,-.]", "+", 0 },
	{ "[,-.]", "-.]", 0 },
	{ "[\\1-\\3]", "2", 1 },
	{ "[\\1-\\3]", "3", 1 },
	{ "[\\1-\\3]", "4", 0 },
	{ "[[-\\]]", "\\", 1 },
	{ "[[-\\]]", "[", 1 },
	{ "[[-\\]]", "]", 1 },
	{ "[[-\\]]", "-", 0 },
	/* ---- git wildmatch: recursion */
	{ "-*-*-*-*-*-*-12-*-*-*-m-*-*-*", "-adobe-courier-bold-o-normal--12-120-75-75-m-70-iso8859-1", 1 },
	{ "-*-*-*-*-*-*-12-*-*-*-m-*-*-*", "-adobe-courier-bold-o-normal--12-120-75-75-X-70-iso8859-1", 0 },
	{ "-*-*-*-*-*-*-12-*-*-*-m-*-*-*", "-adobe-courier-bold-o-normal--12-120-75-75-/-70-iso8859-1", 0 },
	{ "XXX/*/*/*/*/*/*/12/*/*/*/m/*/*/*", "XXX/adobe/courier/bold/o/normal//12/120/75/75/m/70/iso8859/1", 1 },
	{ "XXX/*/*/*/*/*/*/12/*/*/*/m/*/*/*", "XXX/adobe/courier/bold/o/normal//12/120/75/75/X/70/iso8859/1", 0 },
	{ "**/*a*b*g*n*t", "abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txt", 1 },
	{ "**/*a*b*g*n*t", "abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txtz", 0 },
	{ "*/*/*", "foo", 0 },
	{ "*/*/*", "foo/bar", 0 },
	{ "*/*/*", "foo/bba/arr", 1 },
	{ "*/*/*", "foo/bb/aa/rr", 0 },
	{ "**/**/**", "foo/bb/aa/rr", 1 },
	{ "*X*i", "abcXdefXghi", 1 },
	{ "*X*i", "ab/cXd/efXg/hi", 0 },
	{ "*/*X*/*/*i", "ab/cXd/efXg/hi", 1 },
	{ "**/*X*/**/*i", "ab/cXd/efXg/hi", 1 },
	/* ---- git wildmatch: extra pathmatch rows */
	{ "fo", "foo", 0 },
	{ "foo/bar", "foo/bar", 1 },
	{ "foo/*", "foo/bar", 1 },
	{ "foo/*", "foo/bba/arr", 0 },
	{ "foo/**", "foo/bba/arr", 1 },
	{ "foo*", "foo/bba/arr", 0 },
	{ "foo**", "foo/bba/arr", 0 },
	{ "foo/*arr", "foo/bba/arr", 0 },
	{ "foo/**arr", "foo/bba/arr", 0 },
	{ "foo/*z", "foo/bba/arr", 0 },
	{ "foo/**z", "foo/bba/arr", 0 },
	{ "*Xg*i", "ab/cXd/efXg/hi", 0 },
	{ "[A-Z]", "a", 0 },
	{ "[A-Z]", "A", 1 },
	{ "[a-z]", "A", 0 },
	{ "[a-z]", "a", 1 },
	{ "[B-Za]", "A", 0 },
	{ "[B-Za]", "a", 1 },
	{ "[B-a]", "A", 0 },
	{ "[B-a]", "a", 1 },
	{ "[Z-y]", "z", 0 },
	{ "[Z-y]", "Z", 1 },

	/* ---- absolute paths: '*' and '?' stay in a segment */
	{ "/usr/*", "/usr/bin", 1 },
	{ "/usr/*", "/usr/bin/cc", 0 },
	{ "/usr/*", "/usr/", 1 },
	{ "/usr/*", "/usr", 0 },
	{ "/usr/?", "/usr/b", 1 },
	{ "/usr/?", "/usr//", 0 },
	{ "/usr/?in", "/usr/bin", 1 },
	{ "/usr/?in", "/usr/in", 0 },
	{ "/tmp/bee-*/**", "/tmp/bee-1234/x", 1 },
	{ "/tmp/bee-*/**", "/tmp/bee-/x/y", 1 },
	{ "/tmp/bee-*/**", "/tmp/bee-1234", 0 },
	{ "/tmp/bee-*/**", "/tmp/bee/x", 0 },
	{ "/etc/ld.so.cache", "/etc/ld.so.cache", 1 },
	{ "/etc/ld.so.cache", "/etc/ld.so.cach", 0 },
	{ "/etc/ld.so.cache", "/etc/ld.so.cachex", 0 },
	{ "/etc/ld.so.cache", "/etc/ldxso.cache", 0 },
	{ "/A", "/a", 0 },
	/* '/dir/' '**': everything below, not the directory itself (git) */
	{ "/dir/**", "/dir", 0 },
	{ "/dir/**", "/dir/", 1 },
	{ "/dir/**", "/dir/a", 1 },
	{ "/dir/**", "/dir/a/b/c", 1 },
	{ "/dir/**", "/dirx/a", 0 },
	{ "/dir/**", "/di", 0 },
	{ "/**", "/", 1 },
	{ "/**", "/a/b", 1 },
	{ "/**", "", 0 },
	{ "/**", "a", 0 },
	{ "**", "", 1 },
	{ "**", "a", 1 },
	{ "**", "/a/b/", 1 },
	{ "*", "", 1 },
	{ "*", "/", 0 },
	/* '**' '/' in the middle: zero or more segments */
	{ "/a/**/b", "/a/b", 1 },
	{ "/a/**/b", "/a/x/b", 1 },
	{ "/a/**/b", "/a/x/y/b", 1 },
	{ "/a/**/b", "/a//b", 1 },
	{ "/a/**/b", "/ab", 0 },
	{ "/a/**/b", "/a/xb", 0 },
	{ "/a/**/b", "/a/b/c", 0 },
	{ "/a/**/b", "/a/bb", 0 },
	{ "/a/**/b", "/a/b/b", 1 },
	{ "/a/**/b", "/x/a/b", 0 },
	{ "/a/***/b", "/a/b", 1 },
	{ "/a/***/b", "/a/x/y/b", 1 },
	{ "/a/**/**/b", "/a/b", 1 },
	{ "/a/**/**/b", "/a/x/b", 1 },
	{ "/a/**/", "/a/", 1 },
	{ "/a/**/", "/a/x/", 1 },
	{ "/a/**/", "/a/x", 0 },
	{ "/**/", "/", 1 },
	{ "/**/", "//", 1 },
	{ "/**/", "/a", 0 },
	{ "/**/x", "/x", 1 },
	{ "/**/x", "/a/b/x", 1 },
	{ "/**/x", "x", 0 },
	/* leading '**' '/' */
	{ "**/b", "b", 1 },
	{ "**/b", "/b", 1 },
	{ "**/b", "x/b", 1 },
	{ "**/b", "/x/y/b", 1 },
	{ "**/b", "xb", 0 },
	{ "**/b", "/xb", 0 },
	{ "**/*.pem", "/home/you/key.pem", 1 },
	{ "**/*.pem", "key.pem", 1 },
	{ "**/*.pem", "/home/you/key.pem.bak", 0 },
	{ "**/*.pem", "/home/you/.pem", 1 },
	{ "**/.ssh/**", "/home/you/.ssh/id_ed25519", 1 },
	{ "**/.ssh/**", "/home/you/.ssh", 0 },
	/* '**' that is not a whole segment acts as '*' */
	{ "/a/**b", "/a/xb", 1 },
	{ "/a/**b", "/a/x/b", 0 },
	{ "/a**/b", "/axx/b", 1 },
	{ "/a**/b", "/a/x/b", 0 },
	{ "/a/b**", "/a/bcd", 1 },
	{ "/a/b**", "/a/b/c", 0 },
	{ "**a", "xa", 1 },
	{ "**a", "x/a", 0 },
	{ "a**", "a/x", 0 },
	{ "/a/**x/**", "/a/yx/z", 1 },
	{ "/a/**x/**", "/a/x/", 1 },
	{ "/a/**x/**", "/a/y/x/z", 0 },
	/* escapes and '**' */
	{ "\\**", "*abc", 1 },
	{ "\\**", "abc", 0 },
	{ "/a/\\**", "/a/*x", 1 },
	{ "/a/\\**", "/a/x", 0 },
	{ "/a/*\\*", "/a/x*", 1 },
	{ "/a/*\\*", "/a/x", 0 },
	{ "/a/**\\/b", "/a/b", 1 },
	{ "/a/**\\/b", "/a/x/y/b", 1 },
	{ "\\/**", "/x/y", 1 },
	{ "/a/\\*\\*", "/a/**", 1 },
	{ "/a/\\*\\*", "/a/xy", 0 },
	{ "/a\\/b", "/a/b", 1 },
	{ "/\\[x]", "/[x]", 1 },
	{ "/\\[x]", "/x", 0 },

	/* ---- braces */
	{ "/a/{b,c}", "/a/b", 1 },
	{ "/a/{b,c}", "/a/c", 1 },
	{ "/a/{b,c}", "/a/d", 0 },
	{ "/a/{b,c}", "/a/", 0 },
	{ "/a/{b,c}", "/a/bc", 0 },
	{ "/a/{b,c}d", "/a/bd", 1 },
	{ "/a/{b,c}d", "/a/cd", 1 },
	{ "/a/{b,c}d", "/a/d", 0 },
	{ "/a/{,x}y", "/a/y", 1 },
	{ "/a/{,x}y", "/a/xy", 1 },
	{ "/a/{,x}y", "/a/xxy", 0 },
	{ "/{a,b/c}/d", "/a/d", 1 },
	{ "/{a,b/c}/d", "/b/c/d", 1 },
	{ "/{a,b/c}/d", "/b/d", 0 },
	{ "/{a,{b,c}x}", "/a", 1 },
	{ "/{a,{b,c}x}", "/bx", 1 },
	{ "/{a,{b,c}x}", "/cx", 1 },
	{ "/{a,{b,c}x}", "/b", 0 },
	{ "/{a,{b,c}x}", "/ax", 0 },
	{ "/{a,{b,{c,d}y}x}z", "/dyxz", 1 },
	{ "/{a,{b,{c,d}y}x}z", "/az", 1 },
	{ "/{a,{b,{c,d}y}x}z", "/bxz", 1 },
	{ "/{a,{b,{c,d}y}x}z", "/dyz", 0 },
	{ "{/a,/b}/**", "/a/x", 1 },
	{ "{/a,/b}/**", "/b/x/y", 1 },
	{ "{/a,/b}/**", "/c/x", 0 },
	{ "{/a,/b}/**", "/a", 0 },
	{ "/x{/**,}", "/x", 1 },
	{ "/x{/**,}", "/x/y/z", 1 },
	{ "/x{/**,}", "/xy", 0 },
	{ "/a/{**/,}b", "/a/b", 1 },
	{ "/a/{**/,}b", "/a/x/y/b", 1 },
	{ "/a{**,b}/c", "/axyz/c", 1 },
	{ "/a{**,b}/c", "/ab/c", 1 },
	{ "/a{**,b}/c", "/a/x/c", 0 },
	{ "{**,a}/b", "x/y/b", 1 },
	{ "{**,a}/b", "b", 1 },
	{ "{**,a}/b", "a/b", 1 },
	{ "{a,/}**", "/x/y", 1 },
	{ "{a,/}**", "axy", 1 },
	{ "{a,/}**", "a/y", 0 },
	{ "/a/{b}", "/a/b", 1 },
	{ "/a/{b}", "/a/{b}", 0 },
	{ "/a/{}", "/a/", 1 },
	{ "/a/{}", "/a/x", 0 },
	{ "/a/{,}", "/a/", 1 },
	{ "\\{a,b\\}", "{a,b}", 1 },
	{ "\\{a,b\\}", "a", 0 },
	{ "/a/{[bc],d*}", "/a/b", 1 },
	{ "/a/{[bc],d*}", "/a/dxx", 1 },
	{ "/a/{[bc],d*}", "/a/e", 0 },
	{ "/a/{[bc],d*}", "/a/d/x", 0 },
	{ "{a,b}{c,d}", "ac", 1 },
	{ "{a,b}{c,d}", "bd", 1 },
	{ "{a,b}{c,d}", "ab", 0 },
	{ "/a,b", "/a,b", 1 },
	{ "/a,b", "/a", 0 },
	{ "/{a\\,b,c}", "/a,b", 1 },
	{ "/{a\\,b,c}", "/c", 1 },
	{ "/{a\\,b,c}", "/a", 0 },
	{ "/[{]x", "/{x", 1 },
	{ "/{[},]x,y}", "/}x", 1 },
	{ "/{[},]x,y}", "/,x", 1 },
	{ "/{[},]x,y}", "/y", 1 },
	{ "/{[},]x,y}", "/x", 0 },
	{ "/{a,b}/{c,d}/{e,f}", "/a/c/e", 1 },
	{ "/{a,b}/{c,d}/{e,f}", "/b/d/f", 1 },
	{ "/{a,b}/{c,d}/{e,f}", "/b/d/g", 0 },
	{ "/usr/{lib,lib64}/**", "/usr/lib64/libc.so.6", 1 },
	{ "/usr/{lib,lib64}/**", "/usr/lib32/libc.so.6", 0 },
	{ "**/*.{pem,key}", "/etc/ssl/private/x.key", 1 },
	{ "**/*.{pem,key}", "/etc/ssl/private/x.crt", 0 },
	{ "/home/*/{.ssh,.gnupg}/**", "/home/u/.gnupg/pubring.kbx", 1 },
	{ "/home/*/{.ssh,.gnupg}/**", "/home/u/v/.ssh/id", 0 },
	{ "/{a,b}*", "/axy", 1 },
	{ "/{a,b}*", "/cxy", 0 },
	{ "/{*,a}x", "/qqx", 1 },
	{ "/{?,ab}x", "/ax", 1 },
	{ "/{?,ab}x", "/abx", 1 },
	{ "/{?,ab}x", "/abcx", 0 },

	/* ---- environment-variable names: no leading '/' */
	{ "CARGO_*", "CARGO_HOME", 1 },
	{ "CARGO_*", "CARGO_", 1 },
	{ "CARGO_*", "CARGO", 0 },
	{ "CARGO_*", "XCARGO_A", 0 },
	{ "PATH", "PATH", 1 },
	{ "PATH", "PATHX", 0 },
	{ "PATH", "path", 0 },
	{ "LC_{ALL,CTYPE}", "LC_ALL", 1 },
	{ "LC_{ALL,CTYPE}", "LC_CTYPE", 1 },
	{ "LC_{ALL,CTYPE}", "LC_TIME", 0 },
	{ "?", "A", 1 },
	{ "?", "", 0 },
	{ "?", "AB", 0 },
	{ "*_TOKEN", "GITHUB_TOKEN", 1 },
	{ "*_TOKEN", "GITHUB_TOKENS", 0 },
	{ "[A-Z]*", "HOME", 1 },
	{ "[A-Z]*", "home", 0 },

	/* ---- bytes beyond ASCII and controls */
	{ "/caf\xc3\xa9", "/caf\xc3\xa9", 1 },
	{ "/caf\xc3\xa9", "/cafe", 0 },
	{ "/*", "/\xc3\xa9", 1 },
	{ "/?", "/\xc3\xa9", 0 },
	{ "/??", "/\xc3\xa9", 1 },
	{ "/[\x80-\xff]", "/\xc3", 1 },
	{ "/[!\x80-\xff]", "/\xc3", 0 },
	{ "/a?b", "/a\x01" "b", 1 },
	{ "/*", "/a\tb", 1 },
	{ "/a b", "/a b", 1 },
};

struct glob_bad {
	const char *glob;
	size_t off;            /* where the error points */
	const char *msg;       /* a part of the message */
};

static const struct glob_bad glob_bads[] = {
	{ "", 0, "empty glob" },
	{ "/a/[b", 3, "unterminated '['" },
	{ "/a/[!", 3, "unterminated '['" },
	{ "ab[", 2, "unterminated '['" },
	{ "[!", 0, "unterminated '['" },
	{ "[-", 0, "unterminated '['" },
	{ "[a-", 0, "unterminated '['" },
	{ "[!a-", 0, "unterminated '['" },
	{ "a[]b", 1, "unterminated '['" },
	{ "[\\]", 0, "unterminated '['" },
	{ "/a/\\", 3, "trailing '\\'" },
	{ "\\", 0, "trailing '\\'" },
	{ "*/\\", 2, "trailing '\\'" },
	{ "[a\\", 2, "trailing '\\' in class" },
	{ "/a/{b", 3, "unterminated '{'" },
	{ "/{a,{b}", 1, "unterminated '{'" },
	{ "{{a}", 0, "unterminated '{'" },
	{ "/a/b}", 4, "unmatched '}'" },
	{ "}", 0, "unmatched '}'" },
	{ "{a}}", 3, "unmatched '}'" },
	{ "/a/[z-a]", 4, "reversed range 'z-a'" },
	{ "[b-a]", 1, "reversed range" },
	{ "/a/[/]", 3, "matches no byte" },
	{ "foo[/]bar", 3, "matches no byte" },
	{ "[[:foo:]]", 1, "unknown character class '[:foo:]'" },
	{ "[[::]ab]", 1, "unknown character class '[::]'" },
	{ "[[:digit:][:upper:][:spaci:]]", 19, "unknown character class '[:spaci:]'" },
	{ "{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", 50, "more than 1024 alternatives" },
};

static void test_glob_rows(void **state)
{
	(void)state;
	unsigned bad = 0;
	for (size_t i = 0; i < sizeof(glob_rows) / sizeof(glob_rows[0]); i++) {
		const struct glob_row *r = &glob_rows[i];
		struct dfa_rule rule = { .glob = r->glob, .grant = 1, .rule = 7 };
		struct diag_ctx dc;
		struct dfa *d = NULL;
		diag_init(&dc);
		int rc = dfa_build(&rule, 1, NULL, &d, &dc);
		if (rc) {
			print_error("row %zu: glob '%s' failed to build: %d\n", i, r->glob, rc);
			diag_print(&dc, stderr);
			diag_fini(&dc);
			bad++;
			continue;
		}
		uint32_t perms;
		struct dfa_rules rules;
		dfa_match(d, r->text, strlen(r->text), &perms, &rules);
		int got = perms == 1;
		bool prov_ok = got ? rules.n == 1 && rules.ids[0] == 7 : rules.n == 0;
		if (got != r->match || !prov_ok) {
			print_error("row %zu: glob '%s' text '%s': expected %s, got %s (%zu rules)\n", i,
				    r->glob, r->text, r->match ? "match" : "no match",
				    got ? "match" : "no match", rules.n);
			bad++;
		}
		dfa_free(d);
		diag_fini(&dc);
	}
	assert_int_equal(bad, 0);
}

/* The same rows through one automaton of all the globs at once: each rule
 * gets its own bit, so every row checks its own rule's bit. */
static void test_glob_rows_combined(void **state)
{
	(void)state;
	const size_t nrows = sizeof(glob_rows) / sizeof(glob_rows[0]);
	struct dfa_rule rules[32];
	unsigned bad = 0;
	for (size_t start = 0, end; start < nrows; start = end) {
		/* the rows of up to 32 distinct consecutive globs */
		size_t nrules = 0;
		for (end = start; end < nrows; end++) {
			const char *g = glob_rows[end].glob;
			if (nrules && strcmp(rules[nrules - 1].glob, g) == 0)
				continue;
			if (nrules == 32)
				break;
			rules[nrules] = (struct dfa_rule){ .glob = g, .grant = 1u << nrules,
							   .rule = (unsigned)nrules };
			nrules++;
		}
		struct dfa *d;
		assert_int_equal(dfa_build(rules, nrules, NULL, &d, NULL), 0);
		for (size_t i = start; i < end; i++) {
			const struct glob_row *r = &glob_rows[i];
			unsigned bit = 0;
			for (unsigned k = 0; k < nrules; k++)
				if (strcmp(rules[k].glob, r->glob) == 0)
					bit = k;
			uint32_t perms;
			dfa_match(d, r->text, strlen(r->text), &perms, NULL);
			if (((perms >> bit) & 1) != (unsigned)r->match) {
				print_error("combined row %zu: glob '%s' text '%s': expected %d\n", i,
					    r->glob, r->text, r->match);
				bad++;
			}
		}
		dfa_free(d);
	}
	assert_int_equal(bad, 0);
}

static void test_glob_errors(void **state)
{
	(void)state;
	unsigned bad = 0;
	for (size_t i = 0; i < sizeof(glob_bads) / sizeof(glob_bads[0]); i++) {
		const struct glob_bad *b = &glob_bads[i];
		struct glob g;
		struct glob_error ge;
		int rc = glob_parse(b->glob, &g, &ge);
		if (rc != -EINVAL) {
			print_error("bad row %zu: glob '%s' parsed\n", i, b->glob);
			glob_fini(&g);
			bad++;
			continue;
		}
		if (ge.off != b->off || !strstr(ge.msg, b->msg)) {
			print_error("bad row %zu: glob '%s': got '%s' at %zu, expected '%s' at %zu\n", i,
				    b->glob, ge.msg, ge.off, b->msg, b->off);
			bad++;
		}
		assert_null(g.alts);
	}
	assert_int_equal(bad, 0);
}

/* A bad glob in a build: -EINVAL and a diagnostic at the bad byte. */
static void test_glob_error_diag(void **state)
{
	(void)state;
	const char *text = "read = [\"/usr/**\", \"/a/[z-a]\", \"/b/{\"]\n";
	struct source *src = source_new("p.toml", text, strlen(text));
	const char *g1 = strstr(text, "\"/a/"), *g2 = strstr(text, "\"/b/");
	struct dfa_rule rules[] = {
		{ .glob = "/usr/**", .grant = 1, .rule = 0, .loc = { src, 8, 9 } },
		{ .glob = "/a/[z-a]", .grant = 1, .rule = 1, .loc = { src, (uint32_t)(g1 - text), 10 } },
		{ .glob = "/b/{", .grant = 1, .rule = 2, .loc = { src, (uint32_t)(g2 - text), 6 } },
	};
	struct diag_ctx dc;
	struct dfa *d = (struct dfa *)1;
	diag_init(&dc);
	assert_int_equal(dfa_build(rules, 3, NULL, &d, &dc), -EINVAL);
	assert_null(d);
	assert_int_equal(dc.errors, 2);
	assert_string_equal(dc.items[0].msg, "invalid glob '/a/[z-a]': reversed range 'z-a' in class");
	assert_int_equal(dc.items[0].loc.off, (uint32_t)(g1 - text) + 1 + 4);
	assert_int_equal(dc.items[0].loc.len, 3);
	assert_string_equal(dc.items[1].msg, "invalid glob '/b/{': unterminated '{'");
	assert_int_equal(dc.items[1].loc.off, (uint32_t)(g2 - text) + 1 + 3);
	diag_fini(&dc);
	source_free(src);
}

static void test_glob_dump(void **state)
{
	(void)state;
	struct glob g;
	struct glob_error ge;
	char *buf = NULL;
	size_t len = 0;
	assert_int_equal(glob_parse("/a/{**/,x}[b-d]*/**", &g, &ge), 0);
	assert_int_equal(g.nalts, 2);
	FILE *f = open_memstream(&buf, &len);
	glob_dump(&g, f);
	fclose(f);
	assert_string_equal(buf,
			    "alt 0: byte['/'] byte['a'] byte['/'] dirs byte['b'-'d'] star[^'/'] byte['/'] any\n"
			    "alt 1: byte['/'] byte['a'] byte['/'] byte['x'] byte['b'-'d'] star[^'/'] byte['/'] any\n");
	free(buf);
	glob_fini(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_glob_rows),
		cmocka_unit_test(test_glob_rows_combined),
		cmocka_unit_test(test_glob_errors),
		cmocka_unit_test(test_glob_error_diag),
		cmocka_unit_test(test_glob_dump),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

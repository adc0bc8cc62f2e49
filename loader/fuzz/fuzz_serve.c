/* SPDX-License-Identifier: GPL-2.0-only */
/* fuzz_serve.c: libFuzzer target for the session service's request decoder,
 * bee_serve_req_parse() in loader/serve_proto.c. The first byte is the
 * number of descriptors that came with the request (mod 4), the rest is
 * the line as the service read it (without its newline).
 *
 * What must hold: a request is refused, with a named error and a message,
 * or decoded into a known method whose required fields are there, whose
 * session id is letters and digits, and whose env entries are NAME=VALUE;
 * nothing leaks either way (ASan's leak check). */
#include "serve.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_require(bool ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct bee_serve_req r;
	enum bee_serve_error err = BEE_SERVE_E_COUNT;
	char msg[256] = "";
	size_t nfds = data[0] % 4;
	int rc = bee_serve_req_parse((const char *)data + 1, size - 1, nfds, &r, &err, msg, sizeof(msg));
	if (rc < 0) {
		fuzz_require(rc == -1 && err < BEE_SERVE_E_COUNT && msg[0] != '\0');
		fuzz_require(strcmp(bee_serve_error_name(err), "?") != 0);
	} else {
		fuzz_require(rc == 0 && r.method < BEE_SERVE_METHOD_COUNT && json_is_object(r.doc));
		bool needs_session = r.method == BEE_SERVE_EXEC || r.method == BEE_SERVE_STOP ||
				     r.method == BEE_SERVE_REVOKE || r.method == BEE_SERVE_VFS;
		fuzz_require(!needs_session || r.session != NULL);
		for (const char *p = r.session; p && *p; p++)
			fuzz_require((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'));
		fuzz_require(r.method != BEE_SERVE_REVOKE || r.rule != NULL);
		fuzz_require(nfds == (r.method == BEE_SERVE_START ? 1u : 0u));
		for (size_t i = 0; i < r.nenv; i++)
			fuzz_require(strchr(r.env[i], '=') && r.env[i][0] != '=');
	}
	bee_serve_req_fini(&r);
	return 0;
}

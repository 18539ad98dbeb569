/*
 * fuzz_conformance_deploy.c -- libFuzzer target for conformance/c_deploy.c, sworn-conformance's
 * deployment file reader (c_deploy_load_mem); the input is the file.
 *
 * A refusal must set a message naming the input. An accepted file must hold what c_deploy.h
 * promises: the required paths absolute and NUL-terminated within their arrays, an agent uid in
 * range, at most C_DEPLOY_GIDS_MAX groups, request shapes with an http(s) scheme, a port in
 * 1..65535 and a path starting with '/', a count in 1..C_DEPLOY_COUNT_MAX, requests only with
 * a decision socket, and a sandbox.dns_rebinding with a numeric address, a port and a host name.
 * Anything else aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "c_deploy.h"
#include "err.h"
#include "fuzz.h"

static struct c_deploy dep;

static void must(int ok)
{
    if (!ok)
        abort();
}

static void path_ok(const char *p, size_t cap, int required)
{
    size_t n = strnlen(p, cap);

    must(n < cap);
    must(required ? n > 0 && p[0] == '/' : n == 0 || p[0] == '/');
}

static void url_ok(const struct c_url *u)
{
    must(strcmp(u->scheme, "http") == 0 || strcmp(u->scheme, "https") == 0);
    must(strnlen(u->host, sizeof(u->host)) > 0 &&
         strnlen(u->host, sizeof(u->host)) < sizeof(u->host));
    must(u->port >= 1 && u->port <= 65535);
    must(u->path[0] == '/' && strnlen(u->path, sizeof(u->path)) < sizeof(u->path));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sworn_err_clear();
    if (c_deploy_load_mem(&dep, "fuzz.yaml", data, size) < 0) {
        must(sworn_err_code() != SWORN_OK);
        must(strstr(sworn_err_msg(), "fuzz") != NULL);
        return 0;
    }
    must(strnlen(dep.operator_name, sizeof(dep.operator_name)) > 0);
    path_ok(dep.record, sizeof(dep.record), 1);
    path_ok(dep.trust_policy, sizeof(dep.trust_policy), 1);
    path_ok(dep.verify_bin, sizeof(dep.verify_bin), 1);
    path_ok(dep.state, sizeof(dep.state), 0);
    path_ok(dep.admin_socket, sizeof(dep.admin_socket), 0);
    path_ok(dep.decision_socket, sizeof(dep.decision_socket), 0);
    path_ok(dep.log_db, sizeof(dep.log_db), 0);
    must(dep.agent_uid >= 0 && dep.agent_uid <= 0xfffffffeLL);
    must(dep.nagent_gids <= C_DEPLOY_GIDS_MAX);
    if (dep.has_requests) {
        must(dep.decision_socket[0] == '/');
        must(dep.count >= 1 && dep.count <= C_DEPLOY_COUNT_MAX);
        must(strnlen(dep.principal, sizeof(dep.principal)) > 0);
        url_ok(&dep.allowed);
        url_ok(&dep.denied);
    }
    if (dep.has_sandbox && dep.sbx.has_dns_rebinding) {
        size_t n = strnlen(dep.sbx.dns_name, sizeof(dep.sbx.dns_name));

        must(dep.sbx.dns_port >= 1);
        must(dep.sbx.dns_listen[0] != '\0' &&
             strnlen(dep.sbx.dns_listen, sizeof(dep.sbx.dns_listen)) < sizeof(dep.sbx.dns_listen));
        must(n > 0 && n <= 253 && dep.sbx.dns_name[0] != '.' && dep.sbx.dns_name[0] != '-');
    }
    if (dep.has_fail_closed) {
        url_ok(&dep.proxy);
        must(dep.stop_command[0] != '\0' && dep.start_command[0] != '\0');
    }
    return 0;
}

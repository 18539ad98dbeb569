/*
 * test_vault.c -- unit tests of vault.c (the credential vault).
 *
 * A valid vault loads and releases each credential exactly within its scope: principal (exact or
 * "*"), scheme, port (explicit or the scheme's default), host (exact, or a wildcard that needs one
 * or more labels and never matches the bare parent), path prefix on segment boundaries, and the
 * presented token's hash. Every malformed vault is refused without the value in the message; the
 * file's mode, kind and owner are checked; mint rewrites the file 0600 and a reload sees the new
 * credential.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "err.h"
#include "policy_fixture.h"
#include "testutil.h"
#include "vault.h"
#include "wipe.h"

#define SYM_A "sym_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAaaaa"
#define SYM_B "sym_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB-_bb"
#define SYM_C "sym_CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"

static const char *good_vault =
    "{\"version\": 1, \"credentials\": [\n"
    "  {\"id\": \"github\", \"symbolic\": \"" SYM_A "\", \"value\": \"Bearer ghp_real\",\n"
    "   \"header\": \"Authorization\", \"principals\": [\"agent-1\", \"agent-2\"],\n"
    "   \"destinations\": [{\"scheme\": \"https\", \"host\": \"api.github.com\", \"port\": 443,\n"
    "                     \"path_prefix\": \"/repos/\"},\n"
    "                    {\"scheme\": \"https\", \"host\": \"uploads.github.com\",\n"
    "                     \"path_prefix\": \"/upload\"}]},\n"
    "  {\"id\": \"maps\", \"symbolic\": \"" SYM_B "\", \"value\": \"KEY\", \"query\": \"key\",\n"
    "   \"principals\": [\"*\"],\n"
    "   \"destinations\": [{\"scheme\": \"https\", \"host\": \"*.Example.com\", \"port\": 8443},\n"
    "                    {\"scheme\": \"ws\", \"host\": \"[::1]\"},\n"
    "                    {\"scheme\": \"http\", \"host\": \"10.0.0.1\", \"port\": 8080}]},\n"
    "  {\"id\": \"v.2_x-y\", \"symbolic\": \"" SYM_C "\", \"value\": \"caf\\u00e9\\tx\",\n"
    "   \"header\": \"x-api-key\", \"principals\": [\"p\"],\n"
    "   \"destinations\": [{\"scheme\": \"wss\", \"host\": \"a.example.org\", \"path_prefix\": "
    "\"/\"}]}\n"
    "]}\n";

struct fx {
    char *dir;
    char *path;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->dir = sworn_test_tmpdir("vault");
    f->path = sworn_test_path(f->dir, "vault.json");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    sworn_test_rmtree(f->dir);
    free(f->dir);
    free(f->path);
    free(f);
    return 0;
}

static void write_vault(const struct fx *f, const char *text, unsigned mode)
{
    sworn_test_write_file(f->path, text, strlen(text), mode);
    assert_int_equal(chmod(f->path, mode), 0);
}

static struct sworn_vault *load_ok(const struct fx *f, const char *text)
{
    struct sworn_vault *v = NULL;

    write_vault(f, text, 0600);
    if (sworn_vault_load(f->path, &v) != 0)
        fail_msg("load failed: %s", sworn_err_msg());
    return v;
}

static void with_token(struct sworn_pfix_req *q, const char *symbolic)
{
    unsigned int n = 32;

    assert_int_equal(EVP_Digest(symbolic, strlen(symbolic), q->tok, &n, EVP_sha256(), NULL), 1);
    q->ctx.credential_token_sha256.data = q->tok;
    q->ctx.credential_token_sha256.len = 32;
}

/* Release id for the request; returns the result, checks out is filled or untouched. */
static int rel(const struct sworn_vault *v, const char *id, struct sworn_pfix_req *q,
               const char **why)
{
    struct sworn_vault_release out;
    struct sworn_vault_release untouched;
    int rc;

    memset(&out, 0xa5, sizeof(out));
    memcpy(&untouched, &out, sizeof(out));
    *why = NULL;
    rc = sworn_vault_release(v, id, &q->r, &out, why);
    if (rc == 0) {
        assert_string_equal(out.id, id);
        assert_non_null(out.value);
        sworn_vault_release_wipe(&out);
        assert_null(out.value);
        assert_int_equal(out.value_len, 0);
        sworn_vault_release_wipe(&out); /* twice is fine */
    } else {
        assert_int_equal(rc, 1);
        assert_non_null(*why);
        assert_memory_equal(&out, &untouched, sizeof(out));
    }
    return rc;
}

static int allowed(const struct sworn_vault *v, const char *id, const char *principal,
                   const char *scheme, const char *host, uint32_t port, const char *path)
{
    struct sworn_pfix_req q;
    const char *why;

    sworn_pfix_req_init(&q, principal, scheme, host, port, path);
    return rel(v, id, &q, &why) == 0;
}

static void test_release_values(void **state)
{
    struct fx *f = *state;
    struct sworn_vault *v = load_ok(f, good_vault);
    struct sworn_vault_release out;
    struct sworn_pfix_req q;
    const char *why = NULL;
    uint8_t sha[32];
    unsigned int n = 32;

    memset(&out, 0, sizeof(out));
    sworn_pfix_req_init(&q, "agent-1", "https", "api.github.com", 443, "/repos/x/y?page=2");
    assert_int_equal(sworn_vault_release(v, "github", &q.r, &out, &why), 0);
    assert_string_equal(out.id, "github");
    assert_string_equal(out.header_name, "authorization"); /* folded to lower case */
    assert_string_equal(out.query_name, "");
    assert_int_equal(out.value_len, strlen("Bearer ghp_real"));
    assert_memory_equal(out.value, "Bearer ghp_real", out.value_len);
    assert_int_equal(EVP_Digest("Bearer ghp_real", 15, sha, &n, EVP_sha256(), NULL), 1);
    assert_memory_equal(out.value_sha256, sha, 32);
    sworn_vault_release_wipe(&out);

    sworn_pfix_req_init(&q, "anyone", "https", "a.example.com", 8443, "");
    assert_int_equal(sworn_vault_release(v, "maps", &q.r, &out, &why), 0);
    assert_string_equal(out.header_name, "");
    assert_string_equal(out.query_name, "key");
    assert_memory_equal(out.value, "KEY", 3);
    sworn_vault_release_wipe(&out);

    sworn_pfix_req_init(&q, "p", "wss", "a.example.org", 443, "/anything");
    assert_int_equal(sworn_vault_release(v, "v.2_x-y", &q.r, &out, &why), 0);
    assert_int_equal(out.value_len, 7);
    assert_memory_equal(out.value, "caf\xc3\xa9\tx", 7);
    sworn_vault_release_wipe(&out);

    /* Not-found is 1 with a reason, not an error. */
    assert_int_equal(sworn_vault_release(v, "nope", &q.r, &out, &why), 1);
    assert_string_equal(why, "no such credential in the vault");
    /* A request without a principal or resource is an error. */
    q.r.principal = NULL;
    assert_int_equal(sworn_vault_release(v, "maps", &q.r, &out, &why), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    sworn_vault_free(v);
    sworn_vault_free(NULL);
}

static void test_scope(void **state)
{
    struct fx *f = *state;
    struct sworn_vault *v = load_ok(f, good_vault);

    /* Principals: exact names only, or "*". */
    assert_true(allowed(v, "github", "agent-1", "https", "api.github.com", 443, "/repos/a"));
    assert_true(allowed(v, "github", "agent-2", "https", "api.github.com", 443, "/repos/a"));
    assert_false(allowed(v, "github", "agent-3", "https", "api.github.com", 443, "/repos/a"));
    assert_false(allowed(v, "github", "agent-", "https", "api.github.com", 443, "/repos/a"));
    assert_false(allowed(v, "github", "*", "https", "api.github.com", 443, "/repos/a"));
    assert_false(allowed(v, "github", "", "https", "api.github.com", 443, "/repos/a"));
    assert_true(allowed(v, "maps", "whoever", "https", "x.example.com", 8443, "/"));

    /* Scheme and port. */
    assert_false(allowed(v, "github", "agent-1", "http", "api.github.com", 443, "/repos/a"));
    assert_false(allowed(v, "github", "agent-1", "https", "api.github.com", 8443, "/repos/a"));
    assert_true(allowed(v, "github", "agent-1", "https", "uploads.github.com", 443, "/upload"));
    assert_false(allowed(v, "github", "agent-1", "https", "uploads.github.com", 80, "/upload"));
    assert_true(allowed(v, "maps", "a", "ws", "[::1]", 80, "/socket"));
    assert_false(allowed(v, "maps", "a", "ws", "[::1]", 443, "/socket"));
    assert_false(allowed(v, "maps", "a", "wss", "[::1]", 80, "/socket"));
    assert_true(allowed(v, "maps", "a", "http", "10.0.0.1", 8080, "/"));
    assert_false(allowed(v, "maps", "a", "http", "10.0.0.2", 8080, "/"));

    /* Hosts: exact, and the wildcard (one or more labels, never the bare parent). */
    assert_false(allowed(v, "github", "agent-1", "https", "api.github.com.evil", 443, "/repos/"));
    assert_false(allowed(v, "github", "agent-1", "https", "xapi.github.com", 443, "/repos/"));
    assert_false(allowed(v, "github", "agent-1", "https", "github.com", 443, "/repos/"));
    assert_true(allowed(v, "maps", "a", "https", "a.example.com", 8443, "/"));
    assert_true(allowed(v, "maps", "a", "https", "a.b.c.example.com", 8443, "/"));
    assert_false(allowed(v, "maps", "a", "https", "example.com", 8443, "/"));
    assert_false(allowed(v, "maps", "a", "https", ".example.com", 8443, "/"));
    assert_false(allowed(v, "maps", "a", "https", "a..example.com", 8443, "/"));
    assert_false(allowed(v, "maps", "a", "https", "badexample.com", 8443, "/"));
    assert_false(allowed(v, "maps", "a", "https", "a.example.com.evil.org", 8443, "/"));
    assert_false(allowed(v, "maps", "a", "https", "a.example.org", 8443, "/"));

    /* Path prefixes on segment boundaries. "/repos/" and "/upload" (no trailing slash). */
    assert_true(allowed(v, "github", "agent-1", "https", "api.github.com", 443, "/repos/"));
    assert_true(allowed(v, "github", "agent-1", "https", "api.github.com", 443, "/repos/x"));
    assert_true(allowed(v, "github", "agent-1", "https", "api.github.com", 443, "/repos/x?a=/b"));
    assert_false(allowed(v, "github", "agent-1", "https", "api.github.com", 443, "/repos"));
    assert_false(allowed(v, "github", "agent-1", "https", "api.github.com", 443, "/reposx"));
    assert_false(allowed(v, "github", "agent-1", "https", "api.github.com", 443, "/user"));
    assert_false(allowed(v, "github", "agent-1", "https", "api.github.com", 443, ""));
    assert_false(allowed(v, "github", "agent-1", "https", "api.github.com", 443, "/REPOS/x"));
    assert_true(allowed(v, "github", "agent-1", "https", "uploads.github.com", 443, "/upload"));
    assert_true(allowed(v, "github", "agent-1", "https", "uploads.github.com", 443, "/upload/x"));
    assert_true(allowed(v, "github", "agent-1", "https", "uploads.github.com", 443, "/upload?x"));
    assert_false(allowed(v, "github", "agent-1", "https", "uploads.github.com", 443, "/uploadx"));
    assert_false(allowed(v, "github", "agent-1", "https", "uploads.github.com", 443, "/uploa"));
    /* The query is not part of the path. */
    assert_false(allowed(v, "github", "agent-1", "https", "api.github.com", 443, "/x?/repos/"));
    /* Dot segments are removed before matching (the canonical form, resource.h): a path is
     * judged where it leads. Ambiguous paths are refused and never match a prefix. */
    assert_false(
        allowed(v, "github", "agent-1", "https", "api.github.com", 443, "/repos/../admin"));
    assert_true(allowed(v, "github", "agent-1", "https", "api.github.com", 443, "/repos/./x"));
    assert_true(allowed(v, "github", "agent-1", "https", "api.github.com", 443, "/repos/x/.."));
    assert_false(allowed(v, "github", "agent-1", "https", "api.github.com", 443, "/repos/.."));
    assert_false(
        allowed(v, "github", "agent-1", "https", "api.github.com", 443, "/repos/%2e%2e/a"));
    assert_false(allowed(v, "github", "agent-1", "https", "api.github.com", 443, "/repos/a%2Fb"));
    assert_false(allowed(v, "github", "agent-1", "https", "api.github.com", 443, "/repos/a\\b"));
    assert_true(allowed(v, "github", "agent-1", "https", "api.github.com", 443, "/repos/..a/.b"));
    assert_true(allowed(v, "github", "agent-1", "https", "api.github.com", 443, "/repos/a%20b"));
    /* "/" matches every path; no prefix matches every path. */
    assert_true(allowed(v, "v.2_x-y", "p", "wss", "a.example.org", 443, ""));
    assert_true(allowed(v, "maps", "p", "https", "q.example.com", 8443, "/a/../b"));
    sworn_vault_free(v);
}

static void test_token_hash(void **state)
{
    struct fx *f = *state;
    struct sworn_vault *v = load_ok(f, good_vault);
    struct sworn_pfix_req q;
    const char *why;
    char id[129];
    uint8_t h[32];
    unsigned int n = 32;

    sworn_pfix_req_init(&q, "agent-1", "https", "api.github.com", 443, "/repos/a");
    with_token(&q, SYM_A);
    assert_int_equal(rel(v, "github", &q, &why), 0);
    with_token(&q, SYM_B); /* another credential's token */
    assert_int_equal(rel(v, "github", &q, &why), 1);
    assert_string_equal(why, "the presented token is not this credential's symbolic token");
    q.ctx.credential_token_sha256.len = 31; /* malformed: never matches */
    assert_int_equal(rel(v, "github", &q, &why), 1);
    q.ctx.credential_token_sha256.len = 0; /* not set: not checked */
    assert_int_equal(rel(v, "github", &q, &why), 0);
    q.r.context = NULL;
    assert_int_equal(rel(v, "github", &q, &why), 0);

    assert_int_equal(EVP_Digest(SYM_B, strlen(SYM_B), h, &n, EVP_sha256(), NULL), 1);
    assert_int_equal(sworn_vault_lookup_token(v, h, id), 0);
    assert_string_equal(id, "maps");
    assert_int_equal(EVP_Digest(SYM_C, strlen(SYM_C), h, &n, EVP_sha256(), NULL), 1);
    assert_int_equal(sworn_vault_lookup_token(v, h, id), 0);
    assert_string_equal(id, "v.2_x-y");
    h[0] ^= 1;
    strcpy(id, "unchanged");
    assert_int_equal(sworn_vault_lookup_token(v, h, id), 1);
    assert_string_equal(id, "unchanged");
    sworn_vault_free(v);
}

/* A vault of one credential whose JSON members are given. */
static void load_fails_cred(const struct fx *f, const char *members, const char *sub)
{
    char text[40000];
    struct sworn_vault *v = (struct sworn_vault *)0x1;

    snprintf(text, sizeof(text), "{\"version\": 1, \"credentials\": [{%s}]}", members);
    write_vault(f, text, 0600);
    assert_int_equal(sworn_vault_load(f->path, &v), -1);
    assert_ptr_equal(v, (struct sworn_vault *)0x1);
    if (strstr(sworn_err_msg(), sub) == NULL)
        fail_msg("got \"%s\", want \"%s\"\n--- input:\n%s", sworn_err_msg(), sub, text);
    /* Values used below all contain "SECRET" or "SEKRIT": never in an error. */
    assert_null(strstr(sworn_err_msg(), "SECRET"));
    assert_null(strstr(sworn_err_msg(), "SEKRIT"));
}

static void load_fails(const struct fx *f, const char *text, const char *sub)
{
    struct sworn_vault *v = NULL;

    write_vault(f, text, 0600);
    assert_int_equal(sworn_vault_load(f->path, &v), -1);
    assert_null(v);
    if (strstr(sworn_err_msg(), sub) == NULL)
        fail_msg("got \"%s\", want \"%s\"", sworn_err_msg(), sub);
    assert_null(strstr(sworn_err_msg(), "SECRET"));
}

#define ID "\"id\": \"c\", "
#define SYM "\"symbolic\": \"" SYM_A "\", "
#define VAL "\"value\": \"SECRET\", "
#define HDR "\"header\": \"x-key\", "
#define PR "\"principals\": [\"a\"], "
#define DST "\"destinations\": [{\"scheme\": \"https\", \"host\": \"h.example\"}]"

static void test_refusals(void **state)
{
    struct fx *f = *state;

    /* The document. */
    load_fails(f, "", "not one valid JSON document");
    load_fails(f, "[]", "top level must be an object");
    load_fails(f, "{\"version\": 1, \"credentials\": []} x", "not one valid JSON document");
    load_fails(f, "{\"version\": 1, \"credentials\": [],}", "not one valid JSON document");
    load_fails(f, "{\"version\": 2, \"credentials\": []}", "\"version\" must be 1");
    load_fails(f, "{\"version\": \"1\", \"credentials\": []}", "\"version\" must be 1");
    load_fails(f, "{\"credentials\": []}", "\"version\" must be 1");
    load_fails(f, "{\"version\": 1}", "\"credentials\" must be an array");
    load_fails(f, "{\"version\": 1, \"credentials\": {}}", "\"credentials\" must be an array");
    load_fails(f, "{\"version\": 1, \"credentials\": [], \"extra\": 0}", "unknown key \"extra\"");
    load_fails(f, "{\"version\": 1, \"credentials\": [[[[[[[[[[1]]]]]]]]]]}",
               "not one valid JSON document");
    load_fails(f, "{\"version\": 1, \"credentials\": [1]}", "credentials[0] must be an object");

    /* Each field. */
    load_fails_cred(f, SYM VAL HDR PR DST, "missing \"id\"");
    load_fails_cred(f, "\"id\": \"\", " SYM VAL HDR PR DST, "id must be 1..128");
    load_fails_cred(f, "\"id\": \"a b\", " SYM VAL HDR PR DST, "id must be 1..128");
    load_fails_cred(f, "\"id\": \"a/b\", " SYM VAL HDR PR DST, "id must be 1..128");
    load_fails_cred(f, "\"id\": 7, " SYM VAL HDR PR DST, "\"id\" must be a string");
    load_fails_cred(f, ID VAL HDR PR DST, "missing \"symbolic\"");
    load_fails_cred(f, ID "\"symbolic\": \"sym_short\", " VAL HDR PR DST, "symbolic must be");
    load_fails_cred(
        f, ID "\"symbolic\": \"tok_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAaaaa\", " VAL HDR PR DST,
        "symbolic must be");
    load_fails_cred(
        f, ID "\"symbolic\": \"sym_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA+aaa\", " VAL HDR PR DST,
        "symbolic must be");
    load_fails_cred(f, ID SYM HDR PR DST, "missing \"value\"");
    load_fails_cred(f, ID SYM "\"value\": \"\", " HDR PR DST, "value must be 1..16384");
    load_fails_cred(f, ID SYM "\"value\": \"SECRET\\r\\nX-Evil: 1\", " HDR PR DST, "value must be");
    load_fails_cred(f, ID SYM "\"value\": \"SECRET\\u0000\", " HDR PR DST, "contains NUL");
    load_fails_cred(f, ID SYM "\"value\": \"SECRET\\u0085\", " HDR PR DST, "value must be");
    load_fails_cred(f, ID SYM "\"value\": 12, " HDR PR DST, "\"value\" must be a string");
    {
        char members[SWORN_VAULT_VALUE_MAX + 300];
        int n = snprintf(members, sizeof(members), ID SYM "\"value\": \"SEKRIT");
        memset(members + n, 'x', SWORN_VAULT_VALUE_MAX);
        snprintf(members + n + SWORN_VAULT_VALUE_MAX - 5, sizeof(members) - (size_t)n,
                 "\", " HDR PR DST);
        load_fails_cred(f, members, "value must be 1..16384"); /* 16385 bytes */
        /* Exactly 16384 bytes is accepted. */
        {
            char text[SWORN_VAULT_VALUE_MAX + 400];
            struct sworn_vault *v;

            snprintf(members + n + SWORN_VAULT_VALUE_MAX - 6, sizeof(members) - (size_t)n,
                     "\", " HDR PR DST);
            snprintf(text, sizeof(text), "{\"version\": 1, \"credentials\": [{%s}]}", members);
            v = load_ok(f, text);
            sworn_vault_free(v);
        }
    }
    load_fails_cred(f, ID SYM VAL PR DST, "exactly one of \"header\", \"query\" and \"form\"");
    load_fails_cred(f, ID SYM VAL HDR "\"form\": \"client_secret\", " PR DST, "exactly one of");
    load_fails_cred(f, ID SYM VAL "\"form\": \"a&b\", " PR DST, "form must be");
    load_fails_cred(f, ID SYM VAL "\"form\": \"\", " PR DST, "form must be");
    {
        /* A form credential: released with its parameter's name, kept by a mint's rewrite. */
        static const char text[] = "{\"version\": 1, \"credentials\": [{" ID SYM VAL
                                   "\"form\": \"client_secret\", " PR DST "}]}";
        struct sworn_vault *v = load_ok(f, text);
        struct sworn_vault_release out;
        struct sworn_pfix_req q;
        struct sworn_vault_mint m;
        struct sworn_vault_token t[2] = {{(const uint8_t *)"Bearer AT", 9, "authorization", NULL},
                                         {(const uint8_t *)"RT", 2, NULL, "refresh_token"}};
        struct sworn_vault_token bad = {(const uint8_t *)"x", 1, "Authorization", NULL};
        const char *why = NULL;

        memset(&out, 0, sizeof(out));
        sworn_pfix_req_init(&q, "a", "https", "h.example", 443, "/token");
        assert_int_equal(sworn_vault_release(v, "c", &q.r, &out, &why), 0);
        assert_string_equal(out.form_name, "client_secret");
        assert_string_equal(out.header_name, "");
        assert_string_equal(out.query_name, "");
        sworn_vault_release_wipe(&out);
        /* A token's place must be a valid name (a header name in lower case). */
        assert_int_equal(sworn_vault_mint_begin(v, "c", &bad, 1, &m), -1);
        /* Minted tokens go where their place says, not where the parent goes. */
        assert_int_equal(sworn_vault_mint_begin(v, "c", t, 2, &m), 0);
        assert_int_equal(sworn_vault_mint_commit(&m), 0);
        for (int k = 0; k < 2; k++) {
            uint8_t h[32];
            unsigned int hn = 32;

            assert_int_equal(EVP_Digest(m.minted[k].symbolic, strlen(m.minted[k].symbolic), h, &hn,
                                        EVP_sha256(), NULL),
                             1);
            q.r.context = &q.ctx;
            q.ctx.credential_token_sha256.data = h;
            q.ctx.credential_token_sha256.len = 32;
            assert_int_equal(sworn_vault_release(v, "c", &q.r, &out, &why), 0);
            assert_string_equal(out.header_name, k == 0 ? "authorization" : "");
            assert_string_equal(out.form_name, k == 0 ? "" : "refresh_token");
            sworn_vault_release_wipe(&out);
        }
        sworn_memzero(&m, sizeof(m));
        sworn_vault_free(v);
    }
    load_fails_cred(f, ID SYM VAL HDR "\"query\": \"k\", " PR DST, "exactly one of");
    load_fails_cred(f, ID SYM VAL "\"header\": \"x key\", " PR DST,
                    "header must be an HTTP field name");
    load_fails_cred(f, ID SYM VAL "\"header\": \"x:key\", " PR DST, "header must be");
    load_fails_cred(f, ID SYM VAL "\"header\": \"\", " PR DST, "header must be");
    load_fails_cred(f, ID SYM VAL "\"query\": \"a=b\", " PR DST, "query must be");
    load_fails_cred(f, ID SYM VAL "\"query\": \"a&b\", " PR DST, "query must be");
    load_fails_cred(f, ID SYM VAL HDR DST, "principals must be an array of 1..64");
    load_fails_cred(f, ID SYM VAL HDR "\"principals\": [], " DST, "principals must be");
    load_fails_cred(f, ID SYM VAL HDR "\"principals\": \"a\", " DST, "principals must be");
    load_fails_cred(f, ID SYM VAL HDR "\"principals\": [\"\"], " DST, "principals[0] must be");
    load_fails_cred(f, ID SYM VAL HDR "\"principals\": [\"a\", 1], " DST, "principals[1] must be");
    load_fails_cred(f, ID SYM VAL HDR "\"principals\": [\"a\\nb\"], " DST, "principals[0]");
    load_fails_cred(f, ID SYM VAL HDR "\"principals\": [\"a\"]",
                    "destinations must be an array of 1..64");
    load_fails_cred(f, ID SYM VAL HDR PR "\"destinations\": []", "destinations must be");
    load_fails_cred(f, ID SYM VAL HDR PR "\"destinations\": [1]",
                    "a destination must be an object");
    {
        /* One destination object each, in an otherwise valid credential. */
        static const struct {
            const char *dest, *want;
        } bad_dest[] = {
            {"\"host\": \"h\"", "missing \"scheme\""},
            {"\"scheme\": \"ftp\", \"host\": \"h\"", "scheme must be http, https, ws or wss"},
            {"\"scheme\": \"HTTPS\", \"host\": \"h\"", "scheme must be"},
            {"\"scheme\": \"https\"", "missing \"host\""},
            {"\"scheme\": \"https\", \"host\": \"\"", "host must be"},
            {"\"scheme\": \"https\", \"host\": \"a..b\"", "host must be"},
            {"\"scheme\": \"https\", \"host\": \"a_b.c\"", "host must be"},
            {"\"scheme\": \"https\", \"host\": \"h:443\"", "host must be"},
            {"\"scheme\": \"https\", \"host\": \"*\"", "host must be"},
            {"\"scheme\": \"https\", \"host\": \"*.com\"", "a wildcard host"},
            {"\"scheme\": \"https\", \"host\": \"*.\"", "a wildcard host"},
            {"\"scheme\": \"https\", \"host\": \"a.*.com\"", "host must be"},
            {"\"scheme\": \"https\", \"host\": \"*.*.a.com\"", "a wildcard host"},
            {"\"scheme\": \"https\", \"host\": \"h\", \"port\": 0", "port must be in 1..65535"},
            {"\"scheme\": \"https\", \"host\": \"h\", \"port\": 65536", "port must be in"},
            {"\"scheme\": \"https\", \"host\": \"h\", \"port\": \"443\"",
             "port must be an integer"},
            {"\"scheme\": \"https\", \"host\": \"h\", \"port\": 44.3", "port must be an integer"},
            {"\"scheme\": \"https\", \"host\": \"h\", \"path_prefix\": \"x\"",
             "path_prefix must start with"},
            {"\"scheme\": \"https\", \"host\": \"h\", \"path_prefix\": \"\"", "path_prefix must"},
            {"\"scheme\": \"https\", \"host\": \"h\", \"path_prefix\": \"/a?b\"",
             "path_prefix must"},
            {"\"scheme\": \"https\", \"host\": \"h\", \"weight\": 1", "unknown key \"weight\""},
        };

        for (size_t i = 0; i < sizeof(bad_dest) / sizeof(bad_dest[0]); i++) {
            char members[1024];

            snprintf(members, sizeof(members), ID SYM VAL HDR PR "\"destinations\": [{%s}]",
                     bad_dest[i].dest);
            load_fails_cred(f, members, bad_dest[i].want);
        }
    }
    load_fails_cred(f, ID SYM VAL HDR PR DST ", \"comment\": \"x\"",
                    "credential \"c\": unknown key \"comment\"");

    /* Uniqueness across credentials. */
    load_fails(f,
               "{\"version\": 1, \"credentials\": [{" ID SYM VAL HDR PR DST "}, {" ID
               "\"symbolic\": \"" SYM_B "\", " VAL HDR PR DST "}]}",
               "credential id \"c\" is used twice");
    load_fails(f,
               "{\"version\": 1, \"credentials\": [{" ID SYM VAL HDR PR DST
               "}, {\"id\": \"d\", " SYM VAL HDR PR DST "}]}",
               "share a symbolic token");
}

static void test_file_checks(void **state)
{
    struct fx *f = *state;
    struct sworn_vault *v = NULL;
    char *link = sworn_test_path(f->dir, "link.json");
    char *big;

    write_vault(f, good_vault, 0644);
    assert_int_equal(sworn_vault_load(f->path, &v), -1);
    assert_non_null(strstr(sworn_err_msg(), "mode 0644"));
    write_vault(f, good_vault, 0640);
    assert_int_equal(sworn_vault_load(f->path, &v), -1);
    write_vault(f, good_vault, 0400);
    assert_int_equal(sworn_vault_load(f->path, &v), 0); /* stricter is fine */
    sworn_vault_free(v);
    v = NULL;
    assert_int_equal(chmod(f->path, 0600), 0);
    assert_int_equal(symlink(f->path, link), 0);
    assert_int_equal(sworn_vault_load(link, &v), -1);
    assert_non_null(strstr(sworn_err_msg(), "symbolic link"));
    assert_int_equal(sworn_vault_load(f->dir, &v), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    unlink(f->path);
    assert_int_equal(sworn_vault_load(f->path, &v), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_NOTFOUND);
    assert_null(v);

    big = malloc(SWORN_VAULT_FILE_MAX + 2);
    assert_non_null(big);
    memset(big, ' ', SWORN_VAULT_FILE_MAX + 1);
    big[SWORN_VAULT_FILE_MAX + 1] = '\0';
    write_vault(f, big, 0600);
    assert_int_equal(sworn_vault_load(f->path, &v), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    free(big);

    if (geteuid() == 0) {
        write_vault(f, good_vault, 0600);
        assert_int_equal(chown(f->path, 1, 1), 0);
        assert_int_equal(sworn_vault_load(f->path, &v), -1);
        assert_non_null(strstr(sworn_err_msg(), "owned by uid 1"));
    } else {
        print_message("not root: the owner check is not exercised\n");
    }
    free(link);
}

static void test_mint(void **state)
{
    struct fx *f = *state;
    struct sworn_vault *v = load_ok(f, good_vault), *v2 = NULL;
    char id[129], sym[64], id2[129], sym2[64], got[129];
    const char *real = "gho_REALTOKEN_SECRET";
    struct sworn_vault_release out;
    struct sworn_pfix_req q;
    const char *why;
    struct stat st;
    uint8_t h[32];
    unsigned int n = 32;
    char *text;

    assert_int_equal(sworn_vault_mint(v, "github", (const uint8_t *)real, strlen(real), id, sym),
                     0);
    assert_string_equal(id, "github.oauth.1");
    assert_int_equal(strlen(sym), SWORN_VAULT_MINTED_LEN);
    assert_int_equal(strncmp(sym, "sym_", 4), 0);
    for (size_t i = 4; i < strlen(sym); i++)
        assert_non_null(
            strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", sym[i]));
    assert_int_equal(sworn_vault_mint(v, "github", (const uint8_t *)real, strlen(real), id2, sym2),
                     0);
    assert_string_equal(id2, "github.oauth.2");
    assert_string_not_equal(sym, sym2);

    /* In memory: the new credential has the old one's scope and the new value. */
    sworn_pfix_req_init(&q, "agent-2", "https", "api.github.com", 443, "/repos/z");
    with_token(&q, sym);
    assert_int_equal(sworn_vault_release(v, id, &q.r, &out, &why), 0);
    assert_string_equal(out.header_name, "authorization");
    assert_int_equal(out.value_len, strlen(real));
    assert_memory_equal(out.value, real, out.value_len);
    sworn_vault_release_wipe(&out);
    assert_int_equal(rel(v, id, &q, &why), 0);
    sworn_pfix_req_init(&q, "agent-3", "https", "api.github.com", 443, "/repos/z");
    assert_int_equal(rel(v, id, &q, &why), 1);
    assert_int_equal(EVP_Digest(sym2, strlen(sym2), h, &n, EVP_sha256(), NULL), 1);
    assert_int_equal(sworn_vault_lookup_token(v, h, got), 0);
    assert_string_equal(got, "github.oauth.2");

    /* On disk: 0600, and a reload sees both with their scope and the others unchanged. */
    assert_int_equal(stat(f->path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(sworn_vault_load(f->path, &v2), 0);
    sworn_pfix_req_init(&q, "agent-1", "https", "api.github.com", 443, "/repos/z");
    assert_int_equal(sworn_vault_release(v2, "github.oauth.1", &q.r, &out, &why), 0);
    assert_memory_equal(out.value, real, strlen(real));
    sworn_vault_release_wipe(&out);
    assert_int_equal(sworn_vault_lookup_token(v2, h, got), 0);
    assert_string_equal(got, "github.oauth.2");
    sworn_pfix_req_init(&q, "x", "https", "a.example.com", 8443, "/");
    assert_int_equal(rel(v2, "maps", &q, &why), 0);
    sworn_pfix_req_init(&q, "p", "wss", "a.example.org", 443, "/");
    assert_int_equal(sworn_vault_release(v2, "v.2_x-y", &q.r, &out, &why), 0);
    assert_memory_equal(out.value, "caf\xc3\xa9\tx", 7);
    sworn_vault_release_wipe(&out);
    sworn_vault_free(v2);
    v2 = NULL;

    /* Minting from a minted credential (a refresh) works too; the id is the family root's. */
    assert_int_equal(sworn_vault_mint(v, "github.oauth.1", (const uint8_t *)"x", 1, id, sym), 0);
    assert_string_equal(id, "github.oauth.3");

    /* Refusals change nothing, and never show the value. */
    text = sworn_test_read_file(f->path, NULL);
    assert_int_equal(sworn_vault_mint(v, "nope", (const uint8_t *)real, strlen(real), id, sym), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_NOTFOUND);
    assert_null(strstr(sworn_err_msg(), "SECRET"));
    assert_int_equal(sworn_vault_mint(v, "github", (const uint8_t *)"SECRET\r\nX: 1", 12, id, sym),
                     -1);
    assert_null(strstr(sworn_err_msg(), "SECRET"));
    assert_int_equal(sworn_vault_mint(v, "github", (const uint8_t *)"", 0, id, sym), -1);
    {
        char *t2 = sworn_test_read_file(f->path, NULL);
        assert_string_equal(text, t2);
        free(t2);
    }
    /*
     * A failed write leaves memory unchanged: the vault's folder is moved away, so the temporary
     * file cannot be created (this works for root too, unlike a read-only folder).
     */
    {
        char moved[1024];
        struct stat before;

        snprintf(moved, sizeof(moved), "%s.moved", f->dir);
        assert_int_equal(rename(f->dir, moved), 0);
        assert_int_equal(sworn_vault_mint(v, "maps", (const uint8_t *)"SECRET2", 7, id, sym), -1);
        assert_null(strstr(sworn_err_msg(), "SECRET"));
        assert_int_equal(rename(moved, f->dir), 0);
        sworn_pfix_req_init(&q, "x", "https", "a.example.com", 8443, "/");
        assert_int_equal(rel(v, "maps.oauth.1", &q, &why), 1);
        assert_string_equal(why, "no such credential in the vault");
        assert_int_equal(stat(f->path, &before), 0);
        /* The next mint still gets the next free number and the file gains exactly one. */
        assert_int_equal(sworn_vault_mint(v, "maps", (const uint8_t *)"t2", 2, id, sym), 0);
        assert_string_equal(id, "maps.oauth.1");
        assert_int_equal(rel(v, "maps.oauth.1", &q, &why), 0);
    }
    /* An id that would be too long. */
    {
        char longv[1000];
        char long_id[SWORN_VAULT_ID_MAX + 1];
        memset(long_id, 'i', SWORN_VAULT_ID_MAX);
        long_id[SWORN_VAULT_ID_MAX] = '\0';
        snprintf(longv, sizeof(longv),
                 "{\"version\": 1, \"credentials\": [{\"id\": \"%s\", " SYM VAL HDR PR DST "}]}",
                 long_id);
        sworn_vault_free(v);
        v = load_ok(f, longv);
        assert_int_equal(sworn_vault_mint(v, long_id, (const uint8_t *)"t", 1, id, sym), -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    }
    free(text);
    sworn_vault_free(v);
}

/* Mint one token from github; returns 0 or -1. OUT: id, symbolic. */
static int mint_one(struct sworn_vault *v, const char *from, const char *value, char id[129],
                    char sym[64])
{
    return sworn_vault_mint(v, from, (const uint8_t *)value, strlen(value), id, sym);
}

/* Does symbolic token sym release credential id for agent-1 under rule "github"? 1 or 0. */
static int token_releases(const struct sworn_vault *v, const char *sym, const char *id)
{
    struct sworn_pfix_req q;
    struct sworn_vault_release out;
    const char *why;
    int rc;

    sworn_pfix_req_init(&q, "agent-1", "https", "api.github.com", 443, "/repos/z");
    with_token(&q, sym);
    rc = sworn_vault_release(v, "github", &q.r, &out, &why);
    assert_true(rc == 0 || rc == 1);
    if (rc == 0) {
        assert_string_equal(out.id, id);
        sworn_vault_release_wipe(&out);
    }
    return rc == 0;
}

static int count_in_file(const struct fx *f, const char *word)
{
    char *text = sworn_test_read_file(f->path, NULL);
    int n = 0;

    for (const char *p = text; (p = strstr(p, word)) != NULL; p++)
        n++;
    free(text);
    return n;
}

/*
 * A refresh chain: each token minted from the one before (the agent refreshing with the newest
 * token, as an OAuth client does every hour). The ids once grew by ".oauth.<n>" at each refresh,
 * so the 16th refresh of a session hit the 128-byte id bound and failed (its allow used up, the
 * session lost). They are named after the family root now: 100 refreshes all succeed, every id is
 * "github.oauth.<n>", and the newest releases its value.
 */
static void test_refresh_chain_ids(void **state)
{
    struct fx *f = *state;
    struct sworn_vault *v = load_ok(f, good_vault);
    char from[129] = "github", id[129], sym[64], value[32];

    for (int k = 0; k < 100; k++) {
        snprintf(value, sizeof(value), "refresh-%d", k);
        if (mint_one(v, from, value, id, sym) != 0)
            fail_msg("refresh %d from %s: %s", k + 1, from, sworn_err_msg());
        assert_int_equal(strncmp(id, "github.oauth.", 13), 0);
        assert_true(strlen(id) <= strlen("github.oauth.") + 2);
        assert_int_equal(token_releases(v, sym, id), 1);
        memcpy(from, id, sizeof(from));
    }
    assert_int_equal(count_in_file(f, "\"github.oauth."), (int)SWORN_VAULT_MINTED_MAX);
    sworn_vault_free(v);
}

/*
 * A mint's replaced credentials release nothing from sworn_vault_mint_begin on. decisiond records
 * the CredentialsMinted entry (which names them as replaced) between the begin and the commit,
 * then writes the file: a replaced token that still released in that time was recorded as an
 * allow after the entry saying it was gone (seen on a dev stack: an allow at the index right
 * after the entry, releasing the replaced demo.oauth.1). An abort gives them back; the others of
 * the family, and the token lookup, are as before.
 */
static void test_replaced_stops_at_begin(void **state)
{
    struct fx *f = *state;
    struct sworn_vault *v = load_ok(f, good_vault);
    char ids[SWORN_VAULT_MINTED_MAX][129], syms[SWORN_VAULT_MINTED_MAX][64], found[129];
    struct sworn_vault_mint m;
    struct sworn_vault_token t[2] = {{(const uint8_t *)"t-a", 3, NULL, NULL},
                                     {(const uint8_t *)"t-b", 3, NULL, NULL}};
    uint8_t h[32];

    for (unsigned i = 0; i < SWORN_VAULT_MINTED_MAX; i++)
        assert_int_equal(mint_one(v, "github", "tok", ids[i], syms[i]), 0);
    /* Begin a mint of two: it replaces github.oauth.1 and .2, which stop at once. */
    assert_int_equal(sworn_vault_mint_begin(v, "github", t, 2, &m), 0);
    assert_int_equal(m.n_replaced, 2);
    assert_string_equal(m.replaced[0], ids[0]);
    assert_string_equal(m.replaced[1], ids[1]);
    assert_int_equal(token_releases(v, syms[0], ids[0]), 0);
    assert_int_equal(token_releases(v, syms[1], ids[1]), 0);
    assert_int_equal(token_releases(v, syms[2], ids[2]), 1);
    assert_int_equal(EVP_Digest(syms[0], strlen(syms[0]), h, NULL, EVP_sha256(), NULL), 1);
    assert_int_equal(sworn_vault_lookup_token(v, h, found), 1);
    /* Aborted (the entry could not be recorded): they release again. */
    sworn_vault_mint_abort(&m);
    sworn_memzero(&m, sizeof(m));
    assert_int_equal(token_releases(v, syms[0], ids[0]), 1);
    assert_int_equal(token_releases(v, syms[1], ids[1]), 1);
    assert_int_equal(sworn_vault_lookup_token(v, h, found), 0);
    assert_string_equal(found, ids[0]);
    /* Begun again and committed: gone for good; the new ones release. */
    assert_int_equal(sworn_vault_mint_begin(v, "github", t, 2, &m), 0);
    assert_int_equal(token_releases(v, syms[0], ids[0]), 0);
    assert_int_equal(sworn_vault_mint_commit(&m), 0);
    assert_int_equal(token_releases(v, syms[0], ids[0]), 0);
    assert_int_equal(token_releases(v, syms[1], ids[1]), 0);
    assert_int_equal(token_releases(v, m.minted[0].symbolic, m.minted[0].id), 1);
    assert_int_equal(token_releases(v, m.minted[1].symbolic, m.minted[1].id), 1);
    assert_int_equal(token_releases(v, syms[2], ids[2]), 1);
    sworn_memzero(&m, sizeof(m));
    sworn_vault_free(v);
}

/*
 * The per-credential cap (finding 9 of issue 11): the family of "github" (its minted credentials,
 * and theirs) keeps SWORN_VAULT_MINTED_MAX; the next mint replaces the oldest, says which, and a
 * replaced symbolic token releases nothing from then on, in memory and after a reload. A batch
 * that is aborted changes nothing; a vault over the cap (written by hand, or by an older
 * decisiond) comes down by at most SWORN_VAULT_REPLACED_MAX per mint.
 */
static void test_mint_cap(void **state)
{
    struct fx *f = *state;
    struct sworn_vault *v = load_ok(f, good_vault), *v2 = NULL;
    char ids[SWORN_VAULT_MINTED_MAX + 1][129], syms[SWORN_VAULT_MINTED_MAX + 1][64];
    struct sworn_vault_mint m;
    struct sworn_vault_token t[3] = {{(const uint8_t *)"t-a", 3, NULL, NULL},
                                     {(const uint8_t *)"t-b", 3, NULL, NULL},
                                     {(const uint8_t *)"t-c", 3, NULL, NULL}};
    char *before;

    for (unsigned i = 0; i < SWORN_VAULT_MINTED_MAX; i++) {
        char want[32];

        assert_int_equal(mint_one(v, "github", "tok", ids[i], syms[i]), 0);
        snprintf(want, sizeof(want), "github.oauth.%u", i + 1);
        assert_string_equal(ids[i], want);
    }
    assert_int_equal(count_in_file(f, "\"github.oauth."), (int)SWORN_VAULT_MINTED_MAX);
    /* One more: the oldest goes, and the new id is not the replaced one. */
    assert_int_equal(sworn_vault_mint_begin(v, "github", t, 1, &m), 0);
    assert_int_equal(m.n, 1);
    assert_int_equal(m.n_replaced, 1);
    assert_string_equal(m.replaced[0], "github.oauth.1");
    assert_string_equal(m.minted[0].id, "github.oauth.9");
    /* The replaced one releases nothing from the begin on (test_replaced_stops_at_begin). */
    assert_int_equal(token_releases(v, syms[0], ids[0]), 0);
    assert_int_equal(sworn_vault_mint_commit(&m), 0);
    assert_int_equal(token_releases(v, syms[0], ids[0]), 0);
    assert_int_equal(token_releases(v, m.minted[0].symbolic, "github.oauth.9"), 1);
    assert_int_equal(token_releases(v, syms[1], ids[1]), 1);
    sworn_memzero(&m, sizeof(m));
    assert_int_equal(count_in_file(f, "\"github.oauth."), (int)SWORN_VAULT_MINTED_MAX);
    assert_int_equal(sworn_vault_load(f->path, &v2), 0);
    assert_int_equal(token_releases(v2, syms[0], ids[0]), 0);
    assert_int_equal(token_releases(v2, syms[1], ids[1]), 1);
    sworn_vault_free(v2);

    /* A refresh chain counts in the same family: minting from github.oauth.2 replaces it (the
     * oldest) and keeps the family at the cap. */
    assert_int_equal(mint_one(v, "github.oauth.2", "tok2", ids[SWORN_VAULT_MINTED_MAX],
                              syms[SWORN_VAULT_MINTED_MAX]),
                     0);
    assert_string_equal(ids[SWORN_VAULT_MINTED_MAX], "github.oauth.1"); /* free again, not .2 */
    assert_int_equal(token_releases(v, syms[1], ids[1]), 0);
    assert_int_equal(count_in_file(f, "\"github.oauth."), (int)SWORN_VAULT_MINTED_MAX);

    /* A batch of three, aborted: nothing changes, and the mint lock is free again. */
    before = sworn_test_read_file(f->path, NULL);
    assert_int_equal(sworn_vault_mint_begin(v, "github", t, 3, &m), 0);
    assert_int_equal(m.n_replaced, 3);
    assert_string_equal(m.replaced[0], "github.oauth.3");
    sworn_vault_mint_abort(&m);
    sworn_memzero(&m, sizeof(m));
    {
        char *after = sworn_test_read_file(f->path, NULL);

        assert_string_equal(before, after);
        free(after);
    }
    free(before);
    assert_int_equal(token_releases(v, syms[2], ids[2]), 1);
    /* A mint whose file write fails (the folder moved away) after its entry named what it
     * replaces: nothing is stored, but the replaced one stays refused in this process (else a
     * later release contradicts the entry: sworn-verify's released-after-replaced); the others
     * and the file are unchanged, and a restart (a new load) gives it back. */
    {
        char moved[1024];

        before = sworn_test_read_file(f->path, NULL);
        snprintf(moved, sizeof(moved), "%s.moved", f->dir);
        assert_int_equal(sworn_vault_mint_begin(v, "github", t, 1, &m), 0);
        assert_int_equal(m.n_replaced, 1);
        assert_string_equal(m.replaced[0], ids[2]);
        assert_int_equal(rename(f->dir, moved), 0);
        assert_int_equal(sworn_vault_mint_commit(&m), -1);
        assert_int_equal(rename(moved, f->dir), 0);
        sworn_memzero(&m, sizeof(m));
        assert_int_equal(token_releases(v, syms[2], ids[2]), 0);
        assert_int_equal(token_releases(v, syms[3], ids[3]), 1);
        {
            char *after = sworn_test_read_file(f->path, NULL);

            assert_string_equal(before, after);
            free(after);
        }
        free(before);
        assert_int_equal(sworn_vault_load(f->path, &v2), 0);
        assert_int_equal(token_releases(v2, syms[2], ids[2]), 1);
        sworn_vault_free(v2);
    }
    assert_int_equal(sworn_vault_mint_begin(v, "github", t, 3, &m), 0);
    assert_int_equal(sworn_vault_mint_commit(&m), 0);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(token_releases(v, syms[2 + k], ids[2 + k]), 0);
        assert_int_equal(token_releases(v, m.minted[k].symbolic, m.minted[k].id), 1);
    }
    sworn_memzero(&m, sizeof(m));
    /* Other credentials' families are not touched: maps mints its own. */
    assert_int_equal(mint_one(v, "maps", "k", ids[0], syms[0]), 0);
    assert_string_equal(ids[0], "maps.oauth.1");
    assert_int_equal(count_in_file(f, "\"github.oauth."), (int)SWORN_VAULT_MINTED_MAX);
    /* Bad batches. */
    assert_int_equal(sworn_vault_mint_begin(v, "github", t, 0, &m), -1);
    assert_int_equal(sworn_vault_mint_begin(v, "github", t, SWORN_VAULT_MINT_BATCH_MAX + 1, &m),
                     -1);
    sworn_vault_free(v);

    /* A vault over the cap: 30 minted credentials of github, by hand. */
    {
        size_t cap = 64 * 1024, len = 0;
        char *text = malloc(cap);
        int n;

        assert_non_null(text);
        len +=
            (size_t)snprintf(text + len, cap - len,
                             "{\"version\": 1, \"credentials\": [{\"id\": \"github\", " SYM VAL HDR
                             "\"principals\": [\"agent-1\"], " DST "}");
        for (int i = 1; i <= 30; i++)
            len += (size_t)snprintf(text + len, cap - len,
                                    ", {\"id\": \"github.oauth.%d\", \"symbolic\": "
                                    "\"sym_%032d\", " VAL HDR PR DST "}",
                                    i, i);
        snprintf(text + len, cap - len, "]}");
        v = load_ok(f, text);
        free(text);
        assert_int_equal(sworn_vault_mint_begin(v, "github", t, 1, &m), 0);
        assert_int_equal(m.n_replaced, SWORN_VAULT_REPLACED_MAX);
        assert_string_equal(m.replaced[0], "github.oauth.1");
        assert_string_equal(m.minted[0].id, "github.oauth.31");
        assert_int_equal(sworn_vault_mint_commit(&m), 0);
        n = count_in_file(f, "\"github.oauth.");
        assert_int_equal(n, 30 - (int)SWORN_VAULT_REPLACED_MAX + 1);
        assert_int_equal(sworn_vault_mint_begin(v, "github", t, 1, &m), 0);
        assert_int_equal(m.n_replaced, (size_t)n + 1 - SWORN_VAULT_MINTED_MAX);
        assert_int_equal(sworn_vault_mint_commit(&m), 0);
        assert_int_equal(count_in_file(f, "\"github.oauth."), (int)SWORN_VAULT_MINTED_MAX);
        sworn_vault_free(v);
    }
}

struct write_gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int entered, released, timed_out;
};

/* The write hook: say it is in, then hold the write until the test has released (30 s at most:
 * a release blocked behind the write would otherwise hang the test instead of failing it). */
static void hold_write(void *arg)
{
    struct write_gate *g = arg;
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    pthread_mutex_lock(&g->mu);
    g->entered = 1;
    pthread_cond_broadcast(&g->cv);
    while (!g->released && !g->timed_out)
        if (pthread_cond_timedwait(&g->cv, &g->mu, &until) != 0)
            g->timed_out = 1;
    pthread_mutex_unlock(&g->mu);
}

struct minter {
    struct sworn_vault *v;
    int rc;
    char id[129], sym[64];
};

static void *mint_thread(void *arg)
{
    struct minter *mt = arg;

    mt->rc = mint_one(mt->v, "github", "gho_during_write", mt->id, mt->sym);
    return NULL;
}

/*
 * A release is not blocked while the vault file is being written (finding 9): a mint is held
 * inside its file write (the test hook), and meanwhile a release and a token lookup of the same
 * vault answer, with the credentials as they were (the new one is not there yet); once the write
 * is let go, the new credential releases.
 */
static void test_release_during_write(void **state)
{
    struct fx *f = *state;
    struct sworn_vault *v = load_ok(f, good_vault);
    struct write_gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};
    struct minter mt = {v, -2, "", ""};
    pthread_t th;
    struct sworn_pfix_req q;
    const char *why;
    char got[129];
    uint8_t h[32];
    unsigned int n = 32;

    sworn_vault_set_write_hook(v, hold_write, &g);
    assert_int_equal(pthread_create(&th, NULL, mint_thread, &mt), 0);
    pthread_mutex_lock(&g.mu);
    while (!g.entered)
        pthread_cond_wait(&g.cv, &g.mu);
    pthread_mutex_unlock(&g.mu);
    /* The write is in progress: releases and lookups go on. */
    sworn_pfix_req_init(&q, "agent-1", "https", "api.github.com", 443, "/repos/z");
    with_token(&q, SYM_A);
    assert_int_equal(rel(v, "github", &q, &why), 0);
    assert_int_equal(EVP_Digest(SYM_B, strlen(SYM_B), h, &n, EVP_sha256(), NULL), 1);
    assert_int_equal(sworn_vault_lookup_token(v, h, got), 0);
    assert_string_equal(got, "maps");
    assert_int_equal(count_in_file(f, "\"github.oauth."), 0);
    pthread_mutex_lock(&g.mu);
    g.released = 1;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_false(g.timed_out);
    assert_int_equal(mt.rc, 0);
    assert_int_equal(token_releases(v, mt.sym, "github.oauth.1"), 1);
    assert_int_equal(count_in_file(f, "\"github.oauth."), 1);
    sworn_memzero(mt.sym, sizeof(mt.sym));
    sworn_vault_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_release_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scope, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_hash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mint_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replaced_stops_at_begin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refresh_chain_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_during_write, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

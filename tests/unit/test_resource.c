/*
 * test_resource.c -- unit tests of policy/resource.c, the one canonical form of a resource, and
 * of the policy engine and the vault matching only that form.
 *
 * Tables: hosts, paths and whole resources accepted with their canonical output, and refused
 * with their reason; every accepted output canonicalises to itself (idempotence). Then the
 * spellings an agent could use to dodge a deny or to get a credential sent elsewhere (mixed
 * case, trailing dots, IPv4 in octal, hex, short and integer forms, IPv6 spellings and mapped
 * addresses, %2e%2e, dot segments, "//", encoded slashes and backslashes, double encoding,
 * overlong UTF-8, NUL, ';' and '#') go through the real sworn_policy_eval and
 * sworn_vault_release: none reaches /admin/ past a deny rule, none gets the /public/ credential
 * outside /public/ or to another host. Load-time refusals of patterns and vault destinations
 * that could never match a canonical form, and the raw target digest, are checked too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/sha.h>

#include "err.h"
#include "policy.h"
#include "policy_fixture.h"
#include "resource.h"
#include "testutil.h"
#include "vault.h"

#define SYM_A "sym_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAaaaa"

/* --- hosts -------------------------------------------------------------------------------- */

struct host_ok {
    const char *in, *out;
    enum sworn_resource_host_kind kind;
};

static const struct host_ok hosts_ok[] = {
    {"api.github.com", "api.github.com", SWORN_RESOURCE_HOST_NAME},
    {"API.GitHub.COM", "api.github.com", SWORN_RESOURCE_HOST_NAME},
    {"api.github.com.", "api.github.com", SWORN_RESOURCE_HOST_NAME},
    {"localhost", "localhost", SWORN_RESOURCE_HOST_NAME},
    {"LOCALHOST.", "localhost", SWORN_RESOURCE_HOST_NAME},
    {"xn--bcher-kva.example", "xn--bcher-kva.example", SWORN_RESOURCE_HOST_NAME},
    {"XN--BCHER-KVA.Example", "xn--bcher-kva.example", SWORN_RESOURCE_HOST_NAME},
    {"a-b.c-d.e", "a-b.c-d.e", SWORN_RESOURCE_HOST_NAME},
    {"123.example", "123.example", SWORN_RESOURCE_HOST_NAME},
    {"0x7f.example", "0x7f.example", SWORN_RESOURCE_HOST_NAME},
    {"a.b1", "a.b1", SWORN_RESOURCE_HOST_NAME},
    {"127.0.0.1", "127.0.0.1", SWORN_RESOURCE_HOST_IPV4},
    {"127.0.0.1.", "127.0.0.1", SWORN_RESOURCE_HOST_IPV4},
    {"10.0.0.255", "10.0.0.255", SWORN_RESOURCE_HOST_IPV4},
    {"255.255.255.255", "255.255.255.255", SWORN_RESOURCE_HOST_IPV4},
    {"0.0.0.1", "0.0.0.1", SWORN_RESOURCE_HOST_IPV4},
    {"[::1]", "[::1]", SWORN_RESOURCE_HOST_IPV6},
    {"::1", "[::1]", SWORN_RESOURCE_HOST_IPV6},
    {"0:0:0:0:0:0:0:1", "[::1]", SWORN_RESOURCE_HOST_IPV6},
    {"[0000:0000:0000:0000:0000:0000:0000:0001]", "[::1]", SWORN_RESOURCE_HOST_IPV6},
    {"[2001:DB8::1]", "[2001:db8::1]", SWORN_RESOURCE_HOST_IPV6},
    {"[2001:0db8:0000:0000:0000:0000:0000:0001]", "[2001:db8::1]", SWORN_RESOURCE_HOST_IPV6},
    /* RFC 5952 4.2.2: one zero group is not "::"; 4.2.3: the first of equal runs. */
    {"[2001:db8:0:1:1:1:1:1]", "[2001:db8:0:1:1:1:1:1]", SWORN_RESOURCE_HOST_IPV6},
    {"[2001:db8:0:0:1:0:0:1]", "[2001:db8::1:0:0:1]", SWORN_RESOURCE_HOST_IPV6},
    {"[2001:0:0:1:0:0:0:1]", "[2001:0:0:1::1]", SWORN_RESOURCE_HOST_IPV6},
    {"[fe80::]", "[fe80::]", SWORN_RESOURCE_HOST_IPV6},
    {"[1:2:3:4:5:6:7:8]", "[1:2:3:4:5:6:7:8]", SWORN_RESOURCE_HOST_IPV6},
    {"[64:ff9b::1.2.3.4]", "[64:ff9b::102:304]", SWORN_RESOURCE_HOST_IPV6},
    /* IPv4-mapped IPv6 (::ffff:0:0/96) is the IPv4 address a dual-stack socket connects to. */
    {"[::ffff:127.0.0.1]", "127.0.0.1", SWORN_RESOURCE_HOST_IPV4},
    {"[::ffff:7f00:1]", "127.0.0.1", SWORN_RESOURCE_HOST_IPV4},
    {"[::ffff:7f00:0001]", "127.0.0.1", SWORN_RESOURCE_HOST_IPV4},
    {"::ffff:10.0.0.1", "10.0.0.1", SWORN_RESOURCE_HOST_IPV4},
    {"[::FFFF:7F00:1]", "127.0.0.1", SWORN_RESOURCE_HOST_IPV4},
    {"[0:0:0:0:0:ffff:a00:1]", "10.0.0.1", SWORN_RESOURCE_HOST_IPV4},
    {"[0000:0000:0000:0000:0000:FFFF:A9FE:A9FE]", "169.254.169.254", SWORN_RESOURCE_HOST_IPV4},
    {"::ffff:a9fe:a9fe", "169.254.169.254", SWORN_RESOURCE_HOST_IPV4},
    {"[::ffff:0.0.0.1]", "0.0.0.1", SWORN_RESOURCE_HOST_IPV4},
    {"[::ffff:255.255.255.255]", "255.255.255.255", SWORN_RESOURCE_HOST_IPV4},
};

struct bad {
    const char *in, *why;
};

static const struct bad hosts_bad[] = {
    {"", "empty"},
    {"a..b", "an empty label"},
    {".a", "an empty label"},
    {"a.b..", "an empty label"},
    {".", "an empty label"},
    {"-a.example", "starts or ends with '-'"},
    {"a-.example", "starts or ends with '-'"},
    {"a_b.example", "a character other than"},
    {"a b", "a character other than"},
    {"user@evil.example", "a character other than"},
    {"api.example.com%2eevil", "a character other than"},
    {"evil.example#api.example.com", "a character other than"},
    {"evil.example/api.example.com", "a character other than"},
    {"evil.example\\api.example.com", "a character other than"},
    {"b\xc3\xbc"
     "cher.example",
     "non-ASCII"},
    {"api.example.com:443", "not an IPv6 address"},
    {"api.example.com:", "not an IPv6 address"},
    /* Every IPv4 spelling but the decimal dotted quad. */
    {"0177.0.0.1", "dotted quad"},
    {"0x7f.0.0.1", "dotted quad"},
    {"0X7F.0.0.1", "dotted quad"},
    {"0x7f.1", "dotted quad"},
    {"127.1", "dotted quad"},
    {"127.0.1", "dotted quad"},
    {"2130706433", "dotted quad"},
    {"0x7f000001", "dotted quad"},
    {"017700000001", "dotted quad"},
    {"127.000.000.001", "dotted quad"},
    {"127.0.0.01", "dotted quad"},
    {"127.0.0.1.1", "dotted quad"},
    {"256.0.0.1", "dotted quad"},
    {"1.2.3.1000", "dotted quad"},
    {"127.0.0.0x1", "dotted quad"},
    {"a.0x", "dotted quad"},
    {"example.123", "dotted quad"},
    {"0.0.0.0", "unspecified"},
    {"[::]", "unspecified"},
    {"[0:0:0:0:0:0:0:0]", "unspecified"},
    /* IPv4-mapped forms of 0.0.0.0, and mapped text no resolver reads as the quad. */
    {"[::ffff:0.0.0.0]", "unspecified"},
    {"[::ffff:0:0]", "unspecified"},
    {"::ffff:0.0.0.0", "unspecified"},
    {"[::ffff:127.0.0.01]", "not an IPv6 address"},
    {"[::ffff:127.1]", "not an IPv6 address"},
    {"[::ffff:0x7f.0.0.1]", "not an IPv6 address"},
    {"[::ffff:127.0.0.1%25lo]", "zone"},
    {"[::ffff:127.0.0.1]:443", "without its ']'"},
    {"[::ffff:0:127.0.0.1]", "IPv4-translated"}, /* RFC 2765 */
    {"[::ffff:0:7f00:1]", "IPv4-translated"},
    {"[::127.0.0.1]", "IPv4-compatible"},
    {"[::2]", "IPv4-compatible"},
    {"[fe80::1%25eth0]", "zone"},
    {"[fe80::1%eth0]", "zone"},
    {"[::1", "without its ']'"},
    {"[]", "not an IPv6 address"},
    {"[::1]:443", "without its ']'"},
    {"[1:2:3:4:5:6:7:8:9]", "not an IPv6 address"},
    {"[1::2::3]", "not an IPv6 address"},
    {"[::g]", "not an IPv6 address"},
    {"[127.0.0.1]", "not an IPv6 address"},
    {"[api.example.com]", "not an IPv6 address"},
};

static void test_hosts(void **state)
{
    char out[SWORN_RESOURCE_HOST_MAX + 1], again[SWORN_RESOURCE_HOST_MAX + 1];
    enum sworn_resource_host_kind kind, kind2;
    uint8_t addr[16], addr2[16];
    const char *why;

    (void)state;
    for (size_t i = 0; i < sizeof(hosts_ok) / sizeof(hosts_ok[0]); i++) {
        why = NULL;
        if (sworn_resource_canon_host(hosts_ok[i].in, out, &kind, addr, &why) != 0)
            fail_msg("host \"%s\" refused: %s", hosts_ok[i].in, why);
        if (strcmp(out, hosts_ok[i].out) != 0 || kind != hosts_ok[i].kind)
            fail_msg("host \"%s\": got \"%s\" (%d), want \"%s\" (%d)", hosts_ok[i].in, out,
                     (int)kind, hosts_ok[i].out, (int)hosts_ok[i].kind);
        /* Idempotent, and the same address. */
        assert_int_equal(sworn_resource_canon_host(out, again, &kind2, addr2, &why), 0);
        assert_string_equal(again, out);
        assert_int_equal(kind2, kind);
        assert_memory_equal(addr2, addr, 16);
    }
    for (size_t i = 0; i < sizeof(hosts_bad) / sizeof(hosts_bad[0]); i++) {
        why = NULL;
        memset(out, 'x', sizeof(out));
        if (sworn_resource_canon_host(hosts_bad[i].in, out, &kind, addr, &why) != 1)
            fail_msg("host \"%s\" accepted as \"%s\"", hosts_bad[i].in, out);
        assert_non_null(why);
        if (strstr(why, hosts_bad[i].why) == NULL)
            fail_msg("host \"%s\": reason \"%s\" lacks \"%s\"", hosts_bad[i].in, why,
                     hosts_bad[i].why);
        assert_string_equal(out, "");
    }
}

static void test_host_lengths(void **state)
{
    char in[300], out[SWORN_RESOURCE_HOST_MAX + 1];
    enum sworn_resource_host_kind kind;
    uint8_t addr[16];
    const char *why;

    (void)state;
    /* A 63-byte label is fine, 64 is not. */
    memset(in, 'a', 63);
    memcpy(in + 63, ".example", 9);
    assert_int_equal(sworn_resource_canon_host(in, out, &kind, addr, &why), 0);
    memset(in, 'a', 64);
    memcpy(in + 64, ".example", 9);
    assert_int_equal(sworn_resource_canon_host(in, out, &kind, addr, &why), 1);
    assert_non_null(strstr(why, "longer than 63"));
    /* 253 bytes of name are fine (and 254 with the trailing dot); 254 of name are not. */
    for (size_t i = 0; i < 253; i++)
        in[i] = i % 2 == 1 ? '.' : 'a';
    in[253] = '\0';
    assert_int_equal(sworn_resource_canon_host(in, out, &kind, addr, &why), 0);
    assert_int_equal(strlen(out), 253);
    in[253] = '.';
    in[254] = '\0';
    assert_int_equal(sworn_resource_canon_host(in, out, &kind, addr, &why), 0);
    assert_int_equal(strlen(out), 253);
    in[253] = 'a';
    in[254] = 'a';
    in[255] = '\0';
    in[252] = '.';
    assert_int_equal(sworn_resource_canon_host(in, out, &kind, addr, &why), 1);
    assert_non_null(strstr(why, "longer than 253"));
    memset(in, 'a', 299);
    in[299] = '\0';
    assert_int_equal(sworn_resource_canon_host(in, out, &kind, addr, &why), 1);
    assert_int_equal(sworn_resource_canon_host(NULL, out, &kind, addr, &why), 1);
}

/* --- paths -------------------------------------------------------------------------------- */

struct path_ok {
    const char *in, *out;
};

static const struct path_ok paths_ok[] = {
    {"", "/"},
    {"/", "/"},
    {"/a/b", "/a/b"},
    {"/a/b/", "/a/b/"},
    /* RFC 3986 5.2.4 and its examples. */
    {"/a/b/c/./../../g", "/a/g"},
    {"/a/./b/../c", "/a/c"},
    {"/./a", "/a"},
    {"/../a", "/a"},
    {"/../../../a", "/a"},
    {"/a/..", "/"},
    {"/a/.", "/a/"},
    {"/a/b/..", "/a/"},
    {"/.", "/"},
    {"/..", "/"},
    {"/a/...", "/a/..."},
    {"/a/...x/.b/c..", "/a/...x/.b/c.."},
    {"/a/..a/b", "/a/..a/b"},
    /* Escapes: hex upper case, unreserved decoded, the rest kept. */
    {"/%7euser", "/~user"},
    {"/%7Euser", "/~user"},
    {"/%41%42c", "/ABc"},
    {"/a%2db%5f%2e", "/a-b_."},
    {"/a%20b", "/a%20b"},
    {"/a%3fb", "/a%3Fb"},
    {"/a%23b", "/a%23b"},
    {"/a%3bb", "/a%3Bb"},
    {"/a%25", "/a%25"},
    {"/a%25zz", "/a%25zz"},
    {"/%2e%2e/a", "/a"},
    {"/%2E%2E/a", "/a"},
    {"/x/%2e/a", "/x/a"},
    {"/x/.%2e/a", "/a"},
    {"/x/%2e./a", "/a"},
    {"/caf%c3%a9", "/caf%C3%A9"},
    {"/%e2%82%ac", "/%E2%82%AC"},
    {"/%f0%9f%98%80", "/%F0%9F%98%80"},
    {"/a:b@c!$&'()*+,=", "/a:b@c!$&'()*+,="},
    /* The query: kept, escapes normalised, '/', '?', ';', %2F and %5C allowed there. */
    {"/a?b=c", "/a?b=c"},
    {"/a?", "/a?"},
    {"/a?x=/../y", "/a?x=/../y"},
    {"/a?u=https%3a%2f%2fx%2fy", "/a?u=https%3A%2F%2Fx%2Fy"},
    {"/a?q=%7e%41", "/a?q=~A"},
    {"/a?q=a;b&c=d?e", "/a?q=a;b&c=d?e"},
    {"/a?q=%5c%0a", "/a?q=%5C%0A"},
    {"/a?q=%ef%bc%8f", "/a?q=%EF%BC%8F"},
    {"/a%e2%80%a6", "/a%E2%80%A6"}, /* U+2026 is "..." under NFKC: an ordinary segment */
    {"/a/./b?c/./d", "/a/b?c/./d"},
    {"/a/%2e%2e?%2e%2e", "/?.."},
    /* Path parameters ("name;params"): kept, escapes normalised like the rest of the path;
     * whether the policy accepts them is its business (test_path_params). */
    {"/a;b", "/a;b"},
    {"/admin;x/y", "/admin;x/y"},
    {"/a;", "/a;"},
    {"/a;b;c=d,e/f;g", "/a;b;c=d,e/f;g"},
    {"/a;jsessionid=%7e%3b", "/a;jsessionid=~%3B"},
    {"/a;%2e%2e/b", "/a;../b"},
    {"/a;b/../c", "/c"},
    {"/x;a=1/./y", "/x;a=1/y"},
    {"/...;x", "/...;x"},
    {"/.x;y", "/.x;y"},
    {"/a/x..%3bb", "/a/x..%3Bb"},
};

static const struct bad paths_bad[] = {
    {"a/b", "does not start with '/'"},
    {"*", "does not start with '/'"},
    {"?", "does not start with '/'"},
    {"?a=b", "does not start with '/'"},
    {"http://x/a", "does not start with '/'"},
    {"/a%2fb", "%2F"},
    {"/a%2Fb", "%2F"},
    {"/a%2f..%2fb", "%2F"},
    {"/a%5cb", "%5C"},
    {"/a%5Cb", "%5C"},
    {"/a\\b", "backslash"},
    {"/a\\..\\b", "backslash"},
    {"/a?b\\c", "backslash"},
    {"/a%00", "%00"},
    {"/a?b=%00", "%00"},
    {"/a%0a", "encoded control"},
    {"/a%0D%0A", "encoded control"},
    {"/a%7f", "encoded control"},
    {"/a%1", "two hex digits"},
    {"/a%25%", "two hex digits"},
    {"/a%", "two hex digits"},
    {"/a%g0", "two hex digits"},
    {"/a%0g", "two hex digits"},
    {"/a?%zz", "two hex digits"},
    {"/a%%32%66", "two hex digits"},
    {"/a%252f", "double"},
    {"/a%252F", "double"},
    {"/a%255c", "double"},
    {"/a%2541", "double"},
    {"/a%25%32%66", "double"},
    {"/a%25%32f", "double"},
    {"/a%2%35%32%66", "two hex digits"},
    {"/a?x=%252f", "double"},
    {"/a%c0%af", "not UTF-8"},
    {"/a%C0%AF", "not UTF-8"},
    {"/a%c1%9c", "not UTF-8"},
    {"/a%e0%80%af", "not UTF-8"},
    {"/a%f0%80%80%af", "not UTF-8"},
    {"/a%c3", "not UTF-8"},
    {"/a%c3/b", "not UTF-8"},
    {"/a%c3%41", "not UTF-8"},
    {"/a%a9", "not UTF-8"},
    {"/a%ed%a0%80", "not UTF-8"},
    {"/a%f4%90%80%80", "not UTF-8"},
    {"/a%ff", "not UTF-8"},
    /* Unicode look-alikes of '.', '/' and '\\' (NFKC or best-fit mappings upstream). */
    {"/a/%ef%bc%8e%ef%bc%8e/b", "look-alike"},
    {"/a/%EF%BC%8E/b", "look-alike"},
    {"/a%ef%bc%8fb", "look-alike"},
    {"/a%ef%bc%bcb", "look-alike"},
    {"/a%e2%88%95b", "look-alike"},
    {"/a%e2%81%84b", "look-alike"},
    {"/a%e2%80%a4b", "look-alike"},
    {"/a%e2%80%a5/b", "look-alike"},
    {"/a%ef%b9%92b", "look-alike"},
    {"/a%ef%b9%a8b", "look-alike"},
    {"/a%e2%a7%b8b", "look-alike"},
    {"/a%e2%a7%b9b", "look-alike"},
    /* IIS %u escapes, and deeper double encoding. */
    {"/a%u002fb", "two hex digits"},
    {"/a%U002Fb", "two hex digits"},
    {"/a%2525", "double"},
    {"/a%25252f", "double"},
    {"/caf\xc3\xa9", "raw non-ASCII"},
    {"/a\x01", "control"},
    {"/a\x7f", "control"},
    {"/a\tb", "control"},
    {"/a?\x1b", "control"},
    {"/a#b", "fragment"},
    {"/a?b#c", "fragment"},
    /* Path parameters on a segment whose name is empty or a dot segment, in any spelling. */
    {"/..;/admin", "dot segment with path parameters"},
    {"/a/..;x/b", "dot segment with path parameters"},
    {"/a/.;/b", "dot segment with path parameters"},
    {"/a/.;x", "dot segment with path parameters"},
    {"/a/%2e%2e;/b", "dot segment with path parameters"},
    {"/a/%2E%2e;x/b", "dot segment with path parameters"},
    {"/a/.%2e;/b", "dot segment with path parameters"},
    {"/a/%2e.;/b", "dot segment with path parameters"},
    {"/a/%2e;/b", "dot segment with path parameters"},
    {"/a/..;", "dot segment with path parameters"},
    {"/app/x;a=1/..;/admin", "dot segment with path parameters"},
    {"/;x", "only parameters"},
    {"/;", "only parameters"},
    {"/a/;/b", "only parameters"},
    {"/a/;x=1/b", "only parameters"},
    {"/a;x//b", "empty path segment"},
    {"/a;x%2f..%2f..%2fadmin", "%2F"},
    {"/a;x%5c..", "%5C"},
    {"/a;x%00", "%00"},
    {"/a;x%252e", "double"},
    {"/a;x%ef%bc%8f", "look-alike"},
    {"/a;x\\..", "backslash"},
    {"/a;x#y", "fragment"},
    {"/a/..%3b/b", "encoded ';'"},
    {"/a/..%3Bx/b", "encoded ';'"},
    {"/a/.%3b/b", "encoded ';'"},
    {"/a/%2e%2e%3b/b", "encoded ';'"},
    {"/a b", "must be percent-encoded"},
    {"/a\"b", "must be percent-encoded"},
    {"/a<b>", "must be percent-encoded"},
    {"/a{b}", "must be percent-encoded"},
    {"/a|b", "must be percent-encoded"},
    {"/a^b", "must be percent-encoded"},
    {"/a`b", "must be percent-encoded"},
    {"/a[b]", "must be percent-encoded"},
    {"/a?b c", "must be percent-encoded"},
    {"//a", "empty path segment"},
    {"/a//b", "empty path segment"},
    {"/a/b//", "empty path segment"},
    {"/a/.//b", "empty path segment"},
    {"/a//../b", "empty path segment"},
};

static void check_path_ok(const char *in, const char *want)
{
    char out[SWORN_RESOURCE_PATH_MAX + 1], again[SWORN_RESOURCE_PATH_MAX + 1];
    size_t plen, plen2;
    const char *why = NULL, *q;

    if (sworn_resource_canon_path(in, out, &plen, &why) != 0)
        fail_msg("path \"%s\" refused: %s", in, why);
    if (strcmp(out, want) != 0)
        fail_msg("path \"%s\": got \"%s\", want \"%s\"", in, out, want);
    q = strchr(out, '?');
    assert_int_equal(plen, q != NULL ? (size_t)(q - out) : strlen(out));
    assert_true(plen >= 1);
    assert_int_equal(sworn_resource_canon_path(out, again, &plen2, &why), 0);
    if (strcmp(again, out) != 0)
        fail_msg("not idempotent: \"%s\" -> \"%s\" -> \"%s\"", in, out, again);
    assert_int_equal(plen2, plen);
}

static void test_paths(void **state)
{
    char out[SWORN_RESOURCE_PATH_MAX + 1];
    size_t plen;
    const char *why;

    (void)state;
    for (size_t i = 0; i < sizeof(paths_ok) / sizeof(paths_ok[0]); i++)
        check_path_ok(paths_ok[i].in, paths_ok[i].out);
    check_path_ok(NULL, "/");
    for (size_t i = 0; i < sizeof(paths_bad) / sizeof(paths_bad[0]); i++) {
        why = NULL;
        memset(out, 'x', sizeof(out));
        if (sworn_resource_canon_path(paths_bad[i].in, out, &plen, &why) != 1)
            fail_msg("path \"%s\" accepted as \"%s\"", paths_bad[i].in, out);
        assert_non_null(why);
        if (strstr(why, paths_bad[i].why) == NULL)
            fail_msg("path \"%s\": reason \"%s\" lacks \"%s\"", paths_bad[i].in, why,
                     paths_bad[i].why);
        assert_string_equal(out, "");
        assert_int_equal(plen, 0);
    }
}

static void test_path_lengths(void **state)
{
    static char in[SWORN_RESOURCE_PATH_MAX + 2], out[SWORN_RESOURCE_PATH_MAX + 1];
    size_t plen;
    const char *why;

    (void)state;
    in[0] = '/';
    memset(in + 1, 'a', SWORN_RESOURCE_PATH_MAX - 1);
    in[SWORN_RESOURCE_PATH_MAX] = '\0';
    assert_int_equal(sworn_resource_canon_path(in, out, &plen, &why), 0);
    assert_int_equal(plen, SWORN_RESOURCE_PATH_MAX);
    in[SWORN_RESOURCE_PATH_MAX] = 'a';
    in[SWORN_RESOURCE_PATH_MAX + 1] = '\0';
    assert_int_equal(sworn_resource_canon_path(in, out, &plen, &why), 1);
    assert_non_null(strstr(why, "longer than 8192"));
    /* The longest path of escapes shrinks; the longest of dot segments becomes "/". */
    in[0] = '/';
    for (size_t i = 1; i + 3 <= SWORN_RESOURCE_PATH_MAX; i += 3)
        memcpy(in + i, "%41", 3);
    in[SWORN_RESOURCE_PATH_MAX - 1] = '\0';
    assert_int_equal(sworn_resource_canon_path(in, out, &plen, &why), 0);
    assert_int_equal(plen, 1 + (SWORN_RESOURCE_PATH_MAX - 2) / 3);
    for (size_t i = 0; i + 2 <= SWORN_RESOURCE_PATH_MAX; i += 2)
        memcpy(in + i, "/.", 2);
    in[SWORN_RESOURCE_PATH_MAX] = '\0';
    assert_int_equal(sworn_resource_canon_path(in, out, &plen, &why), 0);
    assert_string_equal(out, "/");
}

/* --- whole resources ---------------------------------------------------------------------- */

struct res_row {
    const char *scheme, *host;
    uint32_t port;
    const char *path, *tool;
    const char *want_scheme, *want_host, *want_path; /* NULL want_scheme: refused */
    const char *why;
};

static const struct res_row resources[] = {
    {"https", "api.example.com", 443, "/a", "", "https", "api.example.com", "/a", NULL},
    {"HTTPS", "API.example.com.", 443, "/a/./b", "", "https", "api.example.com", "/a/b", NULL},
    {"Http", "127.0.0.1", 8080, "", "", "http", "127.0.0.1", "/", NULL},
    {"WS", "[::1]", 80, "/s", "", "ws", "[::1]", "/s", NULL},
    {"wss", "0:0::1", 443, "/s", "", "wss", "[::1]", "/s", NULL},
    {"https", "mcp.example", 443, "/mcp", "search_code", "https", "mcp.example", "/mcp", NULL},
    {"ftp", "x.example", 21, "/", "", NULL, NULL, NULL, "scheme"},
    {"file", "x.example", 1, "/", "", NULL, NULL, NULL, "scheme"},
    {"httpss", "x.example", 1, "/", "", NULL, NULL, NULL, "scheme"},
    {"", "x.example", 1, "/", "", NULL, NULL, NULL, "scheme"},
    {"https", "", 443, "/", "", NULL, NULL, NULL, "empty"},
    {"https", "x.example", 0, "/", "", NULL, NULL, NULL, "port"},
    {"https", "x.example", 65536, "/", "", NULL, NULL, NULL, "port"},
    {"https", "x.example", 443, "/a%2f", "", NULL, NULL, NULL, "%2F"},
    {"https", "0x7f.1", 443, "/", "", NULL, NULL, NULL, "dotted quad"},
    /* tcp (operation tcp.connect, a raw tunnel): any case in, "tcp" out; host and port as for
     * http; no path (and the empty path stays empty); the port is required (no default). */
    {"tcp", "db.example", 5432, "", "", "tcp", "db.example", "", NULL},
    {"TCP", "DB.Example.", 22, "", "", "tcp", "db.example", "", NULL},
    {"Tcp", "::ffff:10.0.0.1", 6379, NULL, "", "tcp", "10.0.0.1", "", NULL},
    {"tcp", "[2001:DB8::1]", 1, "", "", "tcp", "[2001:db8::1]", "", NULL},
    {"tcp", "db.example", 5432, "/", "", NULL, NULL, NULL, "no path"},
    {"tcp", "db.example", 5432, "/x", "", NULL, NULL, NULL, "no path"},
    {"tcp", "db.example", 5432, "?a", "", NULL, NULL, NULL, "no path"},
    {"tcp", "db.example", 0, "", "", NULL, NULL, NULL, "port"},
    {"tcp", "db.example", 65536, "", "", NULL, NULL, NULL, "port"},
    {"tcp", "0177.0.0.1", 22, "", "", NULL, NULL, NULL, "dotted quad"},
    {"tcp", "", 22, "", "", NULL, NULL, NULL, "empty"},
    {"tcps", "db.example", 22, "", "", NULL, NULL, NULL, "scheme"},
    {"udp", "db.example", 53, "", "", NULL, NULL, NULL, "scheme"},
};

static void test_resources(void **state)
{
    struct sworn_resource c, again;
    Sworn__V1__Resource pb;
    const char *why;

    (void)state;
    for (size_t i = 0; i < sizeof(resources) / sizeof(resources[0]); i++) {
        const struct res_row *w = &resources[i];
        Sworn__V1__Resource r = SWORN__V1__RESOURCE__INIT;
        Sworn__V1__Resource pb0 = SWORN__V1__RESOURCE__INIT;
        int rc;

        r.scheme = (char *)w->scheme;
        r.host = (char *)w->host;
        r.port = w->port;
        r.path = (char *)w->path;
        r.tool = (char *)w->tool;
        why = NULL;
        rc = sworn_resource_canon(&r, &c, &why);
        if (w->want_scheme == NULL) {
            struct sworn_resource zero;

            memset(&zero, 0, sizeof(zero));
            if (rc != 1)
                fail_msg("row %zu accepted", i);
            assert_non_null(strstr(why, w->why));
            assert_memory_equal(&c, &zero, sizeof(c));
            continue;
        }
        if (rc != 0)
            fail_msg("row %zu refused: %s", i, why);
        assert_string_equal(c.scheme, w->want_scheme);
        assert_string_equal(c.host, w->want_host);
        assert_string_equal(c.path, w->want_path);
        assert_string_equal(c.tool, w->tool);
        assert_int_equal(c.port, w->port);
        assert_int_equal(c.path_len, strcspn(c.path, "?"));
        if (strcmp(c.scheme, "tcp") == 0) { /* no path: both readings empty */
            assert_int_equal(c.path_len, 0);
            assert_int_equal(c.bare_len, 0);
            assert_string_equal(c.bare, "");
            assert_int_equal(c.path_params, 0);
        }
        pb = pb0;
        sworn_resource_to_pb(&c, &pb);
        assert_int_equal(sworn_resource_canon(&pb, &again, &why), 0);
        assert_memory_equal(&again, &c, sizeof(c));
    }
    assert_int_equal(sworn_resource_canon(NULL, &c, &why), 1);
}

/*
 * sworn_resource_canonicalise, the form a decision makes once and hands on: res is byte for byte
 * what sworn_resource_canon writes (every byte defined, whatever was in the struct before), rc
 * and why are its return and refusal (why NULL on success), and of is the resource it was made
 * from, which is all sworn_resource_canonical_is_of looks at.
 */
static void test_canonicalise(void **state)
{
    static struct sworn_resource_canonical k;
    static struct sworn_resource want, zero;
    Sworn__V1__Resource r = SWORN__V1__RESOURCE__INIT, r2 = SWORN__V1__RESOURCE__INIT;
    const char *why = NULL;

    (void)state;
    r.scheme = (char *)"HTTPS";
    r.host = (char *)"API.example.com.";
    r.port = 443;
    r.path = (char *)"/a;p=1/../b/%7e?q=%2f";
    r.tool = (char *)"t";
    r.model = (char *)"GPT-4o";
    r2 = r;
    assert_int_equal(sworn_resource_canon(&r, &want, &why), 0);
    memset(&k, 0xa5, sizeof(k));
    sworn_resource_canonicalise(&r, &k);
    assert_int_equal(k.rc, 0);
    assert_null(k.why);
    assert_ptr_equal(k.of, &r);
    assert_memory_equal(&k.res, &want, sizeof(want));
    assert_string_equal(k.res.model, "gpt-4o");
    assert_true(sworn_resource_canonical_is_of(&k, &r));
    assert_false(sworn_resource_canonical_is_of(&k, &r2)); /* equal bytes, another message */
    assert_false(sworn_resource_canonical_is_of(&k, NULL));
    assert_false(sworn_resource_canonical_is_of(NULL, &r));

    /* A refusal: rc 1, its reason, res all zero. */
    r.path = (char *)"/a/%2F";
    assert_int_equal(sworn_resource_canon(&r, &want, &why), 1);
    memset(&k, 0xa5, sizeof(k));
    sworn_resource_canonicalise(&r, &k);
    assert_int_equal(k.rc, 1);
    assert_string_equal(k.why, why);
    assert_memory_equal(&k.res, &zero, sizeof(zero));
    assert_true(sworn_resource_canonical_is_of(&k, &r));
    memset(&k, 0xa5, sizeof(k));
    sworn_resource_canonicalise(NULL, &k);
    assert_int_equal(k.rc, 1);
    assert_non_null(k.why);
    assert_null(k.of);
    assert_memory_equal(&k.res, &zero, sizeof(zero));
}

static void test_raw_digest(void **state)
{
    Sworn__V1__Resource r = SWORN__V1__RESOURCE__INIT;
    static const char text[] = "HTTPS://API.example.com.:443/a/%2e%2e/b?x";
    uint8_t got[32], want[32];

    (void)state;
    r.scheme = (char *)"HTTPS";
    r.host = (char *)"API.example.com.";
    r.port = 443;
    r.path = (char *)"/a/%2e%2e/b?x";
    r.tool = (char *)"t";
    SHA256((const unsigned char *)text, strlen(text), want);
    assert_int_equal(sworn_resource_raw_sha256(&r, got), 0);
    assert_memory_equal(got, want, 32);
    /* A NULL path is "". */
    r.path = NULL;
    SHA256((const unsigned char *)"HTTPS://API.example.com.:443", 28, want);
    assert_int_equal(sworn_resource_raw_sha256(&r, got), 0);
    assert_memory_equal(got, want, 32);
    r.host = NULL;
    assert_int_equal(sworn_resource_raw_sha256(&r, got), -1);
    assert_int_equal(sworn_resource_raw_sha256(NULL, got), -1);
}

/* --- through the real policy and vault ---------------------------------------------------- */

static int group_setup(void **state)
{
    (void)state;
    sworn_pfix_mkdir("resource");
    return 0;
}

static void policy_refused(const char *text, const char *want)
{
    char *path = sworn_pfix_put("policy.yaml", text);
    struct sworn_policy *p = NULL;

    if (sworn_policy_load_file(path, &p) == 0)
        fail_msg("policy accepted:\n%s", text);
    if (strstr(sworn_err_msg(), want) == NULL)
        fail_msg("error \"%s\" lacks \"%s\"", sworn_err_msg(), want);
    free(path);
}

static struct sworn_vault *load_vault(const char *text)
{
    char *path = sworn_pfix_put("vault.json", text);
    struct sworn_vault *v = NULL;

    assert_int_equal(chmod(path, 0600), 0);
    if (sworn_vault_load(path, &v) != 0)
        fail_msg("vault refused: %s", sworn_err_msg());
    free(path);
    return v;
}

static void vault_refused(const char *dest, const char *want)
{
    char text[2048], *path;
    struct sworn_vault *v = NULL;

    snprintf(text, sizeof(text),
             "{\"version\": 1, \"credentials\": [{\"id\": \"c\", \"symbolic\": \"" SYM_A "\", "
             "\"value\": \"V\", \"header\": \"x\", \"principals\": [\"*\"], "
             "\"destinations\": [%s]}]}",
             dest);
    path = sworn_pfix_put("vault.json", text);
    assert_int_equal(chmod(path, 0600), 0);
    if (sworn_vault_load(path, &v) == 0)
        fail_msg("vault accepted: %s", dest);
    if (strstr(sworn_err_msg(), want) == NULL)
        fail_msg("error \"%s\" lacks \"%s\"", sworn_err_msg(), want);
    free(path);
}

/* GET scheme://host:port path from agent. */
static void mkreq(struct sworn_pfix_req *q, const char *scheme, const char *host, uint32_t port,
                  const char *path)
{
    sworn_pfix_req_init(q, "agent", scheme, host, port, path);
    q->ctx.method = (char *)"GET";
}

/* The policy's effect and rule for GET scheme://host:port path. */
static Sworn__V1__Effect eval(const struct sworn_policy *p, const char *scheme, const char *host,
                              uint32_t port, const char *path, char rule[129])
{
    struct sworn_pfix_req q;
    struct sworn_policy_result res;

    mkreq(&q, scheme, host, port, path);
    if (sworn_policy_eval(p, NULL, &q.r, 0, &res) != 0)
        fail_msg("eval failed on \"%s\": %s", path, sworn_err_msg());
    memcpy(rule, res.rule_id, sizeof(res.rule_id));
    return res.effect;
}

static int released(const struct sworn_vault *v, const char *scheme, const char *host,
                    uint32_t port, const char *path)
{
    struct sworn_pfix_req q;
    struct sworn_vault_release out;
    const char *why = NULL;
    int rc;

    mkreq(&q, scheme, host, port, path);
    memset(&out, 0, sizeof(out));
    rc = sworn_vault_release(v, "api", &q.r, &out, &why);
    assert_true(rc == 0 || rc == 1);
    sworn_vault_release_wipe(&out);
    return rc == 0;
}

static const char dodge_policy[] = "rules:\n"
                                   "  - id: all\n"
                                   "    effect: allow\n"
                                   "  - id: no-admin\n"
                                   "    effect: deny\n"
                                   "    resource: {paths: [\"/admin/*\", \"/admin\"]}\n"
                                   "  - id: no-loopback\n"
                                   "    effect: deny\n"
                                   "    resource: {hosts: [\"127.0.0.1\", \"[::1]\", "
                                   "\"localhost\", \"internal.example\"]}\n";

static const char dodge_vault[] =
    "{\"version\": 1, \"credentials\": [{\"id\": \"api\", \"symbolic\": \"" SYM_A "\", "
    "\"value\": \"Bearer real\", \"header\": \"authorization\", \"principals\": [\"*\"], "
    "\"destinations\": [{\"scheme\": \"https\", \"host\": \"API.Example.com\", "
    "\"path_prefix\": \"/public/\"}]}]}";

/* Spellings of /admin/x (or /admin) that must never be allowed. */
static const char *const admin_spellings[] = {
    "/admin/x",
    "/admin",
    "/admin/",
    "/admin/x?y=1",
    "/admin/x?",
    "/%61dmin/x",
    "/%61%64%6d%69%6e/x",
    "/%61%64%6D%69%6E/%78",
    "/a/../admin/x",
    "/./admin/x",
    "/admin/./x",
    "/public/../admin/x",
    "/public/../../admin/x",
    "/../admin/x",
    "/%2e%2e/admin/x",
    "/%2E%2E/admin/x",
    "/x/%2e%2e/admin/x",
    "/x/.%2e/admin/x",
    "/x/%2e./admin/x",
    "/%2e/admin/x",
    "/admin/%2e/x",
    "/admin%2fx",
    "/admin%2Fx",
    "/x/..%2fadmin/x",
    "/x%2f..%2fadmin/x",
    "/admin\\x",
    "/x\\..\\admin/x",
    "/admin%5cx",
    "/x/..%5cadmin/x",
    "/admin%252fx",
    "/x/%252e%252e/admin/x",
    "/x/%25%32%65%25%32%65/admin/x",
    "/admin%25%32%66x",
    "/admin%c0%afx",
    "/x/%c0%ae%c0%ae/admin/x",
    "/admin%e0%80%afx",
    "/x%c0%af..%c0%afadmin/x",
    "/admin%00/x",
    "/admin;/x",
    "/admin;jsessionid=1/x",
    "/x/..;/admin/x",
    "/admin/x;y",
    "/admin/x#y",
    "//admin/x",
    "/admin//x",
    "///admin/x",
    "/x//../admin/x",
    "/admin/x%00",
    "/x/%ef%bc%8e%ef%bc%8e/admin/x",
    "/admin%ef%bc%8fx",
    "/x%ef%bc%8f..%ef%bc%8fadmin/x",
    "/admin%e2%88%95x",
    "/admin%u002fx",
    "/admin%25252fx",
    "/x/%25252e%25252e/admin/x",
};

/* Hosts that name a denied host (or one of its aliases) in another spelling. */
static const char *const loopback_spellings[] = {
    "127.0.0.1",
    "127.0.0.1.",
    "0177.0.0.1",
    "0x7f.0.0.1",
    "0x7F.0.0.1",
    "0x7f.1",
    "127.1",
    "127.0.1",
    "2130706433",
    "0x7f000001",
    "017700000001",
    "127.000.000.001",
    "0.0.0.0",
    "[::1]",
    "::1",
    "[0:0:0:0:0:0:0:1]",
    "[0000::0001]",
    "[::]",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[::ffff:7f00:0001]",
    "::ffff:127.0.0.1",
    "[0:0:0:0:0:ffff:7f00:1]",
    "[::FFFF:127.0.0.1]",
    "[::ffff:0.0.0.0]",
    "[::ffff:127.1]",
    "[::ffff:127.0.0.1%25lo]",
    "[::ffff:0:7f00:1]",
    "[::127.0.0.1]",
    "[::7f00:1]",
    "[::1%25lo]",
    "localhost",
    "LOCALHOST",
    "localhost.",
    "Internal.Example",
    "internal.example.",
    "INTERNAL.EXAMPLE.",
};

static void test_no_dodge_policy(void **state)
{
    struct sworn_policy *p = sworn_pfix_load(dodge_policy);
    char rule[129];

    (void)state;
    /* The controls: allowed elsewhere, denied by the rule where it applies. */
    assert_int_equal(eval(p, "https", "x.example", 443, "/public/x", rule),
                     SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_int_equal(eval(p, "https", "x.example", 443, "/admin/x", rule),
                     SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(rule, "no-admin");
    /* Spellings of "/admin/x/" have the verdict of "/admin/x/" itself, which the pattern
     * "/admin/" "*" does not name: a deny of the whole tree is written with "**". */
    {
        Sworn__V1__Effect want = eval(p, "https", "x.example", 443, "/admin/x/", rule);

        assert_int_equal(eval(p, "https", "x.example", 443, "/admin/x/.", rule), want);
        assert_int_equal(eval(p, "https", "x.example", 443, "/admin/x/y/..", rule), want);
        assert_int_equal(eval(p, "https", "x.example", 443, "/admin/x/%2e", rule), want);
    }
    /* "/Admin/x" is another resource (paths are case-sensitive): the rule does not name it. */
    assert_int_equal(eval(p, "https", "x.example", 443, "/Admin/x", rule),
                     SWORN__V1__EFFECT__EFFECT_ALLOW);
    for (size_t i = 0; i < sizeof(admin_spellings) / sizeof(admin_spellings[0]); i++) {
        Sworn__V1__Effect e = eval(p, "https", "x.example", 443, admin_spellings[i], rule);

        if (e != SWORN__V1__EFFECT__EFFECT_DENY)
            fail_msg("\"%s\" dodged the deny (rule %s)", admin_spellings[i], rule);
        /* Denied by the rule (the canonical form is /admin...) or refused before any rule. */
        assert_true(strcmp(rule, "no-admin") == 0 || strcmp(rule, "") == 0);
    }
    for (size_t i = 0; i < sizeof(loopback_spellings) / sizeof(loopback_spellings[0]); i++) {
        Sworn__V1__Effect e = eval(p, "http", loopback_spellings[i], 80, "/", rule);

        if (e != SWORN__V1__EFFECT__EFFECT_DENY)
            fail_msg("host \"%s\" dodged the deny (rule %s)", loopback_spellings[i], rule);
        assert_true(strcmp(rule, "no-loopback") == 0 || strcmp(rule, "") == 0);
    }
    /* Schemes in another case are the same scheme, and unknown ones are refused. */
    assert_int_equal(eval(p, "HTTP", "LocalHost", 80, "/", rule), SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(rule, "no-loopback");
    assert_int_equal(eval(p, "gopher", "x.example", 70, "/", rule), SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(rule, "");
    sworn_policy_free(p);
}

static void test_refusal_reason(void **state)
{
    struct sworn_policy *p = sworn_pfix_load(dodge_policy);
    struct sworn_policy_result res;
    struct sworn_pfix_req q;

    (void)state;
    mkreq(&q, "https", "x.example", 443, "/admin%2fx");
    assert_int_equal(sworn_policy_eval(p, NULL, &q.r, 0, &res), 0);
    assert_int_equal(res.effect, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(res.rule_id, "");
    assert_string_equal(res.reason, "the resource is refused: an encoded '/' (%2F) in the path; "
                                    "denied before any rule");
    sworn_policy_free(p);
}

static void test_no_dodge_vault(void **state)
{
    struct sworn_vault *v = load_vault(dodge_vault);
    static const char *const inside[] = {"/public/",       "/public/x",   "/public/./x",
                                         "/public/a/../x", "/%70ublic/x", "/public/x?a=/../b",
                                         "/x/../public/y"};
    static const char *const other_hosts[] = {"api.example.com.evil.example",
                                              "evil.example",
                                              "xapi.example.com",
                                              "api.example.co",
                                              "example.com",
                                              "api-example.com",
                                              "api.example.com@evil.example",
                                              "evil.example#api.example.com",
                                              "api.example.com%2eevil.example",
                                              "api.example.com:443",
                                              "api.example.com..",
                                              "api.example.com/x",
                                              "a.api.example.com"};

    (void)state;
    for (size_t i = 0; i < sizeof(inside) / sizeof(inside[0]); i++)
        if (!released(v, "https", "api.example.com", 443, inside[i]))
            fail_msg("\"%s\" is inside /public/ but was not released", inside[i]);
    assert_true(released(v, "HTTPS", "API.EXAMPLE.COM.", 443, "/public/x"));
    /* No spelling of a path outside /public/ gets the credential. */
    for (size_t i = 0; i < sizeof(admin_spellings) / sizeof(admin_spellings[0]); i++)
        if (released(v, "https", "api.example.com", 443, admin_spellings[i]))
            fail_msg("credential released for \"%s\"", admin_spellings[i]);
    static const char *const outside[] = {"/public",
                                          "/publicx/y",
                                          "/public/../x",
                                          "/public/%2e%2e/x",
                                          "/public/.%2E/x",
                                          "/public%2f../x",
                                          "/public/..%2fx",
                                          "/public/..\\x",
                                          "/public/..%5cx",
                                          "/public/%252e%252e/x",
                                          "/public/%c0%ae%c0%ae/x",
                                          "/public;/../x",
                                          "/public/..;/x",
                                          "//public/x",
                                          "/public//x",
                                          "/PUBLIC/x",
                                          "/x?/public/",
                                          "",
                                          "/public%00/x"};
    for (size_t i = 0; i < sizeof(outside) / sizeof(outside[0]); i++)
        if (released(v, "https", "api.example.com", 443, outside[i]))
            fail_msg("credential released for \"%s\"", outside[i]);
    for (size_t i = 0; i < sizeof(other_hosts) / sizeof(other_hosts[0]); i++)
        if (released(v, "https", other_hosts[i], 443, "/public/x"))
            fail_msg("credential released for host \"%s\"", other_hosts[i]);
    assert_false(released(v, "http", "api.example.com", 443, "/public/x"));
    assert_false(released(v, "wss", "api.example.com", 443, "/public/x"));
    assert_false(released(v, "https", "api.example.com", 80, "/public/x"));
    sworn_vault_free(v);
}

static void test_load_refusals(void **state)
{
    struct sworn_policy *p;
    struct sworn_vault *v;

    (void)state;
    /* Host patterns that could never match a canonical host. */
    policy_refused("rules:\n  - id: a\n    effect: deny\n    resource: {hosts: [\"0177.0.0.1\"]}\n",
                   "bad host pattern: an IPv4 address not written as a dotted quad");
    policy_refused("rules:\n  - id: a\n    effect: deny\n    resource: {hosts: [\"127.1\"]}\n",
                   "dotted quad");
    policy_refused("rules:\n  - id: a\n    effect: deny\n    resource: {hosts: [\"a_b.x\"]}\n",
                   "bad host pattern: a character other than");
    policy_refused("rules:\n  - id: a\n    effect: deny\n    resource: {hosts: [\"*.a_b\"]}\n",
                   "bad host pattern: a character other than");
    policy_refused(
        "rules:\n  - id: a\n    effect: deny\n    resource: {hosts: [\"[::ffff:0:1.2.3.4]\"]}\n",
        "IPv4-translated");
    policy_refused(
        "rules:\n  - id: a\n    effect: deny\n    resource: {hosts: [\"[::ffff:0.0.0.0]\"]}\n",
        "unspecified");
    /* Path patterns that could never match a canonical path. */
    static const char *const bad_paths[][2] = {{"/admin%2F*", "%2F"},
                                               {"/a/%7E/**", "unreserved"},
                                               {"/admin%2f*", "upper-case"},
                                               {"/a/%3b", "two upper-case hex"},
                                               {"/a/../b/**", "segment"},
                                               {"/a/./b", "segment"},
                                               {"/a/..", "segment"},
                                               {"//a/**", "\"//\""},
                                               {"/a//**", "\"//\""},
                                               {"/a\\\\b", "'\\'"},
                                               {"/a;b/**", "';'"},
                                               {"/a%252F", "double"},
                                               {"/a%00", "%00"},
                                               {"/a%", "two upper-case hex"},
                                               {"/a%0A", "control"}};
    for (size_t i = 0; i < sizeof(bad_paths) / sizeof(bad_paths[0]); i++) {
        char text[512];

        snprintf(text, sizeof(text),
                 "rules:\n  - id: a\n    effect: deny\n    resource: {paths: [\"%s\"]}\n",
                 bad_paths[i][0]);
        policy_refused(text, "is not in canonical form");
        policy_refused(text, bad_paths[i][1]);
    }
    p = sworn_pfix_load("rules:\n  - id: a\n    effect: deny\n    resource: {paths: "
                        "[\"/a%20b/**\", \"/a/.../**\", \"/a/.x/..y\", \"/%C3%A9/*\", \"/a/\"]}\n");
    sworn_policy_free(p);
    /* Vault destinations that could never match a canonical resource. */
    vault_refused("{\"scheme\": \"https\", \"host\": \"0x7f.1\"}", "dotted quad");
    vault_refused("{\"scheme\": \"https\", \"host\": \"[::ffff:0:1.2.3.4]\"}", "IPv4-translated");
    vault_refused("{\"scheme\": \"https\", \"host\": \"[::ffff:0:0]\"}", "unspecified");
    vault_refused("{\"scheme\": \"https\", \"host\": \"a_b.example\"}", "host must be");
    vault_refused("{\"scheme\": \"https\", \"host\": \"*.127.0.0.1\"}", "wildcard host");
    vault_refused("{\"scheme\": \"https\", \"host\": \"h.example\", \"path_prefix\": \"/a%2fb\"}",
                  "path_prefix is refused: an encoded '/'");
    vault_refused("{\"scheme\": \"https\", \"host\": \"h.example\", \"path_prefix\": \"/a//b\"}",
                  "path_prefix is refused");
    /* Accepted ones are stored canonical, and match canonical requests. */
    v = load_vault("{\"version\": 1, \"credentials\": [{\"id\": \"api\", \"symbolic\": "
                   "\"" SYM_A "\", \"value\": \"V\", \"header\": \"x\", \"principals\": "
                   "[\"*\"], \"destinations\": [{\"scheme\": \"https\", \"host\": "
                   "\"[0:0::0:1]\", \"port\": 8443, \"path_prefix\": \"/%7euser/./x\"}]}]}");
    assert_true(released(v, "https", "::1", 8443, "/~user/x/y"));
    assert_true(released(v, "https", "[::1]", 8443, "/%7Euser/x"));
    assert_false(released(v, "https", "[::1]", 8443, "/~user/xy"));
    sworn_vault_free(v);
    /* An IPv4-mapped destination is its IPv4 address, and so is an IPv4-mapped request host. */
    v = load_vault("{\"version\": 1, \"credentials\": [{\"id\": \"api\", \"symbolic\": "
                   "\"" SYM_A "\", \"value\": \"V\", \"header\": \"x\", \"principals\": "
                   "[\"*\"], \"destinations\": [{\"scheme\": \"https\", \"host\": "
                   "\"[::ffff:10.0.0.1]\"}, {\"scheme\": \"https\", \"host\": \"10.0.0.2\"}]}]}");
    assert_true(released(v, "https", "10.0.0.1", 443, "/"));
    assert_true(released(v, "https", "::ffff:a00:1", 443, "/"));
    assert_true(released(v, "https", "[::ffff:10.0.0.2]", 443, "/"));
    assert_true(released(v, "https", "[0:0:0:0:0:ffff:a00:2]", 443, "/"));
    assert_false(released(v, "https", "[::ffff:0:a00:2]", 443, "/"));
    assert_false(released(v, "https", "[::a00:2]", 443, "/"));
    assert_false(released(v, "https", "10.0.0.3", 443, "/"));
    sworn_vault_free(v);
}

/*
 * Scheme tcp through the real policy and vault: an allow or escalate rule without `schemes`
 * never matches it (a rule written for http must never open raw TCP), one naming tcp does; a
 * deny rule without `schemes` matches it (a deny of a host covers its raw ports), a deny with
 * `paths` does not (a tunnel has no path); the vault refuses a tcp destination at load and
 * releases nothing for a tcp resource, so an allow with a credential for tcp is a deny.
 */
static void test_tcp(void **state)
{
    struct sworn_policy *p;
    struct sworn_vault *v;
    struct sworn_pfix_req q;
    struct sworn_policy_result res;
    char rule[129];

    (void)state;
    p = sworn_pfix_load("rules:\n"
                        "  - {id: web, effect: allow}\n"
                        "  - {id: ask, effect: escalate, resource: {hosts: [ask.example]}}\n");
    assert_int_equal(eval(p, "tcp", "db.example", 5432, "", rule), SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(rule, "");
    assert_int_equal(eval(p, "tcp", "ask.example", 22, "", rule), SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(rule, "");
    assert_int_equal(eval(p, "https", "db.example", 443, "/", rule),
                     SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_int_equal(eval(p, "https", "ask.example", 443, "/", rule),
                     SWORN__V1__EFFECT__EFFECT_ESCALATE);
    sworn_policy_free(p);
    p = sworn_pfix_load("rules:\n"
                        "  - id: no-evil\n"
                        "    effect: deny\n"
                        "    resource: {hosts: [evil.example]}\n"
                        "  - id: no-admin\n"
                        "    effect: deny\n"
                        "    resource: {paths: [\"/**\"], hosts: [admin.example]}\n"
                        "  - id: db\n"
                        "    effect: allow\n"
                        "    resource: {schemes: [TCP], ports: [5432]}\n"
                        "  - id: ask\n"
                        "    effect: escalate\n"
                        "    resource: {schemes: [tcp], hosts: [ask.example]}\n");
    assert_int_equal(eval(p, "tcp", "db.example", 5432, "", rule), SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_string_equal(rule, "db");
    assert_int_equal(eval(p, "TCP", "DB.example.", 5432, "", rule),
                     SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_int_equal(eval(p, "tcp", "db.example", 5433, "", rule), SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(rule, "");
    assert_int_equal(eval(p, "tcp", "ask.example", 22, "", rule),
                     SWORN__V1__EFFECT__EFFECT_ESCALATE);
    assert_int_equal(eval(p, "tcp", "evil.example", 5432, "", rule),
                     SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(rule, "no-evil");
    assert_int_equal(eval(p, "tcp", "admin.example", 5432, "", rule),
                     SWORN__V1__EFFECT__EFFECT_ALLOW); /* a path rule is about HTTP paths */
    assert_int_equal(eval(p, "https", "db.example", 5432, "/", rule),
                     SWORN__V1__EFFECT__EFFECT_DENY); /* schemes: [tcp] is tcp only */
    /* A tcp resource with a path has no canonical form: refused before any rule. */
    mkreq(&q, "tcp", "db.example", 5432, "/x");
    assert_int_equal(sworn_policy_eval(p, NULL, &q.r, 0, &res), 0);
    assert_int_equal(res.effect, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(res.rule_id, "");
    assert_non_null(strstr(res.reason, "the resource is refused: a tcp resource (a raw tunnel) "
                                       "has no path"));
    sworn_policy_free(p);
    /* The vault: no tcp destination, in any case ... */
    vault_refused("{\"scheme\": \"tcp\", \"host\": \"db.example\", \"port\": 5432}",
                  "never injected into a raw TCP tunnel");
    vault_refused("{\"scheme\": \"TCP\", \"host\": \"db.example\", \"port\": 5432}",
                  "never injected into a raw TCP tunnel");
    /* ... and nothing released for a tcp resource, even where an http destination matches. */
    v = load_vault("{\"version\": 1, \"credentials\": [{\"id\": \"api\", \"symbolic\": "
                   "\"" SYM_A "\", \"value\": \"V\", \"header\": \"x\", \"principals\": "
                   "[\"*\"], \"destinations\": [{\"scheme\": \"http\", \"host\": "
                   "\"db.example\", \"port\": 5432}]}]}");
    assert_true(released(v, "http", "db.example", 5432, "/"));
    assert_false(released(v, "tcp", "db.example", 5432, ""));
    {
        struct sworn_vault_release out;
        const char *why = NULL;

        mkreq(&q, "tcp", "db.example", 5432, "");
        memset(&out, 0, sizeof(out));
        assert_int_equal(sworn_vault_release(v, "api", &q.r, &out, &why), 1);
        assert_non_null(strstr(why, "raw TCP tunnel"));
        assert_null(out.value);
    }
    sworn_vault_free(v);
}

/* Path parameters: the canonical form keeps them, the bare path drops them, the policy refuses
 * them unless a rule permits them, and the vault judges its prefix on the bare path. */
static void test_path_params(void **state)
{
    static const char *const rows[][2] = {
        {"/a/b", "/a/b"},
        {"/app/x;jsessionid=1", "/app/x"},
        {"/api/admin;v=1/x", "/api/admin/x"},
        {"/a;b;c/d;e=f?q;r=s", "/a/d"},
        {"/a;", "/a"},
        {"/a;x/", "/a/"},
        {"/a;x/b;y/..", "/a/"},
    };
    static struct sworn_resource c;
    struct sworn_policy *p;
    struct sworn_vault *v;
    char rule[129];
    const char *why;

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        Sworn__V1__Resource r = SWORN__V1__RESOURCE__INIT;

        r.scheme = (char *)"https";
        r.host = (char *)"h.example";
        r.port = 443;
        r.path = (char *)rows[i][0];
        if (sworn_resource_canon(&r, &c, &why) != 0)
            fail_msg("\"%s\" refused: %s", rows[i][0], why);
        if (strcmp(c.bare, rows[i][1]) != 0)
            fail_msg("\"%s\": bare \"%s\", want \"%s\"", rows[i][0], c.bare, rows[i][1]);
        assert_int_equal(c.bare_len, strlen(c.bare));
        assert_int_equal(c.path_params, memchr(c.path, ';', c.path_len) != NULL);
        assert_int_equal(c.path_params, c.bare_len != c.path_len);
    }

    /* No rule permits them: refused before any rule, even where a deny would apply. */
    p = sworn_pfix_load("rules:\n  - id: all\n    effect: allow\n"
                        "  - id: no-admin\n    effect: deny\n"
                        "    resource: {paths: [\"/admin/**\"]}\n");
    assert_int_equal(eval(p, "https", "x.example", 443, "/app/x;jsessionid=1", rule),
                     SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(rule, "");
    assert_int_equal(eval(p, "https", "x.example", 443, "/app/x?a;b", rule),
                     SWORN__V1__EFFECT__EFFECT_ALLOW); /* ';' in the query is not a parameter */
    sworn_policy_free(p);

    /* One rule permits them: others do not match, denies always do (on the bare path), an
     * escalation without them denies instead of falling through to an allow. */
    p = sworn_pfix_load("rules:\n"
                        "  - id: app\n    effect: allow\n"
                        "    resource: {paths: [\"/app/**\"], path_parameters: true}\n"
                        "  - id: plain\n    effect: allow\n"
                        "    resource: {paths: [\"/plain/**\"], path_parameters: false}\n"
                        "  - id: no-admin\n    effect: deny\n"
                        "    resource: {paths: [\"/app/admin/**\"]}\n"
                        "  - id: ask\n    effect: escalate\n"
                        "    resource: {paths: [\"/app/pay/**\"]}\n"
                        "  - id: no-exe\n    effect: deny\n"
                        "    resource: {paths: [\"/app/*.exe\"]}\n");
    assert_int_equal(eval(p, "https", "x.example", 443, "/app/x;jsessionid=1", rule),
                     SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_string_equal(rule, "app");
    assert_int_equal(eval(p, "https", "x.example", 443, "/plain/x;jsessionid=1", rule),
                     SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(rule, "");
    assert_int_equal(eval(p, "https", "x.example", 443, "/plain/x", rule),
                     SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_int_equal(eval(p, "https", "x.example", 443, "/app/admin;v=1/x", rule),
                     SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(rule, "no-admin");
    assert_int_equal(eval(p, "https", "x.example", 443, "/app/pay;x/1", rule),
                     SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(rule, "ask");
    assert_int_equal(eval(p, "https", "x.example", 443, "/app/pay/1", rule),
                     SWORN__V1__EFFECT__EFFECT_ESCALATE);
    assert_int_equal(eval(p, "https", "x.example", 443, "/app/..;/admin/x", rule),
                     SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(rule, "");
    /* An allow holds for both readings (nginx: the segment "app;v=1" is not "app"), a deny
     * applies to either. */
    assert_int_equal(eval(p, "https", "x.example", 443, "/app;v=1/x", rule),
                     SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(rule, "");
    assert_int_equal(eval(p, "https", "x.example", 443, "/app;v=1/admin/x", rule),
                     SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(rule, "no-admin");
    assert_int_equal(eval(p, "https", "x.example", 443, "/app/x.exe;a", rule),
                     SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(rule, "no-exe");
    assert_int_equal(eval(p, "https", "x.example", 443, "/app/x;a.exe", rule),
                     SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(rule, "no-exe");
    assert_int_equal(eval(p, "https", "x.example", 443, "/app/x;a.exe/y", rule),
                     SWORN__V1__EFFECT__EFFECT_ALLOW);
    sworn_policy_free(p);

    /* An escalation that does not permit them denies, also after one that does. */
    p = sworn_pfix_load("rules:\n"
                        "  - id: e1\n    effect: escalate\n"
                        "    resource: {paths: [\"/pay/**\"], path_parameters: true}\n"
                        "  - id: e2\n    effect: escalate\n"
                        "    resource: {paths: [\"/pay/big/**\"]}\n"
                        "  - id: all\n    effect: allow\n"
                        "    resource: {path_parameters: true}\n");
    assert_int_equal(eval(p, "https", "x.example", 443, "/pay/big;x/1", rule),
                     SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(rule, "e2");
    assert_int_equal(eval(p, "https", "x.example", 443, "/pay/small;x/1", rule),
                     SWORN__V1__EFFECT__EFFECT_ESCALATE);
    assert_string_equal(rule, "e1");
    assert_int_equal(eval(p, "https", "x.example", 443, "/pay/big/1", rule),
                     SWORN__V1__EFFECT__EFFECT_ESCALATE);
    assert_string_equal(rule, "e1");
    assert_int_equal(eval(p, "https", "x.example", 443, "/other;x", rule),
                     SWORN__V1__EFFECT__EFFECT_ALLOW);
    sworn_policy_free(p);

    /* At load: only booleans, and not on a deny rule. */
    policy_refused("rules:\n  - id: a\n    effect: allow\n    resource: {path_parameters: yes}\n",
                   "");
    policy_refused("rules:\n  - id: a\n    effect: deny\n    resource: {path_parameters: true}\n",
                   "only for allow and escalate rules");
    p = sworn_pfix_load("rules:\n  - id: a\n    effect: deny\n    resource: {path_parameters: "
                        "false}\n");
    sworn_policy_free(p);

    /* The vault: its prefix is matched on the bare path, and a prefix with ';' is refused. */
    v = load_vault("{\"version\": 1, \"credentials\": [{\"id\": \"api\", \"symbolic\": "
                   "\"" SYM_A "\", \"value\": \"V\", \"header\": \"x\", \"principals\": "
                   "[\"*\"], \"destinations\": [{\"scheme\": \"https\", \"host\": "
                   "\"h.example\", \"path_prefix\": \"/public\"}]}]}");
    assert_true(released(v, "https", "h.example", 443, "/public/y;x"));
    assert_true(released(v, "https", "h.example", 443, "/public/a;b/c;d=e"));
    /* Both readings must be inside: nginx reads "/public;x/y" as the segment "public;x". */
    assert_false(released(v, "https", "h.example", 443, "/public;x/y"));
    assert_false(released(v, "https", "h.example", 443, "/public;x"));
    assert_false(released(v, "https", "h.example", 443, "/publicx;/y"));
    assert_false(released(v, "https", "h.example", 443, "/public/..;/admin"));
    assert_false(released(v, "https", "h.example", 443, "/public;/../admin"));
    sworn_vault_free(v);
    vault_refused("{\"scheme\": \"https\", \"host\": \"h.example\", \"path_prefix\": "
                  "\"/a;b\"}",
                  "path_prefix is refused: a ';'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hosts),           cmocka_unit_test(test_host_lengths),
        cmocka_unit_test(test_paths),           cmocka_unit_test(test_path_lengths),
        cmocka_unit_test(test_resources),       cmocka_unit_test(test_raw_digest),
        cmocka_unit_test(test_no_dodge_policy), cmocka_unit_test(test_refusal_reason),
        cmocka_unit_test(test_no_dodge_vault),  cmocka_unit_test(test_load_refusals),
        cmocka_unit_test(test_path_params),     cmocka_unit_test(test_tcp),
        cmocka_unit_test(test_canonicalise),
    };

    return cmocka_run_group_tests(tests, group_setup, sworn_pfix_teardown);
}

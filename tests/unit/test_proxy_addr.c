/*
 * test_proxy_addr.c -- unit tests of proxy/p_addr.c (the upstream addresses sworn-proxy refuses
 * after an allow: the DNS rebinding defence).
 *
 * Every class of the table in p_addr.h is checked on its network's first and last address and
 * on the neighbours just outside it, so an off-by-one prefix shows; the embedding IPv6 forms
 * (mapped, IPv4-compatible, NAT64, 6to4, Teredo) take the verdict of the IPv4 address inside;
 * sworn_addr_permitted lets a non-public address through only inside a listed network (a mapped
 * address as its IPv4 address) and never lets an unknown family through; the CIDR parser accepts
 * the documented forms into the exact bytes and refuses each malformed one with its sentence,
 * leaving *out untouched; the text form is inet_ntop's, bracketed for IPv6, and never overflows.
 * The struct's layout is checked against the configuration's (p_config.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "err.h"
#include "p_addr.h"
#include "p_config.h"

/* The configuration's networks are handed to sworn_addr_permitted as they are. */
_Static_assert(sizeof(struct sworn_addr_cidr) == sizeof(struct sworn_pconf_cidr), "layout");
_Static_assert(offsetof(struct sworn_addr_cidr, family) ==
                   offsetof(struct sworn_pconf_cidr, family),
               "family");
_Static_assert(offsetof(struct sworn_addr_cidr, addr) == offsetof(struct sworn_pconf_cidr, addr),
               "addr");
_Static_assert(offsetof(struct sworn_addr_cidr, prefix) ==
                   offsetof(struct sworn_pconf_cidr, prefix),
               "prefix");

/* A socket address from text (either family); fails the test when the text is not an address. */
static const struct sockaddr *sa_of(const char *text, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof(*ss));
    if (strchr(text, ':') != NULL) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(443);
        assert_int_equal(inet_pton(AF_INET6, text, &in6->sin6_addr), 1);
    } else {
        struct sockaddr_in *in = (struct sockaddr_in *)ss;

        in->sin_family = AF_INET;
        in->sin_port = htons(80);
        assert_int_equal(inet_pton(AF_INET, text, &in->sin_addr), 1);
    }
    return (const struct sockaddr *)ss;
}

static enum sworn_addr_class class_of(const char *text)
{
    struct sockaddr_storage ss;

    return sworn_addr_classify(sa_of(text, &ss));
}

struct class_case {
    const char *addr;
    enum sworn_addr_class cls;
};

#define PUB SWORN_ADDR_PUBLIC
#define LO SWORN_ADDR_LOOPBACK
#define PRIV SWORN_ADDR_PRIVATE
#define LL SWORN_ADDR_LINK_LOCAL
#define META SWORN_ADDR_METADATA
#define SHARED SWORN_ADDR_SHARED
#define UNSPEC SWORN_ADDR_UNSPECIFIED
#define MCAST SWORN_ADDR_MULTICAST
#define RSVD SWORN_ADDR_RESERVED

static const struct class_case v4_cases[] = {
    /* unspecified 0/8, loopback 127/8 */
    {"0.0.0.0", UNSPEC},
    {"0.255.255.255", UNSPEC},
    {"1.0.0.0", PUB},
    {"126.255.255.255", PUB},
    {"127.0.0.0", LO},
    {"127.0.0.1", LO},
    {"127.255.255.255", LO},
    {"128.0.0.0", PUB},
    /* RFC 1918 */
    {"9.255.255.255", PUB},
    {"10.0.0.0", PRIV},
    {"10.255.255.255", PRIV},
    {"11.0.0.0", PUB},
    {"172.15.255.255", PUB},
    {"172.16.0.0", PRIV},
    {"172.31.255.255", PRIV},
    {"172.32.0.0", PUB},
    {"192.167.255.255", PUB},
    {"192.168.0.0", PRIV},
    {"192.168.255.255", PRIV},
    {"192.169.0.0", PUB},
    /* link-local and the metadata addresses inside it */
    {"169.253.255.255", PUB},
    {"169.254.0.0", LL},
    {"169.254.169.253", LL},
    {"169.254.169.254", META},
    {"169.254.169.255", LL},
    {"169.254.170.2", META},
    {"169.254.170.23", META},
    {"169.254.0.23", META},
    {"169.254.255.255", LL},
    {"169.255.0.0", PUB},
    /* CGNAT and Alibaba's metadata inside it */
    {"100.63.255.255", PUB},
    {"100.64.0.0", SHARED},
    {"100.100.100.200", META},
    {"100.100.100.201", SHARED},
    {"100.127.255.255", SHARED},
    {"100.128.0.0", PUB},
    /* Azure's WireServer: a public address that is metadata */
    {"168.63.129.16", META},
    {"168.63.129.17", PUB},
    /* multicast, reserved, broadcast */
    {"223.255.255.255", PUB},
    {"224.0.0.0", MCAST},
    {"224.0.0.1", MCAST},
    {"239.255.255.255", MCAST},
    {"240.0.0.0", RSVD},
    {"255.255.255.254", RSVD},
    {"255.255.255.255", RSVD},
    /* IETF protocol assignments (Oracle's metadata inside), documentation, benchmarking */
    {"191.255.255.255", PUB},
    {"192.0.0.0", RSVD},
    {"192.0.0.192", META},
    {"192.0.0.255", RSVD},
    {"192.0.1.0", PUB},
    {"192.0.2.0", RSVD},
    {"192.0.2.255", RSVD},
    {"192.0.3.0", PUB},
    {"198.51.99.255", PUB},
    {"198.51.100.7", RSVD},
    {"198.51.101.0", PUB},
    {"203.0.112.255", PUB},
    {"203.0.113.1", RSVD},
    {"203.0.114.0", PUB},
    {"198.17.255.255", PUB},
    {"198.18.0.0", RSVD},
    {"198.19.255.255", RSVD},
    {"198.20.0.0", PUB},
    {"192.88.99.1", RSVD},
    {"192.88.100.0", PUB},
    /* ordinary public addresses */
    {"8.8.8.8", PUB},
    {"1.1.1.1", PUB},
    {"93.184.216.34", PUB},
};

static const struct class_case v6_cases[] = {
    {"::", UNSPEC},
    {"::1", LO},
    {"::2", RSVD},
    /* IPv4-mapped: the embedded address decides */
    {"::ffff:127.0.0.1", LO},
    {"::ffff:10.1.2.3", PRIV},
    {"::ffff:169.254.169.254", META},
    {"::ffff:169.254.1.1", LL},
    {"::ffff:100.64.0.1", SHARED},
    {"::ffff:0.0.0.0", UNSPEC},
    {"::ffff:224.0.0.1", MCAST},
    {"::ffff:192.0.2.1", RSVD},
    {"::ffff:8.8.8.8", PUB},
    {"::fffe:8.8.8.8", RSVD},   /* not the mapped prefix: outside 2000::/3 */
    {"::ffff:0:8.8.8.8", RSVD}, /* IPv4-translated (RFC 2765), not mapped */
    /* IPv4-compatible */
    {"::127.0.0.1", RSVD},
    {"::8.8.8.8", RSVD},
    /* NAT64 */
    {"64:ff9b::7f00:1", RSVD},
    {"64:ff9b::a9fe:a9fe", RSVD},
    {"64:ff9b::c0a8:1", RSVD},
    {"64:ff9b::808:808", PUB},
    {"64:ff9b:1::1", RSVD},
    {"64:ff9b:1:ffff::808:808", RSVD},
    /* metadata, unique local, site-local, link-local, multicast */
    {"fd00:ec2::254", META},
    {"fd00:ec2::23", META},
    {"fd00:ec2::253", PRIV},
    {"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", RSVD},
    {"fc00::", PRIV},
    {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", PRIV},
    {"fe00::1", RSVD},
    {"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", RSVD},
    {"fe80::", LL},
    {"fe80::1", LL},
    {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", LL},
    {"fec0::1", PRIV},
    {"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", PRIV},
    {"ff00::", MCAST},
    {"ff02::1", MCAST},
    {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", MCAST},
    /* outside 2000::/3 */
    {"1::1", RSVD},
    {"100::1", RSVD},
    {"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", RSVD},
    {"4000::1", RSVD},
    {"5f00::1", RSVD},
    {"e000::1", RSVD},
    /* inside 2000::/3 */
    {"2000::", PUB},
    {"3fff:0fff:ffff:ffff:ffff:ffff:ffff:ffff", RSVD},
    {"3fff:1000::", PUB},
    {"3ffe:ffff::1", PUB},
    {"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", PUB},
    {"2001:db8::", RSVD},
    {"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", RSVD},
    {"2001:db9::", PUB},
    {"2001:2::1", RSVD},
    {"2001:2:0:ffff::1", RSVD},
    {"2001:2:1::", PUB},
    {"2001:3::1", PUB},
    {"2001:10::1", RSVD},
    {"2001:1f:ffff::1", RSVD},
    {"2001:20::1", RSVD},
    {"2001:2f:ffff::1", RSVD},
    {"2001:30::1", PUB},
    /* 6to4 */
    {"2002:7f00:1::1", RSVD},
    {"2002:a00:1::1", RSVD},
    {"2002:a9fe:a9fe::1", RSVD},
    {"2002:808:808::1", PUB},
    /* Teredo: server bytes 4..7, client inverted in 12..15 */
    {"2001:0:808:808::f7f7:f7f7", PUB},
    {"2001:0:a00:1::f7f7:f7f7", RSVD},
    {"2001:0:808:808::80ff:fffe", RSVD},
    {"2001:0:4136:e378:8000:63bf:3fff:fdd2", RSVD}, /* RFC 4380's: client 192.0.2.45 */
    /* ordinary public addresses */
    {"2606:4700:4700::1111", PUB},
    {"2a00:1450:4001:82b::200e", PUB},
    {"2001:4860:4860::8888", PUB},
};

static void check_cases(const struct class_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        enum sworn_addr_class got = class_of(cases[i].addr);

        if (got != cases[i].cls)
            fail_msg("%s: got %s, want %s", cases[i].addr, sworn_addr_class_name(got),
                     sworn_addr_class_name(cases[i].cls));
    }
}

static void test_classify_v4(void **state)
{
    (void)state;
    check_cases(v4_cases, sizeof(v4_cases) / sizeof(v4_cases[0]));
}

static void test_classify_v6(void **state)
{
    (void)state;
    check_cases(v6_cases, sizeof(v6_cases) / sizeof(v6_cases[0]));
}

/* Not an IP address, or no address: reserved, never permitted, whatever is listed. */
static void test_other_family(void **state)
{
    struct sockaddr_un un;
    struct sworn_addr_cidr all[2];
    const char *why = NULL;
    char text[SWORN_ADDR_TEXT_MAX];

    (void)state;
    memset(&un, 0, sizeof(un));
    un.sun_family = AF_UNIX;
    strcpy(un.sun_path, "/run/x.sock");
    assert_int_equal(sworn_addr_parse_cidr("0.0.0.0/0", &all[0], &why), 0);
    assert_int_equal(sworn_addr_parse_cidr("::/0", &all[1], &why), 0);
    assert_int_equal(sworn_addr_classify((const struct sockaddr *)&un), SWORN_ADDR_RESERVED);
    assert_int_equal(sworn_addr_classify(NULL), SWORN_ADDR_RESERVED);
    assert_int_equal(sworn_addr_permitted((const struct sockaddr *)&un, all, 2), 0);
    assert_int_equal(sworn_addr_permitted(NULL, all, 2), 0);
    sworn_addr_format((const struct sockaddr *)&un, text, sizeof(text));
    assert_string_equal(text, "?");
    sworn_addr_format(NULL, text, sizeof(text));
    assert_string_equal(text, "?");
}

static void test_class_names(void **state)
{
    static const char *const want[] = {"public",      "loopback",  "private",
                                       "link-local",  "metadata",  "shared",
                                       "unspecified", "multicast", "reserved"};

    (void)state;
    for (int c = SWORN_ADDR_PUBLIC; c <= SWORN_ADDR_RESERVED; c++)
        assert_string_equal(sworn_addr_class_name((enum sworn_addr_class)c), want[c]);
    assert_string_equal(sworn_addr_class_name((enum sworn_addr_class)99), "reserved");
    assert_string_equal(sworn_addr_class_name((enum sworn_addr_class) - 1), "reserved");
}

static void parse_ok(const char *s, struct sworn_addr_cidr *c)
{
    const char *why = "untouched";

    if (sworn_addr_parse_cidr(s, c, &why) != 0)
        fail_msg("%s refused: %s", s, why);
    assert_string_equal(why, "untouched");
}

static int permitted(const char *addr, const char *const *nets, size_t n)
{
    struct sworn_addr_cidr allow[8];
    struct sockaddr_storage ss;

    assert_true(n <= 8);
    for (size_t i = 0; i < n; i++)
        parse_ok(nets[i], &allow[i]);
    return sworn_addr_permitted(sa_of(addr, &ss), n ? allow : NULL, n);
}

static void test_permitted(void **state)
{
    static const char *const ten[] = {"10.0.0.0/8"};
    static const char *const lo4[] = {"127.0.0.0/8"};
    static const char *const lo6[] = {"::1"};
    static const char *const mapped6[] = {"::ffff:10.0.0.0/104"};
    static const char *const several[] = {"192.168.1.0/24", "fd00::/8", "169.254.169.254"};
    static const char *const all4[] = {"0.0.0.0/0"};
    static const char *const all6[] = {"::/0"};
    struct sockaddr_storage ss;

    (void)state;
    /* Public: always, with or without a list. */
    assert_int_equal(permitted("8.8.8.8", NULL, 0), 1);
    assert_int_equal(permitted("2606:4700:4700::1111", NULL, 0), 1);
    assert_int_equal(permitted("::ffff:8.8.8.8", NULL, 0), 1);
    assert_int_equal(permitted("11.0.0.1", ten, 1), 1);
    /* Internal: never without a list, and a NULL list with n > 0 is no list. */
    for (size_t i = 0; i < sizeof(v4_cases) / sizeof(v4_cases[0]); i++)
        assert_int_equal(permitted(v4_cases[i].addr, NULL, 0), v4_cases[i].cls == PUB);
    for (size_t i = 0; i < sizeof(v6_cases) / sizeof(v6_cases[0]); i++)
        assert_int_equal(permitted(v6_cases[i].addr, NULL, 0), v6_cases[i].cls == PUB);
    assert_int_equal(sworn_addr_permitted(sa_of("10.0.0.1", &ss), NULL, 3), 0);
    /* Inside a listed network, and only there. */
    assert_int_equal(permitted("10.1.2.3", ten, 1), 1);
    assert_int_equal(permitted("10.255.255.255", ten, 1), 1);
    assert_int_equal(permitted("172.16.0.1", ten, 1), 0);
    assert_int_equal(permitted("127.0.0.1", ten, 1), 0);
    assert_int_equal(permitted("127.0.0.1", lo4, 1), 1);
    assert_int_equal(permitted("192.168.1.77", several, 3), 1);
    assert_int_equal(permitted("192.168.2.77", several, 3), 0);
    assert_int_equal(permitted("fd12::1", several, 3), 1);
    assert_int_equal(permitted("fc12::1", several, 3), 0);
    assert_int_equal(permitted("169.254.169.254", several, 3), 1);
    assert_int_equal(permitted("169.254.169.253", several, 3), 0);
    /* A family is matched against networks of its own family. */
    assert_int_equal(permitted("127.0.0.1", lo6, 1), 0);
    assert_int_equal(permitted("::1", lo4, 1), 0);
    assert_int_equal(permitted("::1", lo6, 1), 1);
    assert_int_equal(permitted("::1", all4, 1), 0);
    assert_int_equal(permitted("10.0.0.1", all6, 1), 0);
    assert_int_equal(permitted("10.0.0.1", all4, 1), 1);
    /* A mapped address is its IPv4 address, and also itself against IPv6 networks. */
    assert_int_equal(permitted("::ffff:10.1.2.3", ten, 1), 1);
    assert_int_equal(permitted("::ffff:127.0.0.1", ten, 1), 0);
    assert_int_equal(permitted("::ffff:127.0.0.1", lo4, 1), 1);
    assert_int_equal(permitted("::ffff:10.1.2.3", mapped6, 1), 1);
    assert_int_equal(permitted("::ffff:11.1.2.3", mapped6, 1), 1); /* public anyway */
    assert_int_equal(permitted("::ffff:172.16.0.1", mapped6, 1), 0);
    assert_int_equal(permitted("::ffff:10.1.2.3", all6, 1), 1);
    /* The other embeddings are not their IPv4 address: a NAT64 or 6to4 address of 10.0.0.1
     * reaches whatever the translator's network has there, not a listed network of ours. */
    assert_int_equal(permitted("64:ff9b::a00:1", ten, 1), 0);
    assert_int_equal(permitted("2002:a00:1::1", ten, 1), 0);
    assert_int_equal(permitted("::10.0.0.1", ten, 1), 0);
}

/* An entry that is not of a family or whose prefix is too long never matches. */
static void test_permitted_bad_entries(void **state)
{
    struct sworn_addr_cidr bad[3];
    struct sockaddr_storage ss;

    (void)state;
    memset(bad, 0, sizeof(bad));
    bad[0].family = 5;
    bad[0].prefix = 0;
    bad[1].family = 4;
    bad[1].prefix = 33;
    bad[2].family = 6;
    bad[2].prefix = 129;
    assert_int_equal(sworn_addr_permitted(sa_of("10.0.0.1", &ss), bad, 3), 0);
    assert_int_equal(sworn_addr_permitted(sa_of("fd00::1", &ss), bad, 3), 0);
}

static void test_parse_ok(void **state)
{
    struct sworn_addr_cidr c;
    static const uint8_t ten[16] = {10};
    static const uint8_t lo6[16] = {[15] = 1};
    static const uint8_t mapped[16] = {[10] = 0xff, [11] = 0xff, [12] = 10};
    static const uint8_t ll[16] = {0xfe, 0x80};
    static const uint8_t zero[16];
    static const uint8_t host[16] = {192, 0, 2, 1};

    (void)state;
    parse_ok("10.0.0.0/8", &c);
    assert_int_equal(c.family, 4);
    assert_int_equal(c.prefix, 8);
    assert_memory_equal(c.addr, ten, 16);
    parse_ok("192.0.2.1", &c);
    assert_int_equal(c.family, 4);
    assert_int_equal(c.prefix, 32);
    assert_memory_equal(c.addr, host, 16);
    parse_ok("192.0.2.1/32", &c);
    assert_int_equal(c.prefix, 32);
    parse_ok("0.0.0.0/0", &c);
    assert_int_equal(c.family, 4);
    assert_int_equal(c.prefix, 0);
    assert_memory_equal(c.addr, zero, 16);
    parse_ok("::1/128", &c);
    assert_int_equal(c.family, 6);
    assert_int_equal(c.prefix, 128);
    assert_memory_equal(c.addr, lo6, 16);
    parse_ok("::1", &c);
    assert_int_equal(c.family, 6);
    assert_int_equal(c.prefix, 128);
    parse_ok("::/0", &c);
    assert_int_equal(c.family, 6);
    assert_int_equal(c.prefix, 0);
    parse_ok("fe80::/10", &c);
    assert_int_equal(c.prefix, 10);
    assert_memory_equal(c.addr, ll, 16);
    parse_ok("FE80::/10", &c);
    assert_memory_equal(c.addr, ll, 16);
    parse_ok("::ffff:10.0.0.0/104", &c);
    assert_int_equal(c.family, 6);
    assert_int_equal(c.prefix, 104);
    assert_memory_equal(c.addr, mapped, 16);
    parse_ok("172.16.0.0/12", &c);
    assert_int_equal(c.prefix, 12);
    parse_ok("fc00::/7", &c);
    assert_int_equal(c.prefix, 7);
    parse_ok("10.0.0.0/9", &c);
    parse_ok("10.128.0.0/9", &c);
}

struct bad_case {
    const char *text;
    const char *why; /* a part of the sentence */
};

static void test_parse_refused(void **state)
{
    static const struct bad_case cases[] = {
        {"", "not a numeric"},
        {"/8", "not a numeric"},
        {"10.0.0.0/", "prefix length"},
        {"10.0.0.0/08", "prefix length"},
        {"10.0.0.0/00", "prefix length"},
        {"10.0.0.0/+8", "prefix length"},
        {"10.0.0.0/-1", "prefix length"},
        {"10.0.0.0/8 ", "prefix length"},
        {"10.0.0.0/1000", "prefix length"},
        {"10.0.0.0/8/8", "prefix length"},
        {"10.0.0.0/33", "at most 32"},
        {"::/129", "at most 128"},
        {"10.1.0.0/8", "bits set after the prefix"},
        {"10.0.0.1/31", "bits set after the prefix"},
        {"10.0.0.1/24", "bits set after the prefix"},
        {"fe80::1/64", "bits set after the prefix"},
        {"::1/127", "bits set after the prefix"},
        {"1.0.0.0/0", "bits set after the prefix"},
        {"fe00::/6", "bits set after the prefix"},
        {" 10.0.0.0/8", "not a numeric"},
        {"10.0.0.0 /8", "not a numeric"},
        {"010.0.0.0/8", "not a numeric"},
        {"1.2.3/24", "not a numeric"},
        {"1.2.3.4.5", "not a numeric"},
        {"256.0.0.0/8", "not a numeric"},
        {"0x0a.0.0.0/8", "not a numeric"},
        {"fe80::1%eth0", "not a numeric"},
        {"fe80::%1/64", "not a numeric"},
        {"[::1]/128", "not a numeric"},
        {"localhost", "not a numeric"},
        {"::ffff:10.0.0.0.0/104", "not a numeric"},
        {"1111:2222:3333:4444:5555:6666:7777:8888:9999/128", "not a numeric"},
        {"ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255.255.255.255/128", "not a numeric"},
    };
    struct sworn_addr_cidr c, untouched;

    (void)state;
    memset(&untouched, 0xA5, sizeof(untouched));
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *why = NULL;

        c = untouched;
        sworn_err_clear();
        if (sworn_addr_parse_cidr(cases[i].text, &c, &why) != -1)
            fail_msg("\"%s\" accepted", cases[i].text);
        assert_non_null(why);
        if (strstr(why, cases[i].why) == NULL)
            fail_msg("\"%s\": why is \"%s\", want \"%s\"", cases[i].text, why, cases[i].why);
        assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
        assert_string_equal(sworn_err_msg(), why);
        assert_memory_equal(&c, &untouched, sizeof(c));
        /* why may be NULL: the error slot still says it. */
        sworn_err_clear();
        assert_int_equal(sworn_addr_parse_cidr(cases[i].text, &c, NULL), -1);
        assert_string_equal(sworn_err_msg(), why);
    }
    {
        const char *why = NULL;

        assert_int_equal(sworn_addr_parse_cidr(NULL, &c, &why), -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
        assert_non_null(why);
        assert_int_equal(sworn_addr_parse_cidr("10.0.0.0/8", NULL, NULL), -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    }
}

/* Every prefix length of both families: the network with its first host bit set is refused,
 * the network itself accepted, and an address matches it exactly when its prefix agrees. */
static void test_parse_every_prefix(void **state)
{
    (void)state;
    for (unsigned p = 0; p <= 32; p++) {
        const uint32_t inside = 0x0A0B0C0Du; /* 10.11.12.13: private, inside each network */
        char text[32];
        struct sworn_addr_cidr c;
        struct sockaddr_in in = {.sin_family = AF_INET};
        uint32_t net = p == 0 ? 0 : (0xFFFFFFFFu << (32 - p)) & inside;

        snprintf(text, sizeof(text), "%u.%u.%u.%u/%u", net >> 24, (net >> 16) & 255,
                 (net >> 8) & 255, net & 255, p);
        parse_ok(text, &c);
        assert_int_equal(c.prefix, p);
        in.sin_addr.s_addr = htonl(inside);
        assert_int_equal(sworn_addr_permitted((const struct sockaddr *)&in, &c, 1), 1);
        if (p > 8) {
            /* flip the last bit of the prefix: still in 10/8, outside the network */
            in.sin_addr.s_addr = htonl(inside ^ (1u << (32 - p)));
            assert_int_equal(sworn_addr_permitted((const struct sockaddr *)&in, &c, 1), 0);
        }
        if (p < 32) {
            uint32_t host = net | (1u << (31 - p));

            snprintf(text, sizeof(text), "%u.%u.%u.%u/%u", host >> 24, (host >> 16) & 255,
                     (host >> 8) & 255, host & 255, p);
            assert_int_equal(sworn_addr_parse_cidr(text, &c, NULL), -1);
        }
    }
    for (unsigned p = 0; p <= 128; p++) {
        char text[64];
        struct sworn_addr_cidr c;
        uint8_t inside[16], net[16];
        char shown[INET6_ADDRSTRLEN];
        struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};

        /* fd00::/8 with every third bit after it set: a private address, inside each network */
        memset(inside, 0, sizeof(inside));
        inside[0] = 0xfd;
        for (unsigned bit = 8; bit < 128; bit++)
            if (bit % 3 == 0)
                inside[bit / 8] |= (uint8_t)(0x80u >> (bit % 8));
        memset(net, 0, sizeof(net));
        for (unsigned bit = 0; bit < p; bit++)
            net[bit / 8] |= inside[bit / 8] & (uint8_t)(0x80u >> (bit % 8));
        assert_non_null(inet_ntop(AF_INET6, net, shown, sizeof(shown)));
        snprintf(text, sizeof(text), "%s/%u", shown, p);
        parse_ok(text, &c);
        assert_int_equal(c.family, 6);
        assert_int_equal(c.prefix, p);
        assert_memory_equal(c.addr, net, 16);
        memcpy(&in6.sin6_addr, inside, 16);
        assert_int_equal(sworn_addr_permitted((const struct sockaddr *)&in6, &c, 1), 1);
        if (p > 8) {
            /* flip the last bit of the prefix: still in fd00::/8, outside the network */
            in6.sin6_addr.s6_addr[(p - 1) / 8] ^= (uint8_t)(0x80u >> ((p - 1) % 8));
            assert_int_equal(sworn_addr_permitted((const struct sockaddr *)&in6, &c, 1), 0);
        }
        if (p < 128) {
            net[p / 8] |= (uint8_t)(0x80u >> (p % 8));
            assert_non_null(inet_ntop(AF_INET6, net, shown, sizeof(shown)));
            snprintf(text, sizeof(text), "%s/%u", shown, p);
            assert_int_equal(sworn_addr_parse_cidr(text, &c, NULL), -1);
        }
    }
}

static void test_format(void **state)
{
    struct sockaddr_storage ss;
    char out[SWORN_ADDR_TEXT_MAX];
    const char *longest = "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff";

    (void)state;
    sworn_addr_format(sa_of("192.0.2.1", &ss), out, sizeof(out));
    assert_string_equal(out, "192.0.2.1");
    sworn_addr_format(sa_of("255.255.255.255", &ss), out, sizeof(out));
    assert_string_equal(out, "255.255.255.255");
    sworn_addr_format(sa_of("2001:db8::1", &ss), out, sizeof(out));
    assert_string_equal(out, "[2001:db8::1]");
    sworn_addr_format(sa_of("::ffff:127.0.0.1", &ss), out, sizeof(out));
    assert_string_equal(out, "[::ffff:127.0.0.1]");
    sworn_addr_format(sa_of("2001:0DB8:0:0:0:0:0:0001", &ss), out, sizeof(out));
    assert_string_equal(out, "[2001:db8::1]");
    sworn_addr_format(sa_of(longest, &ss), out, sizeof(out));
    assert_string_equal(out, "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]");
    /* Exactly enough room, then one byte short: the whole text or nothing. */
    {
        char small[64];
        size_t need = strlen(longest) + 3;

        memset(small, 'x', sizeof(small));
        sworn_addr_format(sa_of(longest, &ss), small, need);
        assert_int_equal(strlen(small), need - 1);
        memset(small, 'x', sizeof(small));
        sworn_addr_format(sa_of(longest, &ss), small, need - 1);
        assert_string_equal(small, "");
        assert_int_equal(small[1], 'x');
        memset(small, 'x', sizeof(small));
        sworn_addr_format(sa_of("192.0.2.1", &ss), small, 10);
        assert_string_equal(small, "192.0.2.1");
        sworn_addr_format(sa_of("192.0.2.1", &ss), small, 9);
        assert_string_equal(small, "");
        memset(small, 'x', sizeof(small));
        sworn_addr_format(sa_of("192.0.2.1", &ss), small, 0);
        assert_int_equal(small[0], 'x');
        sworn_addr_format(NULL, small, 1);
        assert_string_equal(small, "");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classify_v4),        cmocka_unit_test(test_classify_v6),
        cmocka_unit_test(test_other_family),       cmocka_unit_test(test_class_names),
        cmocka_unit_test(test_permitted),          cmocka_unit_test(test_permitted_bad_entries),
        cmocka_unit_test(test_parse_ok),           cmocka_unit_test(test_parse_refused),
        cmocka_unit_test(test_parse_every_prefix), cmocka_unit_test(test_format),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

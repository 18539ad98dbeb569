/*
 * p_addr.c -- upstream address classes and the allow_private check (contract in p_addr.h).
 */
#include "p_addr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "err.h"

/* One network in the tables below: the address bytes (IPv4: 4, IPv6: 16) and the prefix. */
struct net4 {
    uint8_t a[4];
    unsigned prefix;
    enum sworn_addr_class cls;
};

struct net6 {
    uint8_t a[16];
    unsigned prefix;
    enum sworn_addr_class cls;
};

/* Do the first `prefix` bits of a and net agree? */
static int prefix_match(const uint8_t *a, const uint8_t *net, unsigned prefix)
{
    unsigned whole = prefix / 8, rest = prefix % 8;

    if (memcmp(a, net, whole) != 0)
        return 0;
    if (rest == 0)
        return 1;
    return ((a[whole] ^ net[whole]) & (uint8_t)(0xFFu << (8 - rest))) == 0;
}

/* IPv4, in order: the metadata addresses come first because they lie inside other classes. */
static const struct net4 v4_table[] = {
    {{169, 254, 169, 254}, 32, SWORN_ADDR_METADATA}, /* AWS, GCP, Azure, OpenStack, ... */
    {{169, 254, 170, 2}, 32, SWORN_ADDR_METADATA},   /* AWS ECS task credentials */
    {{169, 254, 170, 23}, 32, SWORN_ADDR_METADATA},  /* AWS EKS Pod Identity */
    {{169, 254, 0, 23}, 32, SWORN_ADDR_METADATA},    /* Tencent Cloud */
    {{100, 100, 100, 200}, 32, SWORN_ADDR_METADATA}, /* Alibaba Cloud */
    {{192, 0, 0, 192}, 32, SWORN_ADDR_METADATA},     /* Oracle Cloud Classic */
    {{168, 63, 129, 16}, 32, SWORN_ADDR_METADATA},   /* Azure WireServer */
    {{0, 0, 0, 0}, 8, SWORN_ADDR_UNSPECIFIED},       {{127, 0, 0, 0}, 8, SWORN_ADDR_LOOPBACK},
    {{10, 0, 0, 0}, 8, SWORN_ADDR_PRIVATE},          {{172, 16, 0, 0}, 12, SWORN_ADDR_PRIVATE},
    {{192, 168, 0, 0}, 16, SWORN_ADDR_PRIVATE},      {{169, 254, 0, 0}, 16, SWORN_ADDR_LINK_LOCAL},
    {{100, 64, 0, 0}, 10, SWORN_ADDR_SHARED},        {{224, 0, 0, 0}, 4, SWORN_ADDR_MULTICAST},
    {{240, 0, 0, 0}, 4, SWORN_ADDR_RESERVED}, /* with 255.255.255.255 */
    {{192, 0, 0, 0}, 24, SWORN_ADDR_RESERVED},       {{192, 0, 2, 0}, 24, SWORN_ADDR_RESERVED},
    {{198, 51, 100, 0}, 24, SWORN_ADDR_RESERVED},    {{203, 0, 113, 0}, 24, SWORN_ADDR_RESERVED},
    {{198, 18, 0, 0}, 15, SWORN_ADDR_RESERVED},      {{192, 88, 99, 0}, 24, SWORN_ADDR_RESERVED},
};

static enum sworn_addr_class classify4(const uint8_t a[4])
{
    for (size_t i = 0; i < sizeof(v4_table) / sizeof(v4_table[0]); i++)
        if (prefix_match(a, v4_table[i].a, v4_table[i].prefix))
            return v4_table[i].cls;
    return SWORN_ADDR_PUBLIC;
}

/* IPv6 networks classified outright (the embedding forms are handled in classify6). */
static const struct net6 v6_table[] = {
    {{0xfd, 0x00, 0x0e, 0xc2, [14] = 0x02, [15] = 0x54}, 128, SWORN_ADDR_METADATA}, /* AWS */
    {{0xfd, 0x00, 0x0e, 0xc2, [14] = 0x00, [15] = 0x23}, 128, SWORN_ADDR_METADATA}, /* EKS */
    {{0xfc}, 7, SWORN_ADDR_PRIVATE},
    {{0xfe, 0xc0}, 10, SWORN_ADDR_PRIVATE},
    {{0xfe, 0x80}, 10, SWORN_ADDR_LINK_LOCAL},
    {{0xff}, 8, SWORN_ADDR_MULTICAST},
};

/* Inside 2000::/3, the networks that are not globally reachable. */
static const struct net6 v6_global_reserved[] = {
    {{0x20, 0x01, 0x0d, 0xb8}, 32, SWORN_ADDR_RESERVED}, /* documentation */
    {{0x3f, 0xff}, 20, SWORN_ADDR_RESERVED},             /* documentation (RFC 9637) */
    {{0x20, 0x01, 0x00, 0x02}, 48, SWORN_ADDR_RESERVED}, /* benchmarking */
    {{0x20, 0x01, 0x00, 0x10}, 28, SWORN_ADDR_RESERVED}, /* ORCHID */
    {{0x20, 0x01, 0x00, 0x20}, 28, SWORN_ADDR_RESERVED}, /* ORCHIDv2 */
};

/* An embedded IPv4 address that is not public makes the IPv6 address RESERVED. */
static enum sworn_addr_class embedded(const uint8_t *v4)
{
    return classify4(v4) == SWORN_ADDR_PUBLIC ? SWORN_ADDR_PUBLIC : SWORN_ADDR_RESERVED;
}

static enum sworn_addr_class classify6(const uint8_t a[16])
{
    static const uint8_t zero[16];
    static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};
    static const uint8_t nat64[12] = {0x00, 0x64, 0xff, 0x9b};
    static const uint8_t nat64_local[6] = {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01};
    static const uint8_t sixtofour[2] = {0x20, 0x02};
    static const uint8_t teredo[4] = {0x20, 0x01, 0x00, 0x00};

    if (memcmp(a, zero, 15) == 0 && a[15] <= 1)
        return a[15] == 0 ? SWORN_ADDR_UNSPECIFIED : SWORN_ADDR_LOOPBACK;
    if (memcmp(a, mapped, 12) == 0)
        return classify4(a + 12);
    if (memcmp(a, zero, 12) == 0)
        return SWORN_ADDR_RESERVED; /* IPv4-compatible */
    if (memcmp(a, nat64, 12) == 0)
        return embedded(a + 12);
    if (memcmp(a, nat64_local, 6) == 0)
        return SWORN_ADDR_RESERVED;
    for (size_t i = 0; i < sizeof(v6_table) / sizeof(v6_table[0]); i++)
        if (prefix_match(a, v6_table[i].a, v6_table[i].prefix))
            return v6_table[i].cls;
    if ((a[0] & 0xE0) != 0x20)
        return SWORN_ADDR_RESERVED; /* outside 2000::/3: nothing there is global unicast */
    for (size_t i = 0; i < sizeof(v6_global_reserved) / sizeof(v6_global_reserved[0]); i++)
        if (prefix_match(a, v6_global_reserved[i].a, v6_global_reserved[i].prefix))
            return SWORN_ADDR_RESERVED;
    if (memcmp(a, sixtofour, 2) == 0)
        return embedded(a + 2);
    if (memcmp(a, teredo, 4) == 0) {
        /* Teredo: the server's IPv4 in bytes 4..7, the client's, bit-inverted, in 12..15. */
        uint8_t client[4];

        for (size_t i = 0; i < 4; i++)
            client[i] = (uint8_t)~a[12 + i];
        if (embedded(a + 4) != SWORN_ADDR_PUBLIC || embedded(client) != SWORN_ADDR_PUBLIC)
            return SWORN_ADDR_RESERVED;
    }
    return SWORN_ADDR_PUBLIC;
}

enum sworn_addr_class sworn_addr_classify(const struct sockaddr *sa)
{
    if (sa == NULL)
        return SWORN_ADDR_RESERVED;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;

        return classify4((const uint8_t *)&in->sin_addr);
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;

        return classify6(in6->sin6_addr.s6_addr);
    }
    return SWORN_ADDR_RESERVED;
}

const char *sworn_addr_class_name(enum sworn_addr_class c)
{
    switch (c) {
    case SWORN_ADDR_PUBLIC:
        return "public";
    case SWORN_ADDR_LOOPBACK:
        return "loopback";
    case SWORN_ADDR_PRIVATE:
        return "private";
    case SWORN_ADDR_LINK_LOCAL:
        return "link-local";
    case SWORN_ADDR_METADATA:
        return "metadata";
    case SWORN_ADDR_SHARED:
        return "shared";
    case SWORN_ADDR_UNSPECIFIED:
        return "unspecified";
    case SWORN_ADDR_MULTICAST:
        return "multicast";
    case SWORN_ADDR_RESERVED:
        break;
    }
    return "reserved";
}

/* Is the address (family 4: 4 bytes, 6: 16) inside one of allow[0..n)? */
static int listed(int family, const uint8_t *a, const struct sworn_addr_cidr *allow, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned max = family == 4 ? 32 : 128;

        if (allow[i].family == family && allow[i].prefix <= max &&
            prefix_match(a, allow[i].addr, allow[i].prefix))
            return 1;
    }
    return 0;
}

int sworn_addr_permitted(const struct sockaddr *sa, const struct sworn_addr_cidr *allow, size_t n)
{
    static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};
    enum sworn_addr_class c = sworn_addr_classify(sa);

    if (sa == NULL || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
        return 0;
    if (c == SWORN_ADDR_PUBLIC)
        return 1;
    if (allow == NULL)
        return 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;

        return listed(4, (const uint8_t *)&in->sin_addr, allow, n);
    }
    {
        const uint8_t *a = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr;

        if (memcmp(a, mapped, 12) == 0 && listed(4, a + 12, allow, n))
            return 1;
        return listed(6, a, allow, n);
    }
}

/* Refuse with the sentence both in *why and in the error slot. */
static int refuse(const char **why, const char *sentence)
{
    if (why != NULL)
        *why = sentence;
    return sworn_err_set(SWORN_ERR_FORMAT, "%s", sentence);
}

int sworn_addr_parse_cidr(const char *s, struct sworn_addr_cidr *out, const char **why)
{
    struct sworn_addr_cidr c;
    char host[INET6_ADDRSTRLEN];
    const char *slash;
    size_t hlen;
    unsigned max, prefix;

    if (s == NULL || out == NULL) {
        if (why != NULL)
            *why = "no network given";
        return sworn_err_set(SWORN_ERR_ARG, "sworn_addr_parse_cidr: NULL argument");
    }
    memset(&c, 0, sizeof(c));
    slash = strchr(s, '/');
    hlen = slash != NULL ? (size_t)(slash - s) : strlen(s);
    if (hlen == 0 || hlen >= sizeof(host))
        return refuse(why, "not a numeric IPv4 or IPv6 address");
    memcpy(host, s, hlen);
    host[hlen] = '\0';
    if (inet_pton(AF_INET, host, c.addr) == 1) {
        c.family = 4;
        max = 32;
    } else if (inet_pton(AF_INET6, host, c.addr) == 1) {
        c.family = 6;
        max = 128;
    } else
        return refuse(why, "not a numeric IPv4 or IPv6 address");
    if (slash == NULL)
        prefix = max;
    else {
        const char *p = slash + 1;
        size_t plen = strlen(p);

        if (plen == 0 || plen > 3 || (plen > 1 && p[0] == '0'))
            return refuse(why, "the prefix length is not a decimal number 0..32 (IPv4) or "
                               "0..128 (IPv6)");
        prefix = 0;
        for (size_t i = 0; i < plen; i++) {
            if (p[i] < '0' || p[i] > '9')
                return refuse(why, "the prefix length is not a decimal number 0..32 (IPv4) or "
                                   "0..128 (IPv6)");
            prefix = prefix * 10 + (unsigned)(p[i] - '0');
        }
        if (prefix > max)
            return refuse(why, c.family == 4 ? "the prefix length of an IPv4 network is at most 32"
                                             : "the prefix length of an IPv6 network is at most "
                                               "128");
    }
    for (unsigned bit = prefix; bit < max; bit++)
        if (c.addr[bit / 8] & (0x80u >> (bit % 8)))
            return refuse(why, "the address has bits set after the prefix (name the network, "
                               "as 10.0.0.0/8, not a host in it)");
    c.prefix = prefix;
    *out = c;
    return 0;
}

void sworn_addr_format(const struct sockaddr *sa, char *out, size_t outlen)
{
    char text[INET6_ADDRSTRLEN];
    size_t len;

    if (out == NULL || outlen == 0)
        return;
    if (sa != NULL && sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;

        if (inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text)) == NULL)
            goto unknown;
        len = strlen(text);
        if (len + 1 > outlen)
            goto small;
        memcpy(out, text, len + 1);
        return;
    }
    if (sa != NULL && sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;

        if (inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text)) == NULL)
            goto unknown;
        len = strlen(text);
        if (len + 3 > outlen)
            goto small;
        out[0] = '[';
        memcpy(out + 1, text, len);
        out[len + 1] = ']';
        out[len + 2] = '\0';
        return;
    }
unknown:
    if (outlen >= 2) {
        out[0] = '?';
        out[1] = '\0';
        return;
    }
small:
    out[0] = '\0';
}

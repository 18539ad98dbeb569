/*
 * p_addr.h -- which upstream addresses sworn-proxy refuses to connect to after an allow.
 *
 * Why: the policy decides on names. Once a name is allowed the proxy resolves it, and an
 * attacker who controls the name's DNS can make it resolve to an address inside the host or its
 * network (DNS rebinding): the loopback, a private network, the cloud metadata service. So every
 * address the resolver returns is classified, and only a public one is connected to, unless the
 * operator listed it in `upstream.allow_private` (p_config.h). An IP literal that the policy
 * allowed by itself is the caller's business (the policy named it); this module only answers.
 *
 * Classes (sworn_addr_classify; the first that matches, in this order):
 *   IPv4
 *     METADATA     169.254.169.254 (AWS, GCP, Azure, OpenStack, Oracle, DigitalOcean, Hetzner),
 *                  169.254.170.2 (AWS ECS task credentials), 169.254.170.23 (AWS EKS Pod
 *                  Identity), 169.254.0.23 (Tencent Cloud), 100.100.100.200 (Alibaba Cloud),
 *                  192.0.0.192 (Oracle Cloud Classic), 168.63.129.16 (Azure's WireServer: a
 *                  public address that inside Azure reaches the host's agent)
 *     UNSPECIFIED  0.0.0.0/8
 *     LOOPBACK     127.0.0.0/8
 *     PRIVATE      10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 (RFC 1918)
 *     LINK_LOCAL   169.254.0.0/16
 *     SHARED       100.64.0.0/10 (RFC 6598, carrier-grade NAT)
 *     MULTICAST    224.0.0.0/4
 *     RESERVED     240.0.0.0/4 (with 255.255.255.255, the broadcast), 192.0.0.0/24 (IETF
 *                  protocol assignments), 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24
 *                  (documentation), 198.18.0.0/15 (benchmarking), 192.88.99.0/24 (6to4 relay)
 *   IPv6
 *     UNSPECIFIED  ::
 *     LOOPBACK     ::1
 *     (embedded)   ::ffff:0:0/96 (IPv4-mapped): the class of the embedded IPv4 address
 *     RESERVED     the rest of ::/96 (IPv4-compatible, deprecated)
 *     RESERVED     64:ff9b::/96 (NAT64) when the embedded IPv4 address is not PUBLIC;
 *                  64:ff9b:1::/48 (local-use NAT64) always
 *     METADATA     fd00:ec2::254 (AWS IMDS), fd00:ec2::23 (AWS EKS Pod Identity)
 *     PRIVATE      fc00::/7 (unique local), fec0::/10 (site-local, deprecated)
 *     LINK_LOCAL   fe80::/10
 *     MULTICAST    ff00::/8
 *     RESERVED     everything outside 2000::/3 not named above (IANA: reserved by the IETF)
 *     RESERVED     2001:db8::/32, 3fff::/20 (documentation), 2001:2::/48 (benchmarking),
 *                  2001:10::/28, 2001:20::/28 (ORCHID)
 *     RESERVED     2002::/16 (6to4) when the embedded IPv4 address is not PUBLIC
 *     RESERVED     2001::/32 (Teredo) when the server or the (inverted) client IPv4 address
 *                  embedded is not PUBLIC
 *     PUBLIC       everything else
 * A sockaddr of another family (or NULL) is RESERVED: what cannot be classified is refused.
 *
 * Inputs are sockaddrs the resolver or the kernel produced (sa_family says which of
 * struct sockaddr_in / sockaddr_in6 it is; the caller guarantees that size) and CIDR text from
 * the configuration. No allocation; no global state; thread-safe.
 */
#ifndef SWORN_P_ADDR_H
#define SWORN_P_ADDR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Enough for sworn_addr_format: the longest IPv6 text (45), two brackets and the NUL. */
#define SWORN_ADDR_TEXT_MAX 48u

/*
 * A network: the same fields, in the same order and meaning, as p_config.h's
 * struct sworn_pconf_cidr (family 4 or 6; addr the network in network byte order, an IPv4 one in
 * its first 4 bytes and the rest 0; prefix 0..32 or 0..128; no bit set after the prefix).
 */
struct sworn_addr_cidr {
    int family;
    uint8_t addr[16];
    unsigned prefix;
};

enum sworn_addr_class {
    SWORN_ADDR_PUBLIC = 0,
    SWORN_ADDR_LOOPBACK,
    SWORN_ADDR_PRIVATE,
    SWORN_ADDR_LINK_LOCAL,
    SWORN_ADDR_METADATA,
    SWORN_ADDR_SHARED,
    SWORN_ADDR_UNSPECIFIED,
    SWORN_ADDR_MULTICAST,
    SWORN_ADDR_RESERVED,
};

/* The class of sa (the table above). */
enum sworn_addr_class sworn_addr_classify(const struct sockaddr *sa);

/*
 * A short stable name for logs and deny reasons: "public", "loopback", "private", "link-local",
 * "metadata", "shared", "unspecified", "multicast", "reserved"; "reserved" for a value outside
 * the enum. Never NULL.
 */
const char *sworn_addr_class_name(enum sworn_addr_class c);

/*
 * May the proxy connect to sa? A PUBLIC address: yes. Any other class: only when sa lies inside
 * one of allow[0..n) (allow may be NULL when n is 0). An IPv4-mapped IPv6 address is matched as
 * its IPv4 address against the IPv4 networks, and as itself against the IPv6 ones. NULL or
 * another family: no. Returns 1 (yes) or 0 (no).
 */
int sworn_addr_permitted(const struct sockaddr *sa, const struct sworn_addr_cidr *allow, size_t n);

/*
 * Parse a network: "ADDRESS/PREFIX" ("10.0.0.0/8", "fd00::/8", "::1/128") or one address
 * ("127.0.0.1" is 127.0.0.1/32, "::1" is ::1/128). The address is what inet_pton accepts (no
 * zone "%eth0", no spaces); the prefix is a decimal number without sign or leading zero, at most
 * 32 or 128. An address with a bit set after the prefix is refused ("10.1.0.0/8" names a host,
 * not a network; write "10.0.0.0/8"). OUT: *out, written only on success.
 * Returns 0, or -1 with *why (when why is not NULL) set to a static English sentence and
 * sworn_err set (SWORN_ERR_FORMAT, the same sentence; SWORN_ERR_ARG for a NULL s or out).
 */
int sworn_addr_parse_cidr(const char *s, struct sworn_addr_cidr *out, const char **why);

/*
 * Write sa as text without the port: "192.0.2.1", "[2001:db8::1]" (inet_ntop's form, so a
 * mapped address reads "[::ffff:127.0.0.1]"; a scope id is not shown). Always NUL-terminates
 * when outlen > 0: "?" for NULL or another family, "" when outlen is below what the text needs
 * (SWORN_ADDR_TEXT_MAX is always enough).
 */
void sworn_addr_format(const struct sockaddr *sa, char *out, size_t outlen);

#endif

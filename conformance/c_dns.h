/*
 * c_dns.h -- the runner's own resolver for T2.dns-rebinding: a tiny DNS server over UDP that
 * answers one name (the deployment's sandbox.dns_rebinding.name) with internal addresses only,
 * TTL 0, so that a proxy resolving that name after an allow is handed the host's loopback (where
 * the runner's canary listens), the metadata address and a private network.
 *
 * The message format (RFC 1035 section 4; only this subset is read):
 *   query    12-byte header: ID (2), flags (2: QR 0, OPCODE 0, any RD; the Z and RCODE bits
 *            ignored), QDCOUNT 1, ANCOUNT 0, NSCOUNT 0, ARCOUNT 0 or 1 (an EDNS OPT record, not
 *            read); then one question: the name as labels (1..63 bytes each, no compression
 *            pointer, at most 253 bytes as text), QTYPE (2), QCLASS (2, IN = 1). At most
 *            C_DNS_MSG_MAX bytes; bytes after the question are the OPT record and not read.
 *   answer   the query's ID, flags QR 1, AA 1, RD as asked, RCODE; QDCOUNT 1 and the question
 *            copied byte for byte (a resolver that randomizes the name's case, as libevent's
 *            does, gets its own bytes back); for an answer, ANCOUNT 1 and one record: a
 *            pointer to the question's name (0xC00C), TYPE, CLASS IN, TTL 0, RDLENGTH 4 or 16
 *            and the address.
 * What is answered: the name (compared without regard to case, a trailing dot ignored) with
 * QTYPE A or AAAA and QCLASS IN: the next address of that type's schedule (below), NOERROR.
 * Any other name, type or class: REFUSED. A query that is not one of the shape above but has a
 * header (12 bytes, QR 0): FORMERR with no question. Anything shorter, or an answer: dropped.
 *
 * The schedule: the k-th A query gets c_dns_answers' A addresses in turn (k modulo their
 * number), the k-th AAAA query the AAAA ones: every one internal (no public address is ever
 * given: a proxy would connect there, out of the runner's sight).
 *
 * Memory: the caller owns everything; nothing allocates except c_dns_start (its shared page,
 * unmapped by c_dns_stop). Errors: -1 with sworn_err set. Not thread-safe (c_dns_respond is, for
 * distinct counts).
 */
#ifndef SWORN_C_DNS_H
#define SWORN_C_DNS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define C_DNS_MSG_MAX 512u  /* a query or answer over UDP, without EDNS */
#define C_DNS_NAME_MAX 254u /* a name as text, with its NUL */
#define C_DNS_ANSWERS 5u    /* entries of the schedule (c_dns_answers) */

#define C_DNS_TYPE_A 1u
#define C_DNS_TYPE_AAAA 28u

/* One address of the schedule: its type, its bytes (4 or 16) and its text. */
struct c_dns_answer {
    uint16_t type; /* C_DNS_TYPE_A or C_DNS_TYPE_AAAA */
    uint8_t addr[16];
    const char *text;
};

/* The schedule: A 127.0.0.1, 169.254.169.254, 10.0.0.1; AAAA ::1, ::ffff:127.0.0.1. */
extern const struct c_dns_answer c_dns_answers[C_DNS_ANSWERS];

/* What the server saw; every field counts since the start. */
struct c_dns_counts {
    uint64_t datagrams;             /* every datagram read */
    uint64_t questions;             /* queries for the name, A or AAAA */
    uint64_t refused;               /* REFUSED and FORMERR answers */
    uint64_t next_a, next_aaaa;     /* where each type's schedule is */
    uint64_t served[C_DNS_ANSWERS]; /* answers given, by schedule entry */
};

/*
 * Answer the query q[0..qlen) for name (as text, without the trailing dot) into out (capacity
 * cap, at least C_DNS_MSG_MAX). IN/OUT: *counts is moved on (the schedule, the counters).
 * Returns the answer's length, or 0 when nothing is to be sent back (out then holds nothing
 * meaningful).
 */
size_t c_dns_respond(const char *name, struct c_dns_counts *counts, const uint8_t *q, size_t qlen,
                     uint8_t *out, size_t cap);

/* The running server: a child process and the counters it shares with the runner. */
struct c_dns_server {
    pid_t pid;                /* 0 when not running */
    struct c_dns_counts *shm; /* a shared anonymous page (atomic access), NULL when unmapped */
};

/*
 * Bind UDP on addr (numeric IPv4 or IPv6) port port here (so a port in use is reported now),
 * then serve name from a child process (it dies with the runner: PR_SET_PDEATHSIG).
 * Returns 0, or -1 (the address cannot be bound: its errno in the message).
 */
int c_dns_start(struct c_dns_server *s, const char *addr, uint16_t port, const char *name);

/* A copy of the counters as they are now into *out. */
void c_dns_read(const struct c_dns_server *s, struct c_dns_counts *out);

/* End the child (by its pid) and unmap the page; safe on a zeroed struct. */
void c_dns_stop(struct c_dns_server *s);

#endif

/*
 * c_dns.c -- the runner's resolver for T2.dns-rebinding (c_dns.h: the format read and written,
 * the schedule). c_dns_respond only parses and answers; c_dns_start binds and forks the child
 * that feeds it datagrams.
 */
#define _GNU_SOURCE
#include "c_dns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"

#define HEADER_LEN 12u
#define FLAG_QR 0x8000u
#define FLAG_AA 0x0400u
#define FLAG_RD 0x0100u
#define OPCODE_MASK 0x7800u
#define RCODE_FORMERR 1u
#define RCODE_REFUSED 5u
#define CLASS_IN 1u

const struct c_dns_answer c_dns_answers[C_DNS_ANSWERS] = {
    {C_DNS_TYPE_A, {127, 0, 0, 1}, "127.0.0.1"},
    {C_DNS_TYPE_A, {169, 254, 169, 254}, "169.254.169.254"},
    {C_DNS_TYPE_A, {10, 0, 0, 1}, "10.0.0.1"},
    {C_DNS_TYPE_AAAA, {[15] = 1}, "::1"},
    {C_DNS_TYPE_AAAA, {[10] = 0xff, [11] = 0xff, [12] = 127, [15] = 1}, "::ffff:127.0.0.1"},
};

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/*
 * The question at q[HEADER_LEN..qlen): its name as text into name (C_DNS_NAME_MAX), its type
 * and class, and its end (the offset after QCLASS). Returns 0, or -1 when it is not one.
 */
static int parse_question(const uint8_t *q, size_t qlen, char *name, uint16_t *type, uint16_t *cls,
                          size_t *end)
{
    size_t off = HEADER_LEN, n = 0;

    for (;;) {
        size_t len;

        if (off >= qlen)
            return -1;
        len = q[off++];
        if (len == 0)
            break;
        if (len > 63 || off + len > qlen || n + len + 1 >= C_DNS_NAME_MAX)
            return -1; /* a compression pointer (0xC0..) is > 63 too: none in a question here */
        if (n > 0)
            name[n++] = '.';
        for (size_t i = 0; i < len; i++) {
            uint8_t ch = q[off + i];

            if (ch <= 0x20 || ch >= 0x7f || ch == '.')
                return -1; /* a name we could serve is a host name: printable, no dot inside */
            name[n++] = (char)ch;
        }
        off += len;
    }
    name[n] = '\0';
    if (n == 0 || off + 4 > qlen)
        return -1;
    *type = get16(q + off);
    *cls = get16(q + off + 2);
    *end = off + 4;
    return 0;
}

/* A header-only answer (FORMERR) or the question copied with an rcode and no record. */
static size_t reject(const uint8_t *q, size_t qend, unsigned rcode, struct c_dns_counts *counts,
                     uint8_t *out)
{
    unsigned flags = get16(q + 2);

    memcpy(out, q, 2);
    put16(out + 2, FLAG_QR | FLAG_AA | (flags & FLAG_RD) | rcode);
    memset(out + 4, 0, 8);
    if (qend > HEADER_LEN) {
        put16(out + 4, 1);
        memcpy(out + HEADER_LEN, q + HEADER_LEN, qend - HEADER_LEN);
    } else {
        qend = HEADER_LEN;
    }
    counts->refused++;
    return qend;
}

size_t c_dns_respond(const char *name, struct c_dns_counts *counts, const uint8_t *q, size_t qlen,
                     uint8_t *out, size_t cap)
{
    char asked[C_DNS_NAME_MAX];
    size_t want_len = strlen(name), qend, at;
    uint16_t flags, type, cls;
    const struct c_dns_answer *a = NULL;
    uint64_t *next;
    size_t k = 0, idx = 0;

    counts->datagrams++;
    if (qlen < HEADER_LEN || qlen > C_DNS_MSG_MAX || cap < C_DNS_MSG_MAX)
        return 0;
    flags = get16(q + 2);
    if (flags & FLAG_QR)
        return 0; /* an answer: never answer one */
    if ((flags & OPCODE_MASK) != 0 || get16(q + 4) != 1 || get16(q + 6) != 0 || get16(q + 8) != 0 ||
        get16(q + 10) > 1 || parse_question(q, qlen, asked, &type, &cls, &qend) != 0)
        return reject(q, HEADER_LEN, RCODE_FORMERR, counts, out);
    if (want_len > 0 && name[want_len - 1] == '.')
        want_len--;
    if (strlen(asked) != want_len || strncasecmp(asked, name, want_len) != 0 || cls != CLASS_IN ||
        (type != C_DNS_TYPE_A && type != C_DNS_TYPE_AAAA))
        return reject(q, qend, RCODE_REFUSED, counts, out);
    /* The next entry of this type's schedule. */
    next = type == C_DNS_TYPE_A ? &counts->next_a : &counts->next_aaaa;
    for (size_t i = 0; i < C_DNS_ANSWERS; i++)
        k += c_dns_answers[i].type == type;
    for (size_t i = 0, seen = 0; i < C_DNS_ANSWERS; i++) {
        if (c_dns_answers[i].type != type)
            continue;
        if (seen++ == *next % k) {
            a = &c_dns_answers[i];
            idx = i;
            break;
        }
    }
    (*next)++;
    counts->questions++;
    counts->served[idx]++;
    memcpy(out, q, 2);
    put16(out + 2, FLAG_QR | FLAG_AA | (flags & FLAG_RD));
    put16(out + 4, 1);
    put16(out + 6, 1);
    put16(out + 8, 0);
    put16(out + 10, 0);
    memcpy(out + HEADER_LEN, q + HEADER_LEN, qend - HEADER_LEN);
    at = qend;
    put16(out + at, 0xC00C); /* the question's name, at offset 12 */
    put16(out + at + 2, type);
    put16(out + at + 4, CLASS_IN);
    memset(out + at + 6, 0, 4); /* TTL 0: never cached */
    put16(out + at + 10, type == C_DNS_TYPE_A ? 4 : 16);
    memcpy(out + at + 12, a->addr, type == C_DNS_TYPE_A ? 4 : 16);
    return at + 12 + (type == C_DNS_TYPE_A ? 4u : 16u);
}

/* ---- the server ---- */

/* Each counter is stored with release and read with acquire (c_dns_read): a reader that sees a
 * count sees what came before it. (No thread fence: the TSan build refuses them.) */
static void publish(struct c_dns_counts *shm, const struct c_dns_counts *c)
{
    __atomic_store_n(&shm->datagrams, c->datagrams, __ATOMIC_RELEASE);
    __atomic_store_n(&shm->questions, c->questions, __ATOMIC_RELEASE);
    __atomic_store_n(&shm->refused, c->refused, __ATOMIC_RELEASE);
    __atomic_store_n(&shm->next_a, c->next_a, __ATOMIC_RELEASE);
    __atomic_store_n(&shm->next_aaaa, c->next_aaaa, __ATOMIC_RELEASE);
    for (size_t i = 0; i < C_DNS_ANSWERS; i++)
        __atomic_store_n(&shm->served[i], c->served[i], __ATOMIC_RELEASE);
}

/* The child's loop: the counters are published before each answer leaves, so a resolver that
 * got an answer is always counted by the time its client hears of it. Never returns. */
static void serve(int fd, const char *name, struct c_dns_counts *shm)
{
    struct c_dns_counts c = {0};
    uint8_t q[C_DNS_MSG_MAX + 1], out[C_DNS_MSG_MAX];

    for (;;) {
        struct sockaddr_storage sa;
        socklen_t len = sizeof(sa);
        ssize_t got = recvfrom(fd, q, sizeof(q), 0, (struct sockaddr *)&sa, &len);
        size_t n;

        if (got < 0) {
            if (errno == EINTR)
                continue;
            _exit(1);
        }
        n = c_dns_respond(name, &c, q, (size_t)got, out, sizeof(out));
        publish(shm, &c);
        if (n > 0)
            sendto(fd, out, n, MSG_DONTWAIT, (struct sockaddr *)&sa, len);
    }
}

int c_dns_start(struct c_dns_server *s, const char *addr, uint16_t port, const char *name)
{
    struct sockaddr_storage sa = {0};
    socklen_t len;
    int fd = -1;

    memset(s, 0, sizeof(*s));
    if (strchr(addr, ':') != NULL) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&sa;

        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        len = sizeof(*in6);
        if (inet_pton(AF_INET6, addr, &in6->sin6_addr) != 1)
            return sworn_err_set(SWORN_ERR_ARG, "%s is not a numeric IPv6 address", addr);
    } else {
        struct sockaddr_in *in = (struct sockaddr_in *)&sa;

        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        len = sizeof(*in);
        if (inet_pton(AF_INET, addr, &in->sin_addr) != 1)
            return sworn_err_set(SWORN_ERR_ARG, "%s is not a numeric IPv4 address", addr);
    }
    fd = socket(sa.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len) != 0) {
        int e = errno;

        if (fd >= 0)
            close(fd);
        return sworn_err_set(SWORN_ERR_IO, "the runner's resolver cannot listen on %s port %u: %s",
                             addr, (unsigned)port, strerror(e));
    }
    s->shm = mmap(NULL, sizeof(*s->shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s->shm == MAP_FAILED) {
        s->shm = NULL;
        close(fd);
        return sworn_err_set(SWORN_ERR_NOMEM, "mmap: %s", strerror(errno));
    }
    memset(s->shm, 0, sizeof(*s->shm));
    s->pid = fork();
    if (s->pid < 0) {
        int e = errno;

        s->pid = 0;
        close(fd);
        c_dns_stop(s);
        return sworn_err_set(SWORN_ERR_IO, "fork: %s", strerror(e));
    }
    if (s->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        serve(fd, name, s->shm);
    }
    close(fd);
    return 0;
}

void c_dns_read(const struct c_dns_server *s, struct c_dns_counts *out)
{
    memset(out, 0, sizeof(*out));
    if (s->shm == NULL)
        return;
    out->datagrams = __atomic_load_n(&s->shm->datagrams, __ATOMIC_ACQUIRE);
    out->questions = __atomic_load_n(&s->shm->questions, __ATOMIC_ACQUIRE);
    out->refused = __atomic_load_n(&s->shm->refused, __ATOMIC_ACQUIRE);
    out->next_a = __atomic_load_n(&s->shm->next_a, __ATOMIC_ACQUIRE);
    out->next_aaaa = __atomic_load_n(&s->shm->next_aaaa, __ATOMIC_ACQUIRE);
    for (size_t i = 0; i < C_DNS_ANSWERS; i++)
        out->served[i] = __atomic_load_n(&s->shm->served[i], __ATOMIC_ACQUIRE);
}

void c_dns_stop(struct c_dns_server *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, NULL, 0);
    }
    s->pid = 0;
    if (s->shm != NULL)
        munmap(s->shm, sizeof(*s->shm));
    s->shm = NULL;
}

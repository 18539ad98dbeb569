/*
 * run_stamp.c -- bench_run's agent: a static program that says when it started and, when asked,
 * when its first request through a proxy was answered. It is what bench_run starts inside
 * sworn-run, bwrap and unshare, so its own cost is the least an agent can have: no dynamic loader,
 * no libraries to map, one clock read before anything else.
 *
 * Usage: run_stamp                      print "start NS\nexit NS\n"
 *        run_stamp PROXY_IP:PORT URL    also "response NS STATUS\n" between them: one
 *                                       "GET URL HTTP/1.1" (absolute form, Connection: close) to
 *                                       the proxy, timed when the status line has arrived
 * NS is CLOCK_MONOTONIC in nanoseconds; no namespace sworn-run, bwrap or unshare make changes
 * that clock (none makes a time namespace), so bench_run compares it with its own readings.
 * Output: one write(2) per line to standard output, no buffering.
 * Exit status: 0; 1 when the request failed or was not answered 200 (the line says why).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REQUEST_MAX 2048
#define HEAD_MAX 4096

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One line "WHAT NS[ MORE]\n" in one write; nothing to do when it fails (bench_run sees less). */
static void say(const char *what, uint64_t ns, const char *more)
{
    char line[256];
    int n = snprintf(line, sizeof(line), "%s %llu%s%s\n", what, (unsigned long long)ns,
                     more[0] != '\0' ? " " : "", more);

    if (n > 0 && (size_t)n < sizeof(line) && write(STDOUT_FILENO, line, (size_t)n) != n)
        return;
}

/* One request through the proxy; the status code, or -1 with *why set. */
static int request(const char *proxy, const char *url, const char **why)
{
    char host[64], req[REQUEST_MAX], head[HEAD_MAX];
    const char *colon = strrchr(proxy, ':'), *auth, *slash;
    struct sockaddr_in a = {.sin_family = AF_INET};
    size_t got = 0, hlen;
    int fd, n, status;

    *why = "bad arguments";
    if (colon == NULL || (size_t)(colon - proxy) >= sizeof(host) || strncmp(url, "http://", 7) != 0)
        return -1;
    memcpy(host, proxy, (size_t)(colon - proxy));
    host[colon - proxy] = '\0';
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
        return -1;
    a.sin_port = htons((uint16_t)atoi(colon + 1));
    auth = url + 7;
    slash = strchr(auth, '/');
    hlen = slash != NULL ? (size_t)(slash - auth) : strlen(auth);
    n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %.*s\r\nConnection: close\r\n\r\n",
                 url, (int)hlen, auth);
    if (n < 0 || (size_t)n >= sizeof(req))
        return -1;
    *why = "connect";
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
        return -1;
    *why = "send";
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return -1;
    }
    *why = "no status line";
    while (got < sizeof(head) - 1) {
        ssize_t r = read(fd, head + got, sizeof(head) - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
        head[got] = '\0';
        if (strstr(head, "\r\n") != NULL)
            break;
    }
    close(fd);
    head[got] = '\0';
    if (sscanf(head, "HTTP/1.%*d %d", &status) != 1)
        return -1;
    return status;
}

int main(int argc, char **argv)
{
    uint64_t t0 = now_ns();
    int rc = 0;

    say("start", t0, "");
    if (argc == 3) {
        const char *why = "";
        int status = request(argv[1], argv[2], &why);
        uint64_t t1 = now_ns();
        char what[64];

        if (status < 0)
            snprintf(what, sizeof(what), "failed (%s)", why);
        else
            snprintf(what, sizeof(what), "%d", status);
        say("response", t1, what);
        rc = status == 200 ? 0 : 1;
    }
    say("exit", now_ns(), "");
    return rc;
}

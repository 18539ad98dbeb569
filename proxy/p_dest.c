/*
 * p_dest.c -- destinations named by URL, and matching canonical resources (p_dest.h).
 */
#include "p_dest.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define HTTP_PORT 80u
#define HTTPS_PORT 443u

/* The port text after ':' (1..5 digits, no leading zero, 1..65535); 0 when it is not one. */
static uint32_t read_port(const char *p, size_t n)
{
    uint32_t v = 0;

    if (n == 0 || n > 5 || p[0] == '0')
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return 0;
        v = v * 10u + (uint32_t)(p[i] - '0');
    }
    return v <= 65535u ? v : 0;
}

static int refuse(struct sworn_pdest *out, const char **why, const char *sentence)
{
    memset(out, 0, sizeof(*out));
    *why = sentence;
    return 1;
}

int sworn_pdest_parse(const char *url, struct sworn_pdest *out, const char **why)
{
    char host_in[SWORN_RESOURCE_HOST_IN_MAX + 1];
    char path[SWORN_RESOURCE_PATH_MAX + 1];
    enum sworn_resource_host_kind kind;
    uint8_t addr[16];
    const char *rest, *host_end, *path_start;
    size_t len, path_len;

    memset(out, 0, sizeof(*out));
    if (url == NULL)
        return refuse(out, why, "the destination URL is missing");
    len = strlen(url);
    if (len > SWORN_PDEST_URL_MAX)
        return refuse(out, why, "the destination URL is longer than 2048 bytes");
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)url[i] <= 0x20 || (unsigned char)url[i] >= 0x7f)
            return refuse(out, why,
                          "the destination URL holds a space, a control or a byte "
                          "outside ASCII");
    if (strncmp(url, "https://", 8) == 0) {
        memcpy(out->scheme, "https", 6);
        out->port = HTTPS_PORT;
        rest = url + 8;
    } else if (strncmp(url, "http://", 7) == 0) {
        memcpy(out->scheme, "http", 5);
        out->port = HTTP_PORT;
        rest = url + 7;
    } else {
        return refuse(out, why, "the destination URL must start with http:// or https://");
    }
    if (strpbrk(rest, "?#") != NULL)
        return refuse(out, why, "the destination URL may not hold a query or a fragment");
    path_start = strchr(rest, '/');
    if (path_start == NULL)
        path_start = rest + strlen(rest);
    if (memchr(rest, '@', (size_t)(path_start - rest)) != NULL)
        return refuse(out, why, "the destination URL may not hold userinfo");
    /* The host ends at the port's ':' (after the ']' of an IPv6 literal). */
    host_end = path_start;
    if (rest[0] == '[') {
        const char *close = memchr(rest, ']', (size_t)(path_start - rest));

        if (close == NULL)
            return refuse(out, why, "the destination URL's IPv6 address has no ']'");
        host_end = close + 1;
        if (host_end != path_start && *host_end != ':')
            return refuse(out, why, "the destination URL has bytes after its IPv6 address");
    } else {
        const char *colon = memchr(rest, ':', (size_t)(path_start - rest));

        if (colon != NULL)
            host_end = colon;
    }
    if (host_end == rest)
        return refuse(out, why, "the destination URL has no host");
    if ((size_t)(host_end - rest) > SWORN_RESOURCE_HOST_IN_MAX)
        return refuse(out, why, "the destination URL's host is longer than 255 bytes");
    memcpy(host_in, rest, (size_t)(host_end - rest));
    host_in[host_end - rest] = '\0';
    if (host_end != path_start) {
        out->port = read_port(host_end + 1, (size_t)(path_start - host_end - 1));
        if (out->port == 0)
            return refuse(out, why,
                          "the destination URL's port is not 1..65535 (decimal, no "
                          "leading zero)");
    }
    if (sworn_resource_canon_host(host_in, out->host, &kind, addr, why) != 0)
        return refuse(out, why, *why);
    if (sworn_resource_canon_path(*path_start == '\0' ? "/" : path_start, path, &path_len, why) !=
        0)
        return refuse(out, why, *why);
    if (strchr(path, ';') != NULL)
        return refuse(out, why, "the destination URL's path may not hold path parameters (';')");
    if (strlen(path) > SWORN_PDEST_URL_MAX)
        return refuse(out, why, "the destination URL is longer than 2048 bytes");
    memcpy(out->path, path, strlen(path) + 1);
    return 0;
}

int sworn_pdest_matches(const struct sworn_pdest *d, const struct sworn_resource *c)
{
    return strcmp(d->scheme, c->scheme) == 0 && strcmp(d->host, c->host) == 0 &&
           d->port == c->port && c->path_len > 0 && sworn_resource_under_prefix(c, d->path);
}

/* Does path (len bytes, before '?') lie under prefix on a segment boundary, ASCII case aside? */
static int under_nocase(const char *path, size_t len, const char *prefix, size_t pl)
{
    if (pl == 0 || len < pl || strncasecmp(path, prefix, pl) != 0)
        return 0;
    return prefix[pl - 1] == '/' || len == pl || path[pl] == '/';
}

int sworn_pdest_matches_wide(const struct sworn_pdest *d, const struct sworn_resource *c)
{
    size_t pl = strlen(d->path);

    return strcmp(d->scheme, c->scheme) == 0 && strcmp(d->host, c->host) == 0 &&
           d->port == c->port && c->path_len > 0 &&
           (under_nocase(c->bare, c->bare_len, d->path, pl) ||
            under_nocase(c->path, c->path_len, d->path, pl));
}

const struct sworn_pdest *sworn_pdest_find_wide(const struct sworn_pdest *list, size_t n,
                                                const struct sworn_resource *c)
{
    for (size_t i = 0; i < n; i++)
        if (sworn_pdest_matches_wide(&list[i], c))
            return &list[i];
    return NULL;
}

const struct sworn_pdest *sworn_pdest_find(const struct sworn_pdest *list, size_t n,
                                           const struct sworn_resource *c)
{
    for (size_t i = 0; i < n; i++)
        if (sworn_pdest_matches(&list[i], c))
            return &list[i];
    return NULL;
}

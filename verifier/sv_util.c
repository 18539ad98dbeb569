/*
 * sv_util.c -- see sv_util.h.
 */
#include "sv_util.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

int sv_fail(char *why, const char *fmt, ...)
{
    va_list ap;

    if (why == NULL)
        return -1;
    va_start(ap, fmt);
    vsnprintf(why, SV_WHY, fmt, ap);
    va_end(ap);
    return -1;
}

void sv_sha256(const void *data, size_t len, uint8_t out[SV_HASH])
{
    SHA256(data, len, out);
}

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

long sv_b64_decode(const char *in, size_t in_len, uint8_t *out, size_t cap)
{
    size_t o = 0;

    if (in_len % 4 != 0)
        return -1;
    for (size_t i = 0; i < in_len; i += 4) {
        int v[4], pad = 0;
        uint32_t w;

        for (int j = 0; j < 4; j++) {
            unsigned char c = (unsigned char)in[i + j];

            if (c == '=') {
                /* Padding only in the last group, only at its end. */
                if (i + 4 != in_len || j < 2)
                    return -1;
                pad++;
                v[j] = 0;
                continue;
            }
            if (pad > 0)
                return -1;
            v[j] = b64_value(c);
            if (v[j] < 0)
                return -1;
        }
        w = ((uint32_t)v[0] << 18) | ((uint32_t)v[1] << 12) | ((uint32_t)v[2] << 6) |
            (uint32_t)v[3];
        /* Canonical: the bits that padding leaves unused are zero. */
        if ((pad == 1 && (w & 0xFF) != 0) || (pad == 2 && (w & 0xFFFF) != 0))
            return -1;
        if (o + (size_t)(3 - pad) > cap)
            return -1;
        out[o++] = (uint8_t)(w >> 16);
        if (pad < 2)
            out[o++] = (uint8_t)(w >> 8);
        if (pad < 1)
            out[o++] = (uint8_t)w;
    }
    return (long)o;
}

long sv_b64_encode(const uint8_t *in, size_t len, char *out, size_t cap)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t need = (len + 2) / 3 * 4, o = 0;

    if (need + 1 > cap)
        return -1;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t w = (uint32_t)in[i] << 16;
        size_t rem = len - i;

        if (rem > 1)
            w |= (uint32_t)in[i + 1] << 8;
        if (rem > 2)
            w |= in[i + 2];
        out[o++] = tab[(w >> 18) & 63];
        out[o++] = tab[(w >> 12) & 63];
        out[o++] = rem > 1 ? tab[(w >> 6) & 63] : '=';
        out[o++] = rem > 2 ? tab[w & 63] : '=';
    }
    out[o] = '\0';
    return (long)o;
}

void sv_hex(const uint8_t *in, size_t n, char *out)
{
    static const char d[] = "0123456789abcdef";

    for (size_t i = 0; i < n; i++) {
        out[2 * i] = d[in[i] >> 4];
        out[2 * i + 1] = d[in[i] & 15];
    }
    out[2 * n] = '\0';
}

int sv_unhex(const char *in, size_t in_len, uint8_t *out, size_t n)
{
    if (in_len != 2 * n)
        return -1;
    for (size_t i = 0; i < 2 * n; i++) {
        char c = in[i];
        int v;

        if (c >= '0' && c <= '9')
            v = c - '0';
        else if (c >= 'a' && c <= 'f')
            v = c - 'a' + 10;
        else
            return -1;
        if (i % 2 == 0)
            out[i / 2] = (uint8_t)(v << 4);
        else
            out[i / 2] |= (uint8_t)v;
    }
    return 0;
}

int sv_parse_u64(const char *in, size_t in_len, uint64_t *out)
{
    uint64_t v = 0;

    if (in_len == 0 || in_len > 20 || (in_len > 1 && in[0] == '0'))
        return -1;
    for (size_t i = 0; i < in_len; i++) {
        unsigned d;

        if (in[i] < '0' || in[i] > '9')
            return -1;
        d = (unsigned)(in[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int sv_read_file(const char *path, size_t max, uint8_t **data, size_t *len, int *missing, char *why)
{
    struct stat st;
    uint8_t *buf = NULL;
    size_t got = 0;
    int fd;

    *data = NULL;
    *len = 0;
    if (missing != NULL)
        *missing = 0;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno == ENOENT && missing != NULL)
            *missing = 1;
        return sv_fail(why, "%s: %s", path, strerror(errno));
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return sv_fail(why, "%s: not a regular file", path);
    }
    if ((uintmax_t)st.st_size > max) {
        close(fd);
        return sv_fail(why, "%s: %lld bytes, more than the %zu allowed", path,
                       (long long)st.st_size, max);
    }
    buf = malloc((size_t)st.st_size + 1);
    if (buf == NULL) {
        close(fd);
        return sv_fail(why, "%s: out of memory", path);
    }
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            free(buf);
            close(fd);
            return sv_fail(why, "%s: read failed", path);
        }
        got += (size_t)r;
    }
    close(fd);
    buf[got] = 0;
    *data = buf;
    *len = got;
    return 0;
}

int sv_write_file_atomic(const char *path, const void *data, size_t len, char *why)
{
    char tmp[4096], dir[4096];
    const uint8_t *p = data;
    size_t done = 0;
    int fd, dfd;

    if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp))
        return sv_fail(why, "%s: path too long", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return sv_fail(why, "%s: %s", tmp, strerror(errno));
    while (done < len) {
        ssize_t w = write(fd, p + done, len - done);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(fd);
            unlink(tmp);
            return sv_fail(why, "%s: write failed", tmp);
        }
        done += (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        unlink(tmp);
        return sv_fail(why, "%s: fsync failed", tmp);
    }
    if (rename(tmp, path) != 0) {
        unlink(tmp);
        return sv_fail(why, "%s: rename failed: %s", path, strerror(errno));
    }
    snprintf(dir, sizeof(dir), "%s", path);
    dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return 0;
}

int sv_utf8_valid(const uint8_t *s, size_t n)
{
    size_t i = 0;

    while (i < n) {
        uint8_t c = s[i];
        uint32_t cp;
        size_t k;

        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            k = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            k = 2;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3;
            cp = c & 0x07;
        } else {
            return 0;
        }
        /* All k continuation bytes must be there. */
        if (n - i <= k)
            return 0;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + j] & 0x3F);
        }
        if ((k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += k + 1;
    }
    return 1;
}

int sv_text_clean(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < 0x20 || s[i] == 0x7F)
            return 0;
    return sv_utf8_valid(s, n);
}

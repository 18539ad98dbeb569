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
    /* O_NONBLOCK: a FIFO put where a file should be must not hang the open (it waits for a
     * writer otherwise); what is not a regular file is refused below, and a regular file's reads
     * ignore the flag. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
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
    return sv_write_file_atomic_mode(path, data, len, 0600, why);
}

int sv_write_file_atomic_mode(const char *path, const void *data, size_t len, unsigned mode,
                              char *why)
{
    char tmp[4096], dir[4096];
    const uint8_t *p = data;
    size_t done = 0;
    struct stat st;
    int fd, dfd, r;

    /* The temporary: a fresh name made with O_CREAT | O_EXCL (mkstemp), so nothing planted in
     * the folder beforehand (a symbolic link, a hard link to another file) is ever opened. */
    if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp))
        return sv_fail(why, "%s: path too long", path);
    fd = mkstemp(tmp);
    if (fd < 0)
        return sv_fail(why, "%s: %s", tmp, strerror(errno));
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 || fchmod(fd, 0600) != 0) {
        close(fd);
        unlink(tmp);
        return sv_fail(why, "%s: %s", tmp, strerror(errno));
    }
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
    /* close runs whatever the first two gave, so no descriptor is left open on a failure. */
    r = fsync(fd) != 0 || fchmod(fd, (mode_t)(mode & 0777)) != 0;
    if (close(fd) != 0 || r) {
        unlink(tmp);
        return sv_fail(why, "%s: fsync, chmod or close failed", tmp);
    }
    /* The file replaced must be a regular file or absent: a symbolic link there is refused (a
     * rename would replace the link itself, not write through it, but it is not ours). */
    if (lstat(path, &st) == 0 ? !S_ISREG(st.st_mode) : errno != ENOENT) {
        unlink(tmp);
        return sv_fail(why, "%s: not a regular file (a symbolic link?): not replaced", path);
    }
    if (rename(tmp, path) != 0) {
        r = errno;
        unlink(tmp);
        return sv_fail(why, "%s: rename failed: %s", path, strerror(r));
    }
    snprintf(dir, sizeof(dir), "%s", path);
    dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return sv_fail(why, "%s: its folder: %s", path, strerror(errno));
    r = fsync(dfd);
    close(dfd);
    if (r != 0)
        return sv_fail(why, "%s: fsync of its folder failed", path);
    return 0;
}

size_t sv_utf8_next(const uint8_t *s, size_t n, uint32_t *cp)
{
    uint8_t c = s[0];
    size_t k;
    uint32_t v;

    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) {
        k = 1;
        v = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        k = 2;
        v = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        k = 3;
        v = c & 0x07;
    } else {
        return 0;
    }
    /* All k continuation bytes must be there. */
    if (n <= k)
        return 0;
    for (size_t j = 1; j <= k; j++) {
        if ((s[j] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[j] & 0x3F);
    }
    if ((k == 2 && v < 0x800) || (k == 3 && (v < 0x10000 || v > 0x10FFFF)) ||
        (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return k + 1;
}

int sv_utf8_valid(const uint8_t *s, size_t n)
{
    uint32_t cp;

    for (size_t i = 0, k; i < n; i += k)
        if ((k = sv_utf8_next(s + i, n - i, &cp)) == 0)
            return 0;
    return 1;
}

/*
 * The unsafe characters of docs/protocol.md section 3, which no recorded string may hold: the
 * controls (C0, DEL, C1), the separators U+2028/U+2029, the Default_Ignorable_Code_Points of
 * Unicode 15.1 (the bidi controls among them) and U+FFF9..U+FFFB. The verifier's own copy of the
 * list, written from the document: it shares no code with the recording side.
 */
int sv_unsafe_cp(uint32_t cp)
{
    static const uint32_t r[][2] = {
        {0x0000, 0x001F},   {0x007F, 0x009F},   {0x00AD, 0x00AD},   {0x034F, 0x034F},
        {0x061C, 0x061C},   {0x115F, 0x1160},   {0x17B4, 0x17B5},   {0x180B, 0x180F},
        {0x200B, 0x200F},   {0x2028, 0x202E},   {0x2060, 0x206F},   {0x3164, 0x3164},
        {0xFE00, 0xFE0F},   {0xFEFF, 0xFEFF},   {0xFFA0, 0xFFA0},   {0xFFF0, 0xFFFB},
        {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0000, 0xE0FFF},
    };

    for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
        if (cp >= r[i][0] && cp <= r[i][1])
            return 1;
    return 0;
}

int sv_text_clean(const uint8_t *s, size_t n)
{
    uint32_t cp;

    for (size_t i = 0, k; i < n; i += k)
        if ((k = sv_utf8_next(s + i, n - i, &cp)) == 0 || sv_unsafe_cp(cp))
            return 0;
    return 1;
}

/*
 * The report's escapers. Deliberately not the recording side's (common/utf8.c, which the
 * verifier must not link) and simpler than it: everything outside printable ASCII is escaped,
 * so no list is needed and no look-alike letter reaches the auditor's screen either.
 */
void sv_print_text(FILE *out, const char *s)
{
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '\\')
            fputs("\\\\", out);
        else if (c < 0x20 || c >= 0x7F)
            fprintf(out, "\\x%02x", c);
        else
            fputc(c, out);
    }
}

void sv_print_json_string(FILE *out, const char *s)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t n = strlen(s);

    fputc('"', out);
    for (size_t i = 0, k; i < n; i += k) {
        uint32_t cp = 0xFFFD;

        if ((k = sv_utf8_next(p + i, n - i, &cp)) == 0) {
            k = 1;
            cp = 0xFFFD; /* not UTF-8: the replacement character */
        }
        if (cp == '"' || cp == '\\')
            fprintf(out, "\\%c", (int)cp);
        else if (cp >= 0x20 && cp < 0x7F)
            fputc((int)cp, out);
        else if (cp <= 0xFFFF)
            fprintf(out, "\\u%04x", (unsigned)cp);
        else
            fprintf(out, "\\u%04x\\u%04x", (unsigned)(0xD800 + ((cp - 0x10000) >> 10)),
                    (unsigned)(0xDC00 + ((cp - 0x10000) & 0x3FF)));
    }
    fputc('"', out);
}

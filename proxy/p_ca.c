/*
 * p_ca.c -- see p_ca.h.
 */
#define _GNU_SOURCE /* timegm */
#include "p_ca.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "err.h"
#include "resource.h"
#include "safefile.h"
#include "secretfile.h"
#include "wipe.h"

#define SERIAL_LEN 16
#define CERT_FILE_MAX 65536u
#define KEY_FILE_MAX 16384u

/* One cached leaf context, in a hash chain and in the LRU list (head: most recently used). */
struct leaf {
    char host[SWORN_RESOURCE_HOST_MAX + 1];
    SSL_CTX *ctx;
    time_t not_before, not_after;
    struct leaf *chain;
    struct leaf *newer, *older;
};

struct sworn_proxy_ca {
    pthread_mutex_t lock; /* guards everything below that changes: the cache and the stats */
    X509 *cert;
    EVP_PKEY *key;      /* the CA's private key */
    EVP_PKEY *leaf_key; /* the one key of every leaf, generated at load */
    time_t not_after;   /* the CA certificate's */
    uint8_t fingerprint[32];
    unsigned ttl;
    size_t cache_max, nbuckets; /* nbuckets: a power of two */
    struct leaf **buckets;
    struct leaf *newest, *oldest;
    struct sworn_proxy_ca_stats stats;
};

/* The first OpenSSL error as text, for a message (OpenSSL's error queue is cleared). */
static const char *ossl_reason(char *buf, size_t cap)
{
    unsigned long e = ERR_get_error();

    if (e == 0)
        snprintf(buf, cap, "no OpenSSL detail");
    else
        ERR_error_string_n(e, buf, cap);
    ERR_clear_error();
    return buf;
}

static int crypto_fail(const char *what)
{
    char reason[256];

    return sworn_err_set(SWORN_ERR_CRYPTO, "local CA: %s: %s", what,
                         ossl_reason(reason, sizeof(reason)));
}

/* PEM readers never prompt: an encrypted key is refused. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)u;
    return -1;
}

/* A fresh positive 16-byte random serial number into cert. */
static int set_random_serial(X509 *cert)
{
    unsigned char raw[SERIAL_LEN];
    BIGNUM *bn = NULL;
    int ok;

    if (RAND_bytes(raw, sizeof(raw)) != 1)
        return crypto_fail("random serial");
    raw[0] |= 0x01; /* never all zero: a serial number must be positive */
    bn = BN_bin2bn(raw, sizeof(raw), NULL);
    ok = bn != NULL && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) != NULL;
    BN_free(bn);
    return ok ? 0 : crypto_fail("serial number");
}

/* Add one extension written in OpenSSL's configuration syntax (our own constant strings). */
static int add_ext(X509 *cert, X509V3_CTX *v3, int nid, const char *value)
{
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, v3, nid, value);
    int ok = ext != NULL && X509_add_ext(cert, ext, -1) == 1;

    X509_EXTENSION_free(ext);
    return ok ? 0 : crypto_fail(OBJ_nid2sn(nid));
}

/* Set notBefore and notAfter. */
static int set_validity(X509 *cert, time_t not_before, time_t not_after)
{
    if (ASN1_TIME_set(X509_getm_notBefore(cert), not_before) == NULL ||
        ASN1_TIME_set(X509_getm_notAfter(cert), not_after) == NULL)
        return crypto_fail("validity");
    return 0;
}

/* An ASN1_TIME as a time_t. */
static int asn1_to_time(const ASN1_TIME *t, time_t *out)
{
    struct tm tm;

    memset(&tm, 0, sizeof(tm));
    if (ASN1_TIME_to_tm(t, &tm) != 1)
        return sworn_err_set(SWORN_ERR_FORMAT, "local CA: a certificate time does not decode");
    *out = timegm(&tm);
    return 0;
}

/* Write all of data to fd, then fsync it. */
static int write_all(int fd, const void *data, size_t len, const char *path)
{
    const uint8_t *p = data;

    while (len > 0) {
        ssize_t n = write(fd, p, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return sworn_err_set(SWORN_ERR_IO, "local CA: cannot write %s: %s", path,
                                 n < 0 ? strerror(errno) : "short write");
        p += n;
        len -= (size_t)n;
    }
    if (fsync(fd) != 0)
        return sworn_err_set(SWORN_ERR_IO, "local CA: cannot fsync %s: %s", path, strerror(errno));
    return 0;
}

/* Create name in dfd (never replacing anything, never through a link) with mode, holding data. */
static int create_file(int dfd, const char *dir, const char *name, unsigned mode, const void *data,
                       size_t len)
{
    int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    int rc;

    if (fd < 0)
        return sworn_err_set(SWORN_ERR_IO, "local CA: cannot create %s/%s: %s", dir, name,
                             strerror(errno));
    /* The umask may have taken bits away; the mode is the documented one, exactly. */
    rc = fchmod(fd, mode) == 0 ? write_all(fd, data, len, name)
                               : sworn_err_set(SWORN_ERR_IO, "local CA: cannot chmod %s/%s: %s",
                                               dir, name, strerror(errno));
    if (close(fd) != 0 && rc == 0)
        rc = sworn_err_set(SWORN_ERR_IO, "local CA: cannot close %s/%s: %s", dir, name,
                           strerror(errno));
    if (rc != 0)
        unlinkat(dfd, name, 0); /* ours (O_EXCL made it): leave no partial file */
    return rc;
}

/* Refuse when name exists in dfd in any form (a file, a dangling link, a folder). */
static int must_be_absent(int dfd, const char *dir, const char *name)
{
    struct stat st;

    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        return sworn_err_set(SWORN_ERR_IO,
                             "local CA: %s/%s already exists; refusing to overwrite a CA (remove "
                             "both ca.key and ca.crt first to make a new one)",
                             dir, name);
    if (errno != ENOENT)
        return sworn_err_set(SWORN_ERR_IO, "local CA: cannot check %s/%s: %s", dir, name,
                             strerror(errno));
    return 0;
}

/* 1..64 printable ASCII bytes. */
static int cn_ok(const char *cn)
{
    size_t n = strlen(cn);

    if (n < 1 || n > SWORN_PROXY_CA_CN_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (cn[i] < 0x20 || cn[i] > 0x7e)
            return 0;
    return 1;
}

/* The self-signed CA certificate for key. */
static X509 *make_ca_cert(EVP_PKEY *key, const char *cn, unsigned days, time_t now)
{
    X509 *cert = X509_new();
    X509_NAME *name;
    X509V3_CTX v3;

    if (cert == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "local CA: out of memory");
        return NULL;
    }
    name = X509_get_subject_name(cert);
    if (X509_set_version(cert, 2) != 1 ||
        X509_NAME_add_entry_by_NID(name, NID_commonName, MBSTRING_ASC, (const unsigned char *)cn,
                                   -1, -1, 0) != 1 ||
        X509_set_issuer_name(cert, name) != 1 || X509_set_pubkey(cert, key) != 1) {
        crypto_fail("CA certificate fields");
        goto fail;
    }
    SWORN_GUARD(set_random_serial(cert));
    SWORN_GUARD(set_validity(cert, now - SWORN_PROXY_CA_BACKDATE_S, now + (time_t)days * 86400));
    X509V3_set_ctx(&v3, cert, cert, NULL, NULL, 0);
    SWORN_GUARD(add_ext(cert, &v3, NID_basic_constraints, "critical,CA:TRUE,pathlen:0"));
    SWORN_GUARD(add_ext(cert, &v3, NID_key_usage, "critical,keyCertSign,cRLSign"));
    SWORN_GUARD(add_ext(cert, &v3, NID_subject_key_identifier, "hash"));
    if (X509_sign(cert, key, EVP_sha256()) <= 0) {
        crypto_fail("signing the CA certificate");
        goto fail;
    }
    return cert;
fail:
    X509_free(cert);
    return NULL;
}

int sworn_proxy_ca_init(const char *dir, const char *cn, unsigned days)
{
    EVP_PKEY *key = NULL;
    X509 *cert = NULL;
    BIO *key_pem = NULL, *cert_pem = NULL;
    char *data = NULL;
    long n;
    int dfd = -1, key_made = 0, cert_made = 0;

    if (dir == NULL || cn == NULL || !cn_ok(cn) || days < 1 || days > SWORN_PROXY_CA_DAYS_MAX)
        return sworn_err_set(SWORN_ERR_ARG,
                             "local CA: init needs a folder, a common name of 1 to 64 printable "
                             "ASCII characters and 1 to %u days",
                             SWORN_PROXY_CA_DAYS_MAX);
    SWORN_GUARD(sworn_safefile_opendir(dir, 0, "CA folder", &dfd));
    SWORN_GUARD(must_be_absent(dfd, dir, SWORN_PROXY_CA_KEY_FILE));
    SWORN_GUARD(must_be_absent(dfd, dir, SWORN_PROXY_CA_CERT_FILE));
    key = EVP_EC_gen("P-256");
    if (key == NULL) {
        crypto_fail("generating the CA key");
        goto fail;
    }
    cert = make_ca_cert(key, cn, days, time(NULL));
    if (cert == NULL)
        goto fail;
    key_pem = BIO_new(BIO_s_mem());
    cert_pem = BIO_new(BIO_s_mem());
    SWORN_ENSURE(key_pem != NULL && cert_pem != NULL, SWORN_ERR_NOMEM, "local CA: out of memory");
    if (PEM_write_bio_PrivateKey(key_pem, key, NULL, NULL, 0, NULL, NULL) != 1 ||
        PEM_write_bio_X509(cert_pem, cert) != 1) {
        crypto_fail("writing PEM");
        goto fail;
    }
    n = BIO_get_mem_data(key_pem, &data);
    SWORN_ENSURE(n > 0, SWORN_ERR_CRYPTO, "local CA: empty key PEM");
    SWORN_GUARD(create_file(dfd, dir, SWORN_PROXY_CA_KEY_FILE, 0600, data, (size_t)n));
    key_made = 1;
    n = BIO_get_mem_data(cert_pem, &data);
    SWORN_ENSURE(n > 0, SWORN_ERR_CRYPTO, "local CA: empty certificate PEM");
    SWORN_GUARD(create_file(dfd, dir, SWORN_PROXY_CA_CERT_FILE, 0644, data, (size_t)n));
    cert_made = 1;
    SWORN_ENSURE(fsync(dfd) == 0, SWORN_ERR_IO, "local CA: cannot fsync %s: %s", dir,
                 strerror(errno));
    n = BIO_get_mem_data(key_pem, &data);
    sworn_memzero(data, (size_t)n);
    BIO_free(key_pem);
    BIO_free(cert_pem);
    X509_free(cert);
    EVP_PKEY_free(key);
    close(dfd);
    return 0;
fail:
    /* Leave no half CA behind, and remove only what this call created. */
    if (cert_made)
        unlinkat(dfd, SWORN_PROXY_CA_CERT_FILE, 0);
    if (key_made)
        unlinkat(dfd, SWORN_PROXY_CA_KEY_FILE, 0);
    if (key_pem != NULL) {
        n = BIO_get_mem_data(key_pem, &data);
        if (n > 0)
            sworn_memzero(data, (size_t)n);
    }
    BIO_free(key_pem);
    BIO_free(cert_pem);
    X509_free(cert);
    EVP_PKEY_free(key);
    if (dfd >= 0)
        close(dfd);
    return -1;
}

/* The CA certificate at path: exactly one PEM certificate, a CA, valid now. */
static X509 *load_ca_cert(const char *path)
{
    char *pem = NULL;
    size_t len = 0;
    BIO *bio = NULL;
    X509 *cert = NULL, *extra = NULL;
    uint32_t flags;

    if (sworn_safefile_read(path, 0, SWORN_SAFEFILE_NOBODY, "CA certificate", CERT_FILE_MAX, &pem,
                            &len) < 0)
        return NULL;
    bio = BIO_new_mem_buf(pem, (int)len);
    SWORN_ENSURE(bio != NULL, SWORN_ERR_NOMEM, "local CA: out of memory");
    cert = PEM_read_bio_X509(bio, NULL, no_passphrase, NULL);
    SWORN_ENSURE(cert != NULL, SWORN_ERR_FORMAT, "local CA: %s holds no PEM certificate", path);
    extra = PEM_read_bio_X509(bio, NULL, no_passphrase, NULL);
    ERR_clear_error(); /* the expected end of input */
    SWORN_ENSURE(extra == NULL, SWORN_ERR_FORMAT,
                 "local CA: %s holds more than one certificate (it must hold the CA's only)", path);
    flags = X509_get_extension_flags(cert);
    SWORN_ENSURE((flags & EXFLAG_INVALID) == 0, SWORN_ERR_FORMAT,
                 "local CA: %s: the certificate's extensions are invalid", path);
    SWORN_ENSURE((flags & EXFLAG_BCONS) != 0 && (flags & EXFLAG_CA) != 0, SWORN_ERR_FORMAT,
                 "local CA: %s is not a CA certificate (basicConstraints CA:TRUE is required)",
                 path);
    SWORN_ENSURE((X509_get_key_usage(cert) & KU_KEY_CERT_SIGN) != 0, SWORN_ERR_FORMAT,
                 "local CA: %s: the certificate's keyUsage does not allow keyCertSign", path);
    SWORN_ENSURE(X509_cmp_current_time(X509_get0_notBefore(cert)) < 0, SWORN_ERR_FORMAT,
                 "local CA: %s is not valid yet", path);
    SWORN_ENSURE(X509_cmp_current_time(X509_get0_notAfter(cert)) > 0, SWORN_ERR_FORMAT,
                 "local CA: %s has expired (make a new CA with `sworn-proxy ca init`)", path);
    BIO_free(bio);
    free(pem);
    return cert;
fail:
    X509_free(extra);
    X509_free(cert);
    BIO_free(bio);
    free(pem);
    return NULL;
}

/* The CA key at path, read as a secret, of a type the leaves can be signed with. */
static EVP_PKEY *load_ca_key(const char *path)
{
    uint8_t *pem = malloc(KEY_FILE_MAX);
    EVP_PKEY *key = NULL;
    size_t len = 0;
    BIO *bio = NULL;
    char group[32] = "";

    SWORN_ENSURE(pem != NULL, SWORN_ERR_NOMEM, "local CA: out of memory");
    SWORN_GUARD(sworn_secretfile_read(path, "CA key", pem, KEY_FILE_MAX, &len));
    bio = BIO_new_mem_buf(pem, (int)len);
    SWORN_ENSURE(bio != NULL, SWORN_ERR_NOMEM, "local CA: out of memory");
    key = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
    ERR_clear_error();
    SWORN_ENSURE(key != NULL, SWORN_ERR_FORMAT,
                 "local CA: %s is not an unencrypted PEM private key", path);
    switch (EVP_PKEY_get_base_id(key)) {
    case EVP_PKEY_EC:
        SWORN_ENSURE(EVP_PKEY_get_group_name(key, group, sizeof(group), NULL) == 1 &&
                         (strcmp(group, "prime256v1") == 0 || strcmp(group, "P-256") == 0 ||
                          strcmp(group, "secp384r1") == 0 || strcmp(group, "P-384") == 0),
                     SWORN_ERR_FORMAT, "local CA: %s: an EC CA key must be on P-256 or P-384",
                     path);
        break;
    case EVP_PKEY_RSA:
        SWORN_ENSURE(EVP_PKEY_get_bits(key) >= 2048, SWORN_ERR_FORMAT,
                     "local CA: %s: an RSA CA key must have at least 2048 bits", path);
        break;
    default:
        sworn_err_set(SWORN_ERR_FORMAT, "local CA: %s: the key must be EC (P-256, P-384) or RSA",
                      path);
        goto fail;
    }
    BIO_free(bio);
    sworn_memzero(pem, KEY_FILE_MAX);
    free(pem);
    return key;
fail:
    EVP_PKEY_free(key);
    BIO_free(bio);
    if (pem != NULL)
        sworn_memzero(pem, KEY_FILE_MAX);
    free(pem);
    return NULL;
}

int sworn_proxy_ca_load(const char *cert_path, const char *key_path, unsigned leaf_ttl_s,
                        size_t cache_max, struct sworn_proxy_ca **out)
{
    struct sworn_proxy_ca *ca = NULL;
    unsigned fp_len = 0;
    int mutex_made = 0;

    if (out != NULL)
        *out = NULL;
    if (cert_path == NULL || key_path == NULL || out == NULL ||
        leaf_ttl_s < SWORN_PROXY_LEAF_TTL_MIN || leaf_ttl_s > SWORN_PROXY_LEAF_TTL_MAX ||
        cache_max > SWORN_PROXY_CACHE_MAX)
        return sworn_err_set(SWORN_ERR_ARG,
                             "local CA: load needs a certificate, a key, a leaf lifetime of %u to "
                             "%u seconds and a cache of at most %u contexts",
                             SWORN_PROXY_LEAF_TTL_MIN, SWORN_PROXY_LEAF_TTL_MAX,
                             SWORN_PROXY_CACHE_MAX);
    ca = calloc(1, sizeof(*ca));
    SWORN_ENSURE(ca != NULL, SWORN_ERR_NOMEM, "local CA: out of memory");
    SWORN_ENSURE(pthread_mutex_init(&ca->lock, NULL) == 0, SWORN_ERR_NOMEM,
                 "local CA: cannot make a mutex");
    mutex_made = 1;
    ca->ttl = leaf_ttl_s;
    ca->cache_max = cache_max;
    ca->nbuckets = 16;
    while (ca->nbuckets < cache_max)
        ca->nbuckets *= 2;
    ca->buckets = calloc(ca->nbuckets, sizeof(*ca->buckets));
    SWORN_ENSURE(ca->buckets != NULL, SWORN_ERR_NOMEM, "local CA: out of memory");
    ca->cert = load_ca_cert(cert_path);
    if (ca->cert == NULL)
        goto fail;
    ca->key = load_ca_key(key_path);
    if (ca->key == NULL)
        goto fail;
    SWORN_ENSURE(X509_check_private_key(ca->cert, ca->key) == 1, SWORN_ERR_FORMAT,
                 "local CA: the key %s does not belong to the certificate %s", key_path, cert_path);
    ERR_clear_error();
    SWORN_GUARD(asn1_to_time(X509_get0_notAfter(ca->cert), &ca->not_after));
    if (X509_digest(ca->cert, EVP_sha256(), ca->fingerprint, &fp_len) != 1 || fp_len != 32) {
        crypto_fail("CA fingerprint");
        goto fail;
    }
    ca->leaf_key = EVP_EC_gen("P-256");
    if (ca->leaf_key == NULL) {
        crypto_fail("generating the leaf key");
        goto fail;
    }
    *out = ca;
    return 0;
fail:
    ERR_clear_error();
    if (ca != NULL) {
        X509_free(ca->cert);
        EVP_PKEY_free(ca->key);
        EVP_PKEY_free(ca->leaf_key);
        free(ca->buckets);
        if (mutex_made)
            pthread_mutex_destroy(&ca->lock);
        free(ca);
    }
    return -1;
}

void sworn_proxy_ca_free(struct sworn_proxy_ca *ca)
{
    struct leaf *l, *next;

    if (ca == NULL)
        return;
    for (l = ca->newest; l != NULL; l = next) {
        next = l->older;
        SSL_CTX_free(l->ctx);
        free(l);
    }
    free(ca->buckets);
    X509_free(ca->cert);
    EVP_PKEY_free(ca->key);
    EVP_PKEY_free(ca->leaf_key);
    pthread_mutex_destroy(&ca->lock);
    free(ca);
}

void sworn_proxy_ca_fingerprint(const struct sworn_proxy_ca *ca, uint8_t out[32])
{
    memcpy(out, ca->fingerprint, 32);
}

X509 *sworn_proxy_ca_cert(const struct sworn_proxy_ca *ca)
{
    return ca->cert;
}

void sworn_proxy_ca_stats(struct sworn_proxy_ca *ca, struct sworn_proxy_ca_stats *out)
{
    pthread_mutex_lock(&ca->lock);
    *out = ca->stats;
    pthread_mutex_unlock(&ca->lock);
}

/* --- The server context of one leaf. --- */

/* The leaf's host, kept with each context (freed with it) for the SNI check. */
static int host_index = -1;
static pthread_once_t host_index_once = PTHREAD_ONCE_INIT;

static void free_host(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
{
    (void)parent;
    (void)ad;
    (void)idx;
    (void)argl;
    (void)argp;
    free(ptr);
}

static void make_host_index(void)
{
    host_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, free_host);
}

/*
 * ALPN: "http/1.1" when the client offers it, otherwise nothing is selected (NOACK: the
 * handshake goes on without ALPN). The client's list is walked within its length.
 */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    unsigned i = 0;

    (void)ssl;
    (void)arg;
    while (i < inlen) {
        unsigned n = in[i];

        if (n == 0 || n > inlen - i - 1)
            break; /* malformed (OpenSSL checks it before us): select nothing */
        if (n == 8 && memcmp(in + i + 1, "http/1.1", 8) == 0) {
            *out = in + i + 1;
            *outlen = 8;
            return SSL_TLSEXT_ERR_OK;
        }
        i += 1 + n;
    }
    return SSL_TLSEXT_ERR_NOACK;
}

/* Is sni (as OpenSSL read it) the leaf's host, letter case and one trailing dot aside? */
static int sni_names_host(const char *sni, const char *host)
{
    size_t n = strlen(sni), h = strlen(host);

    if (n == h + 1 && sni[h] == '.')
        n = h;
    return n == h && strncasecmp(sni, host, h) == 0;
}

static int sni_check(SSL *ssl, int *alert, void *arg)
{
    const char *sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    const char *host = arg;

    if (sni == NULL)
        return SSL_TLSEXT_ERR_OK;
    if (host != NULL && sni_names_host(sni, host))
        return SSL_TLSEXT_ERR_OK;
    *alert = SSL_AD_UNRECOGNIZED_NAME;
    return SSL_TLSEXT_ERR_ALERT_FATAL;
}

/* The subjectAltName of host: one dNSName or one iPAddress. */
static int add_san(X509 *cert, const char *host, enum sworn_resource_host_kind kind, int critical)
{
    GENERAL_NAMES *names = sk_GENERAL_NAME_new_null();
    GENERAL_NAME *gn = GENERAL_NAME_new();
    ASN1_IA5STRING *dns = NULL;
    ASN1_OCTET_STRING *ip = NULL;
    char text[SWORN_RESOURCE_HOST_MAX + 1];
    size_t n = strlen(host);
    int ok = 0;

    if (names == NULL || gn == NULL)
        goto done;
    if (kind == SWORN_RESOURCE_HOST_NAME) {
        dns = ASN1_IA5STRING_new();
        if (dns == NULL || ASN1_STRING_set(dns, host, (int)n) != 1)
            goto done;
        GENERAL_NAME_set0_value(gn, GEN_DNS, dns);
        dns = NULL;
    } else {
        if (kind == SWORN_RESOURCE_HOST_IPV6) { /* "[v6]" */
            memcpy(text, host + 1, n - 2);
            text[n - 2] = '\0';
        } else {
            memcpy(text, host, n + 1);
        }
        ip = a2i_IPADDRESS(text);
        if (ip == NULL)
            goto done;
        GENERAL_NAME_set0_value(gn, GEN_IPADD, ip);
        ip = NULL;
    }
    if (sk_GENERAL_NAME_push(names, gn) <= 0)
        goto done;
    gn = NULL;
    ok = X509_add1_ext_i2d(cert, NID_subject_alt_name, names, critical, X509V3_ADD_DEFAULT) == 1;
done:
    ASN1_IA5STRING_free(dns);
    ASN1_OCTET_STRING_free(ip);
    GENERAL_NAME_free(gn);
    GENERAL_NAMES_free(names);
    return ok ? 0 : crypto_fail("subjectAltName");
}

/* A leaf certificate for host, valid from not_before to not_after. */
static X509 *mint_leaf(struct sworn_proxy_ca *ca, const char *host,
                       enum sworn_resource_host_kind kind, time_t not_before, time_t not_after)
{
    X509 *cert = X509_new();
    int has_cn = kind == SWORN_RESOURCE_HOST_NAME && strlen(host) <= SWORN_PROXY_CA_CN_MAX;
    X509V3_CTX v3;

    if (cert == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "local CA: out of memory");
        return NULL;
    }
    if (X509_set_version(cert, 2) != 1 ||
        X509_set_issuer_name(cert, X509_get_subject_name(ca->cert)) != 1 ||
        (has_cn &&
         X509_NAME_add_entry_by_NID(X509_get_subject_name(cert), NID_commonName, MBSTRING_ASC,
                                    (const unsigned char *)host, -1, -1, 0) != 1) ||
        X509_set_pubkey(cert, ca->leaf_key) != 1) {
        crypto_fail("leaf certificate fields");
        goto fail;
    }
    SWORN_GUARD(set_random_serial(cert));
    SWORN_GUARD(set_validity(cert, not_before, not_after));
    SWORN_GUARD(add_san(cert, host, kind, !has_cn));
    X509V3_set_ctx(&v3, ca->cert, cert, NULL, NULL, 0);
    SWORN_GUARD(add_ext(cert, &v3, NID_basic_constraints, "critical,CA:FALSE"));
    SWORN_GUARD(add_ext(cert, &v3, NID_key_usage, "critical,digitalSignature"));
    SWORN_GUARD(add_ext(cert, &v3, NID_ext_key_usage, "serverAuth"));
    SWORN_GUARD(add_ext(cert, &v3, NID_subject_key_identifier, "hash"));
    SWORN_GUARD(add_ext(cert, &v3, NID_authority_key_identifier, "keyid,issuer"));
    if (X509_sign(cert, ca->key, EVP_sha256()) <= 0) {
        crypto_fail("signing a leaf certificate");
        goto fail;
    }
    return cert;
fail:
    X509_free(cert);
    return NULL;
}

/* A server context presenting leaf + CA certificate, with the host kept for the SNI check. */
static SSL_CTX *leaf_ctx(struct sworn_proxy_ca *ca, X509 *leaf, const char *host)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    char *copy = NULL;

    if (ctx == NULL) {
        crypto_fail("server TLS context");
        return NULL;
    }
    pthread_once(&host_index_once, make_host_index);
    copy = strdup(host);
    SWORN_ENSURE(copy != NULL && host_index >= 0, SWORN_ERR_NOMEM, "local CA: out of memory");
    if (SSL_CTX_set_ex_data(ctx, host_index, copy) != 1) {
        free(copy);
        crypto_fail("server TLS context data");
        goto fail;
    }
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
        SSL_CTX_use_certificate(ctx, leaf) != 1 || SSL_CTX_use_PrivateKey(ctx, ca->leaf_key) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1 || SSL_CTX_add1_chain_cert(ctx, ca->cert) != 1) {
        crypto_fail("server TLS context");
        goto fail;
    }
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
                                 SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
    SSL_CTX_set_tlsext_servername_callback(ctx, sni_check);
    SSL_CTX_set_tlsext_servername_arg(ctx, copy);
    return ctx;
fail:
    SSL_CTX_free(ctx); /* frees copy once it is the context's */
    return NULL;
}

/* --- The cache (callers hold ca->lock). --- */

static size_t bucket_of(const struct sworn_proxy_ca *ca, const char *host)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */

    for (const unsigned char *p = (const unsigned char *)host; *p != '\0'; p++)
        h = (h ^ *p) * 1099511628211ull;
    return (size_t)(h & (ca->nbuckets - 1));
}

static struct leaf *cache_find(struct sworn_proxy_ca *ca, const char *host)
{
    for (struct leaf *l = ca->buckets[bucket_of(ca, host)]; l != NULL; l = l->chain)
        if (strcmp(l->host, host) == 0)
            return l;
    return NULL;
}

static void lru_unlink(struct sworn_proxy_ca *ca, struct leaf *l)
{
    if (l->newer != NULL)
        l->newer->older = l->older;
    else
        ca->newest = l->older;
    if (l->older != NULL)
        l->older->newer = l->newer;
    else
        ca->oldest = l->newer;
    l->newer = l->older = NULL;
}

static void lru_push_newest(struct sworn_proxy_ca *ca, struct leaf *l)
{
    l->older = ca->newest;
    l->newer = NULL;
    if (ca->newest != NULL)
        ca->newest->newer = l;
    ca->newest = l;
    if (ca->oldest == NULL)
        ca->oldest = l;
}

/* Take l out of the cache and free it (its context lives on in whoever holds a reference). */
static void cache_drop(struct sworn_proxy_ca *ca, struct leaf *l)
{
    struct leaf **pp = &ca->buckets[bucket_of(ca, l->host)];

    while (*pp != l)
        pp = &(*pp)->chain;
    *pp = l->chain;
    lru_unlink(ca, l);
    SSL_CTX_free(l->ctx);
    free(l);
    ca->stats.cached--;
}

/* Keep ctx for host (a new reference is taken), evicting the least recently used if full. */
static void cache_put(struct sworn_proxy_ca *ca, const char *host, SSL_CTX *ctx, time_t not_before,
                      time_t not_after)
{
    struct leaf *l;
    size_t b;

    if (ca->cache_max == 0)
        return;
    while (ca->stats.cached >= ca->cache_max && ca->oldest != NULL) {
        cache_drop(ca, ca->oldest);
        ca->stats.evictions++;
    }
    l = calloc(1, sizeof(*l));
    if (l == NULL || SSL_CTX_up_ref(ctx) != 1) {
        free(l); /* not caching is not an error: the caller has its context */
        return;
    }
    memcpy(l->host, host, strlen(host) + 1);
    l->ctx = ctx;
    l->not_before = not_before;
    l->not_after = not_after;
    b = bucket_of(ca, host);
    l->chain = ca->buckets[b];
    ca->buckets[b] = l;
    lru_push_newest(ca, l);
    ca->stats.cached++;
}

/* Is l still good at now: not before its notBefore, and at least 1/4 of its lifetime left? */
static int fresh(const struct leaf *l, time_t now)
{
    time_t lifetime = l->not_after - (l->not_before + SWORN_PROXY_LEAF_BACKDATE_S);

    return now >= l->not_before && now < l->not_after && (l->not_after - now) * 4 >= lifetime;
}

SSL_CTX *sworn_proxy_ca_ctx_for(struct sworn_proxy_ca *ca, const char *host, time_t now)
{
    char canon[SWORN_RESOURCE_HOST_MAX + 1];
    enum sworn_resource_host_kind kind;
    uint8_t addr[16];
    const char *why = NULL;
    struct leaf *l;
    SSL_CTX *ctx = NULL;
    X509 *leaf = NULL;
    time_t not_before, not_after;
    int renewal = 0;

    if (ca == NULL || host == NULL) {
        sworn_err_set(SWORN_ERR_ARG, "local CA: no CA or no host");
        return NULL;
    }
    if (sworn_resource_canon_host(host, canon, &kind, addr, &why) != 0) {
        sworn_err_set(SWORN_ERR_ARG, "local CA: cannot mint a leaf for a host that is not one: %s",
                      why);
        return NULL;
    }
    if (strcmp(canon, host) != 0) {
        sworn_err_set(SWORN_ERR_ARG, "local CA: host %s is not canonical (%s)", host, canon);
        return NULL;
    }
    pthread_mutex_lock(&ca->lock);
    l = cache_find(ca, host);
    if (l != NULL && fresh(l, now)) {
        lru_unlink(ca, l);
        lru_push_newest(ca, l);
        ca->stats.hits++;
        ctx = SSL_CTX_up_ref(l->ctx) == 1 ? l->ctx : NULL;
        pthread_mutex_unlock(&ca->lock);
        if (ctx == NULL)
            crypto_fail("context reference");
        return ctx;
    }
    if (l != NULL) {
        cache_drop(ca, l);
        renewal = 1;
    }
    SWORN_ENSURE(now < ca->not_after, SWORN_ERR_FORMAT,
                 "local CA: the CA certificate has expired; make a new CA");
    not_before = now - SWORN_PROXY_LEAF_BACKDATE_S;
    not_after = now + (time_t)ca->ttl;
    if (not_after > ca->not_after)
        not_after = ca->not_after;
    leaf = mint_leaf(ca, host, kind, not_before, not_after);
    if (leaf == NULL)
        goto fail;
    ctx = leaf_ctx(ca, leaf, host);
    if (ctx == NULL)
        goto fail;
    X509_free(leaf);
    ca->stats.mints++;
    ca->stats.renewals += (uint64_t)renewal;
    cache_put(ca, host, ctx, not_before, not_after);
    pthread_mutex_unlock(&ca->lock);
    return ctx;
fail:
    X509_free(leaf);
    pthread_mutex_unlock(&ca->lock);
    return NULL;
}

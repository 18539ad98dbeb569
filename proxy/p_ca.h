/*
 * p_ca.h -- the proxy's local certificate authority: it terminates the TLS of a CONNECT tunnel
 * with a leaf certificate for the tunnel's host, minted on the fly, cached and short-lived. A
 * sandbox trusts the CA certificate (and nothing else needs to).
 *
 * Files (sworn_proxy_ca_init; docs/proxy.md "The local CA"):
 *   DIR/ca.key  the CA's EC P-256 private key, PKCS#8 PEM, unencrypted, mode 0600, created with
 *               O_CREAT|O_EXCL|O_NOFOLLOW; readable by the proxy's user only.
 *   DIR/ca.crt  its self-signed certificate, PEM, mode 0644: X.509 v3, subject and issuer
 *               CN=<cn>, 16 random serial bytes, valid from now - 1 h for <days> days,
 *               ecdsa-with-SHA256, basicConstraints critical CA:TRUE pathlen:0, keyUsage critical
 *               keyCertSign cRLSign, subjectKeyIdentifier (SHA-1 of the public key).
 *   Neither is ever overwritten: init refuses when either exists (as a file, a link or anything).
 *
 * Loading (sworn_proxy_ca_load): the certificate through common/safefile.h (no symbolic link on
 * the path; file and folders root's or the caller's, not writable by others), exactly one PEM
 * certificate, a CA (basicConstraints present with CA:TRUE; keyUsage, if present, holding
 * keyCertSign), valid now; the key through common/secretfile.h (the same, plus no permission bit
 * for group or others: 0600 or stricter), an unencrypted PEM key (EC P-256 or P-384, or RSA of
 * at least 2048 bits) matching the certificate. The PEM bytes of the key are wiped after parsing.
 * One EC P-256 leaf key is generated per loaded CA; it lives in memory only and signs every
 * leaf's handshakes.
 *
 * Leaf profile (sworn_proxy_ca_ctx_for), for a canonical host of policy/resource.h:
 *   X.509 v3, 16 random serial bytes, issuer the CA's subject, notBefore now - 300 s, notAfter
 *   now + leaf_ttl_s (never after the CA's own notAfter), signed by the CA key with SHA-256;
 *   subject CN=<host> for a name of at most 64 bytes, otherwise an empty subject;
 *   subjectAltName dNSName <host> for a name, iPAddress for a dotted quad or "[v6]" (critical
 *   when the subject is empty, RFC 5280 4.2.1.6); basicConstraints critical CA:FALSE; keyUsage
 *   critical digitalSignature; extendedKeyUsage serverAuth; subjectKeyIdentifier;
 *   authorityKeyIdentifier (the CA's key id).
 * The SSL_CTX presents leaf + CA certificate, accepts TLS 1.2 and 1.3 (no renegotiation, no
 * compression), selects ALPN "http/1.1" only when the client offers it (otherwise no ALPN at
 * all: a client offering only h2 goes on as HTTP/1.1 or gives up), and refuses a handshake whose
 * SNI names another host than the leaf's (fatal unrecognized_name alert; a single trailing dot
 * and letter case aside), so OpenSSL's reading of the SNI cannot differ from the one the leaf was
 * chosen by. A handshake without SNI is accepted (the caller decides what that means).
 *
 * Cache: up to cache_max contexts, one per host, least recently used evicted first (0: none
 * kept, every call mints). A cached context is returned while at least 1/4 of its leaf's
 * lifetime is left at `now`, and while `now` is not before its notBefore; otherwise a new leaf is
 * minted and replaces it. Contexts handed out are reference-counted: evicting one does not end
 * connections that use it.
 *
 * Errors (sworn_err): SWORN_ERR_ARG (bad arguments, a host that is not canonical), SWORN_ERR_IO
 * (files: missing, exists, wrong kind, owner or mode), SWORN_ERR_FORMAT (PEM or content that is
 * not what is required: not a CA, key mismatch, expired), SWORN_ERR_CRYPTO (OpenSSL failed),
 * SWORN_ERR_NOMEM.
 *
 * Thread safety: a loaded CA may be used by several threads (the cache is behind a mutex); free
 * it once no call on it is running. Contexts it returns follow OpenSSL's rules.
 */
#ifndef SWORN_P_CA_H
#define SWORN_P_CA_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <openssl/ssl.h>

#define SWORN_PROXY_CA_KEY_FILE "ca.key"
#define SWORN_PROXY_CA_CERT_FILE "ca.crt"
#define SWORN_PROXY_CA_CN_MAX 64u        /* X.520 ub-common-name */
#define SWORN_PROXY_CA_DAYS_MAX 3650u    /* ten years */
#define SWORN_PROXY_CA_BACKDATE_S 3600   /* the CA's notBefore is now - 1 h */
#define SWORN_PROXY_LEAF_BACKDATE_S 300  /* a leaf's notBefore is now - 300 s */
#define SWORN_PROXY_LEAF_TTL_MIN 60u     /* leaf_ttl_s bounds */
#define SWORN_PROXY_LEAF_TTL_MAX 604800u /* one week */
#define SWORN_PROXY_CACHE_MAX 1048576u   /* cache_max bound */

/*
 * `sworn-proxy ca init DIR`: create DIR/ca.key and DIR/ca.crt as above. DIR must exist and pass
 * the folder checks of common/safefile.h; cn is 1..64 printable ASCII bytes; days 1..3650.
 * Returns 0, or -1 with sworn_err set (on failure nothing is left behind: a key written before
 * the certificate failed is removed).
 */
int sworn_proxy_ca_init(const char *dir, const char *cn, unsigned days);

struct sworn_proxy_ca;

/*
 * Load the CA from cert_path and key_path (rules above). leaf_ttl_s: a leaf's lifetime,
 * SWORN_PROXY_LEAF_TTL_MIN..MAX seconds; cache_max: contexts kept, 0..SWORN_PROXY_CACHE_MAX.
 * OUT: *out (free with sworn_proxy_ca_free). Returns 0, or -1 with sworn_err set and *out NULL.
 */
int sworn_proxy_ca_load(const char *cert_path, const char *key_path, unsigned leaf_ttl_s,
                        size_t cache_max, struct sworn_proxy_ca **out);

/* Free a CA (NULL is fine); the contexts handed out stay valid until their own SSL_CTX_free. */
void sworn_proxy_ca_free(struct sworn_proxy_ca *ca);

/*
 * A server context presenting a leaf for host (canonical: a lower-case name, a dotted quad or
 * "[v6]", exactly as sworn_resource_canon_host writes it), at time now (tests pass a fixed one).
 * Returns a new reference (the caller SSL_CTX_frees it), or NULL with sworn_err set.
 */
SSL_CTX *sworn_proxy_ca_ctx_for(struct sworn_proxy_ca *ca, const char *host, time_t now);

/* The CA certificate's SHA-256 fingerprint (of its DER), for logs and metrics. */
void sworn_proxy_ca_fingerprint(const struct sworn_proxy_ca *ca, uint8_t out[32]);

/* The CA certificate (owned by ca: valid while it is; do not free). */
X509 *sworn_proxy_ca_cert(const struct sworn_proxy_ca *ca);

/* Counters of the leaf cache since load, for metrics. */
struct sworn_proxy_ca_stats {
    uint64_t hits;      /* a cached context was returned */
    uint64_t mints;     /* a leaf was minted (for a host not cached, or to renew one) */
    uint64_t renewals;  /* of those, mints that replaced a cached leaf near expiry */
    uint64_t evictions; /* cached contexts dropped to make room */
    size_t cached;      /* contexts cached now */
};

void sworn_proxy_ca_stats(struct sworn_proxy_ca *ca, struct sworn_proxy_ca_stats *out);

#endif

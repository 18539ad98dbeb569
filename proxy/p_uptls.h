/*
 * p_uptls.h -- the TLS client side of the proxy: the context every upstream connection is made
 * from, the per-connection host check, and the judgement after the handshake.
 *
 * Trust: OpenSSL's default verify paths (SSL_CTX_set_default_verify_paths: the system store,
 * or the files SSL_CERT_FILE and SSL_CERT_DIR name, read when the context is made) when no CA
 * file is configured; otherwise only the certificates of that one PEM bundle. Peer verification
 * is always on (SSL_VERIFY_PEER: a chain that does not verify ends the handshake). TLS 1.2 is the
 * minimum, renegotiation is off, and ALPN offers "http/1.1" only (the proxy speaks HTTP/1.1 to
 * upstreams).
 *
 * Host checks (sworn_uptls_prepare), for a canonical host of policy/resource.h:
 *   a name      SNI is sent; the certificate must match it (SSL_set1_host: a subjectAltName
 *               dNSName, or the subject CN when the certificate has no dNSName, as OpenSSL does
 *               by default), wildcards only as a whole left-most label
 *               (X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
 *   an address  no SNI (RFC 6066 forbids literal addresses there); the certificate must hold
 *               the address as a subjectAltName iPAddress (X509_VERIFY_PARAM_set1_ip_asc; an
 *               IPv6 host's brackets are stripped).
 *
 * Errors (sworn_err): SWORN_ERR_ARG (a host that is not canonical), SWORN_ERR_CRYPTO (OpenSSL
 * failed, or the CA file holds no usable certificate), SWORN_ERR_IO (the CA file cannot be read).
 *
 * Memory: sworn_uptls_ctx returns a context the caller owns (SSL_CTX_free). Thread safety: the
 * context may be shared by threads once made (OpenSSL's rules); prepare and check touch only the
 * SSL they are given.
 */
#ifndef SWORN_P_UPTLS_H
#define SWORN_P_UPTLS_H

#include <openssl/ssl.h>

/*
 * The upstream client context: ca_file NULL or "" for OpenSSL's default paths (SSL_CERT_FILE /
 * SSL_CERT_DIR are read now: set them before), else a PEM bundle that becomes the only trust.
 * Returns a new context, or NULL with sworn_err set.
 */
SSL_CTX *sworn_uptls_ctx(const char *ca_file);

/*
 * Prepare ssl (made from that context, before SSL_connect) for host, a canonical host (name,
 * dotted quad or "[v6]"): SNI for names only, and the certificate's host or address check as
 * above. Returns 0, or -1 with sworn_err set (SWORN_ERR_ARG for a host that is not canonical).
 */
int sworn_uptls_prepare(SSL *ssl, const char *host);

/*
 * After the handshake: 0 when the peer presented a certificate, its verification passed
 * (SSL_get_verify_result is X509_V_OK) and the negotiated ALPN is none or "http/1.1"; else -1
 * with a static sentence in *why (sworn_err is not touched).
 */
int sworn_uptls_check(SSL *ssl, const char **why);

#endif

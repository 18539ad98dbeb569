/*
 * p_uptls.c -- see p_uptls.h.
 */
#include "p_uptls.h"

#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "err.h"
#include "resource.h"

static const unsigned char alpn_http11[] = "\x08http/1.1";

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

SSL_CTX *sworn_uptls_ctx(const char *ca_file)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    char reason[256];

    if (ctx == NULL) {
        sworn_err_set(SWORN_ERR_CRYPTO, "upstream TLS context: %s",
                      ossl_reason(reason, sizeof(reason)));
        return NULL;
    }
    SWORN_ENSURE(SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) == 1, SWORN_ERR_CRYPTO,
                 "upstream TLS context: cannot set TLS 1.2 as the minimum: %s",
                 ossl_reason(reason, sizeof(reason)));
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    if (ca_file == NULL || ca_file[0] == '\0') {
        SWORN_ENSURE(SSL_CTX_set_default_verify_paths(ctx) == 1, SWORN_ERR_CRYPTO,
                     "upstream TLS context: cannot use OpenSSL's default trust store: %s",
                     ossl_reason(reason, sizeof(reason)));
    } else {
        SWORN_ENSURE(SSL_CTX_load_verify_locations(ctx, ca_file, NULL) == 1, SWORN_ERR_CRYPTO,
                     "upstream TLS context: cannot load the upstream CA file %s (a PEM bundle of "
                     "certificates): %s",
                     ca_file, ossl_reason(reason, sizeof(reason)));
    }
    /* SSL_CTX_set_alpn_protos returns 0 on success, unlike the rest of OpenSSL. */
    SWORN_ENSURE(SSL_CTX_set_alpn_protos(ctx, alpn_http11, sizeof(alpn_http11) - 1) == 0,
                 SWORN_ERR_CRYPTO, "upstream TLS context: cannot set ALPN: %s",
                 ossl_reason(reason, sizeof(reason)));
    return ctx;
fail:
    SSL_CTX_free(ctx);
    return NULL;
}

int sworn_uptls_prepare(SSL *ssl, const char *host)
{
    char canon[SWORN_RESOURCE_HOST_MAX + 1], reason[256], ip[SWORN_RESOURCE_HOST_MAX + 1];
    enum sworn_resource_host_kind kind;
    uint8_t addr[16];
    const char *why = NULL;
    X509_VERIFY_PARAM *param;
    size_t n;

    if (ssl == NULL || host == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "sworn_uptls_prepare: no SSL or no host");
    if (sworn_resource_canon_host(host, canon, &kind, addr, &why) != 0)
        return sworn_err_set(SWORN_ERR_ARG, "upstream host is not a host: %s", why);
    if (strcmp(canon, host) != 0)
        return sworn_err_set(SWORN_ERR_ARG, "upstream host %s is not canonical (%s)", host, canon);
    param = SSL_get0_param(ssl);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    switch (kind) {
    case SWORN_RESOURCE_HOST_NAME:
        if (SSL_set_tlsext_host_name(ssl, host) != 1 || SSL_set1_host(ssl, host) != 1)
            return sworn_err_set(SWORN_ERR_CRYPTO, "upstream %s: cannot set SNI and host check: %s",
                                 host, ossl_reason(reason, sizeof(reason)));
        return 0;
    case SWORN_RESOURCE_HOST_IPV4:
    case SWORN_RESOURCE_HOST_IPV6:
        n = strlen(host);
        if (kind == SWORN_RESOURCE_HOST_IPV6) { /* "[v6]": the address is between the brackets */
            memcpy(ip, host + 1, n - 2);
            ip[n - 2] = '\0';
        } else {
            memcpy(ip, host, n + 1);
        }
        if (X509_VERIFY_PARAM_set1_ip_asc(param, ip) != 1)
            return sworn_err_set(SWORN_ERR_CRYPTO, "upstream %s: cannot set the address check: %s",
                                 host, ossl_reason(reason, sizeof(reason)));
        return 0;
    default:
        return sworn_err_set(SWORN_ERR_ARG, "upstream host %s: unknown kind", host);
    }
}

int sworn_uptls_check(SSL *ssl, const char **why)
{
    const unsigned char *alpn = NULL;
    unsigned alpn_len = 0;

    if (ssl == NULL) {
        *why = "no upstream TLS connection";
        return -1;
    }
    if (SSL_get0_peer_certificate(ssl) == NULL) {
        *why = "the upstream presented no certificate";
        return -1;
    }
    if (SSL_get_verify_result(ssl) != X509_V_OK) {
        *why = "the upstream certificate did not verify (chain, validity or host name)";
        return -1;
    }
    SSL_get0_alpn_selected(ssl, &alpn, &alpn_len);
    if (alpn_len != 0 && !(alpn_len == 8 && memcmp(alpn, "http/1.1", 8) == 0)) {
        *why = "the upstream chose an ALPN protocol other than http/1.1";
        return -1;
    }
    return 0;
}

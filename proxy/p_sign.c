/*
 * p_sign.c -- the `signing:` destinations and the header fields of a signed request (p_sign.h).
 */
#include "p_sign.h"

#include <stdio.h>
#include <string.h>

#include "err.h"
#include "frame.h"
#include "sig_base.h"
#include "yamldoc.h"

int sworn_psign_read(const struct sworn_yaml_doc *d, struct sworn_psign_conf *out)
{
    const struct sworn_yaml_node *n = sworn_yaml_get(sworn_yaml_root(d), "signing");

    memset(out, 0, sizeof(*out));
    if (n == NULL)
        return 0;
    if (sworn_yaml_kind(n) != SWORN_YAML_SEQ)
        return sworn_yaml_error(d, n, "signing must be a list of destination URLs");
    if (sworn_yaml_len(n) == 0 || sworn_yaml_len(n) > SWORN_PSIGN_DESTS_MAX)
        return sworn_yaml_error(d, n,
                                "signing: 1 to %d destination URLs (leave the key out for "
                                "none)",
                                SWORN_PSIGN_DESTS_MAX);
    for (size_t i = 0; i < sworn_yaml_len(n); i++) {
        const struct sworn_yaml_node *it = sworn_yaml_item(n, i);
        struct sworn_pdest *dst = &out->dests[out->n];
        const char *url, *why = NULL;

        if (sworn_yaml_str(d, it, &url) < 0)
            return -1;
        if (sworn_pdest_parse(url, dst, &why) != 0)
            return sworn_yaml_error(d, it, "signing: %s", why);
        for (size_t j = 0; j < out->n; j++)
            if (strcmp(out->dests[j].scheme, dst->scheme) == 0 &&
                strcmp(out->dests[j].host, dst->host) == 0 && out->dests[j].port == dst->port &&
                strcmp(out->dests[j].path, dst->path) == 0)
                return sworn_yaml_error(d, it, "signing: this destination is listed twice");
        out->n++;
    }
    return 0;
}

int sworn_psign_wants(const struct sworn_psign_conf *conf, const struct sworn_resource *c)
{
    static _Thread_local struct sworn_resource as_http; /* 16 KiB: not on the stack */

    if (conf == NULL || conf->n == 0)
        return 0;
    if (strcmp(c->scheme, "ws") != 0 && strcmp(c->scheme, "wss") != 0)
        return sworn_pdest_find(conf->dests, conf->n, c) != NULL;
    /* A WebSocket upgrade lies under the http(s) destination it upgrades. */
    as_http = *c;
    snprintf(as_http.scheme, sizeof(as_http.scheme), "%s",
             strcmp(c->scheme, "wss") == 0 ? "https" : "http");
    return sworn_pdest_find(conf->dests, conf->n, &as_http) != NULL;
}

/* Does name read as lower (lower case, '-') for a server folding case and '_' to '-'? */
static int reads_as(const char *name, size_t len, const char *lower)
{
    size_t i;

    for (i = 0; i < len && lower[i] != '\0'; i++) {
        char a = name[i] == '_' ? '-' : name[i];

        if (a >= 'A' && a <= 'Z')
            a = (char)(a - 'A' + 'a');
        if (a != lower[i])
            return 0;
    }
    return i == len && lower[i] == '\0';
}

int sworn_psign_field_dropped(const char *name, size_t len, int signing)
{
    if (reads_as(name, len, "sworn-entry") || reads_as(name, len, "sworn-batch"))
        return 1;
    return signing && (reads_as(name, len, "signature") || reads_as(name, len, "signature-input") ||
                       reads_as(name, len, "content-digest"));
}

int sworn_psign_headers(const Sworn__V1__Decision *d, const uint8_t *body_sha256,
                        int changes_signed, char *out, size_t cap, size_t *len, const char **why)
{
    const Sworn__V1__Receipt *r = d->receipt;
    char sig[96], digest[64], entry[64], path[4 * (SWORN_FRAME_BATCH_PATH_MAX * 32 + 2) / 3 + 1],
        batch[sizeof(path) + 64] = "";
    int n;

    if (r == NULL || (r->form != 1 && r->form != 3) || r->signature.len != 64 ||
        r->signature_params == NULL || r->signature_params[0] != '(' || d->entry_hash.len != 32 ||
        (r->form == 3 && r->batch_path.len > SWORN_FRAME_BATCH_PATH_MAX * 32)) {
        *why = "this destination is signed and the decision carries no RFC 9421 signature";
        return 1;
    }
    if (changes_signed) {
        *why = "this destination is signed and a credential in the query or the form body is not "
               "in the signature";
        return 1;
    }
    sworn_httpsig_base64(r->signature.data, 64, sig);
    sworn_httpsig_entry_value(d->entry_hash.data, entry);
    if (body_sha256 != NULL)
        sworn_httpsig_content_digest(body_sha256, digest);
    if (r->form == 3) {
        /* A batch signature (docs/formats.md section 14): the item's place in its group's tree,
         * an RFC 8941 dictionary; the receiver hashes the base and walks the path to the root
         * the Signature covers (docs/api-owners.md). */
        sworn_httpsig_base64(r->batch_path.data, r->batch_path.len, path);
        snprintf(batch, sizeof(batch), "Sworn-Batch: i=%u, n=%u, path=:%s:\r\n",
                 (unsigned)r->batch_index, (unsigned)r->batch_size, path);
    }
    n = snprintf(out, cap,
                 "Signature-Input: " SWORN_HTTPSIG_LABEL "=%s\r\n"
                 "Signature: " SWORN_HTTPSIG_LABEL "=:%s:\r\n"
                 "%s%s%s"
                 "Sworn-Entry: %s\r\n"
                 "%s",
                 r->signature_params, sig, body_sha256 != NULL ? "Content-Digest: " : "",
                 body_sha256 != NULL ? digest : "", body_sha256 != NULL ? "\r\n" : "", entry,
                 batch);
    if (n < 0 || (size_t)n >= cap) {
        *why = "the signature header fields are too long";
        return 1;
    }
    *len = (size_t)n;
    return 0;
}

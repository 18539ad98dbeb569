/*
 * c_submit.c -- the report to decisiond's admin socket (c_submit.h).
 */
#include "c_submit.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "dclient.h"
#include "encoding.h"
#include "err.h"
#include "frame.h"

int c_submit_report(const char *path, const char *json, size_t len, unsigned timeout_ms,
                    struct c_submitted *out)
{
    struct sworn_dclient *c = malloc(sizeof(*c));
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__ConformanceReportRequest cr = SWORN__V1__CONFORMANCE_REPORT_REQUEST__INIT;
    Sworn__V1__AdminResponse *resp = NULL;
    uint8_t digest[32];
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (c == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    SHA256((const uint8_t *)json, len, digest);
    cr.report_json.data = (uint8_t *)json;
    cr.report_json.len = len;
    rq.version = SWORN_WIRE_VERSION;
    rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_CONFORMANCE_REPORT;
    rq.conformance_report = &cr;
    if (sworn_dclient_connect(c, path) < 0) {
        free(c);
        return -1;
    }
    if (sworn_dclient_admin(c, &rq, (int)timeout_ms, &resp) == 0) {
        if (resp->body_case == SWORN__V1__ADMIN_RESPONSE__BODY_CONFORMANCE_REPORT) {
            const Sworn__V1__ConformanceReportResponse *r = resp->conformance_report;

            /* The answer names the digest of what decisiond recorded: it must be ours. */
            if (memcmp(r->report_sha256.data, digest, 32) != 0) {
                sworn_err_set(SWORN_ERR_FORMAT,
                              "decisiond recorded a report whose SHA-256 is not that of the one "
                              "sent");
            } else {
                out->log_index = r->log_index;
                out->exported = r->exported;
                (void)sworn_hex_encode(r->entry_hash.data, 32, out->entry_hash,
                                       sizeof(out->entry_hash));
                (void)sworn_hex_encode(digest, 32, out->report_sha256, sizeof(out->report_sha256));
                rc = 0;
            }
        } else if (resp->body_case == SWORN__V1__ADMIN_RESPONSE__BODY_ERROR) {
            sworn_err_set(SWORN_ERR_FORMAT, "decisiond refused the report: %s",
                          resp->error->message);
        } else {
            sworn_err_set(SWORN_ERR_FORMAT, "decisiond answered the report with another response");
        }
    }
    sworn__v1__admin_response__free_unpacked(resp, NULL);
    sworn_dclient_close(c);
    free(c);
    return rc;
}

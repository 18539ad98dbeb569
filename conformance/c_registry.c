/*
 * c_registry.c -- the probe table (c_registry.h). A new probe is one row here and one function
 * in a c_probes_*.c file; the T1/T2/T3 probes run from inside a sworn-run sandbox come next.
 */
#include "c_registry.h"

#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "c_probes.h"
#include "encoding.h"

#define P3 "P3 tamper-resistant control plane"
#define P4 "P4 independent record"
#define P5 "accountable record"

static const struct c_probe probes[] = {
    {"T4.no-write-path", C_T4, P4,
     "Read the mode and owner of every file and folder of the record, of the log database "
     "(log_db, with its -wal, -shm and -journal files) and of every folder above them, against "
     "the agent's uid and groups (agent): owning a path, or a write bit that reaches the agent, is "
     "a write path. A folder with the sticky bit counts only when the agent owns it.",
     "no path of the record or the log database is writable by the agent", c_probe_no_write_path},
    {"T4.decisions-recorded", C_T4, P4,
     "Send requests.count requests of the allowed shape and as many of the denied shape on the "
     "decision socket as requests.principal, ask the admin socket for a checkpoint now, then "
     "read each decision's entry from the exported record at the log index decisiond answered "
     "with: its leaf hash, request id, principal, effect and reason.",
     "every decision, denials included, is in the exported record as decided",
     c_probe_decisions_recorded},
    {"T5.verify", C_T5, P5,
     "Run sworn-verify verify --json on the record with the auditor's trust policy (and a copy "
     "of the auditor's state file, when given, so the auditor's own state is not moved).",
     "sworn-verify accepts the record (exit 0, every check passes)", c_probe_verify},
    {"T5.sufficiency", C_T5, P5,
     "Read every entry of the record up to its checkpoint; each decision must hold principal, "
     "operation, resource, policy digest, decision, reason and time (sworn-verify's entries "
     "check holds them to their shapes). Decisions without a context are counted.",
     "every decision entry holds every field", c_probe_sufficiency},
    {"T5.tamper-entry-changed", C_T5, P5,
     "Copy the record, flip one bit in the first entry of its newest entry bundle, and run "
     "sworn-verify on the copy with the auditor's trust policy.",
     "sworn-verify rejects the copy (exit 1)", c_probe_tamper_entry},
    {"T5.tamper-entry-deleted", C_T5, P5,
     "Copy the record, cut the last entry out of its newest entry bundle, and run sworn-verify "
     "on the copy with the auditor's trust policy.",
     "sworn-verify rejects the copy (exit 1)", c_probe_tamper_delete},
    {"T5.tamper-rollback", C_T5, P5,
     "Copy the record and replace its checkpoint file with an older sworn/checkpoint/<size> of "
     "the same record; run sworn-verify on the copy with a state file holding the newest "
     "checkpoint, as an auditor that accepted it has.",
     "sworn-verify rejects the copy (exit 1)", c_probe_tamper_rollback},
    {"T5.tamper-checkpoint-signature", C_T5, P5,
     "Copy the record, change the last byte of the first signature of its checkpoint, and run "
     "sworn-verify on the copy with the auditor's trust policy.",
     "sworn-verify rejects the copy", c_probe_tamper_signature},
    {"T3.fail-closed", C_T3, P3,
     "Stop decisiond with fail_closed.stop, send the allowed request shape (requests.allowed) "
     "through the proxy (fail_closed.proxy), then start decisiond again with fail_closed.start.",
     "the proxy refuses the request (status 4xx or 5xx) while decisiond is down",
     c_probe_fail_closed},
};

const struct c_probe *c_registry_all(size_t *n)
{
    *n = sizeof(probes) / sizeof(probes[0]);
    return probes;
}

const struct c_probe *c_registry_find(const char *id)
{
    for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
        if (strcmp(probes[i].id, id) == 0)
            return &probes[i];
    return NULL;
}

const char *c_tier_name(enum c_tier t)
{
    static const char *const names[] = {"T?", "T1", "T2", "T3", "T4", "T5"};

    return (unsigned)t <= 5 ? names[t] : "T?";
}

int c_tier_parse(const char *s, enum c_tier *t)
{
    if (strlen(s) != 2 || (s[0] != 'T' && s[0] != 't') || s[1] < '1' || s[1] > '5')
        return -1;
    *t = (enum c_tier)(s[1] - '0');
    return 0;
}

static int put(EVP_MD_CTX *h, const char *s)
{
    return EVP_DigestUpdate(h, s, strlen(s)) == 1 && EVP_DigestUpdate(h, "\n", 1) == 1 ? 0 : -1;
}

int c_registry_digest(char out[65])
{
    EVP_MD_CTX *h = EVP_MD_CTX_new();
    unsigned char d[32];
    int rc = -1;

    if (h == NULL || EVP_DigestInit_ex(h, EVP_sha256(), NULL) != 1 ||
        put(h, "sworn-conformance probe set v1") < 0)
        goto done;
    for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
        if (put(h, probes[i].id) < 0 || put(h, c_tier_name(probes[i].tier)) < 0 ||
            put(h, probes[i].property) < 0 || put(h, probes[i].technique) < 0 ||
            put(h, probes[i].expected) < 0)
            goto done;
    if (EVP_DigestFinal_ex(h, d, NULL) != 1 || sworn_hex_encode(d, 32, out, 65) < 0)
        goto done;
    rc = 0;
done:
    EVP_MD_CTX_free(h);
    return rc;
}

/*
 * sv_policy.c -- see sv_policy.h and docs/verifier.md section 2.
 */
#include "sv_policy.h"

#include <openssl/evp.h>

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 40

/* Split a line at single spaces into at most MAX_FIELDS fields (NUL-terminated in place). */
static int split_fields(char *line, char **f)
{
    int n = 0;
    char *p = line;

    while (*p != '\0') {
        if (n == MAX_FIELDS)
            return -1;
        f[n++] = p;
        p = strchr(p, ' ');
        if (p == NULL)
            break;
        *p++ = '\0';
        if (*p == '\0' || *p == ' ')
            return -1; /* trailing or doubled space */
    }
    return n;
}

static int find_name(const struct sv_policy *p, const char *name, int *is_group, unsigned *idx)
{
    for (size_t i = 0; i < p->nwitnesses; i++)
        if (strcmp(p->witness_names[i], name) == 0) {
            *is_group = 0;
            *idx = (unsigned)i;
            return 0;
        }
    for (size_t i = 0; i < p->ngroups; i++)
        if (strcmp(p->groups[i].name, name) == 0) {
            *is_group = 1;
            *idx = (unsigned)i;
            return 0;
        }
    return -1;
}

static char *resolve(const char *policy_path, const char *rel)
{
    char dir[4096], *out, *d;
    size_t n;

    if (rel[0] == '/' || policy_path == NULL)
        return strdup(rel);
    snprintf(dir, sizeof(dir), "%s", policy_path);
    d = dirname(dir); /* may point to a static "." rather than into dir */
    n = strlen(d) + strlen(rel) + 2;
    out = malloc(n);
    if (out != NULL)
        snprintf(out, n, "%s/%s", d, rel);
    return out;
}

/* Replay a measured-start event log: "sha256 <64 hex> <path>" lines into PCR 23. */
static int replay_event_log(const char *path, uint8_t pcr[32], char *why)
{
    uint8_t *data;
    size_t len, pos = 0, line = 0;
    char w[SV_WHY];

    if (sv_read_file(path, 16u << 20, &data, &len, NULL, w) != 0)
        return sv_fail(why, "event log: %s", w);
    memset(pcr, 0, 32);
    while (pos < len) {
        uint8_t *nl = memchr(data + pos, '\n', len - pos), d[32], buf[64];
        size_t ll;

        line++;
        if (nl == NULL) {
            free(data);
            return sv_fail(why, "event log line %zu: no newline", line);
        }
        ll = (size_t)(nl - (data + pos));
        if (ll < 7 + 64 + 2 || memcmp(data + pos, "sha256 ", 7) != 0 ||
            sv_unhex((const char *)data + pos + 7, 64, d, 32) != 0 || data[pos + 71] != ' ') {
            free(data);
            return sv_fail(why, "event log line %zu: expected 'sha256 <64 hex> <path>'", line);
        }
        memcpy(buf, pcr, 32);
        memcpy(buf + 32, d, 32);
        sv_sha256(buf, 64, pcr);
        pos += ll + 1;
    }
    free(data);
    return 0;
}

/*
 * Identity is the public key (its SPKI hash: one Ed25519 key has the same one whether written as
 * type 0x01 or 0x04), not the name or id it is written under: one key listed twice would count
 * twice toward a threshold or quorum. The key h must not be a witness's (witnesses: 1) or a log
 * key (logs: 1) already; returns the description of the earlier line's key, or NULL.
 */
static const char *seen_key(const struct sv_policy *p, const uint8_t h[SV_HASH], int logs,
                            int witnesses, char *out, size_t cap)
{
    for (size_t i = 0; logs && i < p->nlogs; i++)
        if (memcmp(p->logs[i].spki_hash, h, SV_HASH) == 0) {
            snprintf(out, cap, "log key %s", p->logs[i].name);
            return out;
        }
    for (size_t i = 0; witnesses && i < p->nwitnesses; i++)
        if (memcmp(p->witnesses[i].spki_hash, h, SV_HASH) == 0) {
            snprintf(out, cap, "witness %s", p->witness_names[i]);
            return out;
        }
    return NULL;
}

/* The witnesses a member stands for, expanded through nested groups (bit i: witness i). */
static uint64_t member_mask(const struct sv_policy *p, int is_group, unsigned idx)
{
    return is_group ? p->groups[idx].witness_mask : (uint64_t)1 << idx;
}

static int parse_line(struct sv_policy *p, char **f, int nf, const char *path, int *have, char *why)
{
    const char *d = f[0];
    char w[SV_WHY];

    if (strcmp(d, "origin") == 0) {
        if (nf != 2 || have[0]++ || strlen(f[1]) > SV_ORIGIN_MAX)
            return sv_fail(why, "origin: one origin, given once");
        snprintf(p->origin, sizeof(p->origin), "%s", f[1]);
    } else if (strcmp(d, "log") == 0) {
        /* C2SP: log <vkey> [<url>]; the URL is informational. */
        if (nf < 2 || nf > 3 || p->nlogs == SV_POLICY_KEYS)
            return sv_fail(why, "log: expected 'log <vkey> [<url>]'");
        if (sv_vkey_parse(f[1], strlen(f[1]), &p->logs[p->nlogs], w) != 0)
            return sv_fail(why, "log: %s", w);
        if (p->logs[p->nlogs].type == 0x04) {
            sv_vkey_free(&p->logs[p->nlogs]);
            return sv_fail(why, "log: a cosignature key (0x04) cannot be a log key");
        }
        if (seen_key(p, p->logs[p->nlogs].spki_hash, 1, 1, w, sizeof(w)) != NULL) {
            sv_vkey_free(&p->logs[p->nlogs]);
            return sv_fail(why, "log: the same key as %.200s (one line per key)", w);
        }
        p->nlogs++;
    } else if (strcmp(d, "witness") == 0) {
        int g;
        unsigned i;

        if (nf < 3 || nf > 4 || p->nwitnesses == SV_POLICY_KEYS)
            return sv_fail(why, "witness: expected 'witness <name> <vkey> [<url>]'");
        if (strlen(f[1]) > SV_NAME_MAX || find_name(p, f[1], &g, &i) == 0)
            return sv_fail(why, "witness: name '%s' too long or already used", f[1]);
        if (sv_vkey_parse(f[2], strlen(f[2]), &p->witnesses[p->nwitnesses], w) != 0)
            return sv_fail(why, "witness: %s", w);
        /* Under another name the same key would meet a group of two with one cosignature; as a
         * log key too, the log would witness itself. */
        if (seen_key(p, p->witnesses[p->nwitnesses].spki_hash, 1, 1, w, sizeof(w)) != NULL) {
            sv_vkey_free(&p->witnesses[p->nwitnesses]);
            return sv_fail(why, "witness %s: the same key as %.200s (one line per key)", f[1], w);
        }
        snprintf(p->witness_names[p->nwitnesses], SV_NAME_MAX + 1, "%s", f[1]);
        p->nwitnesses++;
    } else if (strcmp(d, "group") == 0) {
        struct sv_group *g;
        int isg;
        unsigned idx;
        uint64_t k;

        if (nf < 4 || nf - 3 > SV_GROUP_MEMBERS || p->ngroups == SV_POLICY_GROUPS)
            return sv_fail(why, "group: expected 'group <name> <all|any|k> <member>...'");
        if (strlen(f[1]) > SV_NAME_MAX || find_name(p, f[1], &isg, &idx) == 0)
            return sv_fail(why, "group: name '%s' too long or already used", f[1]);
        g = &p->groups[p->ngroups];
        snprintf(g->name, sizeof(g->name), "%s", f[1]);
        g->nmembers = (unsigned)(nf - 3);
        if (strcmp(f[2], "all") == 0)
            g->k = g->nmembers;
        else if (strcmp(f[2], "any") == 0)
            g->k = 1;
        else if (sv_parse_u64(f[2], strlen(f[2]), &k) == 0 && k >= 1 && k <= g->nmembers)
            g->k = (unsigned)k;
        else
            return sv_fail(why, "group %s: threshold must be all, any or 1..%u", g->name,
                           g->nmembers);
        for (int i = 3; i < nf; i++) {
            /* Members must be defined before: this also rules out cycles. */
            if (find_name(p, f[i], &isg, &idx) != 0)
                return sv_fail(why, "group %s: unknown member '%s'", g->name, f[i]);
            for (int j = 3; j < i; j++)
                if (strcmp(f[j], f[i]) == 0)
                    return sv_fail(why, "group %s: member '%s' twice", g->name, f[i]);
            /* Members, expanded through nested groups, must not share a witness: one
             * cosignature would then meet two of them and count twice toward k. */
            if (g->witness_mask & member_mask(p, isg, idx)) {
                uint64_t both = g->witness_mask & member_mask(p, isg, idx);
                unsigned wi = 0;

                while (!(both >> wi & 1))
                    wi++;
                return sv_fail(why,
                               "group %s: member '%s' names witness '%s' that an earlier member "
                               "names too (a witness counts once: members must not overlap)",
                               g->name, f[i], p->witness_names[wi]);
            }
            g->witness_mask |= member_mask(p, isg, idx);
            g->member_is_group[i - 3] = isg;
            g->member[i - 3] = idx;
        }
        p->ngroups++;
    } else if (strcmp(d, "quorum") == 0) {
        int isg;
        unsigned idx;

        if (nf != 2 || have[1]++)
            return sv_fail(why, "quorum: one 'quorum <name>|none', given once");
        if (strcmp(f[1], "none") == 0)
            p->quorum = -1;
        else if (find_name(p, f[1], &isg, &idx) == 0)
            p->quorum = isg ? (int)idx : SV_QUORUM_WITNESS + (int)idx;
        else
            return sv_fail(why, "quorum: unknown witness or group '%s'", f[1]);
    } else if (strcmp(d, "entries") == 0) {
        if (nf != 2 || have[2]++ || (strcmp(f[1], "sworn") != 0 && strcmp(f[1], "opaque") != 0))
            return sv_fail(why, "entries: 'entries sworn' or 'entries opaque', once");
        p->sworn_entries = strcmp(f[1], "sworn") == 0;
    } else if (strcmp(d, "quotes") == 0) {
        if (nf != 2 || have[3]++)
            return sv_fail(why, "quotes: 'quotes ignore|check|require', once");
        if (strcmp(f[1], "ignore") == 0)
            p->quotes = 0;
        else if (strcmp(f[1], "check") == 0)
            p->quotes = 1;
        else if (strcmp(f[1], "require") == 0)
            p->quotes = 2;
        else
            return sv_fail(why, "quotes: 'quotes ignore|check|require'");
    } else if (strcmp(d, "ak-public") == 0) {
        char *file;
        int r;

        if (nf != 2 || have[4]++)
            return sv_fail(why, "ak-public: one file, once");
        file = resolve(path, f[1]);
        if (file == NULL)
            return sv_fail(why, "out of memory");
        r = sv_read_file(file, 4096, &p->ak_public, &p->ak_public_len, NULL, w);
        free(file);
        if (r != 0)
            return sv_fail(why, "ak-public: %s", w);
    } else if (strcmp(d, "pcr") == 0) {
        uint64_t i;

        if (nf != 3 || sv_parse_u64(f[1], strlen(f[1]), &i) != 0 || i > 23 ||
            (p->pcr_mask >> i & 1) || sv_unhex(f[2], strlen(f[2]), p->pcr_values[i], 32) != 0)
            return sv_fail(why, "pcr: 'pcr <0..23> <64 lower-case hex>', each PCR once");
        p->pcr_mask |= 1u << i;
    } else if (strcmp(d, "event-log") == 0) {
        char *file;
        int r;

        if (nf != 2 || p->have_event_log || (p->pcr_mask >> 23 & 1))
            return sv_fail(why, "event-log: once, and not with 'pcr 23' or 'measured-start'");
        file = resolve(path, f[1]);
        if (file == NULL)
            return sv_fail(why, "out of memory");
        r = replay_event_log(file, p->pcr_values[23], w);
        free(file);
        if (r != 0)
            return sv_fail(why, "%s", w);
        p->pcr_mask |= 1u << 23;
        p->have_event_log = 1;
    } else if (strcmp(d, "measured-start") == 0) {
        /* measured-start record: the expected PCR 23 is not a fixed value but what the record's
         * own Startup entries replay to, checked start by start (sv_verify.c). */
        if (nf != 2 || strcmp(f[1], "record") != 0 || p->measured_start || (p->pcr_mask >> 23 & 1))
            return sv_fail(why, "measured-start: 'measured-start record', once, and not with "
                                "'pcr 23' or 'event-log'");
        p->measured_start = 1;
        p->pcr_mask |= 1u << 23;
    } else if (strcmp(d, "measured-file") == 0) {
        /* measured-file <64 hex> [<absolute path>]: a digest the auditor approved. */
        struct sv_measured_file *m;

        if (nf < 2 || nf > 3 || p->nmeasured_files == SV_MEASURED_FILES)
            return sv_fail(why,
                           "measured-file: 'measured-file <64 lower-case hex> [<path>]', at "
                           "most %d lines",
                           SV_MEASURED_FILES);
        if (p->measured_files == NULL) {
            p->measured_files = calloc(SV_MEASURED_FILES, sizeof(*p->measured_files));
            if (p->measured_files == NULL)
                return sv_fail(why, "out of memory");
        }
        m = &p->measured_files[p->nmeasured_files];
        if (sv_unhex(f[1], strlen(f[1]), m->sha256, SV_HASH) != 0)
            return sv_fail(why, "measured-file: the digest must be 64 lower-case hex digits");
        if (nf == 3) {
            if (f[2][0] != '/' || strlen(f[2]) > 4096)
                return sv_fail(why, "measured-file: the path must be absolute (as decisiond "
                                    "records it), at most 4096 bytes");
            m->path = strdup(f[2]);
            if (m->path == NULL)
                return sv_fail(why, "out of memory");
        }
        p->nmeasured_files++;
    } else if (strcmp(d, "tpm-firmware-min") == 0) {
        /* tpm-firmware-min 0x<16 hex>: the lowest TPM firmwareVersion accepted in a quote. */
        uint8_t b[8];

        if (nf != 2 || have[6]++ || strncmp(f[1], "0x", 2) != 0 ||
            sv_unhex(f[1] + 2, strlen(f[1] + 2), b, 8) != 0)
            return sv_fail(why, "tpm-firmware-min: once, as 0x and 16 lower-case hex digits");
        for (int i = 0; i < 8; i++)
            p->min_firmware_version = p->min_firmware_version << 8 | b[i];
    } else if (strcmp(d, "development") == 0) {
        /* development allowed: a start with hardening.development (the signer as root or under
         * the engine's uid) passes the separation check with a note, not Accountable. */
        if (nf != 2 || have[7]++ || strcmp(f[1], "allowed") != 0)
            return sv_fail(why, "development: 'development allowed', once");
        p->development_allowed = 1;
    } else if (strcmp(d, "uids-unrecorded") == 0) {
        /* uids-unrecorded allowed: a start recorded by a decisiond older than the uid fields. */
        if (nf != 2 || have[8]++ || strcmp(f[1], "allowed") != 0)
            return sv_fail(why, "uids-unrecorded: 'uids-unrecorded allowed', once");
        p->uids_unrecorded_allowed = 1;
    } else if (strcmp(d, "keyring-root") == 0) {
        if (nf != 2 || p->nroots == SV_POLICY_KEYS)
            return sv_fail(why, "keyring-root: one verifier key");
        if (sv_vkey_parse(f[1], strlen(f[1]), &p->roots[p->nroots], w) != 0)
            return sv_fail(why, "keyring-root: %s", w);
        if (p->roots[p->nroots].type == 0x04) {
            sv_vkey_free(&p->roots[p->nroots]);
            return sv_fail(why, "keyring-root: a cosignature key cannot be a root");
        }
        for (size_t i = 0; i < p->nroots; i++)
            if (memcmp(p->roots[i].spki_hash, p->roots[p->nroots].spki_hash, SV_HASH) == 0) {
                snprintf(w, sizeof(w), "%s", p->roots[i].name);
                sv_vkey_free(&p->roots[p->nroots]);
                return sv_fail(why,
                               "keyring-root: the same key as root %.200s (one line per key: "
                               "it would count twice toward keyring-threshold)",
                               w);
            }
        p->nroots++;
    } else if (strcmp(d, "keyring-threshold") == 0) {
        uint64_t t;

        if (nf != 2 || have[5]++ || sv_parse_u64(f[1], strlen(f[1]), &t) != 0 || t < 1 || t > 64)
            return sv_fail(why, "keyring-threshold: 1..64, once");
        p->root_threshold = (unsigned)t;
    } else if (strcmp(d, "keyring") == 0) {
        if (nf != 2 || p->nkeyring_files == SV_KEYRING_FILES)
            return sv_fail(why, "keyring: one file per line, at most %d", SV_KEYRING_FILES);
        p->keyring_files[p->nkeyring_files] = resolve(path, f[1]);
        if (p->keyring_files[p->nkeyring_files] == NULL)
            return sv_fail(why, "out of memory");
        p->nkeyring_files++;
    } else if (strcmp(d, "receipt-key") == 0) {
        /* receipt-key <spki base64>: a receipt key pinned without a keyring. */
        uint8_t spki[1100];
        long n;

        if (nf != 2 || p->nreceipt_keys == SV_POLICY_KEYS)
            return sv_fail(why, "receipt-key: one base64 DER SPKI");
        n = sv_b64_decode(f[1], strlen(f[1]), spki, sizeof(spki));
        if (n <= 0)
            return sv_fail(why, "receipt-key: not canonical base64");
        if (n == 44) {
            /* Ed25519 SPKI: fixed 12-byte prefix, then the key. */
            static const uint8_t pre[12] = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03,
                                            0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};
            struct sv_vkey *k = &p->receipt_keys[p->nreceipt_keys];

            memset(k, 0, sizeof(*k));
            if (memcmp(spki, pre, 12) != 0)
                return sv_fail(why, "receipt-key: not an Ed25519 or P-256 SPKI");
            k->pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, spki + 12, 32);
            if (k->pkey == NULL)
                return sv_fail(why, "receipt-key: bad Ed25519 key");
            k->type = 0x01;
            sv_sha256(spki, 44, k->spki_hash);
            snprintf(k->name, sizeof(k->name), "receipt");
        } else if (sv_vkey_from_spki("receipt", spki, (size_t)n, &p->receipt_keys[p->nreceipt_keys],
                                     w) != 0) {
            return sv_fail(why, "receipt-key: %s", w);
        }
        for (size_t i = 0; i < p->nreceipt_keys; i++)
            if (memcmp(p->receipt_keys[i].spki_hash, p->receipt_keys[p->nreceipt_keys].spki_hash,
                       SV_HASH) == 0) {
                sv_vkey_free(&p->receipt_keys[p->nreceipt_keys]);
                return sv_fail(why, "receipt-key: listed twice (one line per key)");
            }
        p->nreceipt_keys++;
    } else {
        return sv_fail(why, "unknown directive '%s'", d);
    }
    return 0;
}

int sv_policy_parse(const char *text, size_t len, const char *path, struct sv_policy *out,
                    char *why)
{
    size_t pos = 0, lineno = 0;
    int have[10] = {0};
    char *line = NULL;
    char w[SV_WHY];

    memset(out, 0, sizeof(*out));
    out->quorum = -1;
    out->quotes = 1;
    if (len > SV_POLICY_MAX)
        return sv_fail(why, "policy larger than %u bytes", SV_POLICY_MAX);
    if (memchr(text, '\0', len) != NULL || !sv_utf8_valid((const uint8_t *)text, len))
        return sv_fail(why, "policy is not UTF-8 text");
    if (len > 0 && text[len - 1] != '\n')
        return sv_fail(why, "policy does not end in a newline");
    line = malloc(len + 1);
    if (line == NULL)
        return sv_fail(why, "out of memory");
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t ll = (size_t)(nl - (text + pos));
        char *f[MAX_FIELDS];
        int nf;

        lineno++;
        memcpy(line, text + pos, ll);
        line[ll] = '\0';
        pos += ll + 1;
        if (ll == 0 || line[0] == '#')
            continue;
        for (size_t i = 0; i < ll; i++)
            if ((unsigned char)line[i] < 0x20 || line[i] == 0x7F) {
                free(line);
                sv_policy_free(out);
                return sv_fail(why, "line %zu: control character (tabs and CR are refused)",
                               lineno);
            }
        nf = split_fields(line, f);
        if (nf <= 0) {
            free(line);
            sv_policy_free(out);
            return sv_fail(why, "line %zu: fields must be separated by exactly one space", lineno);
        }
        if (parse_line(out, f, nf, path, have, w) != 0) {
            free(line);
            sv_policy_free(out);
            return sv_fail(why, "line %zu: %s", lineno, w);
        }
    }
    free(line);
    if (out->origin[0] == '\0' || out->nlogs == 0) {
        sv_policy_free(out);
        return sv_fail(why, "a policy needs an 'origin' and at least one 'log' key");
    }
    if (!have[1] && out->nwitnesses > 0) {
        sv_policy_free(out);
        return sv_fail(why, "witnesses are listed but no 'quorum' line says how many must sign");
    }
    if ((out->nroots > 0) != (out->nkeyring_files > 0) ||
        (out->nroots > 0 && (out->root_threshold == 0 || out->root_threshold > out->nroots))) {
        sv_policy_free(out);
        return sv_fail(why, "keyring: 'keyring-root' keys, a 'keyring-threshold' of at most "
                            "their number and 'keyring' files go together");
    }
    if (out->measured_start != (out->nmeasured_files > 0)) {
        sv_policy_free(out);
        return sv_fail(why, "'measured-start record' and 'measured-file' lines go together (the "
                            "files a start may measure)");
    }
    if (out->measured_start && !out->sworn_entries) {
        sv_policy_free(out);
        return sv_fail(why, "'measured-start record' reads the Startup entries: it needs "
                            "'entries sworn'");
    }
    if ((out->development_allowed || out->uids_unrecorded_allowed) && !out->sworn_entries) {
        sv_policy_free(out);
        return sv_fail(why, "'development allowed' and 'uids-unrecorded allowed' are about the "
                            "Startup entries: they need 'entries sworn'");
    }
    if (out->quotes > 0 && (out->ak_public != NULL) != (out->pcr_mask != 0)) {
        sv_policy_free(out);
        return sv_fail(why, "quotes: 'ak-public' and the expected PCRs ('pcr' or 'event-log') "
                            "go together");
    }
    if (out->quotes == 2 && out->ak_public == NULL) {
        sv_policy_free(out);
        return sv_fail(why, "'quotes require' needs 'ak-public' and the expected PCRs");
    }
    return 0;
}

int sv_policy_load(const char *path, struct sv_policy *out, char *why)
{
    uint8_t *data;
    size_t len;
    int r;

    memset(out, 0, sizeof(*out));
    if (sv_read_file(path, SV_POLICY_MAX, &data, &len, NULL, why) != 0)
        return -1;
    r = sv_policy_parse((const char *)data, len, path, out, why);
    free(data);
    return r;
}

void sv_policy_free(struct sv_policy *p)
{
    for (size_t i = 0; i < p->nlogs; i++)
        sv_vkey_free(&p->logs[i]);
    for (size_t i = 0; i < p->nwitnesses; i++)
        sv_vkey_free(&p->witnesses[i]);
    for (size_t i = 0; i < p->nroots; i++)
        sv_vkey_free(&p->roots[i]);
    for (size_t i = 0; i < p->nreceipt_keys; i++)
        sv_vkey_free(&p->receipt_keys[i]);
    for (size_t i = 0; i < p->nkeyring_files; i++)
        free(p->keyring_files[i]);
    for (size_t i = 0; i < p->nmeasured_files; i++)
        free(p->measured_files[i].path);
    free(p->measured_files);
    p->measured_files = NULL;
    p->nmeasured_files = 0;
    free(p->ak_public);
    p->nlogs = p->nwitnesses = p->nroots = p->nreceipt_keys = p->nkeyring_files = 0;
    p->ak_public = NULL;
}

static int group_met(const struct sv_policy *p, unsigned g, const int *witness_ok, int depth)
{
    const struct sv_group *gr = &p->groups[g];
    unsigned got = 0;

    if (depth > SV_POLICY_GROUPS)
        return 0;
    for (unsigned i = 0; i < gr->nmembers; i++)
        if (gr->member_is_group[i] ? group_met(p, gr->member[i], witness_ok, depth + 1)
                                   : witness_ok[gr->member[i]])
            got++;
    return got >= gr->k;
}

int sv_policy_quorum_met(const struct sv_policy *p, const int *witness_ok)
{
    if (p->quorum < 0)
        return 1;
    if (p->quorum >= SV_QUORUM_WITNESS)
        return witness_ok[p->quorum - SV_QUORUM_WITNESS] != 0;
    return group_met(p, (unsigned)p->quorum, witness_ok, 0);
}

/*
 * sv_policy.h -- the auditor's trust policy (docs/verifier.md section 2): what the verifier
 * trusts, written by the auditor from keys obtained out of band.
 *
 * A text file of at most 256 KiB, one directive per line ('\n' endings, '#' starts a comment
 * line, blank lines are ignored). The log and witness lines are those of C2SP tlog-policy
 * (sigsum's policy format): `log <vkey>`, `witness <name> <vkey>`, `group <name> <all|any|k>
 * <member>...`, `quorum <name>|none`. sworn adds `origin`, `entries`, `ak-public`, `pcr`,
 * `event-log`, `measured-start`, `measured-file`, `quotes`, `tpm-firmware-min`, `development`,
 * `uids-unrecorded`, `keyring-root`, `keyring-threshold`, `keyring`, `receipt-key`. Paths are
 * relative to the policy file's folder. Every unknown directive, repeated singleton, bad key,
 * unknown group member, group cycle or out-of-range number is refused with its line number; so
 * is one public key listed twice (two witness, log, keyring-root or receipt-key lines, or a
 * witness and a log line, whatever the names) and a group whose members, expanded through
 * nested groups, share a witness: every threshold then counts distinct keys.
 *
 * sv_policy_load reads the files the policy names (AK public area, event log) too, so a policy
 * that loads is complete. Free with sv_policy_free. Not thread-safe while loading; read-only
 * afterwards.
 */
#ifndef SV_POLICY_H
#define SV_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "sv_note.h"
#include "sv_util.h"

#define SV_POLICY_MAX (256u * 1024u)
#define SV_POLICY_KEYS 32 /* at most 64: a group holds its witnesses as a 64-bit mask */
#define SV_POLICY_GROUPS 32
#define SV_GROUP_MEMBERS 32
#define SV_KEYRING_FILES 64
#define SV_MEASURED_FILES 1024 /* measured-file lines */
#define SV_PCRS 24             /* PCRs 0..23 of the SHA-256 bank */

/* A file digest the auditor approved for a measured start (`measured-file`). */
struct sv_measured_file {
    uint8_t sha256[SV_HASH];
    char *path; /* NULL: any path; else only a Startup file of exactly this path */
};

struct sv_group {
    char name[SV_NAME_MAX + 1];
    unsigned k; /* how many members must be satisfied */
    unsigned nmembers;
    int member_is_group[SV_GROUP_MEMBERS];
    unsigned member[SV_GROUP_MEMBERS]; /* index into witnesses or groups */
    uint64_t witness_mask; /* the witnesses its members name, expanded (bit i: witness i) */
};

struct sv_policy {
    char origin[SV_ORIGIN_MAX + 1];
    struct sv_vkey logs[SV_POLICY_KEYS]; /* log keys: one valid signature of any is required */
    size_t nlogs;
    struct sv_vkey witnesses[SV_POLICY_KEYS];
    char witness_names[SV_POLICY_KEYS][SV_NAME_MAX + 1];
    size_t nwitnesses;
    struct sv_group groups[SV_POLICY_GROUPS];
    size_t ngroups;
    int quorum;        /* -1: none; otherwise a group index, or SV_QUORUM_WITNESS + witness index */
    int sworn_entries; /* 1: entries are sworn.v1.Entry and their content is checked */
    /* TPM */
    int quotes; /* 0 ignore, 1 check when present, 2 required for every checkpoint */
    uint8_t *ak_public;
    size_t ak_public_len;
    uint32_t pcr_mask;
    uint8_t pcr_values[SV_PCRS][SV_HASH]; /* by PCR number, for the PCRs in pcr_mask */
    int have_event_log;
    /* measured-start record: PCR 23 of each quote is the pcr23 of the newest Startup entry in
     * its checkpoint's tree, each start replays, chains, and measured only approved files */
    int measured_start;
    struct sv_measured_file *measured_files;
    size_t nmeasured_files;
    uint64_t min_firmware_version; /* tpm-firmware-min; 0: no floor */
    /* separation (docs/verifier.md section 3): what the auditor accepts knowingly */
    int development_allowed;     /* `development allowed`: starts with hardening.development */
    int uids_unrecorded_allowed; /* `uids-unrecorded allowed`: starts without uids (older) */
    /* keyring */
    struct sv_vkey roots[SV_POLICY_KEYS];
    size_t nroots;
    unsigned root_threshold;
    char *keyring_files[SV_KEYRING_FILES];
    size_t nkeyring_files;
    /* receipt keys pinned directly (DER SPKI files), when no keyring is used */
    struct sv_vkey receipt_keys[SV_POLICY_KEYS];
    size_t nreceipt_keys;
};

#define SV_QUORUM_WITNESS 1000

/* Parse policy text (path: for resolving relative paths and messages). 0, or -1 with why. */
int sv_policy_parse(const char *text, size_t len, const char *path, struct sv_policy *out,
                    char *why);
/* Read and parse a policy file. 0, -1 with why. */
int sv_policy_load(const char *path, struct sv_policy *out, char *why);
void sv_policy_free(struct sv_policy *p);

/*
 * Whether the witness cosignatures satisfied (per witness: 1 when a valid line was seen) meet
 * the quorum. 1 yes, 0 no.
 */
int sv_policy_quorum_met(const struct sv_policy *p, const int *witness_ok);

#endif

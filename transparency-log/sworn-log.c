/*
 * sworn-log -- the operator's tool for a sworn transparency log.
 *
 * Exit status: 0 on success, 1 when a verification fails, 2 on bad usage or unreadable input.
 * Errors go to stderr as one line "sworn-log: <command>: <reason>"; results go to stdout.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "checkpoint.h"
#include "encoding.h"
#include "err.h"
#include "fileio.h"
#include "logstore.h"
#include "note.h"
#include "notesign.h"
#include "notesigner.h"
#include "signer.h"
#include "proof.h"
#include "tiledir.h"
#include "bundle.h"

#define EXIT_VERIFY 1
#define EXIT_USAGE 2
#define MAX_VKEYS 64
/* Lines that `append` reads before it appends any: all or nothing per batch. */
#define APPEND_BATCH 256

static const char *command = "";

static const char usage_text[] =
    "usage: sworn-log COMMAND [OPTIONS]\n"
    "\n"
    "  init --db PATH --origin ORIGIN --key KEYFILE [--key-name NAME]\n"
    "        create a log; KEYFILE (mode 0600) is a PRIVATE+KEY+ Ed25519 key or an ECDSA P-256\n"
    "        PEM key, whose note name is NAME (default: the origin)\n"
    "  init --db PATH --origin ORIGIN --key pkcs11:URI --module SO --pin-file F\n"
    "       --pinned-spki DERFILE [--key-name NAME]\n"
    "  init --db PATH --origin ORIGIN --key tpm:handle=0x81.. --tcti TCTI --pinned-spki DERFILE\n"
    "        create a log whose checkpoints an HSM or TPM key signs (ECDSA P-256: note type\n"
    "        0x02); the key must have the pinned public key\n"
    "  append --db PATH [FILE]\n"
    "        append one entry per line of FILE (default stdin), without its newline; prints\n"
    "        each index once the entry is durable\n"
    "  checkpoint --db PATH\n"
    "        sign and print a checkpoint note of the whole tree\n"
    "  prove-inclusion --db PATH --index I [--size N]\n"
    "  prove-consistency --db PATH --old M [--size N]\n"
    "        print a proof, one base64 hash per line; N defaults to the newest checkpoint\n"
    "  verify-note --vkey VKEY [--vkey VKEY ...] NOTEFILE\n"
    "  verify-inclusion --vkey VKEY --checkpoint NOTEFILE --index I --entry FILE [PROOFFILE]\n"
    "  verify-consistency --vkey VKEY --old NOTEFILE --new NOTEFILE [PROOFFILE]\n"
    "        verify against signed checkpoints; the proof is read from PROOFFILE or stdin\n"
    "  export-tiles --db PATH [--size N] DIR\n"
    "        write the C2SP tlog-tiles folder of the newest (or size N) checkpoint\n"
    "  export-bundle --db PATH [--size N] --start S --count C [--old M] FILE\n"
    "        write entries S..S+C-1 with the checkpoint of size N (default the newest), the\n"
    "        hashes that tie them to it, their receipts and its quote, as one file (C <= 65536);\n"
    "        with --old M also the proof that it extends the tree of size M an auditor saved\n"
    "  import-tiles --db PATH --vkey VKEY [--vkey ...] DIR\n"
    "        read a tlog-tiles folder into a new database, verifying everything\n"
    "  add-quote --db PATH --size N --attest FILE --sig FILE\n"
    "        store the TPM quote (raw TPMS_ATTEST and TPMT_SIGNATURE, as sworn-tpm quote\n"
    "        writes them) of the checkpoint of tree size N\n"
    "  keygen --name NAME --out KEYFILE\n"
    "        make an Ed25519 note key (mode 0600); prints its verifier key\n"
    "  vkey --db PATH\n"
    "        print the verifier key of the log's signing key\n"
    "  vkey --name NAME --spki DERFILE\n"
    "        print the note verifier key of a P-256 or Ed25519 public key (DER SPKI), e.g.\n"
    "        an HSM key's from `sworn-hsm pubkey --der`\n";

/* The exit statuses --help adds to the shared ones (common/cli.h). */
static const char own_exits[] =
    "  (1: a verification failed; 2: also an input that does not load)\n";

struct opts {
    const char *db, *origin, *key, *key_name, *name, *out, *checkpoint, *entry, *old_note,
        *new_note, *module, *pin_file, *tcti, *pinned_spki, *attest, *sig;
    const char *vkeys[MAX_VKEYS];
    size_t nvkeys;
    uint64_t index, old, size, start, count;
    int have_index, have_old, have_size, have_start, have_count;
    int argc;
    char **argv; /* positional arguments */
};

static int fail_usage(const char *msg)
{
    fprintf(stderr, "sworn-log: %s%s%s\n", command, *command ? ": " : "", msg);
    fprintf(stderr, "run 'sworn-log --help' for usage\n");
    return EXIT_USAGE;
}

/* Report the error in the thread's slot and map it to an exit status. */
static int fail_err(void)
{
    enum sworn_err_code code = sworn_err_code();

    fprintf(stderr, "sworn-log: %s: %s\n", command, sworn_err_msg());
    return code == SWORN_ERR_VERIFY ? EXIT_VERIFY : EXIT_USAGE;
}

static int parse_number(const char *text, uint64_t *v)
{
    return sworn_parse_u64(text, strlen(text), v);
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {{"db", required_argument, NULL, 'd'},
                                             {"origin", required_argument, NULL, 'o'},
                                             {"key", required_argument, NULL, 'k'},
                                             {"key-name", required_argument, NULL, 'K'},
                                             {"module", required_argument, NULL, 'm'},
                                             {"pin-file", required_argument, NULL, 'p'},
                                             {"tcti", required_argument, NULL, 't'},
                                             {"pinned-spki", required_argument, NULL, 'S'},
                                             {"spki", required_argument, NULL, 'S'},
                                             {"attest", required_argument, NULL, 'a'},
                                             {"sig", required_argument, NULL, 'g'},
                                             {"index", required_argument, NULL, 'i'},
                                             {"size", required_argument, NULL, 's'},
                                             {"start", required_argument, NULL, 'B'},
                                             {"count", required_argument, NULL, 'C'},
                                             {"old", required_argument, NULL, 'O'},
                                             {"new", required_argument, NULL, 'N'},
                                             {"vkey", required_argument, NULL, 'v'},
                                             {"name", required_argument, NULL, 'n'},
                                             {"out", required_argument, NULL, 'w'},
                                             {"checkpoint", required_argument, NULL, 'c'},
                                             {"entry", required_argument, NULL, 'e'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int c;

    memset(o, 0, sizeof(*o));
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'd':
            o->db = optarg;
            break;
        case 'o':
            o->origin = optarg;
            break;
        case 'k':
            o->key = optarg;
            break;
        case 'm':
            o->module = optarg;
            break;
        case 'p':
            o->pin_file = optarg;
            break;
        case 't':
            o->tcti = optarg;
            break;
        case 'S':
            o->pinned_spki = optarg;
            break;
        case 'a':
            o->attest = optarg;
            break;
        case 'g':
            o->sig = optarg;
            break;
        case 'K':
            o->key_name = optarg;
            break;
        case 'n':
            o->name = optarg;
            break;
        case 'w':
            o->out = optarg;
            break;
        case 'c':
            o->checkpoint = optarg;
            break;
        case 'e':
            o->entry = optarg;
            break;
        case 'N':
            o->new_note = optarg;
            break;
        case 'i':
            if (parse_number(optarg, &o->index) < 0)
                return fail_usage("--index needs a non-negative decimal number");
            o->have_index = 1;
            break;
        case 's':
            if (parse_number(optarg, &o->size) < 0)
                return fail_usage("--size needs a non-negative decimal number");
            o->have_size = 1;
            break;
        case 'B':
            if (parse_number(optarg, &o->start) < 0)
                return fail_usage("--start needs a non-negative decimal number");
            o->have_start = 1;
            break;
        case 'C':
            if (parse_number(optarg, &o->count) < 0)
                return fail_usage("--count needs a non-negative decimal number");
            o->have_count = 1;
            break;
        case 'O':
            /* --old is a number for prove-consistency and a file for verify-consistency. */
            o->old_note = optarg;
            o->have_old = parse_number(optarg, &o->old) == 0;
            break;
        case 'v':
            if (o->nvkeys == MAX_VKEYS)
                return fail_usage("too many --vkey options");
            o->vkeys[o->nvkeys++] = optarg;
            break;
        case 'h':
            sworn_cli_print_help(usage_text, own_exits);
            exit(0);
        default:
            return fail_usage(optopt ? "unknown or incomplete option" : "unknown option");
        }
    }
    o->argc = argc - optind;
    o->argv = argv + optind;
    return 0;
}

static int open_log(const char *db, struct sworn_log **log)
{
    if (db == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "--db PATH is required");
    return sworn_log_open(db, log);
}

/* The log's checkpoint key: a key file, or a hardware key behind a sworn_signer. */
struct log_key {
    struct sworn_note_signer note;
    struct sworn_signer *hw; /* NULL for key files */
};

static void close_log_key(struct log_key *k)
{
    sworn_note_signer_close(&k->note);
    sworn_signer_close(k->hw);
    k->hw = NULL;
}

/* Is this --key a signer URI (pkcs11:, tpm:) rather than a key file? */
static int is_signer_uri(const char *key)
{
    return strncmp(key, "pkcs11:", 7) == 0 || strncmp(key, "tpm:", 4) == 0;
}

/* Optional text setting: empty when unset. */
static int meta_opt(struct sworn_log *log, const char *key, char *out, size_t cap)
{
    out[0] = '\0';
    if (sworn_log_meta_get(log, key, out, cap) == 0 || sworn_err_code() == SWORN_ERR_NOTFOUND)
        return 0;
    return -1;
}

/* Open a hardware key with the pinned public key, and wrap it as the note signer `name`. */
static int open_hw_key(const struct sworn_signer_config *cfg, const char *name, struct log_key *k)
{
    if (sworn_signer_open(cfg, &k->hw) < 0)
        return -1;
    if (sworn_signer_as_note_signer(k->hw, name, &k->note) < 0) {
        sworn_signer_close(k->hw);
        k->hw = NULL;
        return -1;
    }
    return 0;
}

/* Open the signer named by the log's settings. */
static int open_log_key(struct sworn_log *log, struct log_key *k)
{
    char path[SWORN_LOG_META_MAX], name[SWORN_LOG_META_MAX], uri[SWORN_LOG_META_MAX],
        module[SWORN_LOG_META_MAX], pin[SWORN_LOG_META_MAX], tcti[SWORN_LOG_META_MAX],
        spki_hex[SWORN_LOG_META_MAX];
    uint8_t spki[SWORN_SIGNER_SPKI_MAX];

    memset(k, 0, sizeof(*k));
    if (meta_opt(log, "key_name", name, sizeof(name)) < 0 ||
        meta_opt(log, "signer_uri", uri, sizeof(uri)) < 0)
        return -1;
    if (uri[0] != '\0') {
        struct sworn_signer_config cfg = {.uri = uri};
        size_t n;

        if (meta_opt(log, "signer_module", module, sizeof(module)) < 0 ||
            meta_opt(log, "signer_pin_file", pin, sizeof(pin)) < 0 ||
            meta_opt(log, "signer_tcti", tcti, sizeof(tcti)) < 0 ||
            meta_opt(log, "signer_spki", spki_hex, sizeof(spki_hex)) < 0)
            return -1;
        n = strlen(spki_hex) / 2;
        if (n == 0 || n > sizeof(spki) || sworn_hex_decode(spki_hex, strlen(spki_hex), spki, n) < 0)
            return sworn_err_set(SWORN_ERR_CORRUPT, "the log's pinned signer key is unreadable");
        cfg.module_path = module[0] ? module : NULL;
        cfg.pin_file = pin[0] ? pin : NULL;
        cfg.tcti = tcti[0] ? tcti : NULL;
        cfg.pinned_spki = spki;
        cfg.pinned_spki_len = n;
        return open_hw_key(&cfg, name[0] ? name : sworn_log_origin(log), k);
    }
    if (sworn_log_meta_get(log, "key_path", path, sizeof(path)) < 0)
        return sworn_err_set(SWORN_ERR_ARG, "the log has no signing key configured");
    return sworn_note_signer_open_file(path, name[0] ? name : NULL, &k->note);
}

/* init with a hardware key: pin its public key, store the settings. */
static int init_hw_key(struct opts *o, struct log_key *k, struct sworn_log **log)
{
    uint8_t spki[SWORN_SIGNER_SPKI_MAX];
    char hex[2 * SWORN_SIGNER_SPKI_MAX + 1], abs_pin[PATH_MAX] = "";
    struct sworn_signer_config cfg = {.uri = o->key, .module_path = o->module, .tcti = o->tcti};
    FILE *f;
    size_t n;

    if (o->pinned_spki == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "a hardware key needs --pinned-spki DERFILE (from "
                                            "sworn-hsm pubkey --der)");
    f = fopen(o->pinned_spki, "rb");
    if (f == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "cannot read %s", o->pinned_spki);
    n = fread(spki, 1, sizeof(spki), f);
    fclose(f);
    if (o->pin_file != NULL && realpath(o->pin_file, abs_pin) == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "--pin-file: cannot resolve %s", o->pin_file);
    cfg.pin_file = abs_pin[0] ? abs_pin : NULL;
    cfg.pinned_spki = spki;
    cfg.pinned_spki_len = n;
    if (open_hw_key(&cfg, o->key_name ? o->key_name : o->origin, k) < 0)
        return -1;
    if (sworn_hex_encode(spki, n, hex, sizeof(hex)) < 0 ||
        sworn_log_create(o->db, o->origin, log) < 0 ||
        sworn_log_meta_set(*log, "signer_uri", o->key) < 0 ||
        sworn_log_meta_set(*log, "signer_spki", hex) < 0 ||
        sworn_log_meta_set(*log, "key_name", k->note.pub.name) < 0 ||
        (o->module && sworn_log_meta_set(*log, "signer_module", o->module) < 0) ||
        (cfg.pin_file && sworn_log_meta_set(*log, "signer_pin_file", cfg.pin_file) < 0) ||
        (o->tcti && sworn_log_meta_set(*log, "signer_tcti", o->tcti) < 0))
        return -1;
    return 0;
}

/* Does the key file start like a Go/C2SP note key? (Its full checks happen when it is opened.) */
static int key_file_is_ed25519(const char *path)
{
    static const char prefix[] = "PRIVATE+KEY+";
    char head[sizeof(prefix)] = {0};
    FILE *f = fopen(path, "rb");
    size_t n;

    if (f == NULL)
        return 0;
    n = fread(head, 1, sizeof(prefix) - 1, f);
    fclose(f);
    return n == sizeof(prefix) - 1 && memcmp(head, prefix, n) == 0;
}

static int cmd_init(struct opts *o)
{
    struct log_key k;
    struct sworn_log *log = NULL;
    char abs_key[PATH_MAX], vkey[SWORN_NOTE_VKEY_MAX + 1];
    int is_ed25519_file, rc = 0;

    memset(&k, 0, sizeof(k));
    if (o->db == NULL || o->origin == NULL || o->key == NULL || o->argc != 0)
        return fail_usage("needs --db PATH --origin ORIGIN --key KEYFILE|URI");
    if (is_signer_uri(o->key)) {
        if (init_hw_key(o, &k, &log) < 0)
            rc = fail_err();
    } else {
        const char *name;

        if (realpath(o->key, abs_key) == NULL)
            return fail_usage("--key: cannot resolve the key file path");
        /* A PRIVATE+KEY+ file names itself; a PEM key takes --key-name or the origin. */
        is_ed25519_file = key_file_is_ed25519(abs_key);
        name = is_ed25519_file ? o->key_name : (o->key_name ? o->key_name : o->origin);
        if (sworn_note_signer_open_file(abs_key, name, &k.note) < 0)
            return fail_err();
        if (sworn_log_create(o->db, o->origin, &log) < 0 ||
            sworn_log_meta_set(log, "key_path", abs_key) < 0 ||
            (!is_ed25519_file && sworn_log_meta_set(log, "key_name", k.note.pub.name) < 0))
            rc = fail_err();
    }
    if (rc == 0 && sworn_note_verifier_format(&k.note.pub, vkey, sizeof(vkey)) >= 0)
        printf("%s\n", vkey);
    close_log_key(&k);
    sworn_log_close(log);
    return rc;
}

/* Append collected lines; prints their indices. */
static int append_lines(struct sworn_log *log, uint8_t **lines, size_t *lens, size_t n)
{
    uint64_t first;

    if (n == 0)
        return 0;
    if (sworn_log_append(log, (const uint8_t *const *)lines, lens, n, &first) < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        printf("%llu\n", (unsigned long long)(first + i));
    return fflush(stdout) == 0 ? 0 : sworn_err_set(SWORN_ERR_IO, "cannot write to stdout");
}

static int cmd_append(struct opts *o)
{
    struct sworn_log *log = NULL;
    FILE *in = stdin;
    uint8_t *lines[APPEND_BATCH] = {0};
    size_t lens[APPEND_BATCH];
    size_t n = 0, line_no = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    int rc = EXIT_USAGE;

    if (o->argc > 1)
        return fail_usage("takes at most one FILE");
    if (open_log(o->db, &log) < 0)
        return fail_err();
    if (o->argc == 1 && (in = fopen(o->argv[0], "rb")) == NULL) {
        sworn_log_close(log);
        return fail_usage("cannot open the input file");
    }
    /*
     * Entries are appended in batches of APPEND_BATCH lines; a bad line stops the command before
     * its batch is appended, and the indices printed so far say exactly what was stored.
     */
    while ((got = getline(&line, &cap, in)) >= 0) {
        size_t len = (size_t)got;

        line_no++;
        if (len > 0 && line[len - 1] == '\n')
            len--;
        if (len > SWORN_TILE_ENTRY_MAX) {
            fprintf(stderr, "sworn-log: append: line %zu has %zu bytes; entries hold at most %u\n",
                    line_no, len, SWORN_TILE_ENTRY_MAX);
            goto done;
        }
        lines[n] = malloc(len ? len : 1);
        if (lines[n] == NULL) {
            sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
            rc = fail_err();
            goto done;
        }
        memcpy(lines[n], line, len);
        lens[n++] = len;
        if (n == APPEND_BATCH) {
            if (append_lines(log, lines, lens, n) < 0) {
                rc = fail_err();
                goto done;
            }
            for (size_t i = 0; i < n; i++) {
                free(lines[i]);
                lines[i] = NULL;
            }
            n = 0;
        }
    }
    if (ferror(in)) {
        fprintf(stderr, "sworn-log: append: read error\n");
        goto done;
    }
    if (append_lines(log, lines, lens, n) < 0) {
        rc = fail_err();
        goto done;
    }
    rc = 0;
done:
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    free(line);
    if (in != stdin)
        fclose(in);
    sworn_log_close(log);
    return rc;
}

static int cmd_checkpoint(struct opts *o)
{
    struct log_key k = {0};
    struct sworn_note_signer *signers[1] = {&k.note};
    struct sworn_log *log = NULL;
    char *note = malloc(SWORN_NOTE_MAX_LEN + 1);
    size_t len;
    int rc = EXIT_USAGE;

    if (o->argc != 0) {
        free(note);
        return fail_usage("takes no positional arguments");
    }
    if (note == NULL || open_log(o->db, &log) < 0 || open_log_key(log, &k) < 0 ||
        sworn_log_checkpoint(log, signers, 1, note, SWORN_NOTE_MAX_LEN + 1, &len, NULL) < 0) {
        rc = fail_err();
    } else {
        fwrite(note, 1, len, stdout);
        rc = 0;
    }
    close_log_key(&k);
    sworn_log_close(log);
    free(note);
    return rc;
}

/* The tree size a proof is for: --size, or the newest checkpoint's. */
static int proof_size(struct sworn_log *log, const struct opts *o, uint64_t *size)
{
    char *note;
    size_t len;
    int rc;

    if (o->have_size) {
        *size = o->size;
        return 0;
    }
    note = malloc(SWORN_NOTE_MAX_LEN + 1);
    if (note == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    rc = sworn_log_get_checkpoint(log, UINT64_MAX, note, SWORN_NOTE_MAX_LEN + 1, &len, size);
    free(note);
    if (rc < 0 && sworn_err_code() == SWORN_ERR_NOTFOUND)
        return sworn_err_set(SWORN_ERR_NOTFOUND,
                             "no checkpoint yet: run 'sworn-log checkpoint' or give --size");
    return rc;
}

static int print_proof(const uint8_t *hashes, size_t count)
{
    char text[SWORN_PROOF_TEXT_LEN(SWORN_MERKLE_MAX_PROOF) + 1];
    long n = sworn_proof_format(hashes, count, text, sizeof(text));

    if (n < 0)
        return -1;
    fwrite(text, 1, (size_t)n, stdout);
    return 0;
}

static int cmd_prove(struct opts *o, int consistency)
{
    struct sworn_log *log = NULL;
    uint8_t proof[SWORN_MERKLE_MAX_PROOF * SWORN_HASH_LEN];
    size_t count = 0;
    uint64_t size = 0;
    int ok;

    if (o->argc != 0)
        return fail_usage("takes no positional arguments");
    if (consistency ? !o->have_old : !o->have_index)
        return fail_usage(consistency ? "needs --old M" : "needs --index I");
    if (open_log(o->db, &log) < 0)
        return fail_err();
    ok = proof_size(log, o, &size) == 0 &&
         (consistency ? sworn_log_prove_consistency(log, o->old, size, proof,
                                                    SWORN_MERKLE_MAX_PROOF, &count)
                      : sworn_log_prove_inclusion(log, o->index, size, proof,
                                                  SWORN_MERKLE_MAX_PROOF, &count)) == 0 &&
         print_proof(proof, count) == 0;
    sworn_log_close(log);
    return ok ? 0 : fail_err();
}

/* Parse every --vkey. */
static int load_vkeys(const struct opts *o, struct sworn_note_verifier *keys)
{
    if (o->nvkeys == 0)
        return sworn_err_set(SWORN_ERR_ARG, "needs at least one --vkey");
    for (size_t i = 0; i < o->nvkeys; i++)
        if (sworn_note_verifier_parse(o->vkeys[i], strlen(o->vkeys[i]), &keys[i]) < 0)
            return sworn_err_set(SWORN_ERR_ARG, "--vkey %s: %s", o->vkeys[i], sworn_err_msg());
    return 0;
}

/*
 * Read, verify and parse a signed checkpoint file. OUT: *cp (whose extensions point into a
 * buffer freed here, so they are cleared).
 */
static int load_checkpoint(const char *path, const struct sworn_note_verifier *keys, size_t nkeys,
                           struct sworn_checkpoint *cp)
{
    struct sworn_note *note = malloc(sizeof(*note));
    char *data = NULL;
    size_t len;
    int rc = -1;

    SWORN_ENSURE(note != NULL, SWORN_ERR_NOMEM, "out of memory");
    SWORN_GUARD(sworn_file_read(path, SWORN_NOTE_MAX_LEN, &data, &len));
    SWORN_GUARD(sworn_note_parse(data, len, note));
    SWORN_GUARD(sworn_note_verify(note, keys, nkeys, NULL, NULL, NULL));
    SWORN_GUARD(sworn_checkpoint_parse(note->text, note->text_len, cp));
    cp->extensions = NULL;
    cp->extensions_len = 0;
    rc = 0;
fail:
    if (rc < 0)
        sworn_err_set(sworn_err_code(), "%s: %s", path, sworn_err_msg());
    free(note);
    free(data);
    return rc;
}

static int cmd_verify_note(struct opts *o)
{
    struct sworn_note_verifier keys[MAX_VKEYS];
    struct sworn_note *note = malloc(sizeof(*note));
    char *data = NULL;
    size_t len, verified = 0;
    int rc;

    if (o->argc != 1) {
        free(note);
        return fail_usage("needs exactly one NOTEFILE");
    }
    if (note == NULL || load_vkeys(o, keys) < 0 ||
        sworn_file_read(o->argv[0], SWORN_NOTE_MAX_LEN, &data, &len) < 0 ||
        sworn_note_parse(data, len, note) < 0) {
        rc = EXIT_USAGE;
        fprintf(stderr, "sworn-log: %s: %s\n", command, sworn_err_msg());
    } else if (sworn_note_verify(note, keys, o->nvkeys, &verified, NULL, NULL) < 0) {
        rc = fail_err();
        if (rc != EXIT_VERIFY)
            rc = EXIT_VERIFY; /* a malformed signature of a known key is a failed verification */
    } else {
        printf("OK: %zu signature%s verified\n", verified, verified == 1 ? "" : "s");
        rc = 0;
    }
    free(note);
    free(data);
    return rc;
}

static int read_proof(const struct opts *o, uint8_t *proof, size_t *count)
{
    char *text = NULL;
    size_t len;
    int rc;

    if (sworn_file_read(o->argc == 1 ? o->argv[0] : "-",
                        SWORN_PROOF_TEXT_LEN(SWORN_MERKLE_MAX_PROOF), &text, &len) < 0)
        return -1;
    rc = sworn_proof_parse(text, len, proof, SWORN_MERKLE_MAX_PROOF, count);
    free(text);
    if (rc < 0)
        sworn_err_set(sworn_err_code(), "proof %s: %s", o->argc == 1 ? o->argv[0] : "on stdin",
                      sworn_err_msg());
    return rc;
}

/* Status for a failure before the verification proper: bad input, never "verified false". */
static int fail_input(void)
{
    fprintf(stderr, "sworn-log: %s: %s\n", command, sworn_err_msg());
    return sworn_err_code() == SWORN_ERR_VERIFY ? EXIT_VERIFY : EXIT_USAGE;
}

static int cmd_verify_inclusion(struct opts *o)
{
    struct sworn_note_verifier keys[MAX_VKEYS];
    struct sworn_checkpoint cp;
    uint8_t proof[SWORN_MERKLE_MAX_PROOF * SWORN_HASH_LEN], leaf[SWORN_HASH_LEN];
    char *entry = NULL;
    size_t count, len;

    if (o->argc > 1 || o->checkpoint == NULL || o->entry == NULL || !o->have_index)
        return fail_usage("needs --vkey, --checkpoint, --index, --entry and at most one PROOFFILE");
    /* The entry is read last: every other input is checked before anything needs freeing. */
    if (load_vkeys(o, keys) < 0 || load_checkpoint(o->checkpoint, keys, o->nvkeys, &cp) < 0 ||
        read_proof(o, proof, &count) < 0 ||
        sworn_file_read(o->entry, SWORN_TILE_ENTRY_MAX, &entry, &len) < 0)
        return fail_input();
    sworn_merkle_leaf_hash((const uint8_t *)entry, len, leaf);
    free(entry);
    if (sworn_merkle_verify_inclusion(o->index, cp.size, leaf, proof, count, cp.root) < 0) {
        fprintf(stderr, "sworn-log: %s: entry %llu is not proven in the tree of size %llu: %s\n",
                command, (unsigned long long)o->index, (unsigned long long)cp.size,
                sworn_err_msg());
        return EXIT_VERIFY;
    }
    printf("OK: entry %llu is in the tree of size %llu\n", (unsigned long long)o->index,
           (unsigned long long)cp.size);
    return 0;
}

static int cmd_verify_consistency(struct opts *o)
{
    struct sworn_note_verifier keys[MAX_VKEYS];
    struct sworn_checkpoint old_cp, new_cp;
    uint8_t proof[SWORN_MERKLE_MAX_PROOF * SWORN_HASH_LEN];
    size_t count;

    if (o->argc > 1 || o->old_note == NULL || o->new_note == NULL)
        return fail_usage("needs --vkey, --old NOTEFILE, --new NOTEFILE and at most one PROOFFILE");
    if (load_vkeys(o, keys) < 0 || load_checkpoint(o->old_note, keys, o->nvkeys, &old_cp) < 0 ||
        load_checkpoint(o->new_note, keys, o->nvkeys, &new_cp) < 0 ||
        read_proof(o, proof, &count) < 0)
        return fail_input();
    if (strcmp(old_cp.origin, new_cp.origin) != 0) {
        fprintf(stderr, "sworn-log: %s: the checkpoints are of different logs\n", command);
        return EXIT_VERIFY;
    }
    if (sworn_merkle_verify_consistency(old_cp.size, new_cp.size, old_cp.root, new_cp.root, proof,
                                        count) < 0) {
        fprintf(stderr,
                "sworn-log: %s: the tree of size %llu does not extend that of size %llu: %s\n",
                command, (unsigned long long)new_cp.size, (unsigned long long)old_cp.size,
                sworn_err_msg());
        return EXIT_VERIFY;
    }
    printf("OK: the tree of size %llu extends the tree of size %llu\n",
           (unsigned long long)new_cp.size, (unsigned long long)old_cp.size);
    return 0;
}

static int cmd_export(struct opts *o)
{
    struct sworn_log *log = NULL;
    uint64_t size;
    int ok;

    if (o->argc != 1)
        return fail_usage("needs exactly one DIR");
    if (open_log(o->db, &log) < 0)
        return fail_err();
    ok = sworn_tiledir_export(log, o->have_size ? o->size : UINT64_MAX, o->argv[0], &size) == 0;
    sworn_log_close(log);
    if (!ok)
        return fail_err();
    printf("exported the tree of size %llu to %s\n", (unsigned long long)size, o->argv[0]);
    return 0;
}

static int cmd_export_bundle(struct opts *o)
{
    struct sworn_log *log = NULL;
    int ok;

    if (o->argc != 1 || !o->have_start || !o->have_count)
        return fail_usage("needs --db PATH --start S --count C and exactly one FILE");
    if (open_log(o->db, &log) < 0)
        return fail_err();
    if (o->old_note != NULL && (!o->have_old || o->old == 0)) {
        sworn_log_close(log);
        return fail_usage("--old needs the saved tree size, a decimal number of at least 1");
    }
    ok = sworn_bundle_export_since(log, o->have_size ? o->size : UINT64_MAX, o->start, o->count,
                                   o->have_old ? o->old : 0, o->argv[0]) == 0;
    sworn_log_close(log);
    if (!ok)
        return fail_err();
    printf("exported entries %llu..%llu to %s\n", (unsigned long long)o->start,
           (unsigned long long)(o->start + o->count - 1), o->argv[0]);
    return 0;
}

static int cmd_import(struct opts *o)
{
    struct sworn_note_verifier keys[MAX_VKEYS];
    struct sworn_log *log = NULL;
    uint64_t size;

    if (o->argc != 1 || o->db == NULL)
        return fail_usage("needs --db PATH, --vkey VKEY and exactly one DIR");
    if (load_vkeys(o, keys) < 0)
        return fail_usage(sworn_err_msg());
    if (sworn_tiledir_import(o->argv[0], keys, o->nvkeys, o->db, &log) < 0)
        return fail_err();
    size = sworn_log_tree_size(log);
    sworn_log_close(log);
    printf("OK: imported and verified %llu entries into %s\n", (unsigned long long)size, o->db);
    return 0;
}

static int cmd_add_quote(struct opts *o)
{
    struct sworn_log *log = NULL;
    uint8_t *attest = NULL, *sig = NULL;
    size_t attest_len = 0, sig_len = 0;
    int ok;

    if (o->argc != 0 || !o->have_size || o->attest == NULL || o->sig == NULL)
        return fail_usage("needs --db PATH --size N --attest FILE --sig FILE");
    if (sworn_file_read(o->attest, SWORN_LOG_QUOTE_MAX, (char **)&attest, &attest_len) < 0 ||
        sworn_file_read(o->sig, SWORN_LOG_QUOTE_MAX, (char **)&sig, &sig_len) < 0) {
        free(attest);
        return fail_input();
    }
    ok = open_log(o->db, &log) == 0 &&
         sworn_log_put_quote(log, o->size, attest, attest_len, sig, sig_len) == 0;
    sworn_log_close(log);
    free(attest);
    free(sig);
    if (!ok)
        return fail_err();
    printf("stored the quote of the checkpoint of size %llu\n", (unsigned long long)o->size);
    return 0;
}

static int cmd_keygen(struct opts *o)
{
    char vkey[SWORN_NOTE_VKEY_MAX + 1];

    if (o->name == NULL || o->out == NULL || o->argc != 0)
        return fail_usage("needs --name NAME --out KEYFILE");
    if (sworn_note_keygen_ed25519(o->name, o->out, vkey, sizeof(vkey)) < 0)
        return fail_err();
    printf("%s\n", vkey);
    return 0;
}

static int cmd_vkey(struct opts *o)
{
    struct log_key k = {0};
    struct sworn_log *log = NULL;
    char vkey[SWORN_NOTE_VKEY_MAX + 1];
    int ok;

    if (o->argc != 0)
        return fail_usage("takes no positional arguments");
    if (o->pinned_spki != NULL || o->name != NULL) {
        /* From a public key obtained out of band: no database, no private key. */
        struct sworn_note_verifier v;
        char *der = NULL;
        size_t der_len = 0;

        if (o->pinned_spki == NULL || o->name == NULL || o->db != NULL)
            return fail_usage("vkey takes --db PATH, or --name NAME --spki DERFILE");
        ok = sworn_file_read(o->pinned_spki, SWORN_SIGNER_SPKI_MAX, &der, &der_len) == 0 &&
             sworn_note_verifier_from_spki(o->name, (const uint8_t *)der, der_len, &v) == 0 &&
             sworn_note_verifier_format(&v, vkey, sizeof(vkey)) >= 0;
        free(der);
        if (!ok)
            return fail_err();
        printf("%s\n", vkey);
        return 0;
    }
    if (open_log(o->db, &log) < 0)
        return fail_err();
    ok = open_log_key(log, &k) == 0 &&
         sworn_note_verifier_format(&k.note.pub, vkey, sizeof(vkey)) >= 0;
    close_log_key(&k);
    sworn_log_close(log);
    if (!ok)
        return fail_err();
    printf("%s\n", vkey);
    return 0;
}

static int run_command(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(struct opts *o);
    } commands[] = {
        {"init", cmd_init},
        {"append", cmd_append},
        {"checkpoint", cmd_checkpoint},
        {"verify-note", cmd_verify_note},
        {"verify-inclusion", cmd_verify_inclusion},
        {"verify-consistency", cmd_verify_consistency},
        {"export-tiles", cmd_export},
        {"export-bundle", cmd_export_bundle},
        {"import-tiles", cmd_import},
        {"add-quote", cmd_add_quote},
        {"keygen", cmd_keygen},
        {"vkey", cmd_vkey},
    };
    struct opts o;

    if (argc < 2)
        return fail_usage("no command given");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        sworn_cli_print_help(usage_text, own_exits);
        return 0;
    }
    command = argv[1];
    if (parse_opts(argc - 1, argv + 1, &o) != 0)
        return EXIT_USAGE;
    if (strcmp(command, "prove-inclusion") == 0)
        return cmd_prove(&o, 0);
    if (strcmp(command, "prove-consistency") == 0)
        return cmd_prove(&o, 1);
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(command, commands[i].name) == 0)
            return commands[i].run(&o);
    command = "";
    return fail_usage("unknown command");
}

int main(int argc, char **argv)
{
    int status;

    if (sworn_cli_standard(argc, argv, "sworn-log", usage_text, own_exits, &status))
        return status;
    return run_command(argc, argv);
}

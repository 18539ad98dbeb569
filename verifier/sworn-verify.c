/*
 * sworn-verify -- the auditor's independent, offline verifier of a sworn record
 * (docs/verifier.md, docs/auditor-guide.md).
 *
 * Exit status: 0 every check passed (or the records are consistent, or the fork proof holds),
 * 1 a verification failed (or a fork was found), 2 bad usage or unreadable input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sv_fork.h"
#include "sv_html.h"
#include "sv_policy.h"
#include "sv_stats.h"
#include "sv_util.h"
#include "sv_verify.h"
#include "sworn_version.h"

#define EXIT_FAIL 1
#define EXIT_USAGE 2

static const char usage_text[] =
    "usage: sworn-verify COMMAND [OPTIONS]\n"
    "\n"
    "  verify --policy FILE [--state FILE] [--json] [--html OUT] [--no-progress] RECORD\n"
    "        verify a record (a tlog-tiles folder) against the trust policy; with --state,\n"
    "        also against the checkpoint accepted last time (rollback, fork), and store the\n"
    "        newest checkpoint there when every check passes; with --html, also write the\n"
    "        report as one self-contained HTML page (no script, nothing loaded) to OUT\n"
    "  compare --policy FILE [--fork-proof OUT] [--json] [--html OUT] RECORD_A RECORD_B\n"
    "        compare two records of one log; on a fork, write a fork proof to OUT\n"
    "  check-fork-proof --policy FILE PROOF\n"
    "        check a fork proof (anyone with the log's verifier key can)\n"
    "  --help | --version\n"
    "\n"
    "Exit status:\n"
    "  0  done: succeeded, or the answer is yes\n"
    "  1  failed, or the answer is no\n"
    "  2  bad usage: an unknown option or command, a missing or malformed argument\n"
    "  (0: every check passed, the records are consistent, or the fork proof holds;\n"
    "   1: a verification failed, or a fork was found; 2: also an unreadable input)\n";

struct opts {
    const char *policy, *state, *fork_out, *html;
    int json, no_progress;
    const char *pos[4];
    int npos;
};

/* A message that may quote a record or a file, escaped (sv_print_text), and a newline. */
static void say(FILE *out, const char *msg)
{
    sv_print_text(out, msg);
    fputc('\n', out);
}

static int usage(const char *msg)
{
    fprintf(stderr, "sworn-verify: %s\nrun 'sworn-verify --help' for usage\n", msg);
    return EXIT_USAGE;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof(*o));
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "--policy") == 0 || strcmp(a, "--state") == 0 ||
            strcmp(a, "--fork-proof") == 0 || strcmp(a, "--html") == 0) {
            if (i + 1 >= argc)
                return usage("an option needs a value");
            if (a[2] == 'p')
                o->policy = argv[++i];
            else if (a[2] == 's')
                o->state = argv[++i];
            else if (a[2] == 'h')
                o->html = argv[++i];
            else
                o->fork_out = argv[++i];
        } else if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "--no-progress") == 0) {
            o->no_progress = 1;
        } else if (strcmp(a, "--") == 0) {
            for (i++; i < argc; i++) {
                if (o->npos == 4)
                    return usage("too many arguments");
                o->pos[o->npos++] = argv[i];
            }
        } else if (a[0] == '-') {
            return usage("unknown option");
        } else {
            if (o->npos == 4)
                return usage("too many arguments");
            o->pos[o->npos++] = a;
        }
    }
    if (o->policy == NULL)
        return usage("--policy FILE is required");
    if (o->html != NULL && (o->html[0] == '\0' || strcmp(argv[1], "check-fork-proof") == 0))
        return usage(o->html[0] == '\0' ? "--html needs a file name"
                                        : "--html is for verify and compare");
    return 0;
}

static void progress(uint64_t done, uint64_t total, void *arg)
{
    int width = 40, filled;
    static int last = -1;
    int pct;

    (void)arg;
    if (total == 0)
        return;
    pct = (int)(done * 100 / total);
    if (pct == last && done != total)
        return;
    last = pct;
    filled = (int)(done * (uint64_t)width / total);
    fprintf(stderr, "\r[%.*s%*s] %3d%% %llu/%llu entries", filled,
            "########################################", width - filled, "", pct,
            (unsigned long long)done, (unsigned long long)total);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}

static int load_policy(const char *path, struct sv_policy *p)
{
    char why[SV_WHY];

    if (sv_policy_load(path, p, why) != 0) {
        fprintf(stderr, "sworn-verify: policy %s: ", path);
        say(stderr, why);
        return -1;
    }
    return 0;
}

/* The generator line of the page: this tool, its release and commit. */
static const struct sv_html_meta *html_meta(const struct opts *o)
{
    static struct sv_html_meta m;

    m.generator = "sworn-verify " SWORN_RELEASE " (commit " SWORN_COMMIT ")";
    m.policy = o->policy;
    return &m;
}

static int cmd_verify(struct opts *o)
{
    struct sv_policy p;
    struct sv_verify_opts vo;
    struct sv_report *rep;
    struct sv_stats *st = NULL;
    int rc;

    if (o->npos != 1)
        return usage("verify needs exactly one RECORD");
    if (load_policy(o->policy, &p) != 0)
        return EXIT_USAGE;
    rep = calloc(1, sizeof(*rep));
    if (o->html != NULL && (st = malloc(sizeof(*st))) != NULL)
        sv_stats_init(st);
    if (rep == NULL || (o->html != NULL && st == NULL)) {
        fputs("sworn-verify: out of memory\n", stderr);
        free(rep);
        free(st);
        sv_policy_free(&p);
        return EXIT_USAGE;
    }
    memset(&vo, 0, sizeof(vo));
    vo.policy = &p;
    vo.record = o->pos[0];
    vo.state_path = o->state;
    vo.stats = st;
    if (!o->no_progress && isatty(STDERR_FILENO))
        vo.progress = progress;
    rc = sv_verify_record(&vo, rep);
    if (o->json)
        sv_report_print_json(rep, stdout);
    else
        sv_report_print_text(rep, stdout);
    if (rc == 2 && !o->json)
        fputs("sworn-verify: ", stderr);
    say(stderr, rep->unreadable_why);
    if (o->html != NULL) {
        char why[SV_WHY];

        /* The page is written whatever the result, an unreadable record's included: it is the
         * report. Not being able to write it is exit 2, as a state that cannot be written. */
        if (sv_html_write_report(o->html, rep, st, html_meta(o), why) != 0) {
            fputs("sworn-verify: ", stderr);
            say(stderr, why);
            rc = EXIT_USAGE;
        }
        sv_stats_free(st);
        free(st);
    }
    free(rep);
    sv_policy_free(&p);
    return rc;
}

/* sv_compare's result as a word (JSON and the page). */
static const char *compare_word(int rc)
{
    return rc == 0 ? "consistent" : rc == 1 ? "fork" : rc == 3 ? "fail" : "unreadable";
}

static int cmd_compare(struct opts *o)
{
    struct sv_policy p;
    char why[SV_WHY], *proof = NULL;
    size_t proof_len = 0;
    int rc, cmp;

    if (o->npos != 2)
        return usage("compare needs RECORD_A and RECORD_B");
    if (load_policy(o->policy, &p) != 0)
        return EXIT_USAGE;
    rc = sv_compare(&p, o->pos[0], o->pos[1], o->fork_out ? &proof : NULL, &proof_len, why);
    cmp = rc;
    if (rc == 1 && o->fork_out != NULL) {
        char w[SV_WHY];

        if (sv_write_file_atomic(o->fork_out, proof, proof_len, w) != 0) {
            fputs("sworn-verify: ", stderr);
            say(stderr, w);
            rc = EXIT_USAGE;
        }
    }
    if (o->json) {
        printf("{\"tool\":\"sworn-verify\",\"command\":\"compare\",\"result\":\"%s\","
               "\"message\":",
               compare_word(rc));
        sv_json_string(stdout, why);
        if (rc == 1 && o->fork_out != NULL) {
            printf(",\"fork_proof\":");
            sv_json_string(stdout, o->fork_out);
        }
        printf("}\n");
    } else {
        say(stdout, why);
        if (rc == 1 && o->fork_out != NULL)
            printf("fork proof written to %s\n", o->fork_out);
    }
    if (o->html != NULL) {
        char w[SV_WHY];

        if (sv_html_write_compare(o->html, p.origin, o->pos[0], o->pos[1], compare_word(cmp), why,
                                  rc == 1 ? o->fork_out : NULL, html_meta(o), w) != 0) {
            fputs("sworn-verify: ", stderr);
            say(stderr, w);
            rc = EXIT_USAGE;
        }
    }
    free(proof);
    sv_policy_free(&p);
    return rc == 3 ? EXIT_FAIL : rc;
}

static int cmd_check_fork(struct opts *o)
{
    struct sv_policy p;
    uint8_t *data;
    size_t len;
    char why[SV_WHY];
    int rc;

    if (o->npos != 1)
        return usage("check-fork-proof needs exactly one PROOF");
    if (load_policy(o->policy, &p) != 0)
        return EXIT_USAGE;
    if (sv_read_file(o->pos[0], SV_FORK_MAX, &data, &len, NULL, why) != 0) {
        fputs("sworn-verify: ", stderr);
        say(stderr, why);
        sv_policy_free(&p);
        return EXIT_USAGE;
    }
    rc = sv_fork_check(&p, (const char *)data, len, why);
    if (rc == 0)
        printf("fork proven: two checkpoints signed by the log that no append-only log can "
               "both have signed\n");
    else {
        fputs("not a fork proof: ", stdout);
        say(stdout, why);
    }
    free(data);
    sv_policy_free(&p);
    return rc == 0 ? 0 : EXIT_FAIL;
}

int main(int argc, char **argv)
{
    struct opts o;

    /* The conventions of every sworn program (common/cli.h), kept here in the verifier's own
     * code: it links nothing of sworn's. */
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage_text, stdout);
        return fflush(stdout) == 0 ? 0 : EXIT_FAIL;
    }
    if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
        printf("sworn-verify %s (commit %s)\n", SWORN_RELEASE, SWORN_COMMIT);
        return fflush(stdout) == 0 ? 0 : EXIT_FAIL;
    }
    if (argc < 2)
        return usage("no command given");
    if (parse_args(argc, argv, &o) != 0)
        return EXIT_USAGE;
    if (strcmp(argv[1], "verify") == 0)
        return cmd_verify(&o);
    if (strcmp(argv[1], "compare") == 0)
        return cmd_compare(&o);
    if (strcmp(argv[1], "check-fork-proof") == 0)
        return cmd_check_fork(&o);
    return usage("unknown command");
}

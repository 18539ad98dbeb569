/*
 * sworn-conformance -- probe a running deployment for the tiers of DESIGN section 1 and report
 * what was tested, when, by whom, against what, with which result (docs/conformance.md).
 *
 *   sworn-conformance run --deployment FILE [--tier T1..T5] [--only ID]... [--json OUT]
 *                         [--html OUT] [--no-record]
 *   sworn-conformance list [--json]
 *
 * Exit status: 0 when no probe failed or ended in an error (skipped probes are listed, not
 * failures), 1 when one did, 2 on a usage error, a deployment file that does not load, or a
 * report that cannot be written or recorded.
 *
 * With the deployment file's admin_socket (and without --no-record) the JSON report is recorded
 * in the deployment's log (c_submit.h) before the text report is printed, which then names the
 * entry's index.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "c_deploy.h"
#include "c_registry.h"
#include "c_report.h"
#include "c_runner.h"
#include "c_submit.h"
#include "err.h"
#include "fileio.h"

/* decisiond answers once the entry is signed and durable: a signature and an fsync. */
#define RECORD_TIMEOUT_MS 30000u

static const char usage_text[] =
    "usage: sworn-conformance run --deployment FILE [--tier T1..T5] [--only ID]...\n"
    "                             [--json OUT] [--html OUT] [--no-record]\n"
    "       sworn-conformance list [--json]\n"
    "       sworn-conformance --help | --version\n"
    "Probes a running deployment for the tiers T1 to T5 and reports what was tested, how,\n"
    "and what was seen (docs/conformance.md). A run without failures means \"no failure found\n"
    "under these probes\", never that a property is proven. With the deployment's\n"
    "admin_socket, the report is recorded in the log (--no-record: not).\n";

static int usage(void)
{
    fputs(usage_text, stderr);
    return SWORN_EXIT_USAGE;
}

static int write_html(const struct c_run *run, const char *path)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc;

    if (f == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    rc = c_report_html(run, f);
    if (fclose(f) != 0)
        rc = sworn_err_set(SWORN_ERR_IO, "the HTML report could not be written");
    if (rc == 0)
        rc = sworn_file_replace(path, buf, len, 0644);
    free(buf);
    return rc;
}

/* Record the JSON report j in the deployment's log (c_submit.h); 0, or -1 with a message. */
static int record(struct c_run *run, const struct c_deploy *dep, const char *j)
{
    struct c_submitted sub;

    if (c_submit_report(dep->admin_socket, j, strlen(j), RECORD_TIMEOUT_MS, &sub) < 0) {
        fprintf(stderr, "sworn-conformance: the report was not recorded: %s\n", sworn_err_msg());
        return -1;
    }
    run->recorded = 1;
    run->recorded_index = sub.log_index;
    run->recorded_exported = sub.exported;
    snprintf(run->recorded_sha256, sizeof(run->recorded_sha256), "%s", sub.report_sha256);
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    const char *deployment = NULL, *json_out = NULL, *html_out = NULL;
    static struct c_deploy dep;
    struct c_run run;
    char *j = NULL;
    int rc, no_record = 0;

    memset(&run, 0, sizeof(run));
    run.max_tier = C_T5;
    /* every option but --no-record takes one value */
    for (int i = 0, step = 2; i < argc; i += step) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        step = 2;
        if (strcmp(a, "--no-record") == 0) {
            no_record = 1;
            step = 1;
            continue;
        }
        if (v == NULL)
            return usage();
        if (strcmp(a, "--deployment") == 0)
            deployment = v;
        else if (strcmp(a, "--json") == 0)
            json_out = v;
        else if (strcmp(a, "--html") == 0)
            html_out = v;
        else if (strcmp(a, "--tier") == 0) {
            if (c_tier_parse(v, &run.max_tier) < 0) {
                fprintf(stderr, "sworn-conformance: --tier takes T1..T5\n");
                return 2;
            }
        } else if (strcmp(a, "--only") == 0) {
            if (run.nonly == C_ONLY_MAX)
                return usage();
            run.only[run.nonly++] = v;
        } else
            return usage();
    }
    if (deployment == NULL)
        return usage();
    if (c_run_check_selection(&run) < 0) {
        fprintf(stderr, "sworn-conformance: %s\n", sworn_err_msg());
        return 2;
    }
    if (c_deploy_load(&dep, deployment) < 0) {
        fprintf(stderr, "sworn-conformance: %s\n", sworn_err_msg());
        return 2;
    }
    if (c_run_probes(&run, &dep) < 0) {
        fprintf(stderr, "sworn-conformance: %s\n", sworn_err_msg());
        c_run_free(&run);
        return 2;
    }
    rc = c_run_clean(&run) ? 0 : 1;
    j = c_report_json(&run);
    if (j == NULL) {
        fprintf(stderr, "sworn-conformance: the JSON report: %s\n", sworn_err_msg());
        rc = 2;
    }
    /* Written before it is recorded: a file whose digest the entry then names. */
    if (j != NULL && json_out != NULL && sworn_file_replace(json_out, j, strlen(j), 0644) < 0) {
        fprintf(stderr, "sworn-conformance: %s: %s\n", json_out, sworn_err_msg());
        rc = 2;
    }
    if (j != NULL && !no_record && dep.admin_socket[0] != '\0' && record(&run, &dep, j) < 0)
        rc = 2;
    free(j);
    if (c_report_text(&run, stdout) < 0 || fflush(stdout) != 0)
        rc = 2;
    if (html_out != NULL && write_html(&run, html_out) < 0) {
        fprintf(stderr, "sworn-conformance: %s: %s\n", html_out, sworn_err_msg());
        rc = 2;
    }
    c_run_free(&run);
    return rc;
}

/* The exit statuses --help adds to the shared ones (common/cli.h). */
static const char own_exits[] =
    "  (1: a probe failed or ended in an error; skipped probes are not failures)\n  (2: also a "
    "deployment file that does not load, or a report that cannot be written)\n";

static int run_command(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "run") == 0)
        return cmd_run(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "list") == 0) {
        if (argc > 3 || (argc == 3 && strcmp(argv[2], "--json") != 0))
            return usage();
        return c_report_list(stdout, argc == 3) < 0 ? 2 : 0;
    }
    return usage();
}

int main(int argc, char **argv)
{
    int status;

    if (sworn_cli_standard(argc, argv, "sworn-conformance", usage_text, own_exits, &status))
        return status;
    return run_command(argc, argv);
}

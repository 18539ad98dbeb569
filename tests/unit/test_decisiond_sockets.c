/*
 * test_decisiond_sockets.c -- who can reach decisiond's sockets, and what a flood of refusals
 * does to the record (issue 11, finding 3: "any local user can write into the log and hide the
 * real refusals"). The review, as nobody: 600 connects to the admin socket grew the tree by 100
 * entries, and during a flood the proxy's own malformed frame got no Refused entry. Each test
 * drives a real dev stack (scripts/dev-stack) as root and acts as other users in forked children
 * (setgroups, setresgid, setresuid):
 *   - test_sockets_closed_to_others: both sockets are 0600 and root's (the stack's peers are
 *     root); nobody's connect fails with EACCES on each, and nothing is recorded for it;
 *   - test_sockets_closed_privsep: the same with --privsep (the engine as sworn-engine, which
 *     accepts on the monitor's sockets but cannot connect to them either, nor can nobody); and
 *     --check-config refuses a sockets' folder that others may write (0777, 1777, the engine's);
 *     with a proxy uid other than root (nobody) the decision socket is 0600 and nobody's: it
 *     connects there, not to the admin socket, and sworn-engine still cannot;
 *   - test_sockets_group: with sockets.decision_group/admin_group (--socket-group nogroup) both
 *     are 0660 root:nogroup; nobody (a member) connects and is refused by uid and recorded;
 *     sworn-signer (not a member) gets EACCES;
 *   - test_flood_does_not_starve_proxy: while nobody floods both sockets with connects (the
 *     decision socket too: the proxy's own channel), each of the proxy's malformed frames is
 *     still recorded as a Refused entry (quotas per channel and uid);
 *   - test_dropped_refusals_summarised: what the quota drops is counted per (channel, uid) and
 *     written as a RefusalsDropped entry once the first drop is 10 s old (the test clock moves
 *     time), and at an orderly stop; recorded + dropped equals the refusals made, and sworn-verify
 *     passes the record and reports the same counts;
 *   - test_refused_lines_bounded: the `refused` lines of decisiond's log are bounded the same way
 *     (found after the fix: 9-byte malformed frames pipelined on the decision socket wrote 300 MB
 *     of decisiond.log in 32 s). nobody's flood writes at most its quota of lines a second; the
 *     rest is counted in refused_lines_suppressed lines, written once the first suppression is
 *     10 s old (the test clock) and at an orderly stop, whose counts plus the lines written are
 *     exactly the refusals; the proxy's own refusal during the suppression has its line.
 * Not root: there are no other users to be; skipped.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "frame.h"
#include "logstore.h"
#include "privsep_fixture.h"
#include "stack_fixture.h"
#include "testutil.h"
#include "verify_fixture.h"

#define NOBODY 65534u
#define WAIT_STEPS 300 /* x 100 ms: how long a test waits for the daemon to have done something */

/* connect(2) to a Unix socket: 0 when it connected, else its errno. */
static int connect_errno(const char *path)
{
    struct sockaddr_un sa;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), e = 0;

    if (fd < 0)
        return errno;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa.sun_path)) {
        close(fd);
        return ENAMETOOLONG;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
        e = errno;
    close(fd);
    return e;
}

/* In the child: both sockets refuse this uid with EACCES (exit 0), else 10 + which, or 20 +. */
static int both_eacces(void *arg)
{
    const struct sworn_stack *s = arg;
    int d = connect_errno(s->decision), a = connect_errno(s->admin);

    if (d != EACCES)
        return d == 0 ? 10 : 20;
    if (a != EACCES)
        return a == 0 ? 11 : 21;
    return 0;
}

/* In the child: both sockets accept the connection (they are refused by uid afterwards). */
static int both_connect(void *arg)
{
    const struct sworn_stack *s = arg;

    return (connect_errno(s->decision) == 0 ? 0 : 1) | (connect_errno(s->admin) == 0 ? 0 : 2);
}

/* In the child: the decision socket accepts it, the admin socket refuses it with EACCES. */
static int decision_only(void *arg)
{
    const struct sworn_stack *s = arg;

    return (connect_errno(s->decision) == 0 ? 0 : 1) | (connect_errno(s->admin) == EACCES ? 0 : 2);
}

static void expect_mode(const char *path, uid_t owner, gid_t group, mode_t mode)
{
    struct stat st;

    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    if ((st.st_mode & 07777) != mode || st.st_uid != owner || st.st_gid != group)
        fail_msg("%s is %04o %lu:%lu, not %04o %lu:%lu", path, (unsigned)(st.st_mode & 07777),
                 (unsigned long)st.st_uid, (unsigned long)st.st_gid, (unsigned)mode,
                 (unsigned long)owner, (unsigned long)group);
}

/* Refused entries of (channel, uid) in the newest entries. */
static int count_refused(struct sworn_stack *s, const char *channel, uint32_t uid)
{
    Sworn__V1__AdminResponse *r = sworn_stack_tail(s, SWORN_FRAME_TAIL_MAX);
    int n = 0;

    for (size_t i = 0; i < r->tail->n_entries; i++) {
        const Sworn__V1__Entry *e = r->tail->entries[i];

        if (e->kind_case == SWORN__V1__ENTRY__KIND_REFUSED &&
            strcmp(e->refused->channel, channel) == 0 && e->refused->peer_uid == uid)
            n++;
    }
    sworn__v1__admin_response__free_unpacked(r, NULL);
    return n;
}

/* What one RefusalsDropped entry (well formed, or the test fails) counts for (channel, uid). */
static uint64_t summary_count(const Sworn__V1__Entry *e, const char *channel, uint32_t uid)
{
    const Sworn__V1__RefusalsDropped *r = e->refusals_dropped;
    uint64_t n = 0;

    assert_int_equal(sworn_frame_check_entry(e), 0);
    assert_true(r->period_start_unix_ms <= r->period_end_unix_ms);
    assert_true(r->period_end_unix_ms <= r->time_unix_ms);
    for (size_t i = 0; i < r->n_dropped; i++)
        if (strcmp(r->dropped[i]->channel, channel) == 0 && r->dropped[i]->peer_uid == uid)
            n += r->dropped[i]->count;
    return n;
}

/* The dropped refusals of (channel, uid) that the newest entries' summaries count. OUT:
 * *n_summaries. */
static uint64_t count_dropped(struct sworn_stack *s, const char *channel, uint32_t uid,
                              int *n_summaries)
{
    Sworn__V1__AdminResponse *r = sworn_stack_tail(s, SWORN_FRAME_TAIL_MAX);
    uint64_t n = 0;

    *n_summaries = 0;
    for (size_t i = 0; i < r->tail->n_entries; i++) {
        const Sworn__V1__Entry *e = r->tail->entries[i];

        if (e->kind_case == SWORN__V1__ENTRY__KIND_REFUSALS_DROPPED) {
            n += summary_count(e, channel, uid);
            ++*n_summaries;
        }
    }
    sworn__v1__admin_response__free_unpacked(r, NULL);
    return n;
}

static double refused_metric(struct sworn_stack *s, const char *channel)
{
    char name[64];

    snprintf(name, sizeof(name), "sworn_refused_total{channel=\"%s\"}", channel);
    return sworn_stack_metric(s, name);
}

/* Wait until the daemon has counted `want` refusals on channel in all (sworn_refused_total). */
static void wait_refused_metric(struct sworn_stack *s, const char *channel, double want)
{
    for (int i = 0; i < WAIT_STEPS && refused_metric(s, channel) < want; i++)
        sworn_test_sleep_ms(100);
    if (refused_metric(s, channel) < want)
        fail_msg("the daemon counted %.0f refusals on the %s socket, not %.0f",
                 refused_metric(s, channel), channel, want);
}

/* --- who can connect ---------------------------------------------------------------------- */

static void test_sockets_closed_to_others(void **state)
{
    struct sworn_stack s;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key"), 0);
    /* The stack's folder lets anyone through (as it did for the review): only the sockets'
     * own modes stop nobody now. */
    assert_int_equal(chmod(s.dir, 0711), 0);
    expect_mode(s.decision, 0, 0, 0600);
    expect_mode(s.admin, 0, 0, 0600);
    assert_int_equal(sworn_privsep_as_user("nobody", both_eacces, &s), 0);
    /* Nothing of nobody's reached the daemon; the proxy (root) is served as before. */
    assert_int_equal(count_refused(&s, "decision", NOBODY), 0);
    assert_int_equal(count_refused(&s, "admin", NOBODY), 0);
    assert_true(refused_metric(&s, "decision") == 0.0);
    assert_true(refused_metric(&s, "admin") == 0.0);
    sworn_stack_expect_allow(&s, "root-served");
    assert_int_equal(sworn_stack_down(&s), 0);
}

static void test_sockets_closed_privsep(void **state)
{
    struct sworn_stack *s = &sworn_privsep_stack;

    (void)state;
    assert_int_equal(sworn_stack_up(s, "--no-tpm --privsep"), 0);
    expect_mode(s->decision, 0, 0, 0600);
    expect_mode(s->admin, 0, 0, 0600);
    /* The engine's uid accepts on these sockets (the monitor's descriptors) but cannot connect. */
    assert_int_equal(sworn_privsep_as_user("sworn-engine", both_eacces, s), 0);
    assert_int_equal(sworn_privsep_as_user("sworn-signer", both_eacces, s), 0);
    assert_int_equal(sworn_privsep_as_user("nobody", both_eacces, s), 0);
    assert_true(refused_metric(s, "decision") == 0.0);
    assert_true(refused_metric(s, "admin") == 0.0);
    sworn_stack_expect_allow(s, "root-served-privsep");
    /* A sockets' folder another uid may write is refused (at start and by --check-config): it
     * could put a link or a socket of its own under the name while the monitor sets it up. */
    assert_int_equal(sworn_privsep_check_config(s, ""), 0);
    assert_int_equal(sworn_stack_sh(s, "mkdir -m 0777 open && chmod 0777 open && mkdir -m 1777 "
                                       "sticky && chmod 1777 sticky && mkdir -m 0700 engine && "
                                       "chown sworn-engine: engine"),
                     0);
    {
        static const char *const folders[] = {"open", "sticky", "engine"};

        for (size_t i = 0; i < 3; i++) {
            char expr[700];

            snprintf(expr, sizeof(expr), "s|^  admin: .*$|  admin: %s/%s/admin.sock|", s->dir,
                     folders[i]);
            assert_int_not_equal(sworn_privsep_check_config(s, expr), 0);
            assert_true(sworn_privsep_check_out_has(s, "socket folder"));
        }
    }
    /* A proxy uid other than root: the decision socket is 0600 and that uid's, so it connects
     * (and is served); the admin socket stays root's; anyone else still gets EACCES. */
    assert_int_equal(sworn_stack_stop_daemon(s), 0);
    assert_int_equal(
        sworn_stack_sh(s, "sed -i 's|^  proxy_uids: .*$|  proxy_uids: [0, nobody]|' \"$CONFIG\""),
        0);
    assert_int_equal(sworn_stack_start(s), 0);
    expect_mode(s->decision, NOBODY, 0, 0600);
    expect_mode(s->admin, 0, 0, 0600);
    assert_int_equal(sworn_privsep_as_user("nobody", decision_only, s), 0);
    assert_int_equal(sworn_privsep_as_user("sworn-engine", both_eacces, s), 0);
    sworn_stack_expect_allow(s, "root-served-still");
}

static void test_sockets_group(void **state)
{
    struct sworn_stack s;
    const struct group *g = getgrnam("nogroup");

    (void)state;
    assert_non_null(g);
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key --socket-group nogroup"), 0);
    expect_mode(s.decision, 0, g->gr_gid, 0660);
    expect_mode(s.admin, 0, g->gr_gid, 0660);
    /* Not in the group: cannot connect. */
    assert_int_equal(sworn_privsep_as_user("sworn-signer", both_eacces, &s), 0);
    /* In it (nobody's own group) but no peer: connects, refused by uid, and recorded. */
    assert_int_equal(sworn_privsep_as_user("nobody", both_connect, &s), 0);
    wait_refused_metric(&s, "decision", 1);
    wait_refused_metric(&s, "admin", 1);
    for (int i = 0; i < WAIT_STEPS && (count_refused(&s, "decision", NOBODY) < 1 ||
                                       count_refused(&s, "admin", NOBODY) < 1);
         i++)
        sworn_test_sleep_ms(100);
    assert_int_equal(count_refused(&s, "decision", NOBODY), 1);
    assert_int_equal(count_refused(&s, "admin", NOBODY), 1);
    assert_int_equal(sworn_stack_down(&s), 0);
}

/* --- floods ------------------------------------------------------------------------------- */

/* In the child: connect to the socket again and again (each a refused peer) until killed, or
 * `count` times when count is not 0. */
struct flood {
    const char *path;
    int count;
};

static int flood(void *arg)
{
    const struct flood *f = arg;

    for (int i = 0; f->count == 0 || i < f->count; i++)
        if (connect_errno(f->path) != 0)
            return 1;
    return 0;
}

/* Start flood(arg) as nobody in a child that runs until killed; its pid. */
static pid_t flood_in_background(struct flood *f)
{
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgroups(0, NULL) != 0 || setresgid(NOBODY, NOBODY, NOBODY) != 0 ||
            setresuid(NOBODY, NOBODY, NOBODY) != 0)
            _exit(99);
        _exit(flood(f));
    }
    return pid;
}

/* A frame of n bytes 0xff..: not protobuf, refused with an error frame; its body's SHA-256 is
 * what the Refused entry records. */
static void send_malformed(struct sworn_stack *s, uint8_t tag)
{
    uint8_t frame[9] = {0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff, 0};
    uint8_t *body = NULL;
    size_t len;
    int fd = sworn_stack_connect(s->decision);
    Sworn__V1__DecisionReply *r;

    frame[8] = tag;
    assert_true(fd >= 0);
    assert_int_equal(sworn_stack_exchange(fd, frame, sizeof(frame), 10000, &body, &len), 0);
    r = sworn_frame_unpack_reply(body, len);
    assert_non_null(r);
    assert_int_equal(r->body_case, SWORN__V1__DECISION_REPLY__BODY_ERROR);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    free(body);
    close(fd);
}

static void test_flood_does_not_starve_proxy(void **state)
{
    enum { FRAMES = 8 };
    struct sworn_stack s;
    struct flood fa, fd;
    pid_t pa, pd;
    int status, found = 0;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key --socket-group nogroup"), 0);
    /* nobody floods both sockets, the proxy's own channel too: far more than any quota of a
     * second, on the same channel as the proxy's frames below. */
    fa.path = s.admin;
    fa.count = 0;
    fd.path = s.decision;
    fd.count = 0;
    pa = flood_in_background(&fa);
    pd = flood_in_background(&fd);
    wait_refused_metric(&s, "admin", 500);
    wait_refused_metric(&s, "decision", 500);
    /* The proxy (root) sends malformed frames meanwhile: each must be in the record. */
    for (int i = 0; i < FRAMES; i++)
        send_malformed(&s, (uint8_t)i);
    wait_refused_metric(&s, "decision", refused_metric(&s, "decision") + 300); /* still on */
    assert_int_equal(kill(pa, SIGKILL), 0);
    assert_int_equal(kill(pd, SIGKILL), 0);
    assert_int_equal(waitpid(pa, &status, 0), pa);
    assert_true(WIFSIGNALED(status)); /* it flooded until killed */
    assert_int_equal(waitpid(pd, &status, 0), pd);
    assert_true(WIFSIGNALED(status));
    for (int i = 0; i < WAIT_STEPS && (found = count_refused(&s, "decision", 0)) < FRAMES; i++)
        sworn_test_sleep_ms(100);
    if (found != FRAMES)
        fail_msg("%d of the proxy's %d malformed frames were recorded during nobody's flood", found,
                 FRAMES);
    assert_int_equal(sworn_stack_down(&s), 0);
}

/* The entries of a stopped stack's log: the Refused entries of (channel, uid) in *refused, and
 * what the RefusalsDropped entries count for it (returned); *n_summaries of them. */
static uint64_t log_counts(struct sworn_stack *s, const char *channel, uint32_t uid, int *refused,
                           int *n_summaries)
{
    struct sworn_log *log;
    uint8_t *buf = malloc(SWORN_FRAME_ENTRY_MAX);
    uint64_t n = 0;

    assert_non_null(buf);
    *n_summaries = *refused = 0;
    assert_int_equal(sworn_log_open(s->log_db, &log), 0);
    for (uint64_t i = 0; i < sworn_log_size(log); i++) {
        size_t len;
        Sworn__V1__Entry *e;

        assert_int_equal(sworn_log_read_entry(log, i, buf, SWORN_FRAME_ENTRY_MAX, &len), 0);
        e = sworn__v1__entry__unpack(NULL, len, buf);
        assert_non_null(e);
        if (e->kind_case == SWORN__V1__ENTRY__KIND_REFUSALS_DROPPED) {
            n += summary_count(e, channel, uid);
            ++*n_summaries;
        } else if (e->kind_case == SWORN__V1__ENTRY__KIND_REFUSED &&
                   strcmp(e->refused->channel, channel) == 0 && e->refused->peer_uid == uid) {
            ++*refused;
        }
        sworn__v1__entry__free_unpacked(e, NULL);
    }
    sworn_log_close(log);
    free(buf);
    return n;
}

/*
 * sworn-verify over a stopped stack's exported tiles, under a trust policy from the keys as an
 * auditor gets them (the SoftHSM key's SPKI: the checkpoint and receipt key). The report.
 */
static json_object *verify_record(struct sworn_stack *s)
{
    struct sworn_test_run r;
    char *spki, *policy, text[2048], origin[300], b64[512];
    size_t spki_len;
    const char *base = strrchr(s->dir, '/') + 1;
    int n;

    snprintf(origin, sizeof(origin), "dev.sworn.example/%s", base);
    sworn_test_runv(&r, NULL, sworn_test_bin("SWORN_LOG_BIN"), "vkey", "--name", origin, "--spki",
                    s->spki_der, NULL);
    sworn_test_run_must(&r, "sworn-log vkey");
    spki = sworn_test_read_file(s->spki_der, &spki_len);
    assert_true(EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)spki, (int)spki_len) >
                0);
    n = snprintf(text, sizeof(text),
                 "origin %s\nlog %.*s\nentries sworn\nreceipt-key %s\nquotes ignore\n"
                 "development allowed\n",
                 origin, (int)strcspn(r.out, "\n"), r.out, b64);
    assert_true(n > 0 && (size_t)n < sizeof(text));
    policy = sworn_test_path(s->dir, "trust.policy");
    sworn_test_write_file(policy, text, (size_t)n, 0600);
    free(policy);
    free(spki);
    sworn_test_run_free(&r);
    return sworn_verify_json(sworn_test_bin("SWORN_VERIFY_BIN"), s->dir, "trust.policy", "tiles",
                             NULL, 0, SWORN_VERIFY_NO_PROGRESS);
}

static void test_dropped_refusals_summarised(void **state)
{
    enum { CONNECTS = 150 };
    struct sworn_stack s;
    struct flood f;
    int recorded = 0, summaries = 0, proxy_summaries, n_refused, n_summaries;
    uint64_t dropped = 0, total;
    double before;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --test-clock --socket-group nogroup"), 0);
    f.path = s.admin;
    f.count = CONNECTS;
    before = refused_metric(&s, "admin");
    assert_int_equal(sworn_privsep_as_user("nobody", flood, &f), 0);
    wait_refused_metric(&s, "admin", before + CONNECTS);
    /* Every refusal is either recorded or counted: once the first drop is 10 s old (the test clock
     * moves there at once), a RefusalsDropped entry says how many of nobody's were dropped. */
    sworn_stack_clock_advance(&s, 11000);
    for (int i = 0; i < WAIT_STEPS; i++) {
        recorded = count_refused(&s, "admin", NOBODY);
        dropped = count_dropped(&s, "admin", NOBODY, &summaries);
        if (recorded + dropped >= CONNECTS)
            break;
        sworn_test_sleep_ms(100);
    }
    if (recorded + dropped != CONNECTS || dropped == 0 || summaries < 1)
        fail_msg("%d connects: %d recorded, and %d summaries count %llu dropped", CONNECTS,
                 recorded, summaries, (unsigned long long)dropped);
    /* Nothing of the proxy's was dropped. */
    assert_int_equal(count_dropped(&s, "decision", 0, &proxy_summaries), 0);
    /* The operator sees the summary in swornctl's tail, with nobody's count (it was shown as
     * "unknown" before, so a reader of tail never learnt that refusals had been dropped). */
    assert_int_equal(sworn_stack_sh(&s,
                                    "\"%s\" --config \"$CONFIG\" tail 1000 | grep "
                                    "'\"kind\":\"refusals_dropped\"' | grep -q "
                                    "'{\"channel\":\"admin\",\"peer_uid\":%u,\"count\":'",
                                    sworn_test_bin("SWORNCTL_BIN"), (unsigned)NOBODY),
                     0);

    /* A second flood, then an orderly stop at once: its drops are in a summary written at the
     * stop, before the final checkpoint. */
    before = refused_metric(&s, "admin");
    assert_int_equal(sworn_privsep_as_user("nobody", flood, &f), 0);
    wait_refused_metric(&s, "admin", before + CONNECTS);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    total = log_counts(&s, "admin", NOBODY, &n_refused, &n_summaries);
    if ((uint64_t)n_refused + total != 2 * CONNECTS || n_summaries < summaries + 1)
        fail_msg("after the stop: %d recorded and %llu dropped in %d summaries, of %d refusals",
                 n_refused, (unsigned long long)total, n_summaries, 2 * CONNECTS);
    {
        struct sworn_log *log;

        assert_int_equal(sworn_log_open(s.log_db, &log), 0);
        sworn_stack_expect_final_checkpoint(log);
        sworn_log_close(log);
    }
    /* The auditor's verifier reads the real record, summaries included, and counts them. */
    {
        json_object *rep = verify_record(&s);

        assert_string_equal(json_object_get_string(sworn_verify_get(rep, "result")), "pass");
        assert_int_equal(json_object_get_int64(sworn_verify_get(rep, "refused")), n_refused);
        assert_int_equal(json_object_get_int64(sworn_verify_get(rep, "refusal_summaries")),
                         n_summaries);
        assert_int_equal(json_object_get_int64(sworn_verify_get(rep, "refusals_dropped")),
                         (int64_t)total);
        json_object_put(rep);
    }
    assert_int_equal(sworn_stack_down(&s), 0);
}

/* decisiond.log's lines of event (refused or refused_lines_suppressed) for (channel, uid): how
 * many, and in *sum the sum of their "count" fields. */
static int log_lines(struct sworn_stack *s, const char *event, const char *channel, uint32_t uid,
                     uint64_t *sum)
{
    char path[600];
    char *text, *line, *save = NULL;
    size_t len;
    int n = 0;

    snprintf(path, sizeof(path), "%s/decisiond.log", s->dir);
    text = sworn_test_read_file(path, &len);
    *sum = 0;
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        json_object *o = json_tokener_parse(line), *v;

        if (o == NULL)
            continue;
        if (json_object_object_get_ex(o, "event", &v) &&
            strcmp(json_object_get_string(v), event) == 0 &&
            json_object_object_get_ex(o, "channel", &v) &&
            strcmp(json_object_get_string(v), channel) == 0 &&
            json_object_object_get_ex(o, "uid", &v) && json_object_get_int64(v) == (int64_t)uid) {
            n++;
            if (json_object_object_get_ex(o, "count", &v))
                *sum += (uint64_t)json_object_get_int64(v);
        }
        json_object_put(o);
    }
    free(text);
    return n;
}

static double mono_s(void)
{
    struct timespec t;

    assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &t), 0);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void test_refused_lines_bounded(void **state)
{
    enum { CONNECTS = 300, STRANGER_QUOTA = 10 };
    struct sworn_stack s;
    struct flood f;
    int lines = 0, summaries = 0, proxy_lines;
    uint64_t suppressed = 0, unused;
    double before, t0, seconds;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --test-clock --socket-group nogroup"), 0);
    f.path = s.admin;
    f.count = CONNECTS;
    before = refused_metric(&s, "admin");
    t0 = mono_s();
    assert_int_equal(sworn_privsep_as_user("nobody", flood, &f), 0);
    wait_refused_metric(&s, "admin", before + CONNECTS);
    seconds = mono_s() - t0;
    assert_true(refused_metric(&s, "admin") == before + CONNECTS); /* it counts every refusal */
    /* The proxy's own refusal, while nobody's lines are suppressed: it has its line. */
    send_malformed(&s, 1);
    for (int i = 0; i < WAIT_STEPS && log_lines(&s, "refused", "decision", 0, &unused) < 1; i++)
        sworn_test_sleep_ms(100);
    proxy_lines = log_lines(&s, "refused", "decision", 0, &unused);
    assert_int_equal(proxy_lines, 1);
    /* Once the first suppression is 10 s old (the test clock), a summary line says how many. */
    sworn_stack_clock_advance(&s, 11000);
    for (int i = 0; i < WAIT_STEPS; i++) {
        lines = log_lines(&s, "refused", "admin", NOBODY, &unused);
        summaries = log_lines(&s, "refused_lines_suppressed", "admin", NOBODY, &suppressed);
        if (summaries > 0 && lines + suppressed >= CONNECTS)
            break;
        sworn_test_sleep_ms(100);
    }
    /* At most the quota a second of decisiond's clock: the flood spans at most seconds + 1. */
    if (lines + suppressed != CONNECTS || summaries < 1 ||
        lines > STRANGER_QUOTA * ((int)seconds + 2))
        fail_msg("%d refusals in %.1f s: %d refused lines, %d summary lines counting %llu",
                 CONNECTS, seconds, lines, summaries, (unsigned long long)suppressed);
    /* A second flood, then an orderly stop at once: its suppressed lines are counted at the stop.
     */
    before = refused_metric(&s, "admin");
    t0 = mono_s();
    assert_int_equal(sworn_privsep_as_user("nobody", flood, &f), 0);
    wait_refused_metric(&s, "admin", before + CONNECTS);
    seconds += mono_s() - t0;
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    lines = log_lines(&s, "refused", "admin", NOBODY, &unused);
    summaries = log_lines(&s, "refused_lines_suppressed", "admin", NOBODY, &suppressed);
    if (lines + suppressed != 2 * CONNECTS || summaries < 2 ||
        lines > STRANGER_QUOTA * ((int)seconds + 4))
        fail_msg("after the stop: %d refusals in %.1f s: %d refused lines, %d summary lines "
                 "counting %llu",
                 2 * CONNECTS, seconds, lines, summaries, (unsigned long long)suppressed);
    assert_int_equal(log_lines(&s, "refused", "decision", 0, &unused), proxy_lines);
    assert_int_equal(sworn_stack_down(&s), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sockets_closed_to_others),
        cmocka_unit_test_teardown(test_sockets_closed_privsep, sworn_privsep_teardown),
        cmocka_unit_test(test_sockets_group),
        cmocka_unit_test(test_flood_does_not_starve_proxy),
        cmocka_unit_test(test_dropped_refusals_summarised),
        cmocka_unit_test(test_refused_lines_bounded),
    };

    if (geteuid() != 0) {
        fprintf(stderr, "test_decisiond_sockets: not root, so there is no other user to connect "
                        "as; skipped\n");
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}

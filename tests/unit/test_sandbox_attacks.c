/*
 * test_sandbox_attacks.c -- the red team's findings on sworn-run, one test each
 * (docs/threat-model.md, "Findings of the red team on sworn-run, their fixes and their tests").
 * Each test replays the attack against the real program, run as root against a real dev stack
 * (decisiond, sworn-proxy and its hostlink) and an nginx upstream, and holds sworn-run to the
 * behaviour of the fix:
 *
 *   1  test_setid_from_work             a set-user-ID or set-group-ID bit cannot be set from
 *                                       inside (EPERM; openat2 ENOSYS), and a kept work folder
 *                                       holds only files of its owner, without such a bit
 *   2  test_relay_connection_bound      one sandbox holds at most 64 relay connections at once
 *                                       (limits.connections when configured); another sandbox's
 *                                       allowed request still goes through
 *   3  test_two_state_folders_two_uids  two sworn-runs of two state folders, at once, give their
 *                                       agents two uids
 *   5  test_scratch_bounded             /tmp and /dev/shm are 1 GiB each, or the memory limit;
 *                                       writing past it fails there, never on the host
 *   6  test_deep_tree_cleanup           a 40000-deep tree in /work is removed, and the end is the
 *                                       agent's
 *   7  test_no_controlling_terminal     under a terminal the agent has no controlling terminal,
 *                                       the sandbox's own session, no TIOCSETD, and the terminal's
 *                                       settings are given back at the end
 *   8  test_dangerous_work_refused      --work naming the state folder (or a folder in it or
 *                                       around it), a system folder, or the control plane's
 *                                       folders is refused with 125 before anything is recorded
 *   11 test_memory_pressure_not_failure a sandbox out of memory ends as its agent's end (EXITED or
 *                                       SIGNALED 9), never as sworn-run's failure
 *   14 test_seccomp_gaps                netlink sockets but route netlink, modify_ldt,
 *                                       memfd_secret and TIOCSETD are refused
 *   -  test_hello_uid_mismatch          a hello naming a running sandbox with another agent uid
 *                                       than its start entry's is a recorded deny
 *
 * and the second round's (docs/threat-model.md, "Second round"):
 *
 *   1  test_r2_work_race                another local user swaps a folder of the --work path with
 *                                       a link to the stack's folder, 60 runs long: the stack's
 *                                       proxy and CA folders are never /work, never changed; each
 *                                       run is refused (125) or runs in the user's folder
 *   2  test_r2_work_refused_by_identity a bind mount of a refused folder, any folder in the
 *                                       --stack folder, /var/lib/sworn and /var/log/sworn are
 *                                       refused; a folder with files needs --keep (untouched
 *                                       without); an empty one is removed at the end
 *   3  test_r2_terminal_flow            under a terminal, TCXONC and TIOCEXCL fail with EPERM; the
 *                                       window size is given back, output flows, the end is
 *                                       recorded
 *   4  test_r2_start_answered_late      with decisiond's engine stopped, sworn-run --timeout 2
 *                                       exits 125 with no agent run; once it goes on, every start
 *                                       in the log has its end (FAILED)
 *   5  test_r2_keep_gives_back_agent_files  --keep gives the folder's owner what the agent made,
 *                                       and leaves root's 0600 file root's
 *   6  test_r2_uids_outside_subuid      an agent uid is never in an /etc/subuid range; the default
 *                                       range starts at 1000000000
 *   8  test_r2_socket_families          socket families but AF_UNIX, AF_INET, AF_INET6 and route
 *                                       netlink fail with EPERM; socketpair is AF_UNIX's only
 *
 * The agent is the shell or conformance/sworn-conformance-probe (copied into each work folder as
 * sworn-probe). Waits are for events: sworn-run's exit, a line the agent prints, a file; never a
 * sleep. Needs root and sworn-run (SWORN_RUN_BIN): without either it exits 77 (skipped) and says
 * why.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <ftw.h>
#include <libgen.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <cmocka.h>

#include "frame.h"
#include "sandbox_fixture.h"
#include "stack_fixture.h"
#include "sworn.pb-c.h"
#include "testutil.h"
#include "upstream_fixture.h"

#define RELAY_BOUND 64  /* finding 2: sworn-run's default limits.connections */
#define RELAY_TRIED 100 /* connections the agent opens to show it */
/* How long the relay may take to close what is over its bound: well within the proxy's own
 * timeouts.idle (60 s in the dev stack), after which the proxy closes every held connection. */
#define RELAY_WAIT_MS 60000
#define DEEP_LEVELS 40000 /* finding 6 */
#define PRINCIPAL "agent-1"

static struct sworn_stack stack;
static struct sworn_upstream upstream;
static const char *probe_bin;

/* ---- the folders of a test ---- */

/* The folders the running test made, removed by its teardown when a failure left them. */
#define MADE_MAX 8
static char *made[MADE_MAX];

/* Remember dir for the teardown; returns it. */
static char *made_keep(char *dir)
{
    for (size_t i = 0; i < MADE_MAX; i++)
        if (made[i] == NULL) {
            made[i] = strdup(dir);
            assert_non_null(made[i]);
            break;
        }
    return dir;
}

static char *tmpdir_made(const char *tag)
{
    return made_keep(sworn_test_tmpdir(tag));
}

static void made_drop_all(void)
{
    for (size_t i = 0; i < MADE_MAX; i++) {
        if (made[i] == NULL)
            continue;
        sworn_sbx_remove_tree(made[i]);
        free(made[i]);
        made[i] = NULL;
    }
}

/* A fresh work folder with the probe in it, removed by the teardown when a failure left it. */
static char *work_new(void)
{
    return made_keep(sworn_sbx_work_new("attack-work"));
}

/* ---- the record ---- */

/* The log's size now (the index the next entry gets). */
static uint64_t log_size(void)
{
    Sworn__V1__AdminResponse *r = sworn_stack_tail(&stack, 1);
    uint64_t n = r->tail->first_index + r->tail->n_entries;

    sworn__v1__admin_response__free_unpacked(r, NULL);
    return n;
}

/* The SandboxEnded entry of the start at index: its reason and code (fails when none). */
static void ended(uint64_t start, Sworn__V1__SandboxEndReason *reason, uint32_t *code)
{
    Sworn__V1__AdminResponse *r = sworn_stack_tail(&stack, SWORN_SBX_TAIL);
    int found = 0;

    for (size_t i = 0; i < r->tail->n_entries; i++) {
        const Sworn__V1__Entry *e = r->tail->entries[i];

        if (e->kind_case != SWORN__V1__ENTRY__KIND_SANDBOX_ENDED ||
            e->sandbox_ended->start_index != start)
            continue;
        *reason = e->sandbox_ended->reason;
        *code = e->sandbox_ended->code;
        found++;
    }
    sworn__v1__admin_response__free_unpacked(r, NULL);
    if (found != 1)
        fail_msg("%d SandboxEnded entries name the start at %llu, not 1", found,
                 (unsigned long long)start);
}

static void expect_ended(const char *name, Sworn__V1__SandboxEndReason want, uint32_t want_code)
{
    Sworn__V1__SandboxEndReason reason;
    uint32_t code;

    ended(sworn_sbx_started(&stack, name, NULL, NULL), &reason, &code);
    if (reason != want || code != want_code)
        fail_msg("sandbox %s ended with reason %d code %u, expected reason %d code %u", name,
                 (int)reason, code, (int)want, want_code);
}

/* ---- the group's setup ---- */

static int group_setup(void **state)
{
    char opts[1024], path[700];

    (void)state;
    if (sworn_upstream_start(&upstream) != 0)
        return -1;
    snprintf(path, sizeof(path), "%s/www/allowed", upstream.dir);
    if (mkdir(path, 0755) < 0 && errno != EEXIST)
        return -1;
    snprintf(opts, sizeof(opts), "--no-tpm --file-key --proxy --upstream-ca %s", upstream.ca_cert);
    return sworn_stack_up(&stack, opts);
}

static int group_teardown(void **state)
{
    int rc = 0;

    (void)state;
    if (stack.dir != NULL && sworn_stack_down(&stack) != 0)
        rc = -1;
    sworn_upstream_stop(&upstream);
    return rc;
}

static void r2_undo(void); /* the second round's changes to the host, undone */

static int each_teardown(void **state)
{
    (void)state;
    sworn_sbx_live_abort_all();
    r2_undo(); /* first: a bind mount is undone before the folders under it are removed */
    made_drop_all();
    return 0;
}

/* ---- 1: set-user-ID and set-group-ID files from /work ---- */

/* nftw's question for each file of the kept work folder: owned by tree_uid and tree_gid, with
 * neither a set-user-ID nor a set-group-ID bit? The first that is not stops the walk, named in
 * tree_bad. */
static int tree_uid, tree_gid;
static char tree_bad[1200];

static int check_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)flag;
    (void)ftw;
    if ((int)st->st_uid != tree_uid || (int)st->st_gid != tree_gid ||
        (st->st_mode & (S_ISUID | S_ISGID)) != 0) {
        snprintf(tree_bad, sizeof(tree_bad), "%s: uid %u gid %u mode %o", path,
                 (unsigned)st->st_uid, (unsigned)st->st_gid, (unsigned)(st->st_mode & 07777));
        return 1;
    }
    return 0;
}

static void test_setid_from_work(void **state)
{
    static const char *const file_calls[] = {"chmod", "fchmod", "fchmodat", "fchmodat2"};
    static const char *const create_calls[] = {"open", "openat", "creat", "mknod", "mknodat"};
    char script[4096] = "cp /bin/sh /work/sh; ";
    char *work = work_new(), *host = tmpdir_made("attack-setid-host");
    const char *options[] = {"--work", work, "--keep", NULL};
    const char *agent[] = {"/bin/sh", "-c", script, NULL};
    struct sworn_test_run r = {0};
    char line[600];

    (void)state;
    /* The positive control: on the host the probe's chmod sets the bit (OPEN), so a refusal
     * inside is the sandbox's. */
    {
        char target[700];
        snprintf(target, sizeof(target), "%s/sh", host);
        sworn_test_write_file(target, "#!/bin/sh\n", 10, 0755);
        sworn_test_run_ok("setid chmod on the host", NULL, "/bin/sh", "-c",
                          "p=\"$1\"; d=\"$2\"; $p setid chmod 4755 $d/sh; test $? = 3", "sh",
                          probe_bin, host, NULL);
    }
    /* The work folder is another user's: what is kept must be given back to that user. */
    assert_int_equal(chown(work, 4242, 4343), 0);
    {
        char *probe = sworn_test_path(work, "sworn-probe");
        assert_int_equal(chown(probe, 4242, 4343), 0);
        free(probe);
    }
    for (size_t i = 0; i < sizeof(file_calls) / sizeof(file_calls[0]); i++)
        snprintf(script + strlen(script), sizeof(script) - strlen(script),
                 "./sworn-probe setid %s 4755 /work/sh; ./sworn-probe setid %s 2755 /work/sh; ",
                 file_calls[i], file_calls[i]);
    for (size_t i = 0; i < sizeof(create_calls) / sizeof(create_calls[0]); i++)
        snprintf(script + strlen(script), sizeof(script) - strlen(script),
                 "./sworn-probe setid %s 4755 /work/f-%s; ./sworn-probe setid %s 2755 "
                 "/work/g-%s; ",
                 create_calls[i], create_calls[i], create_calls[i], create_calls[i]);
    snprintf(script + strlen(script), sizeof(script) - strlen(script),
             "./sworn-probe setid mkdir 2755 /work/d-mkdir; "
             "./sworn-probe setid mkdirat 2755 /work/d-mkdirat; "
             "./sworn-probe setid openat2 4755 /work/f-openat2; "
             "mkdir -p /work/sub && cp /bin/sh /work/sub/sh2; true");
    sworn_sbx_run(&r, stack.dir, options, agent);
    sworn_sbx_expect_status(&r, 0);
    printf("%s", r.out);
    /* --keep: everything kept is the folder's owner's, and nothing has a set-ID bit. */
    tree_uid = 4242;
    tree_gid = 4343;
    tree_bad[0] = '\0';
    {
        char *sh = sworn_test_path(work, "sh"), *sub = sworn_test_path(work, "sub/sh2");
        assert_true(sworn_sbx_exists(sh) &&
                    sworn_sbx_exists(sub)); /* what the agent made was kept */
        free(sh);
        free(sub);
    }
    {
        int walked = nftw(work, check_one, 16, FTW_PHYS); /* 1: stopped at a bad file */
        assert_true(walked == 0 || (walked == 1 && tree_bad[0] != '\0'));
    }
    for (size_t i = 0; i < sizeof(file_calls) / sizeof(file_calls[0]); i++) {
        snprintf(line, sizeof(line), "BLOCKED setid-%s:4755:/work/sh EPERM", file_calls[i]);
        sworn_sbx_expect_line(&r, line);
        snprintf(line, sizeof(line), "BLOCKED setid-%s:2755:/work/sh EPERM", file_calls[i]);
        sworn_sbx_expect_line(&r, line);
    }
    for (size_t i = 0; i < sizeof(create_calls) / sizeof(create_calls[0]); i++) {
        snprintf(line, sizeof(line), "BLOCKED setid-%s:4755:/work/f-%s EPERM", create_calls[i],
                 create_calls[i]);
        sworn_sbx_expect_line(&r, line);
        snprintf(line, sizeof(line), "BLOCKED setid-%s:2755:/work/g-%s EPERM", create_calls[i],
                 create_calls[i]);
        sworn_sbx_expect_line(&r, line);
    }
    sworn_sbx_expect_line(&r, "BLOCKED setid-mkdir:2755:/work/d-mkdir EPERM");
    sworn_sbx_expect_line(&r, "BLOCKED setid-mkdirat:2755:/work/d-mkdirat EPERM");
    sworn_sbx_expect_line(&r, "BLOCKED setid-openat2:4755:/work/f-openat2 ENOSYS");
    sworn_test_run_free(&r);
    if (tree_bad[0] != '\0')
        fail_msg("in the kept work folder: %s (expected uid 4242 gid 4343, no set-ID bit)",
                 tree_bad);
    free(work); /* removed by the teardown, with host */
    free(host);
}

/* ---- 2: relay connections ---- */

/* Read "CONNS held=H closed=C" lines until one says closed=want (fails after RELAY_WAIT_MS
 * without one: the relay closes what is over its bound as it accepts it, at once). */
static void conns_wait_closed(struct sworn_sbx_live *l, int want, int *held)
{
    for (;;) {
        const char *line = sworn_sbx_live_line_within(l, RELAY_WAIT_MS);
        int h, c;

        if (sscanf(line, "CONNS held=%d closed=%d", &h, &c) != 2)
            fail_msg("the agent says: %s", line);
        if (c == want) {
            *held = h;
            return;
        }
        if (c > want)
            fail_msg("the relay closed %d of the agent's connections, more than %d (%s)", c, want,
                     line);
    }
}

static void test_relay_connection_bound(void **state)
{
    char count[8], url[128];
    char *work = work_new();
    const char *options[] = {"--work", work, "--name", "attack-conns", NULL};
    const char *agent[] = {"./sworn-probe", "conns", "127.0.0.1", "3128", count, NULL};
    const char *argv[SWORN_SBX_ARGS_MAX];
    static struct sworn_sbx_live l;
    struct sworn_test_run r = {0};
    int held = 0, h, c;

    (void)state;
    snprintf(count, sizeof(count), "%d", RELAY_TRIED);
    sworn_sbx_argv(argv, stack.dir, options, agent);
    sworn_sbx_live_start(&l, argv);
    /* All RELAY_TRIED are open on the agent's side; the relay takes the first RELAY_BOUND and
     * closes each one after those as it accepts it. */
    conns_wait_closed(&l, RELAY_TRIED - RELAY_BOUND, &held);
    assert_int_equal(held, RELAY_BOUND);
    /* Meanwhile another sandbox's allowed request goes through the proxy. */
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/allowed/hello.txt", upstream.http_port);
    {
        const char *curl[] = {"/usr/bin/curl", "-sS", "--max-time", "30", url, NULL};
        const char *other[] = {"--name", "attack-conns-other", NULL};

        sworn_sbx_run(&r, stack.dir, other, curl);
        sworn_sbx_expect_status(&r, 0);
        assert_string_equal(r.out, "hello\n");
        sworn_test_run_free(&r);
    }
    /* And the first still holds its RELAY_BOUND, no more, no fewer. */
    sworn_sbx_live_write(&l, "count\n");
    {
        const char *line = sworn_sbx_live_line(&l);
        if (sscanf(line, "CONNS held=%d closed=%d", &h, &c) != 2)
            fail_msg("the agent says: %s", line);
        printf("  after the other sandbox's request: %s\n", line);
        assert_int_equal(h, RELAY_BOUND);
        assert_int_equal(c, RELAY_TRIED - RELAY_BOUND);
    }
    assert_int_equal(sworn_sbx_live_end(&l), 0);
    sworn_sbx_expect_work_returned(work);

    /* The bound is the configuration's limits.connections: 5 of 8 held. */
    {
        char *dir = tmpdir_made("attack-conns-conf"), *conf = sworn_test_path(dir, "run.yaml");
        char text[2048];
        int len = snprintf(text, sizeof(text),
                           "principal: " PRINCIPAL "\nhostlink: %s\nadmin_socket: %s\n"
                           "proxy_ca: %s\nstate_dir: %s/sandboxes\nlimits: {connections: 5}\n",
                           stack.proxy_socket, stack.admin, stack.proxy_ca, stack.dir);
        const char *conf_options[] = {"--config", conf, "--work", NULL, NULL};
        const char *conf_agent[] = {"./sworn-probe", "conns", "127.0.0.1", "3128", "8", NULL};

        sworn_test_write_file(conf, text, (size_t)len, 0600);
        work = work_new();
        conf_options[3] = work;
        sworn_sbx_argv(argv, NULL, conf_options, conf_agent);
        sworn_sbx_live_start(&l, argv);
        conns_wait_closed(&l, 3, &held);
        assert_int_equal(held, 5);
        assert_int_equal(sworn_sbx_live_end(&l), 0);
        sworn_sbx_expect_work_returned(work);
        free(conf);
        free(dir);
    }
}

/* ---- 3: two state folders, two uids ---- */

static void test_two_state_folders_two_uids(void **state)
{
    char *state_b = tmpdir_made("attack-state"), *conf = sworn_test_path(state_b, "run.yaml");
    char *work_a = work_new(), *work_b = work_new(), text[4096], *sandboxes;
    const char *agent[] = {"./sworn-probe", "hold", NULL};
    const char *argv_a[SWORN_SBX_ARGS_MAX], *argv_b[SWORN_SBX_ARGS_MAX];
    const char *options_a[] = {"--work", work_a, "--name", "attack-uid-a", NULL};
    const char *options_b[] = {"--config", conf, "--work", work_b, "--name", "attack-uid-b", NULL};
    static struct sworn_sbx_live a, b;
    uint32_t uid_a = 0, uid_b = 0;
    const char *line;
    int len;

    (void)state;
    sandboxes = sworn_test_path(state_b, "sandboxes");
    assert_int_equal(mkdir(sandboxes, 0700), 0);
    len = snprintf(text, sizeof(text),
                   "principal: " PRINCIPAL "\nhostlink: %s\nadmin_socket: %s\nproxy_ca: %s\n"
                   "state_dir: %s\n",
                   stack.proxy_socket, stack.admin, stack.proxy_ca, sandboxes);
    sworn_test_write_file(conf, text, (size_t)len, 0600);
    sworn_sbx_argv(argv_a, stack.dir, options_a, agent);
    sworn_sbx_argv(argv_b, NULL, options_b, agent);
    sworn_sbx_live_start(&a, argv_a);
    sworn_sbx_live_start(&b, argv_b);
    /* Both agents run (each said so) before either is let go. */
    line = sworn_sbx_live_line(&a);
    if (strncmp(line, "HOLD ", 5) != 0)
        fail_msg("the first agent says: %s", line);
    line = sworn_sbx_live_line(&b);
    if (strncmp(line, "HOLD ", 5) != 0)
        fail_msg("the second agent says: %s", line);
    (void)sworn_sbx_started(&stack, "attack-uid-a", NULL, &uid_a);
    (void)sworn_sbx_started(&stack, "attack-uid-b", NULL, &uid_b);
    printf("  agent uids at once: %u (--stack) and %u (--config, another state folder)\n", uid_a,
           uid_b);
    assert_int_equal(sworn_sbx_live_end(&a), 0);
    assert_int_equal(sworn_sbx_live_end(&b), 0);
    assert_true(uid_a >= 1000000000u && uid_b >= 1000000000u);
    assert_int_not_equal(uid_a, uid_b);
    sworn_sbx_expect_work_returned(work_a);
    sworn_sbx_expect_work_returned(work_b);
    free(sandboxes);
    free(conf);
    free(state_b);
}

/* ---- 5: /tmp and /dev/shm are bounded ---- */

static void test_scratch_bounded(void **state)
{
    char name[64], host_file[128], script[1024];
    const char *agent[] = {"/bin/sh", "-c", script, NULL};
    const char *df = "df -k --output=size /tmp /dev/shm | tail -n 2 | tr -d ' '";
    struct sworn_test_run r = {0};

    (void)state;
    /* Without --memory: 1 GiB each. */
    snprintf(script, sizeof(script), "%s", df);
    sworn_sbx_run(&r, stack.dir, NULL, agent);
    sworn_sbx_expect_status(&r, 0);
    assert_string_equal(r.out, "1048576\n1048576\n");
    sworn_test_run_free(&r);

    /* With --memory 64M: 64 MiB each, and 100 MiB do not fit in /dev/shm. */
    snprintf(name, sizeof(name), "sworn-attack-fill-%ld", (long)getpid());
    snprintf(host_file, sizeof(host_file), "/dev/shm/%s", name);
    snprintf(script, sizeof(script),
             "%s; dd if=/dev/zero of=/dev/shm/%s bs=1M count=100 2>&1; echo \"dd=$?\"", df, name);
    {
        const char *options[] = {"--memory", "64M", NULL};
        sworn_sbx_run(&r, stack.dir, options, agent);
    }
    printf("  --memory 64M, 100 MiB into /dev/shm: status %d\n%s", r.status, r.out);
    assert_false(sworn_sbx_exists(host_file)); /* the host's /dev/shm never saw it */
    if (strncmp(r.out, "65536\n65536\n", 12) != 0)
        fail_msg("df inside with --memory 64M: %s", r.out);
    if (r.status == 128 + SIGKILL) {
        /* The memory cgroup's killer ended the agent before the tmpfs was full: the bound held. */
        sworn_test_run_free(&r);
        return;
    }
    sworn_sbx_expect_status(&r, 0);
    /* dd stopped by the tmpfs's bound (ENOSPC), or killed by the cgroup's killer (the shell
     * survived it); never all 100 MiB written. */
    if (!(strstr(r.out, "No space left on device") != NULL && strstr(r.out, "dd=1\n") != NULL) &&
        strstr(r.out, "dd=137\n") == NULL)
        fail_msg("100 MiB into a 64 MiB /dev/shm did not fail with ENOSPC:\n%s", r.out);
    sworn_test_run_free(&r);
}

/* ---- 6: a deep tree in /work ---- */

static void test_deep_tree_cleanup(void **state)
{
    char *work = work_new(), levels[16];
    const char *options[] = {"--work", work, "--name", "attack-deep", NULL};
    const char *agent[] = {"./sworn-probe", "deep", levels, NULL};
    struct sworn_test_run r = {0};
    char want[32];

    (void)state;
    snprintf(levels, sizeof(levels), "%d", DEEP_LEVELS);
    snprintf(want, sizeof(want), "DEEP %d", DEEP_LEVELS);
    sworn_sbx_run(&r, stack.dir, options, agent);
    if (r.status != 0 || !sworn_sbx_has_line(r.out, want)) {
        free(work); /* removed by the teardown */
        fail_msg("the deep tree: status %d (expected the agent's, 0)\nstdout:\n%s\nstderr:\n%s",
                 r.status, r.out, r.err);
    }
    sworn_test_run_free(&r);
    sworn_sbx_expect_work_returned(work);
    assert_int_equal(sworn_sbx_run_folders_left(&stack), 0);
    expect_ended("attack-deep", SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_EXITED, 0);
}

/* ---- 7: the terminal ---- */

static void test_no_controlling_terminal(void **state)
{
    char *work = work_new();
    const char *options[] = {"--work", work, NULL};
    /* The agent changes the terminal's settings, then becomes the ctty probe (exec: the agent
     * process itself). */
    const char *agent[] = {"/bin/sh", "-c",
                           "stty -echo -icanon; echo \"stty: $(stty -a | tr '\\n' ' ')\"; "
                           "./sworn-probe tiocsetd; exec ./sworn-probe ctty",
                           NULL};
    const char *argv[SWORN_SBX_ARGS_MAX];
    struct sworn_sbx_pty_run pr;
    char *stty;

    (void)state;
    sworn_sbx_argv(argv, stack.dir, options, agent);
    sworn_sbx_run_under_pty(argv, &pr);
    printf("  status %d\n%s", pr.status, pr.out);
    sworn_sbx_expect_work_returned(work);
    /* The agent did change the terminal's settings (so that giving them back means something). */
    stty = strstr(pr.out, "stty: ");
    assert_non_null(stty);
    assert_non_null(strstr(stty, " -icanon "));
    assert_non_null(strstr(stty, " -echo "));
    /* No controlling terminal, a session of the sandbox's (its leader inside: pid 1), /dev/tty
     * refused. */
    if (strstr(pr.out, "\nBLOCKED ctty ") == NULL)
        fail_msg("the agent has a controlling terminal or sworn-run's session:\n%s", pr.out);
    assert_non_null(strstr(pr.out, "\nBLOCKED tiocsetd EPERM\n"));
    assert_int_equal(pr.status, 0);
    /* The terminal's settings are as they were. */
    if ((pr.after.c_lflag & (ECHO | ICANON)) != (ECHO | ICANON))
        fail_msg("after the end the terminal has echo %s, canonical input %s",
                 (pr.after.c_lflag & ECHO) != 0 ? "on" : "off",
                 (pr.after.c_lflag & ICANON) != 0 ? "on" : "off");
}

/* ---- 8: dangerous work folders ---- */

/* sworn-run --work path --keep: refused with 125, nothing recorded, path's owner and mode as they
 * were. --keep is a safety net: a sworn-run that took the folder anyway gives it back rather than
 * emptying it. */
static void expect_work_refused(const char *path)
{
    const char *options[] = {"--work", path, "--keep", NULL};
    const char *agent[] = {"/bin/true", NULL};
    struct sworn_test_run r = {0};
    struct stat before, after;
    uint64_t size = log_size();

    assert_int_equal(lstat(path, &before), 0);
    sworn_sbx_run(&r, stack.dir, options, agent);
    assert_int_equal(lstat(path, &after), 0);
    if (r.status != 125)
        fail_msg("--work %s: status %d, expected 125 (refused)\nstderr:\n%s", path, r.status,
                 r.err);
    if (log_size() != size)
        fail_msg("--work %s: refused, but the log grew (a SandboxStarted entry?)", path);
    if (after.st_uid != before.st_uid || after.st_gid != before.st_gid ||
        after.st_mode != before.st_mode)
        fail_msg("--work %s: its owner or mode changed", path);
    printf("  --work %s: 125, %.*s\n", path, (int)strcspn(r.err, "\n"), r.err);
    sworn_test_run_free(&r);
}

static void test_dangerous_work_refused(void **state)
{
    static const char *const system_folders[] = {"/",    "/etc",     "/usr", "/proc",
                                                 "/sys", "/dev/shm", "/dev", "/run"};
    char *sandboxes = sworn_test_path(stack.dir, "sandboxes");
    char *inside = sworn_test_path(sandboxes, "attack-inside");
    char parent[600];

    (void)state;
    /* The state folder, a folder in it, the folder around it. These come first: should sworn-run
     * take one of them, the test stops before it reaches the host's own folders. */
    assert_true(mkdir(sandboxes, 0700) == 0 || errno == EEXIST);
    assert_int_equal(mkdir(inside, 0700), 0);
    expect_work_refused(sandboxes);
    expect_work_refused(inside);
    assert_int_equal(rmdir(inside), 0);
    expect_work_refused(stack.dir);
    /* The folders of the hostlink socket, the admin socket and the proxy's CA. */
    snprintf(parent, sizeof(parent), "%s", stack.proxy_socket);
    expect_work_refused(dirname(parent));
    snprintf(parent, sizeof(parent), "%s", stack.admin);
    expect_work_refused(dirname(parent));
    snprintf(parent, sizeof(parent), "%s", stack.proxy_ca);
    expect_work_refused(dirname(parent));
    /* The host's own. */
    for (size_t i = 0; i < sizeof(system_folders) / sizeof(system_folders[0]); i++)
        expect_work_refused(system_folders[i]);
    free(inside);
    free(sandboxes);
}

/* ---- 11: memory pressure ---- */

static void test_memory_pressure_not_failure(void **state)
{
    const char *options[] = {"--memory", "64M", "--name", "attack-oom", NULL};
    const char *agent[] = {"/bin/sh", "-c",
                           "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do "
                           "sleep 1000 & done; cat /dev/zero > /dev/shm/fill; exit 3",
                           NULL};
    struct sworn_test_run r = {0};
    Sworn__V1__SandboxEndReason reason;
    uint32_t code;

    (void)state;
    sworn_sbx_run(&r, stack.dir, options, agent);
    printf("  status %d\n", r.status);
    ended(sworn_sbx_started(&stack, "attack-oom", NULL, NULL), &reason, &code);
    if (r.status == 125 || reason == SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_FAILED)
        fail_msg("out of memory read as sworn-run's failure: status %d, end reason %d\n%s",
                 r.status, (int)reason, r.err);
    if (r.status == 3)
        assert_true(reason == SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_EXITED &&
                    code == 3);
    else if (r.status == 128 + SIGKILL)
        assert_true(reason == SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_SIGNALED &&
                    code == SIGKILL);
    else
        fail_msg("status %d: neither the agent's (3) nor the memory killer's (137)\n%s", r.status,
                 r.err);
    sworn_test_run_free(&r);
    assert_int_equal(sworn_sbx_run_folders_left(&stack), 0);
}

/* ---- 14: seccomp gaps ---- */

static void test_seccomp_gaps(void **state)
{
    /* sock_diag, xfrm, audit, netfilter, uevents, generic: each opens on the host. */
    static const char *const protos[] = {"4", "6", "9", "12", "15", "16"};
    char script[1024] = "";
    char *work = work_new();
    const char *options[] = {"--work", work, NULL};
    const char *agent[] = {"/bin/sh", "-c", script, NULL};
    struct sworn_test_run r = {0};
    char line[128];

    (void)state;
    for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
        const char *argv[] = {probe_bin, "netlink-proto", protos[i], NULL};

        sworn_test_run(argv, NULL, &r);
        sworn_sbx_expect_status(&r, 3); /* the positive control: the host's kernel has it */
        sworn_test_run_free(&r);
        snprintf(script + strlen(script), sizeof(script) - strlen(script),
                 "./sworn-probe netlink-proto %s; ", protos[i]);
    }
    snprintf(script + strlen(script), sizeof(script) - strlen(script),
             "./sworn-probe netlink-proto 0; ./sworn-probe modify_ldt; ./sworn-probe memfd_secret; "
             "true");
    sworn_sbx_run(&r, stack.dir, options, agent);
    sworn_sbx_expect_status(&r, 0);
    sworn_sbx_expect_work_returned(work);
    printf("%s", r.out);
    for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
        snprintf(line, sizeof(line), "BLOCKED netlink-proto:%s EPERM", protos[i]);
        sworn_sbx_expect_line(&r, line);
    }
    sworn_sbx_expect_line(&r, "OPEN netlink-proto:0 socket"); /* route netlink stays */
    if (!sworn_sbx_has_line(r.out, "BLOCKED modify_ldt EPERM") &&
        !sworn_sbx_has_line(r.out, "BLOCKED modify_ldt ENOSYS"))
        fail_msg("modify_ldt inside:\n%s", r.out);
    if (!sworn_sbx_has_line(r.out, "BLOCKED memfd_secret EPERM") &&
        !sworn_sbx_has_line(r.out, "BLOCKED memfd_secret ENOSYS"))
        fail_msg("memfd_secret inside:\n%s", r.out);
    sworn_test_run_free(&r);

    /* TIOCSETD on a terminal: set on the host (the control), refused inside. */
    {
        const char *host[] = {probe_bin, "tiocsetd", NULL};
        const char *inside[] = {"./sworn-probe", "tiocsetd", NULL};
        const char *argv[SWORN_SBX_ARGS_MAX];
        const char *opts[] = {"--work", NULL, NULL};
        struct sworn_sbx_pty_run pr;

        sworn_sbx_run_under_pty(host, &pr);
        if (pr.status != 3 || strcmp(pr.out, "OPEN tiocsetd\n") != 0)
            fail_msg("positive control: tiocsetd on the host: status %d, %s", pr.status, pr.out);
        work = work_new();
        opts[1] = work;
        sworn_sbx_argv(argv, stack.dir, opts, inside);
        sworn_sbx_run_under_pty(argv, &pr);
        sworn_sbx_expect_work_returned(work);
        if (pr.status != 0 || strcmp(pr.out, "BLOCKED tiocsetd EPERM\n") != 0)
            fail_msg("tiocsetd inside: status %d, %s", pr.status, pr.out);
    }
}

/* ---- the hello's agent uid ---- */

/* Send a hello and an HTTP request on a new connection to the proxy's hostlink socket, as the
 * relay would; returns the answer's status line (a static copy), "" when none came. */
static const char *hostlink_request(const char *name, uint64_t start, uint32_t agent_uid,
                                    const char *path)
{
    Sworn__V1__HostlinkHello hello = SWORN__V1__HOSTLINK_HELLO__INIT;
    static char answer[8192];
    char request[512];
    uint8_t *frame;
    size_t len, have = 0;
    int fd = sworn_stack_connect(stack.proxy_socket), n;

    assert_true(fd >= 0);
    hello.principal = PRINCIPAL;
    hello.sandbox = (char *)name;
    hello.sandbox_start_index = start;
    hello.agent_uid = agent_uid;
    hello.version = 1;
    assert_int_equal(sworn_frame_pack_hostlink_hello(&hello, &frame, &len), 0);
    assert_int_equal(write(fd, frame, len), (ssize_t)len);
    free(frame);
    n = snprintf(request, sizeof(request),
                 "GET http://127.0.0.1:%u%s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
                 "Connection: close\r\n\r\n",
                 upstream.http_port, path, upstream.http_port);
    assert_int_equal(write(fd, request, (size_t)n), n);
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t got;

        if (have >= sizeof(answer) - 1 || poll(&p, 1, SWORN_SBX_RUN_MS) <= 0)
            break;
        got = read(fd, answer + have, sizeof(answer) - 1 - have);
        if (got <= 0)
            break;
        have += (size_t)got;
    }
    close(fd);
    answer[have] = '\0';
    answer[strcspn(answer, "\r\n")] = '\0';
    return answer;
}

/* The one decision on path of sandbox name with agent uid uid: its effect (fails unless one). */
static Sworn__V1__Effect decision_of(const char *name, uint64_t start, const char *path,
                                     uint32_t uid)
{
    Sworn__V1__AdminResponse *r = sworn_stack_tail(&stack, SWORN_SBX_TAIL);
    Sworn__V1__Effect effect = SWORN__V1__EFFECT__EFFECT_UNSPECIFIED;
    int found = 0;

    for (size_t i = 0; i < r->tail->n_entries; i++) {
        const Sworn__V1__Entry *e = r->tail->entries[i];
        const Sworn__V1__AuthorizationRequest *q = sworn_stack_decision_on(e, path);

        if (q == NULL || q->principal == NULL || strcmp(q->principal->sandbox, name) != 0 ||
            q->principal->uid != uid)
            continue; /* another sandbox's (uids are taken again once released) */
        assert_string_equal(q->principal->id, PRINCIPAL);
        assert_int_equal(q->principal->sandbox_start_index, start);
        effect = e->decision->effect;
        found++;
    }
    sworn__v1__admin_response__free_unpacked(r, NULL);
    if (found != 1)
        fail_msg("%d decisions on %s with agent uid %u, not 1", found, path, uid);
    return effect;
}

static void test_hello_uid_mismatch(void **state)
{
    char *work = work_new();
    const char *options[] = {"--work", work, "--name", "attack-hello", NULL};
    const char *agent[] = {"./sworn-probe", "hold", NULL};
    const char *argv[SWORN_SBX_ARGS_MAX], *line, *status;
    static struct sworn_sbx_live l;
    uint32_t uid = 0;
    uint64_t start;

    (void)state;
    sworn_sbx_argv(argv, stack.dir, options, agent);
    sworn_sbx_live_start(&l, argv);
    line = sworn_sbx_live_line(&l);
    if (strncmp(line, "HOLD ", 5) != 0)
        fail_msg("the agent says: %s", line);
    start = sworn_sbx_started(&stack, "attack-hello", NULL, &uid);
    /* The control: the hello sworn-run's relay would write (the right uid) is allowed. */
    status = hostlink_request("attack-hello", start, uid, "/allowed/hello.txt");
    printf("  the right agent uid %u: %s\n", uid, status);
    assert_non_null(strstr(status, " 200 "));
    /* Another uid for the same running sandbox: denied, and recorded so. */
    status = hostlink_request("attack-hello", start, uid + 1, "/allowed/hello.txt");
    printf("  another agent uid %u: %s\n", uid + 1, status);
    assert_int_equal(sworn_sbx_live_end(&l), 0);
    sworn_sbx_expect_work_returned(work);
    assert_int_equal(decision_of("attack-hello", start, "/allowed/hello.txt", uid),
                     SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_int_equal(decision_of("attack-hello", start, "/allowed/hello.txt", uid + 1),
                     SWORN__V1__EFFECT__EFFECT_DENY);
    assert_null(strstr(status, " 200 "));
}

/* ==== the second round ==== */

/* What a second-round test changed on the host, undone by each_teardown when a failure left it:
 * a stopped engine (SIGCONT), a bind mount (unmounted), folders made in /var (removed when
 * empty), /etc/subuid (its old text back, or removed when the test made it). */
static pid_t r2_stopped_engine;
static char r2_bound[2][600];
static char r2_made_system[2][64];
static int r2_subuid_changed, r2_subuid_existed;
static char *r2_subuid_text;
static size_t r2_subuid_len;

#define R2_SUBUID "/etc/subuid"

static void r2_subuid_restore(void)
{
    if (!r2_subuid_changed)
        return;
    r2_subuid_changed = 0;
    if (r2_subuid_existed) {
        sworn_test_write_file(R2_SUBUID ".sworn-test", r2_subuid_text, r2_subuid_len, 0644);
        if (rename(R2_SUBUID ".sworn-test", R2_SUBUID) != 0)
            fprintf(stderr, "restoring %s: %s\n", R2_SUBUID, strerror(errno));
    } else if (unlink(R2_SUBUID) != 0) {
        fprintf(stderr, "removing %s: %s\n", R2_SUBUID, strerror(errno));
    }
    free(r2_subuid_text);
    r2_subuid_text = NULL;
}

static void r2_undo(void)
{
    if (r2_stopped_engine > 0) {
        (void)kill(r2_stopped_engine, SIGCONT);
        r2_stopped_engine = 0;
    }
    for (size_t i = 0; i < 2; i++) {
        if (r2_bound[i][0] != '\0' && umount2(r2_bound[i], MNT_DETACH) != 0)
            fprintf(stderr, "umount %s: %s\n", r2_bound[i], strerror(errno));
        r2_bound[i][0] = '\0';
        if (r2_made_system[i][0] != '\0' && rmdir(r2_made_system[i]) != 0)
            fprintf(stderr, "rmdir %s: %s\n", r2_made_system[i], strerror(errno));
        r2_made_system[i][0] = '\0';
    }
    r2_subuid_restore();
}

/* The newest SandboxStarted entry named name among the newest SWORN_SBX_TAIL entries: 1 and its
 * index, or 0 when there is none (sworn_sbx_started fails the test instead). */
static int r2_started_opt(const char *name, uint64_t *index)
{
    Sworn__V1__AdminResponse *r = sworn_stack_tail(&stack, SWORN_SBX_TAIL);
    int found = 0;

    for (size_t i = 0; i < r->tail->n_entries; i++) {
        const Sworn__V1__Entry *e = r->tail->entries[i];

        if (e->kind_case == SWORN__V1__ENTRY__KIND_SANDBOX_STARTED &&
            strcmp(e->sandbox_started->name, name) == 0) {
            *index = r->tail->first_index + i;
            found = 1;
        }
    }
    sworn__v1__admin_response__free_unpacked(r, NULL);
    return found;
}

/* How many SandboxStarted entries at index from or after, among the newest SWORN_SBX_TAIL, have
 * no SandboxEnded there (each printed). */
static int r2_starts_without_end(uint64_t from)
{
    Sworn__V1__AdminResponse *r = sworn_stack_tail(&stack, SWORN_SBX_TAIL);
    int open_starts = 0;

    for (size_t i = 0; i < r->tail->n_entries; i++) {
        const Sworn__V1__Entry *e = r->tail->entries[i];
        uint64_t index = r->tail->first_index + i;
        int ends = 0;

        if (e->kind_case != SWORN__V1__ENTRY__KIND_SANDBOX_STARTED || index < from)
            continue;
        for (size_t j = i + 1; j < r->tail->n_entries; j++)
            if (r->tail->entries[j]->kind_case == SWORN__V1__ENTRY__KIND_SANDBOX_ENDED &&
                r->tail->entries[j]->sandbox_ended->start_index == index)
                ends++;
        if (ends == 0) {
            printf("  SandboxStarted %llu (%s) has no SandboxEnded\n", (unsigned long long)index,
                   e->sandbox_started->name);
            open_starts++;
        }
    }
    sworn__v1__admin_response__free_unpacked(r, NULL);
    return open_starts;
}

/* A folder owned by nobody (65534), mode 0755. */
static void r2_mkdir_nobody(const char *path)
{
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(chown(path, 65534, 65534), 0);
}

/* ---- round 2, 1: a race on --work ---- */

#define R2_RACE_RUNS 60
#define R2_RACE_MS "120000" /* the swapper's own bound */
#define R2_REAL_MARKER "r2-real-folder"

/* lstat path: fails the test when it is gone. */
static void r2_lstat(const char *path, struct stat *st)
{
    if (lstat(path, st) != 0)
        fail_msg("%s: %s (removed?)", path, strerror(errno));
}

/* Same owner, mode and change time: never chowned, chmodded, or changed in what it holds. */
static void r2_expect_unchanged(const char *path, const struct stat *before)
{
    struct stat after;

    r2_lstat(path, &after);
    if (after.st_uid != before->st_uid || after.st_gid != before->st_gid ||
        after.st_mode != before->st_mode || after.st_ctim.tv_sec != before->st_ctim.tv_sec ||
        after.st_ctim.tv_nsec != before->st_ctim.tv_nsec)
        fail_msg("%s changed: uid %u gid %u mode %o (before %u %u %o), change time %lld.%09ld "
                 "(before %lld.%09ld)",
                 path, (unsigned)after.st_uid, (unsigned)after.st_gid, (unsigned)after.st_mode,
                 (unsigned)before->st_uid, (unsigned)before->st_gid, (unsigned)before->st_mode,
                 (long long)after.st_ctim.tv_sec, after.st_ctim.tv_nsec,
                 (long long)before->st_ctim.tv_sec, before->st_ctim.tv_nsec);
}

static void test_r2_work_race(void **state)
{
    static const char *const targets[] = {"proxy", "proxy-ca"};
    static struct sworn_sbx_live swapper;
    char *top = tmpdir_made("attack-r2-race");
    char d[700], s[700], probe[700], real[2][760], stack_folder[2][700], marker[1600];
    const char *argv[SWORN_SBX_ARGS_MAX];
    struct stat before[2], st;
    int ran = 0, refused = 0, failed_starts = 0;

    (void)state;
    /* The other local user's folders: top (its own), d (a folder holding the user's two work
     * folders, named as the stack's), s (a link to the stack's folder). Swapping d and s makes
     * TOP/d/proxy the stack's proxy folder, then the user's again. */
    assert_int_equal(chown(top, 65534, 65534), 0);
    assert_int_equal(chmod(top, 0755), 0);
    snprintf(d, sizeof(d), "%s/d", top);
    snprintf(s, sizeof(s), "%s/s", top);
    snprintf(probe, sizeof(probe), "%s/sworn-probe", top);
    r2_mkdir_nobody(d);
    assert_int_equal(symlink(stack.dir, s), 0);
    assert_int_equal(lchown(s, 65534, 65534), 0);
    {
        size_t len;
        char *bin = sworn_test_read_file(probe_bin, &len);

        sworn_test_write_file(probe, bin, len, 0755);
        free(bin);
    }
    for (size_t i = 0; i < 2; i++) {
        snprintf(real[i], sizeof(real[i]), "%s/%s", d, targets[i]);
        r2_mkdir_nobody(real[i]);
        snprintf(marker, sizeof(marker), "%s/" R2_REAL_MARKER, real[i]);
        sworn_test_write_file(marker, "mine\n", 5, 0644);
        assert_int_equal(chown(marker, 65534, 65534), 0);
        snprintf(stack_folder[i], sizeof(stack_folder[i]), "%s/%s", stack.dir, targets[i]);
        r2_lstat(stack_folder[i], &before[i]);
    }
    {
        const char *swap[] = {"/usr/bin/setpriv",
                              "--reuid=65534",
                              "--regid=65534",
                              "--clear-groups",
                              "--",
                              probe,
                              "exchange",
                              d,
                              s,
                              R2_RACE_MS,
                              NULL};

        sworn_sbx_live_start(&swapper, swap);
        if (strcmp(sworn_sbx_live_line(&swapper), "EXCHANGING") != 0)
            fail_msg("the swapper did not start swapping");
    }
    for (int i = 0; i < R2_RACE_RUNS; i++) {
        char name[64];
        const char *options[] = {"--work", real[i % 2], "--keep", "--name", name, NULL};
        const char *agent[] = {"/bin/ls", "-A", "/work", NULL};
        struct sworn_test_run r = {0};
        uint64_t start;

        snprintf(name, sizeof(name), "attack-r2-race-%d", i);
        sworn_sbx_argv(argv, stack.dir, options, agent);
        sworn_test_run(argv, NULL, &r);
        /* Whatever the run's end, an agent that ran listed the user's folder, never the
         * stack's. */
        if (r.out[0] != '\0' && strcmp(r.out, R2_REAL_MARKER "\n") != 0)
            fail_msg("run %d (--work %s, status %d): /work held\n%s(expected " R2_REAL_MARKER
                     " alone: the user's own folder)",
                     i, real[i % 2], r.status, r.out);
        if (r.status == 0) {
            ran++;
        } else if (r.status == 125) {
            /* Refused, or failed: nothing started, or a start ended FAILED. */
            if (r2_started_opt(name, &start)) {
                Sworn__V1__SandboxEndReason reason;
                uint32_t code;

                ended(start, &reason, &code);
                if (reason != SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_FAILED)
                    fail_msg("run %d: 125, but its start ended with reason %d, not FAILED", i,
                             (int)reason);
                failed_starts++;
            }
            if (refused++ < 3)
                printf("  run %d: 125, %.*s\n", i, (int)strcspn(r.err, "\n"), r.err);
        } else {
            fail_msg("run %d (--work %s): status %d (expected 0 in the user's folder, or 125)\n"
                     "stdout:\n%s\nstderr:\n%s",
                     i, real[i % 2], r.status, r.out, r.err);
        }
        sworn_test_run_free(&r);
    }
    assert_int_equal(sworn_sbx_live_end(&swapper), 0);
    /* d back in its place (an odd number of swaps leaves the link there). */
    r2_lstat(d, &st);
    if (S_ISLNK(st.st_mode))
        assert_int_equal(renameat2(AT_FDCWD, d, AT_FDCWD, s, RENAME_EXCHANGE), 0);
    printf("  %d runs with the folder swapped: %d ran in the user's folder, %d refused (%d of "
           "them a start ended FAILED)\n",
           R2_RACE_RUNS, ran, refused, failed_starts);
    /* The stack's folders: there, never chowned (their change time too), and what they hold. */
    for (size_t i = 0; i < 2; i++)
        r2_expect_unchanged(stack_folder[i], &before[i]);
    r2_lstat(stack.proxy_socket, &st);
    snprintf(marker, sizeof(marker), "%s/ca.key", stack_folder[1]);
    r2_lstat(marker, &st);
    assert_int_equal(st.st_uid, 0);
    free(top); /* removed by the teardown */
}

/* ---- round 2, 2: --work refused by what it is ---- */

/* Whether a run's agent made /work/agent-ran in work. */
static int r2_agent_ran(const char *work)
{
    char *ran = sworn_test_path(work, "agent-ran");
    int yes = sworn_sbx_exists(ran);

    free(ran);
    return yes;
}

static void test_r2_work_refused_by_identity(void **state)
{
    static const char *const aliased[] = {"proxy", "proxy-ca"};
    static const char *const system_state[] = {"/var/lib/sworn", "/var/log/sworn"};
    const char *agent[] = {"/bin/sh", "-c", "touch /work/agent-ran", NULL};
    struct sworn_test_run r = {0};
    char path[700];

    (void)state;
    /* A bind mount of the stack's proxy and proxy CA folders elsewhere: the same folders. */
    for (size_t i = 0; i < 2; i++) {
        char *alias = tmpdir_made("attack-r2-alias");

        snprintf(path, sizeof(path), "%s/%s", stack.dir, aliased[i]);
        assert_int_equal(mount(path, alias, NULL, MS_BIND, NULL), 0);
        snprintf(r2_bound[0], sizeof(r2_bound[0]), "%s", alias);
        expect_work_refused(alias);
        assert_int_equal(umount2(alias, 0), 0);
        r2_bound[0][0] = '\0';
        free(alias);
    }
    /* With --stack DIR, every folder in DIR: the tiles, and one made there now. */
    snprintf(path, sizeof(path), "%s/tiles", stack.dir);
    expect_work_refused(path);
    snprintf(path, sizeof(path), "%s/attack-r2-mine", stack.dir);
    assert_int_equal(mkdir(path, 0755), 0);
    expect_work_refused(path);
    assert_int_equal(rmdir(path), 0);
    /* A deployment's state and logs. */
    for (size_t i = 0; i < 2; i++) {
        if (mkdir(system_state[i], 0755) == 0)
            snprintf(r2_made_system[i], sizeof(r2_made_system[i]), "%s", system_state[i]);
        else
            assert_int_equal(errno, EEXIST);
        expect_work_refused(system_state[i]);
        if (r2_made_system[i][0] != '\0') {
            assert_int_equal(rmdir(system_state[i]), 0);
            r2_made_system[i][0] = '\0';
        }
    }
    /* A folder with files in it, without --keep: refused (sworn-run would remove files it did not
     * see the agent make), nothing touched, no agent. */
    {
        char *work = work_new(), *mine = sworn_test_path(work, "user-file"), *text;
        /* By hand: sworn_sbx_argv adds --keep for a folder that is not empty. */
        const char *no_keep[] = {sworn_sbx_run_bin(),
                                 "--stack",
                                 stack.dir,
                                 "--work",
                                 work,
                                 "--",
                                 agent[0],
                                 agent[1],
                                 agent[2],
                                 NULL};
        const char *keep[] = {"--work", work, "--keep", NULL};
        struct stat st;

        sworn_test_write_file(mine, "the user's\n", 11, 0640);
        sworn_test_run(no_keep, NULL, &r);
        if (r.status != 125)
            fail_msg("--work %s (not empty) without --keep: status %d, expected 125\nstderr:\n%s",
                     work, r.status, r.err);
        printf("  --work (not empty) without --keep: 125, %.*s\n", (int)strcspn(r.err, "\n"),
               r.err);
        sworn_test_run_free(&r);
        assert_false(r2_agent_ran(work));
        text = sworn_test_read_file(mine, NULL);
        assert_string_equal(text, "the user's\n");
        free(text);
        assert_int_equal(stat(mine, &st), 0);
        assert_int_equal(st.st_uid, 0);
        assert_int_equal(st.st_mode & 07777, 0640);
        /* The same folder with --keep runs, and the user's file is still there. */
        sworn_sbx_run(&r, stack.dir, keep, agent);
        sworn_sbx_expect_status(&r, 0);
        sworn_test_run_free(&r);
        assert_true(r2_agent_ran(work));
        text = sworn_test_read_file(mine, NULL);
        assert_string_equal(text, "the user's\n");
        free(text);
        free(mine);
        free(work); /* removed by the teardown */
    }
    /* An empty folder without --keep: run, and removed at the end as before. */
    {
        char *work = tmpdir_made("attack-r2-empty");
        const char *no_keep[] = {"--work", work, NULL};

        assert_int_equal(chmod(work, 0755), 0);
        sworn_sbx_run(&r, stack.dir, no_keep, agent);
        sworn_sbx_expect_status(&r, 0);
        sworn_test_run_free(&r);
        if (sworn_sbx_exists(work))
            fail_msg("the empty --work folder %s was left after the run without --keep", work);
        free(work);
    }
}

/* ---- round 2, 3: the terminal's flow, exclusivity and window ---- */

#define R2_TTY_MS 30000 /* a sworn-run blocked on a stopped terminal is killed after this */

static void test_r2_terminal_flow(void **state)
{
    struct sworn_sbx_pty_run pr;
    char *work = work_new();
    const char *options[] = {"--work", work, "--keep", "--name", "attack-r2-tty", NULL};
    const char *agent[] = {"/bin/sh", "-c",
                           "./sworn-probe tcooff; ./sworn-probe tiocexcl; ./sworn-probe winsz 5 7; "
                           "true",
                           NULL};
    const char *argv[SWORN_SBX_ARGS_MAX];

    (void)state;
    /* The positive controls, on the host under a terminal of their own: each call works there,
     * and the fixture sees what it leaves. */
    {
        const char *tcooff[] = {probe_bin, "tcooff", NULL};
        const char *tiocexcl[] = {probe_bin, "tiocexcl", NULL};
        const char *winsz[] = {probe_bin, "winsz", "5", "7", NULL};

        sworn_sbx_run_under_pty_within(tcooff, R2_TTY_MS, &pr);
        if (pr.status != 3 || strcmp(pr.out, "OPEN tcooff\n") != 0 || pr.writes_after)
            fail_msg("positive control: tcooff on the host: status %d, %s, a write %s", pr.status,
                     pr.out, pr.writes_after ? "went through" : "was held");
        sworn_sbx_run_under_pty_within(tiocexcl, R2_TTY_MS, &pr);
        if (pr.status != 3 || strcmp(pr.out, "OPEN tiocexcl\n") != 0 || !pr.excl_after)
            fail_msg("positive control: tiocexcl on the host: status %d, %s", pr.status, pr.out);
        sworn_sbx_run_under_pty_within(winsz, R2_TTY_MS, &pr);
        if (pr.status != 3 || pr.ws_after.ws_row != 5 || pr.ws_after.ws_col != 7)
            fail_msg("positive control: winsz on the host: status %d, %s", pr.status, pr.out);
    }
    sworn_sbx_argv(argv, stack.dir, options, agent);
    sworn_sbx_run_under_pty_within(argv, R2_TTY_MS, &pr);
    printf("  status %d%s\n%s", pr.status, pr.killed ? " (killed: it did not end)" : "", pr.out);
    if (pr.killed)
        fail_msg("sworn-run did not end within %d ms after its agent stopped the terminal's "
                 "output",
                 R2_TTY_MS);
    assert_int_equal(pr.status, 0);
    if (!sworn_sbx_has_line(pr.out, "BLOCKED tcooff EPERM") ||
        !sworn_sbx_has_line(pr.out, "BLOCKED tiocexcl EPERM"))
        fail_msg("inside, TCXONC and TIOCEXCL must fail with EPERM:\n%s", pr.out);
    if (pr.ws_after.ws_row != pr.ws_before.ws_row || pr.ws_after.ws_col != pr.ws_before.ws_col)
        fail_msg("the terminal's window is %ux%u after the run, %ux%u before", pr.ws_after.ws_row,
                 pr.ws_after.ws_col, pr.ws_before.ws_row, pr.ws_before.ws_col);
    if (!pr.writes_after)
        fail_msg("after the run the terminal's output is stopped: a write to it is held");
    if (pr.excl_after)
        fail_msg("after the run the terminal is in exclusive mode");
    expect_ended("attack-r2-tty", SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_EXITED, 0);
    free(work); /* kept: removed by the teardown */
}

/* ---- round 2, 5: --keep gives back what the agent made, and only that ---- */

static void test_r2_keep_gives_back_agent_files(void **state)
{
    char *work = work_new(), *secret = sworn_test_path(work, "root-secret");
    char *made_file = sworn_test_path(work, "agent-made");
    char *made_dir = sworn_test_path(work, "agent-dir"), *made_inner, *text;
    const char *options[] = {"--work", work, "--keep", NULL};
    const char *agent[] = {"/bin/sh", "-c",
                           "echo made > /work/agent-made && mkdir /work/agent-dir && "
                           "echo inner > /work/agent-dir/f",
                           NULL};
    struct sworn_test_run r = {0};
    struct stat st;

    (void)state;
    made_inner = sworn_test_path(made_dir, "f");
    assert_int_equal(chown(work, 65534, 65534), 0);
    sworn_test_write_file(secret, "root's\n", 7, 0600);
    sworn_sbx_run(&r, stack.dir, options, agent);
    sworn_sbx_expect_status(&r, 0);
    sworn_test_run_free(&r);
    /* root's file stays root's, 0600, as it was. */
    assert_int_equal(lstat(secret, &st), 0);
    if (st.st_uid != 0 || st.st_gid != 0 || (st.st_mode & 07777) != 0600)
        fail_msg("root's 0600 file in the kept folder is now uid %u gid %u mode %o",
                 (unsigned)st.st_uid, (unsigned)st.st_gid, (unsigned)(st.st_mode & 07777));
    text = sworn_test_read_file(secret, NULL);
    assert_string_equal(text, "root's\n");
    free(text);
    /* The folder, and what the agent made in it, are the folder's owner's. */
    {
        const char *const mine[] = {work, made_file, made_dir, made_inner};

        for (size_t i = 0; i < sizeof(mine) / sizeof(mine[0]); i++) {
            assert_int_equal(lstat(mine[i], &st), 0);
            if (st.st_uid != 65534 || st.st_gid != 65534)
                fail_msg("%s: uid %u gid %u after --keep (expected the folder's owner, 65534)",
                         mine[i], (unsigned)st.st_uid, (unsigned)st.st_gid);
        }
    }
    free(made_inner);
    free(made_dir);
    free(made_file);
    free(secret);
    free(work); /* removed by the teardown */
}

/* ---- round 2, 6: agent uids and /etc/subuid ---- */

#define R2_DEFAULT_UID_FIRST 1000000000u

/* The ranges of a subordinate-id file's text ("name:first:count" lines): whether uid is in one. */
static int r2_in_subuid(const char *text, uint32_t uid)
{
    for (const char *line = text; line != NULL && *line != '\0';) {
        const char *colon = strchr(line, ':');
        unsigned long long first, count;

        if (colon != NULL && sscanf(colon + 1, "%llu:%llu", &first, &count) == 2 && uid >= first &&
            uid < first + count)
            return 1;
        line = strchr(line, '\n');
        if (line != NULL)
            line++;
    }
    return 0;
}

/* The first uid at or above want that no range of text holds, with the 16 after it free too. */
static uint32_t r2_free_uid_block(const char *text, uint32_t want)
{
    for (uint32_t u = want; u < want + 100000000u; u += 65536) {
        int clear = 1;

        for (uint32_t k = 0; k < 16 && clear; k++)
            clear = !r2_in_subuid(text, u + k);
        if (clear)
            return u;
    }
    fail_msg("no free block of 16 uids above %u in %s", want, R2_SUBUID);
    return 0;
}

static void test_r2_uids_outside_subuid(void **state)
{
    char *dir = tmpdir_made("attack-r2-subuid"), *conf = sworn_test_path(dir, "run.yaml");
    char text[2048], entry[128], *now;
    const char *options[] = {"--config", conf, "--name", "attack-r2-subuid", NULL};
    const char *agent[] = {"/bin/true", NULL};
    struct sworn_test_run r = {0};
    uint32_t first, uid = 0;
    size_t len;
    int n;

    (void)state;
    r2_subuid_text = sworn_test_read_file_opt(R2_SUBUID, &r2_subuid_len);
    r2_subuid_existed = r2_subuid_text != NULL;
    if (!r2_subuid_existed) {
        r2_subuid_text = strdup("");
        r2_subuid_len = 0;
    }
    first = r2_free_uid_block(r2_subuid_text, 300000);
    /* An entry of another program over the range's first 8 uids. */
    snprintf(entry, sizeof(entry), "sworn-r2-test:%u:8\n", first);
    {
        size_t elen = strlen(entry);
        char *both = malloc(r2_subuid_len + elen + 2);
        size_t at = r2_subuid_len;

        assert_non_null(both);
        memcpy(both, r2_subuid_text, r2_subuid_len);
        if (at > 0 && both[at - 1] != '\n')
            both[at++] = '\n';
        memcpy(both + at, entry, elen);
        r2_subuid_changed = 1;
        sworn_test_write_file(R2_SUBUID, both, at + elen, 0644);
        free(both);
    }
    n = snprintf(text, sizeof(text),
                 "principal: " PRINCIPAL "\nhostlink: %s\nadmin_socket: %s\nproxy_ca: %s\n"
                 "state_dir: %s/sandboxes\nuids: {first: %u, count: 16}\n",
                 stack.proxy_socket, stack.admin, stack.proxy_ca, stack.dir, first);
    sworn_test_write_file(conf, text, (size_t)n, 0600);
    sworn_sbx_run(&r, NULL, options, agent);
    sworn_sbx_expect_status(&r, 0);
    sworn_test_run_free(&r);
    (void)sworn_sbx_started(&stack, "attack-r2-subuid", NULL, &uid);
    now = sworn_test_read_file(R2_SUBUID, &len);
    printf("  uids %u..%u, %s holds %u..%u: the agent got %u\n", first, first + 15, R2_SUBUID,
           first, first + 7, uid);
    if (uid < first || uid >= first + 16)
        fail_msg("agent uid %u outside the configured range %u..%u", uid, first, first + 15);
    if (r2_in_subuid(now, uid))
        fail_msg("agent uid %u is in a range of %s:\n%s", uid, R2_SUBUID, now);
    free(now);
    r2_subuid_restore();
    /* Without a uids key: the range starts at 1000000000. */
    {
        const char *def[] = {"--name", "attack-r2-defuid", NULL};

        sworn_sbx_run(&r, stack.dir, def, agent);
        sworn_sbx_expect_status(&r, 0);
        sworn_test_run_free(&r);
        (void)sworn_sbx_started(&stack, "attack-r2-defuid", NULL, &uid);
        printf("  without uids: the agent got %u\n", uid);
        if (uid < R2_DEFAULT_UID_FIRST)
            fail_msg("agent uid %u without a uids key: expected at least %u", uid,
                     R2_DEFAULT_UID_FIRST);
    }
    free(conf);
    free(dir);
}

/* ---- round 2, 8: socket families ---- */

static void test_r2_socket_families(void **state)
{
    /* Named by the red team, each with a type its family takes: ALG, TIPC, RDS, KCM, SMC, XDP,
     * CAN (raw), Bluetooth (HCI), AppleTalk, X.25, AX.25, IPX, NFC, Phonet, IEEE 802.15.4, CAIF,
     * Qualcomm IPC router, MCTP, and packet and vsock (refused before). */
    static const struct {
        int family, type, proto;
    } named[] = {{38, 5, 0}, {30, 4, 0}, {21, 5, 0}, {41, 2, 0}, {43, 1, 0}, {44, 3, 0}, {29, 3, 1},
                 {31, 3, 1}, {5, 2, 0},  {9, 5, 0},  {3, 2, 0},  {4, 2, 0},  {39, 5, 0}, {35, 2, 0},
                 {36, 2, 0}, {37, 5, 0}, {42, 2, 0}, {45, 2, 0}, {17, 3, 0}, {40, 1, 0}};
    /* Kept: what an agent's tools use. */
    static const struct {
        int family, type, proto;
    } kept[] = {{1, 1, 0}, {1, 2, 0},  {1, 5, 0},  {2, 1, 0},
                {2, 2, 0}, {10, 1, 0}, {10, 2, 0}, {16, 3, 0}};
    /* socketpair: only AF_UNIX's. */
    static const int pair_refused[] = {2, 10, 16, 30, 38};
    static char script[16384];
    char *work = work_new(), line[128];
    const char *options[] = {"--work", work, NULL};
    const char *agent[] = {"/bin/sh", "-c", script, NULL};
    struct sworn_test_run r = {0};
    size_t at = 0;

    (void)state;
    script[0] = '\0';
#define R2_ADD(...) at += (size_t)snprintf(script + at, sizeof(script) - at, __VA_ARGS__)
    for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
        R2_ADD("./sworn-probe family %d %d %d; ", named[i].family, named[i].type, named[i].proto);
    /* Every other family number, 0..63 and 255, as a datagram socket. */
    for (int f = 0; f < 64; f++)
        if (f != 1 && f != 2 && f != 10 && f != 16)
            R2_ADD("./sworn-probe family %d 2 0; ", f);
    R2_ADD("./sworn-probe family 255 2 0; ");
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
        R2_ADD("./sworn-probe family %d %d %d; ", kept[i].family, kept[i].type, kept[i].proto);
    R2_ADD("./sworn-probe socketpair 1 1 0; ./sworn-probe socketpair 1 2 0; ");
    for (size_t i = 0; i < sizeof(pair_refused) / sizeof(pair_refused[0]); i++)
        R2_ADD("./sworn-probe socketpair %d 5 0; ./sworn-probe socketpair %d 1 0; ",
               pair_refused[i], pair_refused[i]);
    R2_ADD("true");
#undef R2_ADD
    assert_true(at < sizeof(script));
    /* On the host (for the record: which of these this kernel has). */
    {
        char opened[512] = "";

        for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
            char f[8], t[8], p[8];
            const char *argv[] = {probe_bin, "family", f, t, p, NULL};

            snprintf(f, sizeof(f), "%d", named[i].family);
            snprintf(t, sizeof(t), "%d", named[i].type);
            snprintf(p, sizeof(p), "%d", named[i].proto);
            sworn_test_run(argv, NULL, &r);
            if (r.status == 3)
                snprintf(opened + strlen(opened), sizeof(opened) - strlen(opened), " %d",
                         named[i].family);
            sworn_test_run_free(&r);
        }
        printf("  families that open on this host:%s\n", opened[0] != '\0' ? opened : " none");
    }
    sworn_sbx_run(&r, stack.dir, options, agent);
    sworn_sbx_expect_status(&r, 0);
    sworn_sbx_expect_work_returned(work);
    for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
        snprintf(line, sizeof(line), "BLOCKED family:%d:%d:%d EPERM", named[i].family,
                 named[i].type, named[i].proto);
        sworn_sbx_expect_line(&r, line);
    }
    for (int f = 0; f < 64; f++)
        if (f != 1 && f != 2 && f != 10 && f != 16) {
            snprintf(line, sizeof(line), "BLOCKED family:%d:2:0 EPERM", f);
            sworn_sbx_expect_line(&r, line);
        }
    sworn_sbx_expect_line(&r, "BLOCKED family:255:2:0 EPERM");
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
        snprintf(line, sizeof(line), "OPEN family:%d:%d:%d socket", kept[i].family, kept[i].type,
                 kept[i].proto);
        sworn_sbx_expect_line(&r, line);
    }
    sworn_sbx_expect_line(&r, "OPEN socketpair:1:1:0 pair");
    sworn_sbx_expect_line(&r, "OPEN socketpair:1:2:0 pair");
    for (size_t i = 0; i < sizeof(pair_refused) / sizeof(pair_refused[0]); i++)
        for (int t = 1; t <= 5; t += 4) {
            snprintf(line, sizeof(line), "OPEN socketpair:%d:%d:0 pair", pair_refused[i], t);
            if (sworn_sbx_has_line(r.out, line))
                fail_msg("inside: %s", line);
            snprintf(line, sizeof(line), "BLOCKED socketpair:%d:%d:0 ", pair_refused[i], t);
            assert_non_null(strstr(r.out, line));
        }
    sworn_test_run_free(&r);
}

/* ---- round 2, 4: a start answered late ---- */

/* The stack's engine: the sworn-decisiond child of its monitor whose command line holds
 * "--engine" (read from /proc). Fails the test when there is none. */
static pid_t r2_engine_pid(void)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    pid_t found = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL && found == 0) {
        char path[300], text[4096], stat_text[1024];
        long ppid = 0;
        size_t len;
        int fd, engine = 0;
        const char *paren;

        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
        if (sworn_test_read_proc(path, stat_text, sizeof(stat_text)) != 0 ||
            (paren = strrchr(stat_text, ')')) == NULL || sscanf(paren + 2, "%*c %ld", &ppid) != 1 ||
            ppid != (long)stack.decisiond_pid)
            continue;
        snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        {
            ssize_t n = read(fd, text, sizeof(text) - 1);

            len = n > 0 ? (size_t)n : 0;
        }
        close(fd);
        text[len] = '\0';
        if (strstr(text, "sworn-decisiond") == NULL)
            continue;
        for (size_t at = 0; at < len; at += strlen(text + at) + 1)
            if (strcmp(text + at, "--engine") == 0)
                engine = 1;
        if (engine)
            found = (pid_t)atol(e->d_name);
    }
    closedir(d);
    if (found == 0)
        fail_msg("no sworn-decisiond --engine child of the stack's decisiond (pid %ld)",
                 (long)stack.decisiond_pid);
    return found;
}

/* sworn_test_wait_dir's question: the late start is in the log with its end. */
static int r2_late_start_settled(void *arg)
{
    uint64_t start;
    Sworn__V1__AdminResponse *r;
    int settled = 0;

    if (!r2_started_opt((const char *)arg, &start))
        return 0;
    r = sworn_stack_tail(&stack, SWORN_SBX_TAIL);
    for (size_t i = 0; i < r->tail->n_entries; i++)
        if (r->tail->entries[i]->kind_case == SWORN__V1__ENTRY__KIND_SANDBOX_ENDED &&
            r->tail->entries[i]->sandbox_ended->start_index == start)
            settled = 1;
    sworn__v1__admin_response__free_unpacked(r, NULL);
    return settled;
}

#define R2_LATE_WAIT_MS 60000 /* after the engine goes on: its queued work, the end's append */

static void test_r2_start_answered_late(void **state)
{
    static struct sworn_sbx_live l;
    char *work = work_new(), log_dir[600];
    const char *options[] = {"--timeout", "2",      "--work",         work,
                             "--keep",    "--name", "attack-r2-late", NULL};
    const char *agent[] = {"/bin/sh", "-c", "touch /work/agent-ran; echo ran", NULL};
    const char *argv[SWORN_SBX_ARGS_MAX];
    uint64_t start, from = log_size();
    pid_t engine;
    int status, settled;

    (void)state;
    engine = r2_engine_pid();
    printf("  the stack's engine: pid %ld, stopped\n", (long)engine);
    assert_int_equal(kill(engine, SIGSTOP), 0);
    r2_stopped_engine = engine;
    sworn_sbx_argv(argv, stack.dir, options, agent);
    sworn_sbx_live_start(&l, argv);
    status = sworn_sbx_live_end(&l); /* fails the test after SWORN_SBX_RUN_MS */
    printf("  sworn-run --timeout 2 with the engine stopped: status %d\n", status);
    assert_int_equal(kill(engine, SIGCONT), 0);
    r2_stopped_engine = 0;
    assert_int_equal(status, 125);
    assert_false(r2_agent_ran(work));
    /* The engine goes on with what it was sent: any start it records gets its end. */
    snprintf(log_dir, sizeof(log_dir), "%s", stack.log_db);
    settled = sworn_test_wait_dir(dirname(log_dir), r2_late_start_settled, "attack-r2-late",
                                  R2_LATE_WAIT_MS) == 0;
    if (r2_started_opt("attack-r2-late", &start)) {
        Sworn__V1__SandboxEndReason reason;
        uint32_t code;

        if (!settled)
            fail_msg("the late start (%llu) has no SandboxEnded %d ms after the engine went on",
                     (unsigned long long)start, R2_LATE_WAIT_MS);
        ended(start, &reason, &code);
        printf("  the late start %llu ended with reason %d\n", (unsigned long long)start,
               (int)reason);
        assert_int_equal(reason, SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_FAILED);
    } else {
        printf("  no start recorded\n");
    }
    assert_int_equal(r2_starts_without_end(from), 0);
    free(work); /* kept: removed by the teardown */
}

int main(void)
{
#define ATTACK(t) cmocka_unit_test_teardown(t, each_teardown)
    const struct CMUnitTest tests[] = {
        ATTACK(test_setid_from_work),
        ATTACK(test_relay_connection_bound),
        ATTACK(test_two_state_folders_two_uids),
        ATTACK(test_scratch_bounded),
        ATTACK(test_deep_tree_cleanup),
        ATTACK(test_no_controlling_terminal),
        ATTACK(test_dangerous_work_refused),
        ATTACK(test_memory_pressure_not_failure),
        ATTACK(test_seccomp_gaps),
        ATTACK(test_hello_uid_mismatch),
        ATTACK(test_r2_work_race),
        ATTACK(test_r2_work_refused_by_identity),
        ATTACK(test_r2_terminal_flow),
        ATTACK(test_r2_keep_gives_back_agent_files),
        ATTACK(test_r2_uids_outside_subuid),
        ATTACK(test_r2_socket_families),
        ATTACK(test_r2_start_answered_late),
    };
#undef ATTACK

    if (!sworn_sbx_can_run("test_sandbox_attacks", "sworn-run's root mode needs root"))
        return 77;
    probe_bin = sworn_sbx_probe_bin();
    if (getenv("SWORN_TEST_FILTER") != NULL) /* one test while working on it */
        cmocka_set_test_filter(getenv("SWORN_TEST_FILTER"));
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

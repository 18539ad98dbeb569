/* r_limits.c -- cgroups or rlimits for a sandbox (r_limits.h). */
#define _GNU_SOURCE
#include "r_limits.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "err.h"

#define V1_MEMORY "/sys/fs/cgroup/memory"
#define V1_PIDS "/sys/fs/cgroup/pids"

static int write_text(const char *dir, const char *file, const char *text)
{
    char path[SWORN_RUN_PATH_MAX + 64];
    size_t n = strlen(text);
    ssize_t w;
    int fd;

    snprintf(path, sizeof(path), "%s/%s", dir, file);
    fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    w = write(fd, text, n);
    if (close(fd) < 0 || w != (ssize_t)n)
        return -1;
    return 0;
}

static int has_word(const char *path, const char *word)
{
    char buf[1024];
    ssize_t n;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    for (char *save = NULL, *t = strtok_r(buf, " \n", &save); t != NULL;
         t = strtok_r(NULL, " \n", &save))
        if (strcmp(t, word) == 0)
            return 1;
    return 0;
}

/* The cgroup2 mount point with memory and pids available at its root, or "" (from mountinfo). */
static void cgroup2_mount(char *out, size_t cap)
{
    FILE *f = fopen("/proc/self/mounts", "re");
    char dev[256], dir[SWORN_RUN_PATH_MAX], type[64];

    out[0] = '\0';
    if (f == NULL)
        return;
    while (fscanf(f, "%255s %255s %63s %*[^\n]", dev, dir, type) == 3) {
        char ctl[SWORN_RUN_PATH_MAX + 32];
        if (strcmp(type, "cgroup2") != 0)
            continue;
        snprintf(ctl, sizeof(ctl), "%s/cgroup.controllers", dir);
        if (has_word(ctl, "memory") && has_word(ctl, "pids") && strlen(dir) < cap) {
            memcpy(out, dir, strlen(dir) + 1);
            break;
        }
    }
    fclose(f);
}

/* out = a "/" b, or -1 when it does not fit. */
static int join(char *out, size_t cap, const char *a, const char *b)
{
    int n = snprintf(out, cap, "%s/%s", a, b);

    if (n < 0 || (size_t)n >= cap)
        return sworn_err_set(SWORN_ERR_RANGE, "cgroup path too long: %s/%s", a, b);
    return 0;
}

static int make_dir(const char *path)
{
    if (mkdir(path, 0755) < 0 && errno != EEXIST)
        return sworn_err_set(SWORN_ERR_IO, "cgroup %s: %s", path, strerror(errno));
    return 0;
}

static int set_u64(const char *dir, const char *file, uint64_t v, int optional)
{
    char text[32];

    snprintf(text, sizeof(text), "%llu", (unsigned long long)v);
    if (write_text(dir, file, text) < 0 && !(optional && errno == ENOENT))
        return sworn_err_set(SWORN_ERR_IO, "cgroup %s/%s: %s", dir, file, strerror(errno));
    return 0;
}

static int prepare_v2(struct sworn_run_limits *l, const char *mnt, const char *id)
{
    char parent[SWORN_RUN_PATH_MAX];

    SWORN_GUARD(join(parent, sizeof(parent), mnt, "sworn-run"));
    if (write_text(mnt, "cgroup.subtree_control", "+memory +pids") < 0)
        return sworn_err_set(SWORN_ERR_IO, "cgroup %s: enabling memory and pids: %s", mnt,
                             strerror(errno));
    SWORN_GUARD(make_dir(parent));
    if (write_text(parent, "cgroup.subtree_control", "+memory +pids") < 0)
        return sworn_err_set(SWORN_ERR_IO, "cgroup %s: enabling memory and pids: %s", parent,
                             strerror(errno));
    SWORN_GUARD(join(l->dir[0], sizeof(l->dir[0]), parent, id));
    SWORN_GUARD(make_dir(l->dir[0]));
    l->kind = SWORN_RUN_CGROUP2;
    if (l->memory_bytes > 0) {
        SWORN_GUARD(set_u64(l->dir[0], "memory.max", l->memory_bytes, 0));
        SWORN_GUARD(set_u64(l->dir[0], "memory.swap.max", 0, 1));
    }
    if (l->processes > 0)
        SWORN_GUARD(set_u64(l->dir[0], "pids.max", l->processes, 0));
    return 0;
fail:
    return -1;
}

static int prepare_v1(struct sworn_run_limits *l, const char *id)
{
    char parent[SWORN_RUN_PATH_MAX];

    SWORN_GUARD(join(parent, sizeof(parent), V1_MEMORY, "sworn-run"));
    SWORN_GUARD(make_dir(parent));
    SWORN_GUARD(join(l->dir[0], sizeof(l->dir[0]), parent, id));
    SWORN_GUARD(make_dir(l->dir[0]));
    SWORN_GUARD(join(parent, sizeof(parent), V1_PIDS, "sworn-run"));
    SWORN_GUARD(make_dir(parent));
    SWORN_GUARD(join(l->dir[1], sizeof(l->dir[1]), parent, id));
    SWORN_GUARD(make_dir(l->dir[1]));
    l->kind = SWORN_RUN_CGROUP1;
    if (l->memory_bytes > 0) {
        SWORN_GUARD(set_u64(l->dir[0], "memory.limit_in_bytes", l->memory_bytes, 0));
        SWORN_GUARD(set_u64(l->dir[0], "memory.memsw.limit_in_bytes", l->memory_bytes, 1));
    }
    if (l->processes > 0)
        SWORN_GUARD(set_u64(l->dir[1], "pids.max", l->processes, 0));
    return 0;
fail:
    return -1;
}

int sworn_run_limits_prepare(struct sworn_run_limits *l, const struct sworn_run_conf *c,
                             const char *id)
{
    char mnt[SWORN_RUN_PATH_MAX];
    struct stat st;

    memset(l, 0, sizeof(*l));
    l->memory_bytes = c->memory_bytes;
    l->processes = c->processes;
    l->kind = SWORN_RUN_RLIMIT;
    if (geteuid() != 0)
        return 0;
    cgroup2_mount(mnt, sizeof(mnt));
    if (mnt[0] != '\0')
        return prepare_v2(l, mnt, id) < 0 ? (sworn_run_limits_release(l), -1) : 0;
    if (stat(V1_MEMORY "/cgroup.procs", &st) == 0 && stat(V1_PIDS "/cgroup.procs", &st) == 0)
        return prepare_v1(l, id) < 0 ? (sworn_run_limits_release(l), -1) : 0;
    return 0;
}

int sworn_run_limits_join(const struct sworn_run_limits *l, pid_t pid)
{
    char text[32];

    snprintf(text, sizeof(text), "%ld", (long)pid);
    for (int i = 0; i < 2; i++)
        if (l->kind != SWORN_RUN_RLIMIT && l->dir[i][0] != '\0' &&
            write_text(l->dir[i], "cgroup.procs", text) < 0)
            return sworn_err_set(SWORN_ERR_IO, "cgroup %s: joining: %s", l->dir[i],
                                 strerror(errno));
    return 0;
}

int sworn_run_limits_apply_rlimits(const struct sworn_run_limits *l)
{
    struct rlimit r;

    if (l->kind != SWORN_RUN_RLIMIT)
        return 0;
    if (l->memory_bytes > 0) {
        r.rlim_cur = r.rlim_max = (rlim_t)l->memory_bytes;
        if (setrlimit(RLIMIT_AS, &r) < 0)
            return sworn_err_set(SWORN_ERR_IO, "RLIMIT_AS: %s", strerror(errno));
    }
    if (l->processes > 0) {
        r.rlim_cur = r.rlim_max = (rlim_t)l->processes;
        if (setrlimit(RLIMIT_NPROC, &r) < 0)
            return sworn_err_set(SWORN_ERR_IO, "RLIMIT_NPROC: %s", strerror(errno));
    }
    return 0;
}

/* SIGKILL every process listed in dir/cgroup.procs; 1 when one was listed. */
static int kill_listed(const char *dir)
{
    char path[SWORN_RUN_PATH_MAX + 32], line[32];
    FILE *f;
    int any = 0;

    snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
    f = fopen(path, "re");
    if (f == NULL)
        return 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        long pid = strtol(line, NULL, 10);
        if (pid > 1) {
            (void)kill((pid_t)pid, SIGKILL);
            any = 1;
        }
    }
    fclose(f);
    return any;
}

int sworn_run_limits_release(struct sworn_run_limits *l)
{
    int rc = 0;

    for (int i = 0; i < 2; i++) {
        if (l->dir[i][0] == '\0')
            continue;
        if (l->kind == SWORN_RUN_CGROUP2)
            (void)write_text(l->dir[i], "cgroup.kill", "1");
        /* A killed process leaves its cgroup when it is reaped: try until rmdir works, bounded. */
        for (int tries = 0;; tries++) {
            struct timespec ts = {0, 1000000};
            if (rmdir(l->dir[i]) == 0 || errno == ENOENT)
                break;
            if (errno != EBUSY || tries == 1000) {
                rc = sworn_err_set(SWORN_ERR_IO, "cgroup %s: %s", l->dir[i], strerror(errno));
                break;
            }
            (void)kill_listed(l->dir[i]);
            nanosleep(&ts, NULL); /* a killed task stays counted until it is reaped */
        }
        l->dir[i][0] = '\0';
    }
    return rc;
}

const char *sworn_run_limits_name(const struct sworn_run_limits *l)
{
    switch (l->kind) {
    case SWORN_RUN_CGROUP2:
        return "cgroup2";
    case SWORN_RUN_CGROUP1:
        return "cgroup1";
    case SWORN_RUN_RLIMIT:
    default:
        return "rlimit";
    }
}

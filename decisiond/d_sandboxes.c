/*
 * d_sandboxes.c -- the running set of sworn-run sandboxes (d_sandboxes.h).
 *
 * The set is an array of pointers sorted by start index (binary search): starts are appended in
 * log order, so an insert is nearly always at the end. Room for every prepared start is kept in
 * the array beforehand, so an insert after the append never fails.
 */
#include "d_sandboxes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "d_jlog.h"
#include "err.h"
#include "logstore.h"

struct d_sandbox {
    uint64_t index; /* of its SandboxStarted entry; 0 until inserted */
    uint8_t id[SWORN_FRAME_SANDBOX_ID_LEN];
    char principal[SWORN_FRAME_NAME_MAX + 1];
    char name[SWORN_FRAME_NAME_MAX + 1];
    char operator_[SWORN_FRAME_OPERATOR_MAX + 1];
    uint32_t agent_uid; /* the uid its agent has outside, as its start recorded */
    unsigned pins;      /* admitted requests whose entries are not appended yet */
    int ending;         /* an end is begun: requests are denied, the end waits for pins */
    d_sandbox_ready_fn ready;
    void *ready_arg;
};

struct d_sandboxes {
    struct d_sandbox **v; /* sorted by index */
    size_t n, cap;
    size_t reserved; /* prepared, not yet inserted or discarded */
};

int d_sandboxes_new(struct d_sandboxes **out)
{
    *out = calloc(1, sizeof(**out));
    if (*out == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "sandboxes: out of memory");
    return 0;
}

void d_sandboxes_free(struct d_sandboxes *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    free(s);
}

size_t d_sandboxes_running(const struct d_sandboxes *s)
{
    return s->n;
}

/* Make room for want pointers. 0 or -1. */
static int grow(struct d_sandboxes *s, size_t want)
{
    size_t cap = s->cap < 16 ? 16 : s->cap;
    struct d_sandbox **v;

    if (want <= s->cap)
        return 0;
    while (cap < want)
        cap *= 2;
    v = realloc(s->v, cap * sizeof(*v));
    if (v == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "sandboxes: out of memory");
    s->v = v;
    s->cap = cap;
    return 0;
}

/* The position of index in s->v, or where it would go (*found 0). */
static size_t find(const struct d_sandboxes *s, uint64_t index, int *found)
{
    size_t lo = 0, hi = s->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (s->v[mid]->index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < s->n && s->v[lo]->index == index;
    return lo;
}

static struct d_sandbox *lookup(const struct d_sandboxes *s, uint64_t index)
{
    int found;
    size_t at = find(s, index, &found);

    return found ? s->v[at] : NULL;
}

static struct d_sandbox *record_new(const Sworn__V1__SandboxStarted *st, const char *operator_)
{
    struct d_sandbox *sb = calloc(1, sizeof(*sb));

    if (sb == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "sandboxes: out of memory");
        return NULL;
    }
    /* The frame checks bounded all three (sworn_frame_name_ok, the operator's length). */
    memcpy(sb->id, st->sandbox_id.data, sizeof(sb->id));
    snprintf(sb->principal, sizeof(sb->principal), "%s", st->principal);
    snprintf(sb->name, sizeof(sb->name), "%s", st->name);
    snprintf(sb->operator_, sizeof(sb->operator_), "%s", operator_);
    sb->agent_uid = st->agent_uid;
    return sb;
}

/* Put sb at index into the set (room kept). */
static void place(struct d_sandboxes *s, struct d_sandbox *sb, uint64_t index)
{
    int found;
    size_t at = find(s, index, &found);

    sb->index = index;
    memmove(&s->v[at + 1], &s->v[at], (s->n - at) * sizeof(*s->v));
    s->v[at] = sb;
    s->n++;
}

static void take_out(struct d_sandboxes *s, uint64_t index)
{
    int found;
    size_t at = find(s, index, &found);

    if (!found)
        return;
    free(s->v[at]);
    memmove(&s->v[at], &s->v[at + 1], (s->n - at - 1) * sizeof(*s->v));
    s->n--;
}

int d_sandboxes_prepare(struct d_sandboxes *s, const Sworn__V1__SandboxStarted *st,
                        const char *operator_, struct d_sandbox **sb)
{
    *sb = NULL;
    if (s->n + s->reserved >= D_SANDBOXES_MAX)
        return sworn_err_set(SWORN_ERR_RANGE,
                             "sandbox_start refused: %zu sandboxes run or are being started, the "
                             "most decisiond admits is %u",
                             s->n + s->reserved, D_SANDBOXES_MAX);
    if (grow(s, s->n + s->reserved + 1) < 0 || (*sb = record_new(st, operator_)) == NULL)
        return -1;
    s->reserved++;
    return 0;
}

void d_sandboxes_insert(struct d_sandboxes *s, struct d_sandbox *sb, uint64_t index)
{
    s->reserved--;
    place(s, sb, index);
}

void d_sandboxes_discard(struct d_sandboxes *s, struct d_sandbox *sb)
{
    s->reserved--;
    free(sb);
}

int d_sandboxes_admit(struct d_sandboxes *s, const Sworn__V1__Principal *p, uint64_t *pin,
                      char *why, size_t cap)
{
    uint64_t index = p->sandbox_start_index;
    struct d_sandbox *sb;

    *pin = 0;
    if (index == 0)
        return 0;
    sb = s != NULL ? lookup(s, index) : NULL; /* no set (a harness without one): none runs */
    if (sb == NULL) {
        snprintf(why, cap,
                 "denied: sandbox_start_index %llu names no running sandbox (no sandbox was "
                 "started there, or it has ended)",
                 (unsigned long long)index);
        return -1;
    }
    if (sb->ending) {
        snprintf(why, cap, "denied: the sandbox started at log index %llu is ending",
                 (unsigned long long)index);
        return -1;
    }
    /* Names of the sandbox only: they are ASCII of at most 128 bytes (the request's own may be
     * any UTF-8 up to 8192 bytes, which a cut could break). */
    if (p->id == NULL || strcmp(p->id, sb->principal) != 0) {
        snprintf(why, cap,
                 "denied: the sandbox started at log index %llu runs as principal %s, not the "
                 "request's",
                 (unsigned long long)index, sb->principal);
        return -1;
    }
    if (p->sandbox == NULL || strcmp(p->sandbox, sb->name) != 0) {
        snprintf(why, cap,
                 "denied: the sandbox started at log index %llu is named %s, not the request's "
                 "sandbox",
                 (unsigned long long)index, sb->name);
        return -1;
    }
    /* The hello's uid is the relay's word for whose processes these are: it must be the one the
     * start recorded (in unprivileged mode another process of the caller's uid could otherwise
     * speak for the sandbox under a uid of its choosing). */
    if (p->uid != sb->agent_uid) {
        snprintf(why, cap,
                 "denied: the sandbox started at log index %llu runs as uid %u, not the "
                 "request's uid %u",
                 (unsigned long long)index, (unsigned)sb->agent_uid, (unsigned)p->uid);
        return -1;
    }
    sb->pins++;
    *pin = index;
    return 0;
}

void d_sandboxes_unpin(struct d_sandboxes *s, uint64_t index)
{
    struct d_sandbox *sb;

    if (index == 0 || (sb = lookup(s, index)) == NULL || sb->pins == 0)
        return;
    sb->pins--;
    if (sb->pins == 0 && sb->ending && sb->ready != NULL) {
        d_sandbox_ready_fn ready = sb->ready;

        sb->ready = NULL;
        ready(sb->ready_arg);
    }
}

int d_sandboxes_begin_end(struct d_sandboxes *s, const Sworn__V1__SandboxEnded *en,
                          const char *operator_, d_sandbox_ready_fn ready, void *arg)
{
    struct d_sandbox *sb = lookup(s, en->start_index);

    if (sb == NULL)
        return sworn_err_set(SWORN_ERR_NOTFOUND, "no sandbox runs at log index %llu",
                             (unsigned long long)en->start_index);
    if (sb->ending)
        return sworn_err_set(SWORN_ERR_RANGE,
                             "sandbox_end refused: the end of the sandbox started at log index "
                             "%llu is being recorded already",
                             (unsigned long long)en->start_index);
    if (en->sandbox_id.len != sizeof(sb->id) ||
        memcmp(en->sandbox_id.data, sb->id, sizeof(sb->id)) != 0)
        return sworn_err_set(SWORN_ERR_VERIFY,
                             "sandbox_end refused: the sandbox started at log index %llu has "
                             "another sandbox_id",
                             (unsigned long long)en->start_index);
    if (strcmp(operator_, sb->operator_) != 0)
        return sworn_err_set(SWORN_ERR_VERIFY,
                             "sandbox_end refused: the sandbox started at log index %llu was "
                             "started by another operator",
                             (unsigned long long)en->start_index);
    sb->ending = 1;
    if (sb->pins > 0) {
        sb->ready = ready;
        sb->ready_arg = arg;
    } else {
        ready(arg);
    }
    return 0;
}

void d_sandboxes_finish_end(struct d_sandboxes *s, uint64_t index, int recorded)
{
    struct d_sandbox *sb = lookup(s, index);

    if (sb == NULL)
        return;
    if (recorded) {
        take_out(s, index);
    } else {
        sb->ending = 0;
        sb->ready = NULL;
    }
}

/* The first byte of an Entry of kind SandboxStarted (field 10) and SandboxEnded (field 11), each
 * a length-delimited field: (number << 3) | 2. An Entry holds only its oneof, so its bytes begin
 * with its kind's tag. */
#define TAG_SANDBOX_STARTED ((10u << 3) | 2u)
#define TAG_SANDBOX_ENDED ((11u << 3) | 2u)

/* One entry of the rebuild: a start joins the set, an end leaves it. 0 or -1. */
static int rebuild_one(struct d_sandboxes *s, const Sworn__V1__Entry *e, uint64_t i)
{
    if (e->kind_case == SWORN__V1__ENTRY__KIND_SANDBOX_STARTED) {
        struct d_sandbox *sb = record_new(e->sandbox_started, e->sandbox_started->operator_);

        if (sb == NULL || grow(s, s->n + 1) < 0) {
            free(sb);
            return -1;
        }
        place(s, sb, i);
        return 0;
    }
    if (e->kind_case == SWORN__V1__ENTRY__KIND_SANDBOX_ENDED) {
        const Sworn__V1__SandboxEnded *en = e->sandbox_ended;
        struct d_sandbox *sb = lookup(s, en->start_index);

        if (sb == NULL || memcmp(sb->id, en->sandbox_id.data, sizeof(sb->id)) != 0) {
            char msg[160];

            snprintf(msg, sizeof(msg),
                     "entry %llu ends no running sandbox of its id (start index %llu): skipped",
                     (unsigned long long)i, (unsigned long long)en->start_index);
            d_log_msg(D_LOG_WARN, "sandboxes_rebuild", msg);
            return 0;
        }
        take_out(s, en->start_index);
    }
    return 0;
}

int d_sandboxes_rebuild(struct d_sandboxes *s, struct sworn_log *log)
{
    uint64_t size = sworn_log_size(log), decoded = 0;
    uint8_t *buf = malloc(SWORN_FRAME_ENTRY_MAX);
    json_object *f;

    if (buf == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "sandboxes: out of memory");
    for (uint64_t i = 0; i < size; i++) {
        size_t len;
        Sworn__V1__Entry *e;
        int rc;

        if (sworn_log_read_entry(log, i, buf, SWORN_FRAME_ENTRY_MAX, &len) < 0)
            goto fail;
        if (len == 0 || (buf[0] != TAG_SANDBOX_STARTED && buf[0] != TAG_SANDBOX_ENDED))
            continue;
        e = sworn_frame_unpack_entry(buf, len);
        if (e == NULL)
            goto fail;
        decoded++;
        rc = rebuild_one(s, e, i);
        sworn__v1__entry__free_unpacked(e, NULL);
        if (rc < 0)
            goto fail;
    }
    free(buf);
    f = json_object_new_object();
    if (f != NULL) {
        json_object_object_add(f, "entries_read", json_object_new_int64((int64_t)size));
        json_object_object_add(f, "sandbox_entries", json_object_new_int64((int64_t)decoded));
        json_object_object_add(f, "running", json_object_new_int64((int64_t)s->n));
    }
    d_log(D_LOG_INFO, "sandboxes_rebuilt", f);
    return 0;
fail:
    free(buf);
    return sworn_err_set(sworn_err_code(), "sandboxes rebuild: %s", sworn_err_msg());
}

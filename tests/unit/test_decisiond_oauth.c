/*
 * test_decisiond_oauth.c -- OAuth token interception against a real dev stack (scripts/dev-stack:
 * the daemon, its vault, its log), as a proxy would drive it; the review's finding 9 (issue 11).
 *
 * What is asserted: an allow that released a credential backs exactly one TokenExchange (the
 * review's reproduction: one allow, nine exchanges, the 2nd..9th refused and recorded as Refused,
 * the vault file unchanged by them); two exchanges of one allow racing on two connections: one
 * wins; an allow not exchanged within 10 minutes (the test clock) or answered before a restart is
 * not exchangeable; an exchange naming another credential, a deny, an allow without a
 * credential, an escalation approved or still held, is refused; the per-credential cap replaces
 * the oldest minted tokens (named in the CredentialsMinted entry, with the allow's log index),
 * and a replaced symbolic token releases nothing, also along a refresh chain (a minted
 * credential exchanged again); the auditor's verifier accepts the record.
 */
#define _GNU_SOURCE /* memmem */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "frame.h"
#include "logstore.h"
#include "stack_fixture.h"
#include "testutil.h"
#include "vault.h"
#include "verify_fixture.h"

#define TOKEN_ENDPOINT "/with-credential/oauth/token"

/* The tokens of one exchange: n values of len bytes ('a' + k), fields "f<k>". */
struct tokens {
    Sworn__V1__TokenValue tv[SWORN_FRAME_EXCHANGE_MAX], *tvp[SWORN_FRAME_EXCHANGE_MAX];
    char field[SWORN_FRAME_EXCHANGE_MAX][24];
    uint8_t *value[SWORN_FRAME_EXCHANGE_MAX];
    size_t n;
};

static void tokens_init(struct tokens *t, size_t n, size_t len, char tag)
{
    memset(t, 0, sizeof(*t));
    t->n = n;
    for (size_t k = 0; k < n; k++) {
        sworn__v1__token_value__init(&t->tv[k]);
        snprintf(t->field[k], sizeof(t->field[k]), "f%zu", k);
        t->value[k] = malloc(len);
        assert_non_null(t->value[k]);
        memset(t->value[k], tag, len);
        t->value[k][0] = (uint8_t)('a' + k);
        t->tv[k].field = t->field[k];
        t->tv[k].value.data = t->value[k];
        t->tv[k].value.len = len;
        t->tvp[k] = &t->tv[k];
    }
}

static void tokens_free(struct tokens *t)
{
    for (size_t k = 0; k < t->n; k++)
        free(t->value[k]);
}

/* The frame of one TokenExchange (free it). */
static uint8_t *exchange_frame(const char *id, const char *allow_id, const char *cred_id,
                               struct tokens *t, size_t *frame_len)
{
    Sworn__V1__TokenExchange ex = SWORN__V1__TOKEN_EXCHANGE__INIT;
    uint8_t *frame;

    ex.request_id = (char *)id;
    ex.allow_request_id = (char *)allow_id;
    ex.credential_id = (char *)cred_id;
    ex.tokens = t->tvp;
    ex.n_tokens = t->n;
    assert_int_equal(sworn_frame_pack_token_exchange(&ex, &frame, frame_len), 0);
    return frame;
}

/* Send one frame on a new connection to the decision socket; returns the reply (free it). */
static Sworn__V1__DecisionReply *send_frame(struct sworn_stack *s, const uint8_t *frame,
                                            size_t frame_len)
{
    uint8_t *body;
    size_t len;
    Sworn__V1__DecisionReply *r;
    int fd = sworn_stack_connect(s->decision);

    assert_true(fd >= 0);
    assert_int_equal(sworn_stack_exchange(fd, frame, frame_len, 60000, &body, &len), 0);
    r = sworn_frame_unpack_reply(body, len);
    assert_non_null(r);
    free(body);
    close(fd);
    return r;
}

/* One exchange of t; returns the reply (free it). */
static Sworn__V1__DecisionReply *exchange(struct sworn_stack *s, const char *id,
                                          const char *allow_id, const char *cred_id,
                                          struct tokens *t)
{
    size_t frame_len;
    uint8_t *frame = exchange_frame(id, allow_id, cred_id, t, &frame_len);
    Sworn__V1__DecisionReply *r = send_frame(s, frame, frame_len);

    free(frame);
    return r;
}

/* An exchange that must be refused: an ErrorFrame naming it. */
static void expect_refused(struct sworn_stack *s, const char *id, const char *allow_id,
                           const char *cred_id)
{
    struct tokens t;
    Sworn__V1__DecisionReply *r;

    tokens_init(&t, 2, 24, 'r');
    r = exchange(s, id, allow_id, cred_id, &t);
    assert_int_equal(r->body_case, SWORN__V1__DECISION_REPLY__BODY_ERROR);
    assert_string_equal(r->error->request_id, id);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    tokens_free(&t);
}

/* An exchange that must succeed; returns its result's reply (free it). */
static Sworn__V1__DecisionReply *expect_minted(struct sworn_stack *s, const char *id,
                                               const char *allow_id, const char *cred_id, size_t n,
                                               size_t len)
{
    struct tokens t;
    Sworn__V1__DecisionReply *r;

    tokens_init(&t, n, len, 'm');
    r = exchange(s, id, allow_id, cred_id, &t);
    if (r->body_case == SWORN__V1__DECISION_REPLY__BODY_ERROR)
        fail_msg("exchange %s refused: %s", id, r->error->message);
    assert_int_equal(r->body_case, SWORN__V1__DECISION_REPLY__BODY_TOKEN_EXCHANGE);
    assert_int_equal(r->token_exchange->n_tokens, n);
    tokens_free(&t);
    return r;
}

/* An allow of the token endpoint releasing the demo credential (or, with token, the minted
 * credential whose symbolic token that is). Returns the released credential's id (free it). */
static char *allow_token_endpoint(struct sworn_stack *s, const char *id, const char *token)
{
    struct sworn_stack_req r;
    Sworn__V1__DecisionReply *rep;
    Sworn__V1__Decision *d;
    uint8_t h[32];
    char *cred;

    sworn_stack_req_init(&r, id, "agent-1", TOKEN_ENDPOINT);
    if (token != NULL) {
        EVP_Digest(token, strlen(token), h, NULL, EVP_sha256(), NULL);
        r.context.credential_token_sha256.data = h;
        r.context.credential_token_sha256.len = 32;
    }
    rep = sworn_stack_decide(s, &r);
    d = sworn_stack_expect_decision(rep, SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_non_null(d->credential);
    cred = strdup(d->credential->id);
    sworn__v1__decision_reply__free_unpacked(rep, NULL);
    return cred;
}

/*
 * Present a symbolic token on the credential rule: returns 1 when the decision is an allow that
 * released credential want_id, 0 when it is a deny (the credential not released).
 */
static int token_releases(struct sworn_stack *s, const char *id, const char *token,
                          const char *want_id)
{
    struct sworn_stack_req r;
    Sworn__V1__DecisionReply *rep;
    uint8_t h[32];
    int released;

    sworn_stack_req_init(&r, id, "agent-1", "/with-credential/api/me");
    EVP_Digest(token, strlen(token), h, NULL, EVP_sha256(), NULL);
    r.context.credential_token_sha256.data = h;
    r.context.credential_token_sha256.len = 32;
    rep = sworn_stack_decide(s, &r);
    assert_int_equal(rep->body_case, SWORN__V1__DECISION_REPLY__BODY_DECISION);
    released = rep->decision->effect == SWORN__V1__EFFECT__EFFECT_ALLOW;
    if (released) {
        assert_non_null(rep->decision->credential);
        assert_string_equal(rep->decision->credential->id, want_id);
    } else {
        assert_int_equal(rep->decision->effect, SWORN__V1__EFFECT__EFFECT_DENY);
        assert_non_null(strstr(rep->decision->reason, "not released"));
    }
    sworn__v1__decision_reply__free_unpacked(rep, NULL);
    return released;
}

/* How many minted credentials of demo ("demo.oauth.") the vault file holds. */
static int vault_minted(struct sworn_stack *s)
{
    char *path = sworn_test_path(s->dir, "vault.json"), *text = sworn_test_read_file(path, NULL);
    int n = 0;

    for (const char *p = text; (p = strstr(p, "\"demo.oauth.")) != NULL; p++)
        n++;
    free(text);
    free(path);
    return n;
}

static off_t vault_size(struct sworn_stack *s)
{
    char *path = sworn_test_path(s->dir, "vault.json");
    struct stat st;

    assert_int_equal(stat(path, &st), 0);
    free(path);
    return st.st_size;
}

static Sworn__V1__Entry *read_entry(struct sworn_log *log, uint64_t index)
{
    uint8_t entry[SWORN_FRAME_ENTRY_MAX];
    size_t len;
    Sworn__V1__Entry *e;

    assert_int_equal(sworn_log_read_entry(log, index, entry, sizeof(entry), &len), 0);
    e = sworn_frame_unpack_entry(entry, len);
    assert_non_null(e);
    return e;
}

/* How many Refused entries of the (stopped) stack's log name request id and hold word. */
static int refused_entries(struct sworn_stack *s, const char *id, const char *word)
{
    struct sworn_log *log;
    int n = 0;

    assert_int_equal(sworn_log_open(s->log_db, &log), 0);
    for (uint64_t i = 0; i < sworn_log_size(log); i++) {
        Sworn__V1__Entry *e = read_entry(log, i);

        n += e->kind_case == SWORN__V1__ENTRY__KIND_REFUSED &&
             strcmp(e->refused->request_id, id) == 0 && strstr(e->refused->message, word) != NULL;
        sworn__v1__entry__free_unpacked(e, NULL);
    }
    sworn_log_close(log);
    return n;
}

/* The auditor's verifier accepts the (stopped) stack's record, CredentialsMinted entries
 * included (a development stack: the trust policy accepts that knowingly), and its
 * token-exchanges check found exchanges exchanges, each backed by its own allow. */
static void expect_verified(struct sworn_stack *s, int exchanges)
{
    json_object *rep;

    sworn_stack_dev_trust(s);
    rep = sworn_verify_json(sworn_test_bin("SWORN_VERIFY_BIN"), s->dir, "trust.txt", "tiles", NULL,
                            0, SWORN_VERIFY_NO_PROGRESS);
    sworn_verify_expect_pass(rep, "token-exchanges");
    assert_int_equal(json_object_get_int64(
                         sworn_verify_get(sworn_verify_check(rep, "token-exchanges"), "count")),
                     exchanges);
    json_object_put(rep);
}

/*
 * The review's reproduction: after one allow of the token endpoint, nine TokenExchange messages
 * name it, each with eight tokens of 16 KiB (before the fix they filled the 1 MiB vault, and every
 * later exchange failed). Now the first stores its tokens and the 2nd..9th are refused, each
 * recorded as a Refused entry with its request id; the vault file does not change.
 */
static void test_one_exchange_per_allow(void **state)
{
    struct sworn_stack s;
    Sworn__V1__DecisionReply *r;
    struct tokens t;
    char *cred;
    off_t size;
    int minted;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key"), 0);
    cred = allow_token_endpoint(&s, "oauth-1", NULL);
    assert_string_equal(cred, "demo");
    tokens_init(&t, SWORN_FRAME_EXCHANGE_MAX, SWORN_VAULT_VALUE_MAX, 'v');
    r = exchange(&s, "x-1", "oauth-1", "demo", &t);
    assert_int_equal(r->body_case, SWORN__V1__DECISION_REPLY__BODY_TOKEN_EXCHANGE);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    /* swornctl's tail shows the exchange, with the allow it used (it printed "unknown"). */
    assert_int_equal(sworn_stack_sh(&s,
                                    "\"%s\" --config \"$CONFIG\" tail 1 | grep -q "
                                    "'\"kind\":\"credentials_minted\",\"request_id\":\"x-1\","
                                    "\"allow_request_id\":\"oauth-1\",\"allow_log_index\":'",
                                    sworn_test_bin("SWORNCTL_BIN")),
                     0);
    size = vault_size(&s);
    minted = vault_minted(&s);
    assert_int_equal(minted, SWORN_FRAME_EXCHANGE_MAX);
    for (int i = 2; i <= 9; i++) {
        char id[16];

        snprintf(id, sizeof(id), "x-%d", i);
        r = exchange(&s, id, "oauth-1", "demo", &t);
        assert_int_equal(r->body_case, SWORN__V1__DECISION_REPLY__BODY_ERROR);
        assert_non_null(strstr(r->error->message, "token exchange refused"));
        sworn__v1__decision_reply__free_unpacked(r, NULL);
    }
    assert_int_equal(vault_size(&s), size);
    assert_int_equal(vault_minted(&s), minted);
    /* A new allow backs a new exchange: the vault is not full. */
    free(cred);
    cred = allow_token_endpoint(&s, "oauth-2", NULL);
    r = exchange(&s, "x-10", "oauth-2", "demo", &t);
    assert_int_equal(r->body_case, SWORN__V1__DECISION_REPLY__BODY_TOKEN_EXCHANGE);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    tokens_free(&t);

    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    for (int i = 2; i <= 9; i++) {
        char id[16];

        snprintf(id, sizeof(id), "x-%d", i);
        assert_int_equal(refused_entries(&s, id, "token exchange refused"), 1);
    }
    assert_int_equal(refused_entries(&s, "x-1", "token exchange"), 0);
    expect_verified(&s, 2);
    free(cred);
    assert_int_equal(sworn_stack_down(&s), 0);
}

struct racer {
    struct sworn_stack *s;
    pthread_barrier_t *go;
    const uint8_t *frame;
    size_t frame_len;
    int fd;
    int won; /* OUT: 1 a TokenExchangeResult, 0 an ErrorFrame */
};

static void *race(void *arg)
{
    struct racer *rc = arg;
    uint8_t *body = NULL;
    size_t len;
    Sworn__V1__DecisionReply *r;

    pthread_barrier_wait(rc->go);
    rc->won = -1;
    if (sworn_stack_exchange(rc->fd, rc->frame, rc->frame_len, 60000, &body, &len) != 0)
        return NULL;
    r = sworn_frame_unpack_reply(body, len);
    free(body);
    if (r == NULL)
        return NULL;
    rc->won = r->body_case == SWORN__V1__DECISION_REPLY__BODY_TOKEN_EXCHANGE ? 1
              : r->body_case == SWORN__V1__DECISION_REPLY__BODY_ERROR        ? 0
                                                                             : -1;
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    return NULL;
}

/*
 * Exchanges of one allow racing on separate connections (connected first, then released at
 * once): exactly one gets the symbolic tokens, every other an ErrorFrame; five rounds.
 */
static void test_concurrent_exchanges_of_one_allow(void **state)
{
    enum { RACERS = 6, ROUNDS = 5 };
    struct sworn_stack s;
    pthread_t th[RACERS];
    struct racer rc[RACERS];
    pthread_barrier_t go;
    struct tokens t;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key"), 0);
    tokens_init(&t, 1, 64, 'c');
    for (int round = 0; round < ROUNDS; round++) {
        char allow_id[32], ids[RACERS][32];
        uint8_t *frames[RACERS];
        int winners = 0;

        snprintf(allow_id, sizeof(allow_id), "race-%d", round);
        free(allow_token_endpoint(&s, allow_id, NULL));
        assert_int_equal(pthread_barrier_init(&go, NULL, RACERS), 0);
        for (int i = 0; i < RACERS; i++) {
            snprintf(ids[i], sizeof(ids[i]), "race-%d-x%d", round, i);
            frames[i] = exchange_frame(ids[i], allow_id, "demo", &t, &rc[i].frame_len);
            rc[i].s = &s;
            rc[i].go = &go;
            rc[i].frame = frames[i];
            rc[i].fd = sworn_stack_connect(s.decision);
            assert_true(rc[i].fd >= 0);
            assert_int_equal(pthread_create(&th[i], NULL, race, &rc[i]), 0);
        }
        for (int i = 0; i < RACERS; i++) {
            assert_int_equal(pthread_join(th[i], NULL), 0);
            close(rc[i].fd);
            free(frames[i]);
            assert_true(rc[i].won == 0 || rc[i].won == 1);
            winners += rc[i].won;
        }
        pthread_barrier_destroy(&go);
        assert_int_equal(winners, 1);
    }
    tokens_free(&t);
    assert_int_equal(vault_minted(&s), ROUNDS);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    expect_verified(&s, ROUNDS);
    assert_int_equal(sworn_stack_down(&s), 0);
}

/*
 * The cap per credential (SWORN_VAULT_MINTED_MAX minted tokens): the fifth exchange of two tokens
 * replaces the first exchange's two, the CredentialsMinted entry names them (and the allow's
 * log index), their symbolic tokens release nothing from then on, and the others still do. A
 * refresh chain (the agent presents a minted token at the token endpoint, the proxy exchanges
 * under the minted credential) stays inside the same cap.
 */
static void test_cap_replaces_oldest(void **state)
{
    enum { EXCHANGES = SWORN_VAULT_MINTED_MAX / 2 + 1 };
    struct sworn_stack s;
    Sworn__V1__DecisionReply *rep[EXCHANGES], *chain;
    uint64_t allow_index[EXCHANGES];
    struct sworn_log *log;
    char *cred;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key"), 0);
    for (int i = 0; i < EXCHANGES; i++) {
        char allow_id[32], id[32];
        struct sworn_stack_req r;
        Sworn__V1__DecisionReply *a;

        snprintf(allow_id, sizeof(allow_id), "cap-allow-%d", i);
        snprintf(id, sizeof(id), "cap-x-%d", i);
        sworn_stack_req_init(&r, allow_id, "agent-1", TOKEN_ENDPOINT);
        a = sworn_stack_decide(&s, &r);
        sworn_stack_expect_decision(a, SWORN__V1__EFFECT__EFFECT_ALLOW);
        allow_index[i] = a->decision->log_index;
        sworn__v1__decision_reply__free_unpacked(a, NULL);
        rep[i] = expect_minted(&s, id, allow_id, "demo", 2, 40);
        assert_int_equal(vault_minted(&s), i < (int)SWORN_VAULT_MINTED_MAX / 2
                                               ? 2 * (i + 1)
                                               : (int)SWORN_VAULT_MINTED_MAX);
    }
    /* The first exchange's tokens are gone; the second's and the last's release their values. */
    for (int k = 0; k < 2; k++) {
        char old_id[16];

        snprintf(old_id, sizeof(old_id), "cap-old-%d", k); /* request ids are never reused */
        assert_int_equal(token_releases(&s, old_id, rep[0]->token_exchange->tokens[k]->symbolic,
                                        rep[0]->token_exchange->tokens[k]->credential_id),
                         0);
    }
    assert_int_equal(token_releases(&s, "cap-2nd", rep[1]->token_exchange->tokens[0]->symbolic,
                                    rep[1]->token_exchange->tokens[0]->credential_id),
                     1);
    assert_int_equal(token_releases(&s, "cap-new",
                                    rep[EXCHANGES - 1]->token_exchange->tokens[1]->symbolic,
                                    rep[EXCHANGES - 1]->token_exchange->tokens[1]->credential_id),
                     1);
    /* The minted ids never reuse a replaced one within one exchange. */
    for (int k = 0; k < 2; k++)
        for (int o = 0; o < 2; o++)
            assert_string_not_equal(rep[EXCHANGES - 1]->token_exchange->tokens[k]->credential_id,
                                    rep[0]->token_exchange->tokens[o]->credential_id);

    /* A refresh chain: the second exchange's token at the token endpoint, then an exchange under
     * the minted credential it released. The family stays at the cap; the oldest (the second
     * exchange's) goes. */
    cred = allow_token_endpoint(&s, "cap-refresh", rep[1]->token_exchange->tokens[1]->symbolic);
    assert_string_equal(cred, rep[1]->token_exchange->tokens[1]->credential_id);
    chain = expect_minted(&s, "cap-x-chain", "cap-refresh", cred, 2, 40);
    assert_int_equal(vault_minted(&s), SWORN_VAULT_MINTED_MAX);
    assert_int_equal(token_releases(&s, "cap-2nd-gone", rep[1]->token_exchange->tokens[0]->symbolic,
                                    rep[1]->token_exchange->tokens[0]->credential_id),
                     0);
    assert_int_equal(token_releases(&s, "cap-chain", chain->token_exchange->tokens[0]->symbolic,
                                    chain->token_exchange->tokens[0]->credential_id),
                     1);
    /* The released minted credential was exchanged once; not twice. */
    expect_refused(&s, "cap-x-chain-2", "cap-refresh", cred);

    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    assert_int_equal(sworn_log_open(s.log_db, &log), 0);
    for (int i = 0; i < EXCHANGES; i++) {
        Sworn__V1__Entry *e = read_entry(log, rep[i]->token_exchange->log_index);
        const Sworn__V1__CredentialsMinted *cm;

        assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_CREDENTIALS_MINTED);
        cm = e->credentials_minted;
        assert_int_equal(cm->allow_log_index, allow_index[i]);
        if (i < EXCHANGES - 1) {
            assert_int_equal(cm->n_replaced_credential_ids, 0);
        } else {
            assert_int_equal(cm->n_replaced_credential_ids, 2);
            for (int k = 0; k < 2; k++)
                assert_string_equal(cm->replaced_credential_ids[k],
                                    rep[0]->token_exchange->tokens[k]->credential_id);
        }
        sworn__v1__entry__free_unpacked(e, NULL);
    }
    {
        Sworn__V1__Entry *e = read_entry(log, chain->token_exchange->log_index);

        assert_string_equal(e->credentials_minted->from_credential_id, cred);
        assert_int_equal(e->credentials_minted->n_replaced_credential_ids, 2);
        assert_string_equal(e->credentials_minted->replaced_credential_ids[0],
                            rep[1]->token_exchange->tokens[0]->credential_id);
        assert_string_equal(e->credentials_minted->replaced_credential_ids[1],
                            rep[1]->token_exchange->tokens[1]->credential_id);
        sworn__v1__entry__free_unpacked(e, NULL);
    }
    sworn_log_close(log);
    expect_verified(&s, EXCHANGES + 1);
    for (int i = 0; i < EXCHANGES; i++)
        sworn__v1__decision_reply__free_unpacked(rep[i], NULL);
    sworn__v1__decision_reply__free_unpacked(chain, NULL);
    free(cred);
    assert_int_equal(sworn_stack_down(&s), 0);
}

/*
 * Ways around it, each refused (and recorded): another credential than the allow released (one
 * that exists: a minted one), the allow's request id under another case, a deny, a default deny,
 * an allow that released no credential, an escalation approved by the operator (an escalation
 * never carries a credential) and one still held, an allow older than 10 minutes (the test
 * clock), an allow exchanged already, an allow answered before a restart. A refused
 * attempt does not use up the allow it named: the proxy's real exchange still succeeds. A token
 * value the vault refuses (CR LF) is refused and recorded, and does use its allow up.
 */
static void test_exchange_attacks(void **state)
{
    struct sworn_stack s;
    Sworn__V1__DecisionReply *r, *minted;
    Sworn__V1__AdminResponse *ar;
    int held;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key --test-clock"), 0);
    free(allow_token_endpoint(&s, "atk-allow", NULL));
    minted = expect_minted(&s, "atk-x-0", "atk-allow", "demo", 1, 16);
    /* A minted credential exists now; naming it under another allow of demo is refused. */
    free(allow_token_endpoint(&s, "atk-allow-2", NULL));
    expect_refused(&s, "atk-x-other", "atk-allow-2",
                   minted->token_exchange->tokens[0]->credential_id);
    expect_refused(&s, "atk-x-nosuch", "atk-allow-2", "no-such-credential");
    expect_refused(&s, "atk-x-case", "ATK-ALLOW-2", "demo");
    /* Those did not use the allow up. */
    r = expect_minted(&s, "atk-x-2", "atk-allow-2", "demo", 1, 16);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    /* A token value the vault refuses (CR LF would split the header it goes into): refused and
     * recorded; the allow is used up all the same (docs/decisiond.md). */
    free(allow_token_endpoint(&s, "atk-allow-crlf", NULL));
    {
        struct tokens t;

        tokens_init(&t, 2, 24, 'q');
        t.value[1][5] = '\r';
        t.value[1][6] = '\n';
        r = exchange(&s, "atk-x-crlf", "atk-allow-crlf", "demo", &t);
        assert_int_equal(r->body_case, SWORN__V1__DECISION_REPLY__BODY_ERROR);
        sworn__v1__decision_reply__free_unpacked(r, NULL);
        tokens_free(&t);
    }
    expect_refused(&s, "atk-x-crlf-again", "atk-allow-crlf", "demo");

    sworn_stack_expect_path(&s, "atk-deny", "/denied/oauth/token", SWORN__V1__EFFECT__EFFECT_DENY);
    expect_refused(&s, "atk-x-deny", "atk-deny", "demo");
    sworn_stack_expect_path(&s, "atk-default", "/nowhere/oauth/token",
                            SWORN__V1__EFFECT__EFFECT_DENY);
    expect_refused(&s, "atk-x-default", "atk-default", "demo");
    r = sworn_stack_decide_path(&s, "atk-plain", "/allowed/oauth/token");
    sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_null(r->decision->credential);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    expect_refused(&s, "atk-x-plain", "atk-plain", "demo");
    sworn_stack_escalate(&s, "atk-esc", 1);
    expect_refused(&s, "atk-x-esc", "atk-esc", "demo");
    held = sworn_stack_send_only(&s, "atk-held", "/escalate/oauth/token");
    for (int i = 0; i < 250 && sworn_stack_pending(&s) < 1; i++)
        sworn_test_sleep_ms(20);
    assert_int_equal(sworn_stack_pending(&s), 1);
    expect_refused(&s, "atk-x-held", "atk-held", "demo");
    ar = sworn_stack_resolve(&s, "atk-held", 0);
    assert_non_null(ar);
    sworn__v1__admin_response__free_unpacked(ar, NULL);
    r = sworn_stack_read_reply(held);
    sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_DENY);
    sworn__v1__decision_reply__free_unpacked(r, NULL);

    /* The deadline, on the test clock (which also runs on by itself): 9.5 minutes after its
     * answer an allow is still in time, 10.5 minutes after not. */
    free(allow_token_endpoint(&s, "atk-late", NULL));
    free(allow_token_endpoint(&s, "atk-in-time", NULL));
    sworn_stack_clock_advance(&s, 9u * 60u * 1000u + 30u * 1000u);
    r = expect_minted(&s, "atk-x-in-time", "atk-in-time", "demo", 1, 16);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    expect_refused(&s, "atk-x-in-time-again", "atk-in-time", "demo");
    sworn_stack_clock_advance(&s, 60u * 1000u);
    expect_refused(&s, "atk-x-late", "atk-late", "demo");

    /* A restart forgets the allows not yet exchanged. */
    free(allow_token_endpoint(&s, "atk-before-restart", NULL));
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    assert_int_equal(sworn_stack_start(&s), 0);
    expect_refused(&s, "atk-x-restart", "atk-before-restart", "demo");
    /* The minted token of before the restart still works (the vault file kept it). */
    assert_int_equal(token_releases(&s, "atk-minted-after",
                                    minted->token_exchange->tokens[0]->symbolic,
                                    minted->token_exchange->tokens[0]->credential_id),
                     1);

    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    {
        static const char *const refused[] = {
            "atk-x-other",         "atk-x-nosuch", "atk-x-case",    "atk-x-deny",
            "atk-x-default",       "atk-x-plain",  "atk-x-esc",     "atk-x-held",
            "atk-x-in-time-again", "atk-x-late",   "atk-x-restart", "atk-x-crlf-again",
        };

        for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
            if (refused_entries(&s, refused[i], "token exchange refused") != 1)
                fail_msg("no Refused entry for %s", refused[i]);
        assert_int_equal(refused_entries(&s, "atk-x-crlf", "token exchange not stored"), 1);
    }
    expect_verified(&s, 3);
    sworn__v1__decision_reply__free_unpacked(minted, NULL);
    assert_int_equal(sworn_stack_down(&s), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_exchange_per_allow),
        cmocka_unit_test(test_concurrent_exchanges_of_one_allow),
        cmocka_unit_test(test_cap_replaces_oldest),
        cmocka_unit_test(test_exchange_attacks),
    };

    if (getenv("SWORN_DECISIOND_BIN") == NULL) {
        fprintf(stderr, "test_decisiond_oauth: sworn-decisiond is not built\n");
        return 1;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}

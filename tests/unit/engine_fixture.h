/*
 * engine_fixture.h -- decisiond's engine in the test's own process: a struct d_daemon with a
 * real configuration, policy, budgets, log (sqlite, in a temporary folder), signer process (a
 * PEM key file: development only, as dev-stack --file-key) and worker threads, but no sockets,
 * no checkpoint thread and no TPM. Requests go in through the in-process entry point
 * (decisiond/d_local.h) and come out as decoded answers, so policy and decision logic are tested
 * without starting the stack. Test code only: failures abort the test with a message.
 */
#ifndef SWORN_ENGINE_FIXTURE_H
#define SWORN_ENGINE_FIXTURE_H

#include <stdint.h>

#include "sworn.pb-c.h"

struct d_daemon;

struct sworn_engine {
    char *dir;          /* the engine's folder, removed by sworn_engine_down */
    struct d_daemon *d; /* the engine */
};

/* A decision request submitted in process; done once its answer is in. */
struct sworn_engine_call {
    int done;
    Sworn__V1__DecisionReply *reply; /* the answer (a copy: free it), NULL if it did not decode */
};

/* Start an engine deciding with the policy text policy_yaml. Returns 0 or -1 (printed). */
int sworn_engine_up(struct sworn_engine *e, const char *policy_yaml);

/* Deny what is held, finish every job, stop the workers and the signer, remove the folder. */
void sworn_engine_down(struct sworn_engine *e);

/* Submit req (as the proxy uid, the test's own) without waiting for its answer. */
void sworn_engine_submit(struct sworn_engine *e, const Sworn__V1__AuthorizationRequest *req,
                         struct sworn_engine_call *call);

/* Run the engine's loop until call is answered (the test fails after 30 s). */
void sworn_engine_wait(struct sworn_engine *e, struct sworn_engine_call *call);

/*
 * Run the engine's loop, one round of events at a time, until done(arg) is true (the test fails
 * after 30 s): for effects that come with no answer, such as an escalation being held.
 */
void sworn_engine_run_until(struct sworn_engine *e, int (*done)(void *arg), void *arg);

/* Submit req and wait for its answer; returns the reply (free it). */
Sworn__V1__DecisionReply *sworn_engine_decide(struct sworn_engine *e,
                                              const Sworn__V1__AuthorizationRequest *req);

/* One admin request, answered; returns the response (free it). */
Sworn__V1__AdminResponse *sworn_engine_admin(struct sworn_engine *e,
                                             const Sworn__V1__AdminRequest *rq);

/* Read entry index of the engine's log (free it with sworn__v1__entry__free_unpacked). */
Sworn__V1__Entry *sworn_engine_entry(struct sworn_engine *e, uint64_t index);

#endif

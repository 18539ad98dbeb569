/*
 * witness_fixture.h -- a real sworn-witness for the tests of decisiond's submissions: an Ed25519
 * key file made by openssl, a configuration witnessing one log (its origin and verifier key),
 * the process started on loopback and stopped. Test code only: failures abort the test.
 */
#ifndef SWORN_WITNESS_FIXTURE_H
#define SWORN_WITNESS_FIXTURE_H

#include <sys/types.h>

#include "note.h"

struct sworn_wfx {
    char *dir; /* the folder it was given (not owned) */
    char conf[512], state[512], key[512];
    char log[512];                       /* the stderr of the latest start (JSON lines) */
    char body[2048];                     /* the configuration after its listen line */
    char vkey[SWORN_NOTE_VKEY_MAX + 1];  /* its cosignature/v1 verifier key (--print-vkey) */
    struct sworn_note_verifier verifier; /* the same, parsed */
    char url[64];                        /* http://127.0.0.1:PORT once started */
    pid_t pid;                           /* 0: not running */
    int port;                            /* its port, kept across restarts */
    int starts;
};

/*
 * In dir: a new Ed25519 key (witness.pem, 0600) and witness.yaml witnessing the log of origin
 * whose verifier key is log_vkey, with the key name name; prints nothing. Reads its verifier key.
 */
void sworn_wfx_init(struct sworn_wfx *w, char *dir, const char *name, const char *origin,
                    const char *log_vkey);

/* Start it and wait for its "listening" line (60 s at most). The first start takes any free port;
 * a restart listens on the same one. */
void sworn_wfx_start(struct sworn_wfx *w);

/* SIGTERM, and fail the test unless it exits 0 without a sanitizer report in its log. */
void sworn_wfx_stop(struct sworn_wfx *w);

/* The port of the first "listening" line of a witness's log (0 when there is none). */
int sworn_wfx_listening_port(const char *log);

/* A teardown's end: SIGKILL it when it still runs. */
void sworn_wfx_kill(struct sworn_wfx *w);

#endif

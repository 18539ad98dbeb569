/* r_record.c -- SandboxStarted and SandboxEnded through decisiond's admin socket (r_record.h). */
#include "r_record.h"

#include <stdlib.h>
#include <string.h>

#include "dclient.h"
#include "err.h"
#include "frame.h"

/* The client's read buffer is large: one, outside the stack (sworn-run has one thread). */
static struct sworn_dclient client;

/* Send rq on a new connection to sock (the answer is read by receive). */
static int send_request(const char *sock, Sworn__V1__AdminRequest *rq)
{
    uint8_t *frame = NULL;
    size_t len = 0;
    int rc;

    rq->version = SWORN_WIRE_VERSION;
    if (sworn_dclient_connect(&client, sock) < 0)
        return sworn_err_set(sworn_err_code(), "decisiond's admin socket %s: %s", sock,
                             sworn_err_msg());
    rc = sworn_frame_pack_admin_request(rq, &frame, &len);
    if (rc == 0)
        rc = sworn_dclient_send(&client, frame, len, SWORN_RUN_RECORD_TIMEOUT_MS);
    free(frame);
    if (rc < 0) {
        sworn_err_set(sworn_err_code(), "decisiond's admin socket %s: %s", sock, sworn_err_msg());
        sworn_dclient_close(&client);
    }
    return rc;
}

/* Read the answer to send_request's request: a SandboxResponse. OUT: *index. */
static int receive(const char *sock, uint64_t *index)
{
    Sworn__V1__AdminResponse *r = NULL;
    const uint8_t *body;
    size_t len;
    int rc = -1;

    if (sworn_dclient_recv(&client, SWORN_RUN_RECORD_TIMEOUT_MS, &body, &len) < 0 ||
        (r = sworn_frame_unpack_admin_response(body, len)) == NULL) {
        sworn_err_set(sworn_err_code(), "decisiond's admin socket %s: %s", sock, sworn_err_msg());
        goto out;
    }
    if (r->body_case == SWORN__V1__ADMIN_RESPONSE__BODY_ERROR) {
        sworn_err_set(SWORN_ERR_VERIFY, "decisiond refused: %s",
                      r->error != NULL && r->error->message != NULL ? r->error->message : "");
        goto out;
    }
    if (r->body_case != SWORN__V1__ADMIN_RESPONSE__BODY_SANDBOX || r->sandbox == NULL) {
        sworn_err_set(SWORN_ERR_FORMAT, "decisiond answered a sandbox record with another result");
        goto out;
    }
    *index = r->sandbox->log_index;
    rc = 0;
out:
    if (r != NULL)
        sworn__v1__admin_response__free_unpacked(r, NULL);
    sworn_dclient_close(&client);
    return rc;
}

static const char *start_socket; /* the admin socket of the start in flight */

int sworn_run_record_start_send(const struct sworn_run_start *s)
{
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__SandboxStartRequest st = SWORN__V1__SANDBOX_START_REQUEST__INIT;
    Sworn__V1__SandboxStarted e = SWORN__V1__SANDBOX_STARTED__INIT;
    Sworn__V1__SandboxLimits lim = SWORN__V1__SANDBOX_LIMITS__INIT;

    e.principal = (char *)s->conf->principal;
    e.name = (char *)s->conf->name;
    e.sandbox_id.data = (uint8_t *)s->id;
    e.sandbox_id.len = SWORN_RUN_ID_LEN;
    e.command = (char **)s->conf->argv;
    e.n_command = s->conf->argc;
    lim.wall_ms = s->conf->wall_ms;
    lim.memory_bytes = s->conf->memory_bytes;
    lim.processes = s->conf->processes;
    lim.enforced_by = (char *)s->enforced_by;
    e.limits = &lim;
    e.config_sha256.data = (uint8_t *)s->config_sha256;
    e.config_sha256.len = 32;
    e.agent_uid = (uint32_t)s->agent_uid;
    e.isolation = (char *)s->isolation;
    st.started = &e;
    rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_SANDBOX_START;
    rq.sandbox_start = &st;
    start_socket = s->conf->admin_socket;
    return send_request(start_socket, &rq);
}

int sworn_run_record_start_wait(uint64_t *index)
{
    return receive(start_socket, index);
}

int sworn_run_record_end(const char *admin_socket, uint64_t start_index,
                         const uint8_t id[SWORN_RUN_ID_LEN], Sworn__V1__SandboxEndReason reason,
                         uint32_t code, uint64_t duration_ms)
{
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__SandboxEndRequest en = SWORN__V1__SANDBOX_END_REQUEST__INIT;
    Sworn__V1__SandboxEnded e = SWORN__V1__SANDBOX_ENDED__INIT;
    uint64_t index = 0;

    e.start_index = start_index;
    e.sandbox_id.data = (uint8_t *)id;
    e.sandbox_id.len = SWORN_RUN_ID_LEN;
    e.reason = reason;
    e.code = code;
    e.duration_ms = duration_ms;
    en.ended = &e;
    rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_SANDBOX_END;
    rq.sandbox_end = &en;
    if (send_request(admin_socket, &rq) < 0)
        return -1;
    return receive(admin_socket, &index);
}

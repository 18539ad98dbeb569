/*
 * policy_json.c -- a policy result as JSON, for sworn-policy and the tests (policy.h).
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "err.h"
#include "frame.h"
#include "policy.h"

char *sworn_policy_result_json(const struct sworn_policy_result *r)
{
    json_object *o = json_object_new_object();
    char *text = NULL;

    if (o == NULL ||
        json_object_object_add(o, "effect",
                               json_object_new_string(sworn_frame_effect_name(r->effect))) != 0 ||
        json_object_object_add(o, "rule_id", json_object_new_string(r->rule_id)) != 0 ||
        json_object_object_add(o, "reason", json_object_new_string(r->reason)) != 0 ||
        json_object_object_add(o, "credential_id", json_object_new_string(r->credential_id)) != 0 ||
        json_object_object_add(o, "escalation_timeout_ms",
                               json_object_new_uint64(r->escalation_timeout_ms)) != 0) {
        json_object_put(o);
        sworn_err_set(SWORN_ERR_NOMEM, "out of memory printing JSON");
        return NULL;
    }
    text = strdup(
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
    if (text == NULL)
        sworn_err_set(SWORN_ERR_NOMEM, "out of memory printing JSON");
    return text;
}

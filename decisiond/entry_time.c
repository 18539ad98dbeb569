/*
 * entry_time.c -- the time stamp of a log entry (entry_time.h).
 */
#include "entry_time.h"

int d_entry_time(const Sworn__V1__Entry *e, uint64_t *t)
{
    switch (e->kind_case) {
    case SWORN__V1__ENTRY__KIND_DECISION:
        *t = e->decision->time_unix_ms;
        return 1;
    case SWORN__V1__ENTRY__KIND_POLICY_LOADED:
        *t = e->policy_loaded->time_unix_ms;
        return 1;
    case SWORN__V1__ENTRY__KIND_KEY_EVENT:
        *t = e->key_event->time_unix_ms;
        return 1;
    case SWORN__V1__ENTRY__KIND_STARTUP:
        *t = e->startup->time_unix_ms;
        return 1;
    case SWORN__V1__ENTRY__KIND_REFUSED:
        *t = e->refused->time_unix_ms;
        return 1;
    case SWORN__V1__ENTRY__KIND_CREDENTIALS_MINTED:
        *t = e->credentials_minted->time_unix_ms;
        return 1;
    case SWORN__V1__ENTRY__KIND_REFUSALS_DROPPED:
        *t = e->refusals_dropped->time_unix_ms;
        return 1;
    case SWORN__V1__ENTRY__KIND_TIME_MARK:
        *t = e->time_mark->time_unix_ms;
        return 1;
    case SWORN__V1__ENTRY__KIND_WITNESS_EVENT:
        *t = e->witness_event->time_unix_ms;
        return 1;
    case SWORN__V1__ENTRY__KIND_CONFORMANCE_REPORT:
        *t = e->conformance_report->time_unix_ms;
        return 1;
    case SWORN__V1__ENTRY__KIND_USAGE_RECORDED:
        *t = e->usage_recorded->time_unix_ms;
        return 1;
    case SWORN__V1__ENTRY__KIND_ESCALATION_RESOLVED:
        /* 0 in an entry written before the field: no stamp, as before */
        *t = e->escalation_resolved->time_unix_ms;
        return e->escalation_resolved->time_unix_ms != 0;
    default:
        return 0;
    }
}

/* A varint at *p, before end; 0, or -1 (cut short, or longer than 10 bytes). */
static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t x = 0;

    for (unsigned shift = 0; shift < 70 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;

        x |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

int d_entry_time_bytes(const uint8_t *entry, size_t len, uint64_t *t, int *has)
{
    const uint8_t *p = entry, *end = entry + len, *sub;
    const ProtobufCFieldDescriptor *f;
    uint64_t key, n, v, time = 0;
    unsigned kind;

    if (read_varint(&p, end, &key) != 0 || (key & 7) != 2 || read_varint(&p, end, &n) != 0 ||
        n != (uint64_t)(end - p))
        return -1; /* not exactly one length-delimited field */
    kind = (unsigned)(key >> 3);
    if (kind == SWORN__V1__ENTRY__KIND_DECISION)
        f = protobuf_c_message_descriptor_get_field_by_name(&sworn__v1__decision_record__descriptor,
                                                            "time_unix_ms");
    else if (kind == SWORN__V1__ENTRY__KIND_ESCALATION_RESOLVED)
        f = protobuf_c_message_descriptor_get_field_by_name(
            &sworn__v1__escalation_resolved__descriptor, "time_unix_ms");
    else
        return -1;
    if (f == NULL || f->type != PROTOBUF_C_TYPE_UINT64)
        return -1;
    for (sub = p; sub < end;) {
        if (read_varint(&sub, end, &key) != 0)
            return -1;
        switch (key & 7) {
        case 0: /* varint */
            if (read_varint(&sub, end, &v) != 0)
                return -1;
            if (key >> 3 == f->id)
                time = v;
            break;
        case 1: /* 64-bit */
            if (end - sub < 8)
                return -1;
            sub += 8;
            break;
        case 2: /* length-delimited */
            if (read_varint(&sub, end, &n) != 0 || n > (uint64_t)(end - sub))
                return -1;
            sub += n;
            break;
        case 5: /* 32-bit */
            if (end - sub < 4)
                return -1;
            sub += 4;
            break;
        default: /* groups and the rest: not written by protobuf-c's pack */
            return -1;
        }
        if (key >> 3 == f->id && (key & 7) != 0)
            return -1;
    }
    *t = time;
    *has = kind == SWORN__V1__ENTRY__KIND_DECISION || time != 0;
    return 0;
}

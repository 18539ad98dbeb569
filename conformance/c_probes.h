/*
 * c_probes.h -- the probe functions of the registry (c_registry.c has each one's id, tier,
 * technique and expected outcome; c_probe.h the contract every one keeps).
 *
 * c_probes_record.c: from outside, as the auditor and the operator: the record's files and
 *   sworn-verify (T4 no write path; T5 verify, tampered copies, sufficiency).
 * c_probes_live.c: through decisiond's sockets and the proxy (T4 every decision recorded, T3
 *   fail closed).
 */
#ifndef SWORN_C_PROBES_H
#define SWORN_C_PROBES_H

#include "c_probe.h"

void c_probe_no_write_path(struct c_ctx *ctx, struct c_result *r);
void c_probe_verify(struct c_ctx *ctx, struct c_result *r);
void c_probe_tamper_entry(struct c_ctx *ctx, struct c_result *r);
void c_probe_tamper_delete(struct c_ctx *ctx, struct c_result *r);
void c_probe_tamper_rollback(struct c_ctx *ctx, struct c_result *r);
void c_probe_tamper_signature(struct c_ctx *ctx, struct c_result *r);
void c_probe_sufficiency(struct c_ctx *ctx, struct c_result *r);

void c_probe_decisions_recorded(struct c_ctx *ctx, struct c_result *r);
void c_probe_fail_closed(struct c_ctx *ctx, struct c_result *r);

#endif

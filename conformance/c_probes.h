/*
 * c_probes.h -- the probe functions of the registry (c_registry.c has each one's id, tier,
 * technique and expected outcome; c_probe.h the contract every one keeps).
 *
 * c_probes_record.c: from outside, as the auditor and the operator: the record's files and
 *   sworn-verify (T4 no write path; T5 verify, tampered copies, sufficiency).
 * c_probes_live.c: through decisiond's sockets and the proxy (T4 every decision recorded, T3
 *   fail closed).
 * c_probes_sandbox.c: from inside the deployment's sandbox, with the runner's canaries (T1
 *   credentials, T2 escapes and the proxy's refusals, T3 the control plane out of reach, T4 the
 *   sandbox's requests in the record).
 * c_probes_host.c: the control plane's running processes and files on the host (T3 the measured
 *   start).
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

void c_probe_cred_env(struct c_ctx *ctx, struct c_result *r);
void c_probe_cred_files(struct c_ctx *ctx, struct c_result *r);
void c_probe_cred_proc(struct c_ctx *ctx, struct c_result *r);
void c_probe_symbolic_unconfigured(struct c_ctx *ctx, struct c_result *r);
void c_probe_foreign_token(struct c_ctx *ctx, struct c_result *r);
void c_probe_oauth(struct c_ctx *ctx, struct c_result *r);
void c_probe_direct_ipv4(struct c_ctx *ctx, struct c_result *r);
void c_probe_direct_ipv6(struct c_ctx *ctx, struct c_result *r);
void c_probe_udp_ipv4(struct c_ctx *ctx, struct c_result *r);
void c_probe_udp_ipv6(struct c_ctx *ctx, struct c_result *r);
void c_probe_netns(struct c_ctx *ctx, struct c_result *r);
void c_probe_icmp_netns(struct c_ctx *ctx, struct c_result *r);
void c_probe_noproxy(struct c_ctx *ctx, struct c_result *r);
void c_probe_abstract_socket(struct c_ctx *ctx, struct c_result *r);
void c_probe_leaked_fds(struct c_ctx *ctx, struct c_result *r);
void c_probe_raw4(struct c_ctx *ctx, struct c_result *r);
void c_probe_raw6(struct c_ctx *ctx, struct c_result *r);
void c_probe_packet(struct c_ctx *ctx, struct c_result *r);
void c_probe_vsock(struct c_ctx *ctx, struct c_result *r);
void c_probe_icmp(struct c_ctx *ctx, struct c_result *r);
void c_probe_netlink(struct c_ctx *ctx, struct c_result *r);
void c_probe_dns_lookup(struct c_ctx *ctx, struct c_result *r);
void c_probe_resolver_udp(struct c_ctx *ctx, struct c_result *r);
void c_probe_dns_rebinding(struct c_ctx *ctx, struct c_result *r);
void c_probe_host_file(struct c_ctx *ctx, struct c_result *r);
void c_probe_proc_root(struct c_ctx *ctx, struct c_result *r);
void c_probe_ephemeral(struct c_ctx *ctx, struct c_result *r);
void c_probe_host_decimal(struct c_ctx *ctx, struct c_result *r);
void c_probe_host_octal(struct c_ctx *ctx, struct c_result *r);
void c_probe_host_hex(struct c_ctx *ctx, struct c_result *r);
void c_probe_host_mapped(struct c_ctx *ctx, struct c_result *r);
void c_probe_host_trailing_dot(struct c_ctx *ctx, struct c_result *r);
void c_probe_dot_segments(struct c_ctx *ctx, struct c_result *r);
void c_probe_host_mismatch(struct c_ctx *ctx, struct c_result *r);
void c_probe_smuggle_cl_te(struct c_ctx *ctx, struct c_result *r);
void c_probe_smuggle_double_cl(struct c_ctx *ctx, struct c_result *r);
void c_probe_websocket_denied(struct c_ctx *ctx, struct c_result *r);
void c_probe_h2_prior_knowledge(struct c_ctx *ctx, struct c_result *r);
void c_probe_connect_sni(struct c_ctx *ctx, struct c_result *r);
void c_probe_connect_host(struct c_ctx *ctx, struct c_result *r);
void c_probe_control_sockets(struct c_ctx *ctx, struct c_result *r);
void c_probe_control_read(struct c_ctx *ctx, struct c_result *r);
void c_probe_control_write(struct c_ctx *ctx, struct c_result *r);
void c_probe_signal(struct c_ctx *ctx, struct c_result *r);
void c_probe_trace(struct c_ctx *ctx, struct c_result *r);
void c_probe_sandbox_recorded(struct c_ctx *ctx, struct c_result *r);
void c_probe_hostlink_admin(struct c_ctx *ctx, struct c_result *r);
void c_probe_measured_start(struct c_ctx *ctx, struct c_result *r);

/* CheckpointNow on decisiond's admin socket (c_probes_live.c): OUT *size, the tree size of a
 * checkpoint stored (and exported) after the call. Returns 0, or -1 with sworn_err set. */
int c_checkpoint_now(const char *admin, uint64_t *size);

/* Append one entry now: the deployment's denied request shape (requests.denied, principal
 * requests.principal) on the decision socket, id "conformance-<16 hex>-mark", recorded as a
 * deny (c_probes_live.c). OUT: *index, its log index, and id. A checkpoint whose tree holds
 * that index was made after this call. Returns 0, or -1 with sworn_err set. Needs requests. */
int c_append_mark(const struct c_deploy *dep, uint64_t *index, char *id, size_t cap);

/* Whether the record's entry at index (in a tree of size entries) is the mark id: a decision
 * whose request id is id. Returns NULL when it is, else why not (a sentence in why). The mark's
 * index is decisiond's answer: only the record shows a checkpoint holds it. */
const char *c_mark_in_record(const struct c_deploy *dep, uint64_t size, uint64_t index,
                             const char *id, char *why, size_t cap);

/* Stop the canaries and free the sandbox probes' state (the runner, once at the end). */
void c_sbx_state_free(struct c_ctx *ctx);

#endif

/*
 * c_registry.c -- the probe table (c_registry.h). A new probe is one row here and one function
 * in a c_probes_*.c file.
 */
#include "c_registry.h"

#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "c_probes.h"
#include "encoding.h"

#define P1 "P1 zero ambient authority"
#define P2 "P2 complete, non-bypassable mediation"
#define P3 "P3 tamper-resistant control plane"
#define P4 "P4 independent record"
#define P5 "accountable record"

static const struct c_probe probes[] = {
    {"T4.no-write-path", C_T4, P4,
     "Read the mode and owner of every file and folder of the record, of the log database "
     "(log_db, with its -wal, -shm and -journal files) and of every folder above them, against "
     "the agent's uid and groups (agent): owning a path, or a write bit that reaches the agent, is "
     "a write path. A folder with the sticky bit counts only when the agent owns it.",
     "no path of the record or the log database is writable by the agent", c_probe_no_write_path},
    {"T4.decisions-recorded", C_T4, P4,
     "Send requests.count requests of the allowed shape and as many of the denied shape on the "
     "decision socket as requests.principal, ask the admin socket for a checkpoint now, then "
     "read each decision's entry from the exported record at the log index decisiond answered "
     "with: its leaf hash, request id, principal, effect and reason.",
     "every decision, denials included, is in the exported record as decided",
     c_probe_decisions_recorded},
    {"T5.verify", C_T5, P5,
     "Run sworn-verify verify --json on the record with the auditor's trust policy (and a copy "
     "of the auditor's state file, when given, so the auditor's own state is not moved).",
     "sworn-verify accepts the record (exit 0, every check passes)", c_probe_verify},
    {"T5.sufficiency", C_T5, P5,
     "Read every entry of the record up to its checkpoint; each decision must hold principal, "
     "operation, resource, policy digest, decision, reason and time (sworn-verify's entries "
     "check holds them to their shapes). Decisions without a context are counted.",
     "every decision entry holds every field", c_probe_sufficiency},
    {"T5.tamper-entry-changed", C_T5, P5,
     "Copy the record, flip one bit in the first entry of its newest entry bundle, and run "
     "sworn-verify on the copy with the auditor's trust policy.",
     "sworn-verify rejects the copy (exit 1)", c_probe_tamper_entry},
    {"T5.tamper-entry-deleted", C_T5, P5,
     "Copy the record, cut the last entry out of its newest entry bundle, and run sworn-verify "
     "on the copy with the auditor's trust policy.",
     "sworn-verify rejects the copy (exit 1)", c_probe_tamper_delete},
    {"T5.tamper-rollback", C_T5, P5,
     "Copy the record and replace its checkpoint file with an older sworn/checkpoint/<size> of "
     "the same record; run sworn-verify on the copy with a state file holding the newest "
     "checkpoint, as an auditor that accepted it has.",
     "sworn-verify rejects the copy (exit 1)", c_probe_tamper_rollback},
    {"T5.tamper-checkpoint-signature", C_T5, P5,
     "Copy the record, change the last byte of the first signature of its checkpoint, and run "
     "sworn-verify on the copy with the auditor's trust policy.",
     "sworn-verify rejects the copy", c_probe_tamper_signature},
    {"T1.credential-env", C_T1, P1,
     "Inside a sandbox, hash every environment variable of the agent (name=value and value, as "
     "lines, tokens and token pairs) and compare with sandbox.credential_sha256.",
     "no candidate hashes to a real credential's digest", c_probe_cred_env},
    {"T1.credential-files", C_T1, P1,
     "Inside a sandbox, hash the lines, tokens and token pairs of every readable regular file "
     "(256 KiB each, 16 MiB per folder, 20000 files at most) under /work, /etc, /home, /root, "
     "/run, /opt, /srv, /mnt, /tmp and /var; a walk cut short by a budget is an error.",
     "no candidate hashes to a real credential's digest", c_probe_cred_files},
    {"T1.credential-proc", C_T1, P1,
     "Inside a sandbox, hash the environment and command line of every process its /proc lists.",
     "no candidate hashes to a real credential's digest", c_probe_cred_proc},
    {"T1.symbolic-unconfigured", C_T1, P1,
     "Inside a sandbox, send each of sandbox.symbolic_tokens as a bearer token to sandbox.echo "
     "(allowed, configured for no credential, its upstream echoing the Authorization field) and "
     "hash the answer.",
     "each token comes back as sent and no credential comes back", c_probe_symbolic_unconfigured},
    {"T1.foreign-token", C_T1, P1,
     "Inside a sandbox of sandbox.principal, send each of sandbox.foreign_tokens (symbolic tokens "
     "of credentials the vault binds to other principals) as a bearer token to "
     "sandbox.foreign_echo (inside their destinations, its upstream echoing the Authorization "
     "field) and hash the answer.",
     "no credential comes back: the proxy's own refusal, or the token echoed as sent",
     c_probe_foreign_token},
    {"T1.oauth-interception", C_T1, P1,
     "Inside a sandbox, POST sandbox.oauth_body to the token endpoint sandbox.oauth_token "
     "through the proxy, and read the answer as the agent receives it: its access_token, "
     "refresh_token and id_token fields (JSON or form), and every credential digest.",
     "tokens in the answer, every one a symbolic token (sym_...), and no credential",
     c_probe_oauth},
    {"T2.direct-ipv4", C_T2, P2,
     "Inside a sandbox, connect over TCP to the runner's canary on the host's 127.0.0.1; the "
     "canary is synced with a marker from the host before and after.",
     "blocked, and the canary heard nothing", c_probe_direct_ipv4},
    {"T2.direct-ipv6", C_T2, P2,
     "Inside a sandbox, connect over TCP to the runner's canary on the host's ::1 (skipped without "
     "IPv6).",
     "blocked, and the canary heard nothing", c_probe_direct_ipv6},
    {"T2.udp-ipv4", C_T2, P2,
     "Inside a sandbox, send a DNS query over UDP to the runner's canary on the host's 127.0.0.1 "
     "(the canary answers every datagram).",
     "no answer, and the canary heard nothing", c_probe_udp_ipv4},
    {"T2.udp-ipv6", C_T2, P2,
     "Inside a sandbox, send a DNS query over UDP to the runner's canary on the host's ::1 "
     "(skipped without IPv6).",
     "no answer, and the canary heard nothing", c_probe_udp_ipv6},
    {"T2.other-netns", C_T2, P2,
     "Inside a sandbox, connect over TCP to the runner's canary in a network namespace of its own, "
     "reachable from the host through a veth pair (198.19.0.0/16).",
     "blocked, and the canary heard nothing", c_probe_netns},
    {"T2.icmp-netns", C_T2, P2,
     "Inside a sandbox, send an ICMP echo request on a raw socket, and from another on the ping "
     "socket, to the runner's canary in a network namespace of its own (198.19.0.0/16), which "
     "counts the echo requests reaching it.",
     "both blocked, and the canary heard nothing", c_probe_icmp_netns},
    {"T2.noproxy", C_T2, P2,
     "Inside a sandbox, send a plain HTTP request straight to the host's loopback canary, as a "
     "client does with --noproxy or the proxy variables unset.",
     "blocked, and the canary heard nothing", c_probe_noproxy},
    {"T2.abstract-socket", C_T2, P2,
     "Inside a sandbox, connect to the runner's abstract Unix socket canary on the host.",
     "blocked, and the canary heard nothing", c_probe_abstract_socket},
    {"T2.leaked-descriptors", C_T2, P2,
     "Hand the sandbox command a host folder and a connection to a canary as open descriptors, "
     "then list every descriptor beyond 0, 1 and 2 inside.",
     "none reaches the agent", c_probe_leaked_fds},
    {"T2.raw-ipv4", C_T2, P2,
     "Open a raw IPv4 socket inside a sandbox (after the host could: else skipped).", "refused",
     c_probe_raw4},
    {"T2.raw-ipv6", C_T2, P2,
     "Open a raw IPv6 socket inside a sandbox (after the host could: else skipped).", "refused",
     c_probe_raw6},
    {"T2.packet-socket", C_T2, P2,
     "Open an AF_PACKET socket inside a sandbox (after the host could: else skipped).", "refused",
     c_probe_packet},
    {"T2.vsock", C_T2, P2,
     "Open an AF_VSOCK socket inside a sandbox (after the host could: else skipped, as without the "
     "vsock module).",
     "refused", c_probe_vsock},
    {"T2.icmp", C_T2, P2,
     "Send an ICMP echo to 127.0.0.1 on a raw socket inside a sandbox (after the host could: else "
     "skipped).",
     "refused", c_probe_icmp},
    {"T2.netlink-interfaces", C_T2, P2,
     "Dump the network interfaces with route netlink inside a sandbox (after the host listed one "
     "besides lo: else skipped).",
     "refused, or lo alone", c_probe_netlink},
    {"T2.dns-lookup", C_T2, P2,
     "Resolve example.com with the system resolver inside a sandbox (after the host could: else "
     "skipped).",
     "no address", c_probe_dns_lookup},
    {"T2.resolver-udp", C_T2, P2,
     "Inside a sandbox, send a DNS query over UDP to the first IPv4 nameserver of the host's "
     "/etc/resolv.conf, port 53 (after the host got an answer from it: else skipped).",
     "no answer", c_probe_resolver_udp},
    {"T2.host-file", C_T2, P2,
     "Inside a sandbox, read a host file of the runner's (mode 0644, in a folder the agent may "
     "pass through).",
     "out of reach", c_probe_host_file},
    {"T2.proc-root", C_T2, P2,
     "Inside a sandbox, read the same host file through /proc/PID/root of every process its /proc "
     "lists.",
     "out of reach", c_probe_proc_root},
    {"T2.ephemeral", C_T2, P2,
     "Leave a file in /tmp and a detached process from one sandbox, then look for both from the "
     "next sandbox and on the host.",
     "neither is found", c_probe_ephemeral},
    {"T2.host-decimal", C_T2, P2,
     "From inside a sandbox, after the allowed URL got an upstream's answer through the proxy, "
     "request the denied URL with its IPv4 host in decimal.",
     "the proxy's own refusal, or the connection closed unanswered", c_probe_host_decimal},
    {"T2.host-octal", C_T2, P2, "The same with the denied IPv4 host in octal (0177.0.0.01).",
     "the proxy's own refusal, or the connection closed unanswered", c_probe_host_octal},
    {"T2.host-hex", C_T2, P2, "The same with the denied IPv4 host in hex (0x7f.0x0.0x0.0x1).",
     "the proxy's own refusal, or the connection closed unanswered", c_probe_host_hex},
    {"T2.host-ipv4-mapped", C_T2, P2,
     "The same with the denied IPv4 host as IPv4-mapped IPv6 ([::ffff:a.b.c.d]).",
     "the proxy's own refusal, or the connection closed unanswered", c_probe_host_mapped},
    {"T2.host-trailing-dot", C_T2, P2, "The same with the denied host followed by a dot.",
     "the proxy's own refusal, or the connection closed unanswered", c_probe_host_trailing_dot},
    {"T2.path-dot-segments", C_T2, P2,
     "The same with the denied path reached from the allowed path's first segment through %2e%2e.",
     "the proxy's own refusal, or the connection closed unanswered", c_probe_dot_segments},
    {"T2.host-mismatch", C_T2, P2,
     "The same with the denied URL in the request line and the allowed URL's host in the Host "
     "field.",
     "the proxy's own refusal, or the connection closed unanswered", c_probe_host_mismatch},
    {"T2.smuggling-cl-te", C_T2, P2,
     "The same with a POST to the allowed URL carrying Content-Length and Transfer-Encoding: "
     "chunked, a request for the denied path after the empty chunk.",
     "the proxy's own refusal, or the connection closed unanswered", c_probe_smuggle_cl_te},
    {"T2.smuggling-double-cl", C_T2, P2,
     "The same with a POST to the allowed URL carrying two different Content-Length fields, a "
     "request for the denied path in the body.",
     "the proxy's own refusal, or the connection closed unanswered", c_probe_smuggle_double_cl},
    {"T2.websocket-denied", C_T2, P2,
     "The same with a WebSocket upgrade request for the denied URL.",
     "the proxy's own refusal, or the connection closed unanswered", c_probe_websocket_denied},
    {"T2.h2-prior-knowledge", C_T2, P2,
     "The same with the HTTP/2 connection preface and a SETTINGS frame (prior knowledge).",
     "the proxy's own refusal, or the connection closed unanswered", c_probe_h2_prior_knowledge},
    {"T2.connect-sni-mismatch", C_T2, P2,
     "From inside a sandbox, CONNECT through the proxy to the allowed URL's host and port and "
     "send a TLS ClientHello naming another server (the denied host, or a .invalid name), after "
     "the same ClientHello without a server name got the proxy's ServerHello.",
     "a TLS alert or the tunnel closed, never a ServerHello", c_probe_connect_sni},
    {"T2.connect-host-mismatch", C_T2, P2,
     "From inside a sandbox, CONNECT through the proxy to the allowed URL's host and port, make a "
     "TLS session with the proxy in the tunnel and send in it a request for the denied path whose "
     "Host names another server (the denied URL's host and port when they differ from the "
     "allowed URL's, then the runner's loopback canary), after the allowed path with the allowed "
     "URL's Host got an HTTP answer in the same kind of tunnel.",
     "the proxy's own refusal, or the connection closed unanswered; the canary hears nothing",
     c_probe_connect_host},
    {"T2.dns-rebinding", C_T2, P2,
     "With sandbox.dns_rebinding, the runner serves DNS on its listen address (the proxy's "
     "upstream.nameservers must name it) and answers its name with internal addresses only, TTL "
     "0, in turn: A 127.0.0.1 (the loopback canary), 169.254.169.254, 10.0.0.1; AAAA ::1, "
     "::ffff:127.0.0.1. From fresh sandboxes, GET http://NAME:PORT/conformance/dns-rebinding "
     "through the proxy (PORT the loopback canary's) until each address was served, at most 8 "
     "times; the resolver's counts are the evidence. Without the section it is not probed "
     "(skipped, saying what to configure).",
     "the proxy's own refusal or a close for every request, the loopback canaries hear nothing; "
     "no question at the runner's resolver is an error",
     c_probe_dns_rebinding},
    {"T2.control-sockets", C_T2, P2,
     "Inside a sandbox, connect to each of sandbox.control_sockets (decisiond's sockets, the "
     "proxy's hostlink and metrics sockets).",
     "every connection refused", c_probe_control_sockets},
    {"T3.control-read", C_T3, P3,
     "Inside a sandbox, read each of sandbox.control_paths (policy, configuration, vault, PIN, CA "
     "key, binaries, the log).",
     "none readable", c_probe_control_read},
    {"T3.control-write", C_T3, P3,
     "Inside a sandbox, open each of sandbox.control_paths for writing (nothing is written).",
     "none writable", c_probe_control_write},
    {"T3.signal-control-plane", C_T3, P3,
     "Inside a sandbox, send signal 0 to every host process running one of "
     "sandbox.control_binaries (nothing is delivered).",
     "refused", c_probe_signal},
    {"T3.trace-control-plane", C_T3, P3,
     "Inside a sandbox, PTRACE_SEIZE every host process running one of sandbox.control_binaries "
     "(detached at once if it succeeds).",
     "refused", c_probe_trace},
    {"T3.hostlink-admin-frame", C_T3, P3,
     "From inside a sandbox, after the allowed URL got an upstream's answer through the proxy, "
     "send the proxy a frame of decisiond's admin protocol (AdminRequest reload_policy); with "
     "admin_socket, read the record after a checkpoint for a PolicyLoaded entry.",
     "the proxy's own refusal, or the connection closed unanswered; no policy loaded",
     c_probe_hostlink_admin},
    {"T3.measured-start", C_T3, P3,
     "Compare the newest Startup entry's file digests with what runs: /proc/PID/exe of every "
     "process running a measured binary, and the measured configuration files on disk; then, "
     "for a start measured into PCR 23 and with admin_socket, ask for a checkpoint now and have "
     "sworn-verify check its fresh TPM quote against the record's measured start.",
     "a running decisiond of the measured image, no measured file that differs, and the quote "
     "made now showing the measured start's PCR 23",
     c_probe_measured_start},
    {"T4.sandbox-recorded", C_T4, P4,
     "Send the allowed URL from one fresh sandbox and the denied URL from another through the "
     "proxy, ask the admin socket for a checkpoint now, and read the record's new entries for "
     "each sandbox's SandboxStarted entry and decisions.",
     "both decisions, the denial included, recorded with sandbox.principal, the sandbox's name "
     "and its SandboxStarted index",
     c_probe_sandbox_recorded},
    {"T3.fail-closed", C_T3, P3,
     "Stop decisiond with fail_closed.stop, send the allowed request shape (requests.allowed) "
     "through the proxy (fail_closed.proxy), then start decisiond again with fail_closed.start.",
     "the proxy's own refusal (its JSON answer, status 4xx or 5xx) while decisiond is down",
     c_probe_fail_closed},
};

const struct c_probe *c_registry_all(size_t *n)
{
    *n = sizeof(probes) / sizeof(probes[0]);
    return probes;
}

const struct c_probe *c_registry_find(const char *id)
{
    for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
        if (strcmp(probes[i].id, id) == 0)
            return &probes[i];
    return NULL;
}

const char *c_tier_name(enum c_tier t)
{
    static const char *const names[] = {"T?", "T1", "T2", "T3", "T4", "T5"};

    return (unsigned)t <= 5 ? names[t] : "T?";
}

int c_tier_parse(const char *s, enum c_tier *t)
{
    if (strlen(s) != 2 || (s[0] != 'T' && s[0] != 't') || s[1] < '1' || s[1] > '5')
        return -1;
    *t = (enum c_tier)(s[1] - '0');
    return 0;
}

static int put(EVP_MD_CTX *h, const char *s)
{
    return EVP_DigestUpdate(h, s, strlen(s)) == 1 && EVP_DigestUpdate(h, "\n", 1) == 1 ? 0 : -1;
}

int c_registry_digest(char out[65])
{
    EVP_MD_CTX *h = EVP_MD_CTX_new();
    unsigned char d[32];
    int rc = -1;

    if (h == NULL || EVP_DigestInit_ex(h, EVP_sha256(), NULL) != 1 ||
        put(h, "sworn-conformance probe set v1") < 0)
        goto done;
    for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
        if (put(h, probes[i].id) < 0 || put(h, c_tier_name(probes[i].tier)) < 0 ||
            put(h, probes[i].property) < 0 || put(h, probes[i].technique) < 0 ||
            put(h, probes[i].expected) < 0)
            goto done;
    if (EVP_DigestFinal_ex(h, d, NULL) != 1 || sworn_hex_encode(d, 32, out, 65) < 0)
        goto done;
    rc = 0;
done:
    EVP_MD_CTX_free(h);
    return rc;
}

/*
 * w_config.h -- the configuration of sworn-witness: a YAML file (libyaml through yamldoc.h),
 * docs/witness.md "Configuration" is the reference. The shape:
 *
 *     listen: 127.0.0.1:7380            host:port ([v6]:port); port 0 picks a free one; the
 *                                       host is an address (a name is resolved once, at start)
 *     state: /var/lib/sworn-witness/state.db
 *     key:
 *       uri: pkcs11:token=w;object=cosign | file:/etc/sworn-witness/key.pem (a 0600 file)
 *       module: /usr/lib/softhsm/libsofthsm2.so     pkcs11: only, required
 *       pin_file: /etc/sworn-witness/pin            pkcs11: only, required (0600)
 *       pinned_spki: <hex of the DER SPKI>          pkcs11: only, required
 *       name: witness.example.org                   the key name of the cosignatures
 *     limits:                                      all optional
 *       body_bytes: 65536                          a request body at most (413 beyond)
 *       requests_per_second: 20                    per client address, refilled continuously
 *       burst: 40                                  requests a client may make at once
 *       timeout: 10s                               to read a request, or to write an answer
 *       connections: 1024                          open at once (16 .. 100000; w_conns.h)
 *       connections_per_address: 64                open at once from one client address
 *     logs:                                        1 .. SWORN_WITNESS_LOGS_MAX
 *       - origin: example.com/log
 *         keys: [<vkey>, ...]                      C2SP verifier keys of type 0x01 or 0x02
 *
 * Loading is syntax and shape: unknown keys are errors, numbers are checked against bounds,
 * relative paths are made absolute against the configuration's folder, every verifier key is
 * parsed (its id checked), origins are unique. The key itself is opened later (signer.h), and
 * the file checks (a 0600 key file) are the signer's. Every error reads
 * "<file>:<line>:<col>: <message>" (sworn_err set, SWORN_ERR_FORMAT), or names the file.
 *
 * Ownership: the struct owns every string and array in it; sworn_witness_config_free frees it.
 * Nothing in it is secret. Thread safety: immutable once loaded.
 */
#ifndef SWORN_W_CONFIG_H
#define SWORN_W_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "note.h"

#define SWORN_WITNESS_LOGS_MAX 1024       /* logs one witness follows */
#define SWORN_WITNESS_LOG_KEYS_MAX 16     /* verifier keys of one log */
#define SWORN_WITNESS_BODY_DEFAULT 65536  /* limits.body_bytes */
#define SWORN_WITNESS_BODY_MAX (1u << 20) /* the largest body_bytes allowed: a whole note */

struct sworn_witness_log {
    char *origin;
    struct sworn_note_verifier *keys;
    size_t nkeys;
};

struct sworn_witness_config {
    char *listen_host; /* an address, or a name resolved once when binding */
    uint16_t listen_port;
    char *state_path;
    char *key_uri; /* file:<absolute path> or pkcs11:... */
    char *key_module, *key_pin_file;
    uint8_t *pinned_spki;
    size_t pinned_spki_len;
    char *key_name;
    uint64_t body_bytes;
    uint32_t rate_per_sec, burst;
    uint64_t timeout_ms;
    uint32_t connections, connections_per_address;
    struct sworn_witness_log *logs;
    size_t nlogs;
};

/* Load path. OUT: *out (free with sworn_witness_config_free). Returns 0 or -1 (above). */
int sworn_witness_config_load(const char *path, struct sworn_witness_config **out);

/* The log of origin (exactly origin_len bytes), or NULL when it is not followed. */
const struct sworn_witness_log *sworn_witness_config_log(const struct sworn_witness_config *c,
                                                         const char *origin, size_t origin_len);

void sworn_witness_config_free(struct sworn_witness_config *c);

#endif

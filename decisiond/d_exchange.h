/*
 * d_exchange.h -- OAuth token response interception (TokenExchange; DESIGN section 3, step 6;
 * docs/protocol.md section 4): the real tokens of a token endpoint's response are stored in the
 * vault under the scope of the credential a recent allow released (d_recent.h; each allow backs
 * one exchange), a CredentialsMinted entry records their hashes, the credentials the
 * per-credential cap replaces and the allow's index, and the proxy gets symbolic tokens to hand
 * the agent instead. Loop thread; the append and the vault write run on a worker, in that order.
 */
#ifndef SWORN_D_EXCHANGE_H
#define SWORN_D_EXCHANGE_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"

struct d_daemon;
struct d_conn;

/*
 * Handle ex (strictly decoded; owned from now on, its values wiped before it is freed) of
 * connection c. body/len are the frame body it came in, for the record of a refusal.
 */
void d_exchange_request(struct d_daemon *d, struct d_conn *c, Sworn__V1__TokenExchange *ex,
                        const uint8_t *body, size_t len);

#endif

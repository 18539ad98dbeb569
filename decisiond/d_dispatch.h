/*
 * d_dispatch.h -- the handler table of each channel: a frame body is decoded strictly
 * (wire/frame.h) and handed to the handler for its kind of request; a body that does not decode
 * is recorded as Refused and answered with an ErrorFrame. Loop thread.
 *
 *   decision socket: DecisionRequest, by its body:
 *                      authorize      -> d_decide_request (d_decide.h)
 *                      token_exchange -> d_exchange_request (d_exchange.h)
 *   admin socket:    AdminRequest, by its body -> d_admin_* (d_admin.h)
 *
 * A new kind of request (the proxy's) is a new oneof member in sworn.proto, its shape check in
 * wire/frame.c, and one line in the table here.
 */
#ifndef SWORN_D_DISPATCH_H
#define SWORN_D_DISPATCH_H

#include "d_conn.h"

extern const struct d_channel_ops d_decision_channel;
extern const struct d_channel_ops d_admin_channel;

#endif

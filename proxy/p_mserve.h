/*
 * p_mserve.h -- serving the metrics text on metrics.socket (p_mserve.c says how).
 */
#ifndef SWORN_P_MSERVE_H
#define SWORN_P_MSERVE_H

struct sworn_proxy;

/* Bind metrics.socket, if configured, and serve it. Returns 0, or -1 with sworn_err set. */
int sworn_mserve_open(struct sworn_proxy *px);

/* Stop serving (connections in progress are dropped at the loop's end). */
void sworn_mserve_close(struct sworn_proxy *px);

#endif

/*
 * p_harden.h -- sworn-proxy's process hardening (docs/proxy.md "Hardening"), in two steps:
 *
 *   sworn_proxy_harden_early  before anything is read: no core files, not dumpable (a core or a
 *                             ptrace of the proxy could show a credential in flight).
 *   sworn_proxy_harden        after the CA key is read and every socket is bound: drop to
 *                             `user:` for good (common/privdrop.h; only root may name another
 *                             user), not dumpable again (the kernel resets it at the drop), then
 *                             the seccomp filter of hardening.seccomp.
 *
 * Errors: -1 with sworn_err set; the caller must exit rather than serve unhardened.
 */
#ifndef SWORN_P_HARDEN_H
#define SWORN_P_HARDEN_H

struct sworn_proxy;

int sworn_proxy_harden_early(void);
int sworn_proxy_harden(struct sworn_proxy *px);

#endif

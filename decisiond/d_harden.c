/*
 * d_harden.c -- decisiond's process hardening (d_daemon.h; docs/decisiond.md "Hardening").
 *
 * Early (before any secret is read): no core dumps and not dumpable (privdrop.h), and, when run
 * as root, all memory locked so that vault credentials and PINs are never swapped out. Root has
 * CAP_IPC_LOCK, so the lock has no size limit there; an unprivileged daemon cannot lock all its
 * memory under the default RLIMIT_MEMLOCK, and instead relies on the vault locking each value.
 *
 * After the sockets are open and the signer child started: drop to run_as (privdrop.h), so
 * nothing after start-up runs as root.
 */
#include <errno.h>
#include <pwd.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "d_daemon.h"
#include "d_jlog.h"
#include "err.h"
#include "privdrop.h"

/* Is this the sanitizer build (gcc defines __SANITIZE_ADDRESS__, clang has __has_feature)? */
#if defined(__SANITIZE_ADDRESS__)
#define D_ASAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define D_ASAN_BUILD 1
#endif
#endif

/*
 * No core files, and not dumpable. The sanitizer build (tests only) keeps the process dumpable:
 * LeakSanitizer reads /proc/self/task at exit, which a non-dumpable process may not, and would
 * otherwise skip the daemon's leak check without failing.
 */
static int no_dumps(void)
{
#ifdef D_ASAN_BUILD
    return sworn_no_core_files();
#else
    return sworn_no_dumps();
#endif
}

int d_harden_early(void)
{
    if (no_dumps() < 0)
        return -1;
    return 0;
}

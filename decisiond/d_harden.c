/*
 * d_harden.c -- the engine's process hardening (d_daemon.h; docs/decisiond.md "Hardening").
 *
 * Early (before any secret is read): no core dumps and not dumpable (privdrop.h). The engine
 * does not lock all its memory (its log caches and frame buffers hold no secret, and it runs
 * unprivileged under the default RLIMIT_MEMLOCK): the vault locks each credential value itself
 * (vault.c). The drop to run_as is the monitor's, before it execs the engine (monitor.c).
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

/*
 * p11module.c -- PKCS#11 module plumbing (contract in p11module.h).
 */
#define _GNU_SOURCE
#include "p11module.h"

#include <dlfcn.h>
#include <string.h>

#include "err.h"
#include "secretfile.h"

#define MAX_SLOTS 64

/* Errors that mean the device context is gone or suspect: rebuild it. */
static int is_device_error(CK_RV rv)
{
    switch (rv) {
    case CKR_SESSION_HANDLE_INVALID:
    case CKR_SESSION_CLOSED:
    case CKR_DEVICE_REMOVED:
    case CKR_DEVICE_ERROR:
    case CKR_DEVICE_MEMORY:
    case CKR_TOKEN_NOT_PRESENT:
    case CKR_TOKEN_NOT_RECOGNIZED:
    case CKR_OBJECT_HANDLE_INVALID:
    case CKR_KEY_HANDLE_INVALID:
    case CKR_USER_NOT_LOGGED_IN:
    case CKR_CRYPTOKI_NOT_INITIALIZED:
    case CKR_GENERAL_ERROR:
    case CKR_FUNCTION_FAILED:
    case CKR_SLOT_ID_INVALID:
        return 1;
    default:
        return 0;
    }
}

int sworn_p11_error(const char *what, CK_RV rv)
{
    return sworn_err_set(is_device_error(rv) ? SWORN_ERR_IO : SWORN_ERR_CRYPTO,
                         "pkcs11: %s failed (CKR 0x%lx)", what, (unsigned long)rv);
}

int sworn_p11_load(const char *path, struct sworn_p11_module *m)
{
    CK_C_GetFunctionList get_list;
    CK_C_INITIALIZE_ARGS args;
    CK_RV rv;

    memset(m, 0, sizeof(*m));
    if (path == NULL || path[0] != '/')
        return sworn_err_set(SWORN_ERR_ARG, "pkcs11: the module path must be absolute");
    m->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (m->dl == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "pkcs11: cannot load module %s: %s", path, dlerror());
    *(void **)&get_list = dlsym(m->dl, "C_GetFunctionList");
    SWORN_ENSURE(get_list != NULL, SWORN_ERR_ARG, "pkcs11: %s has no C_GetFunctionList", path);
    rv = get_list(&m->f);
    SWORN_ENSURE(rv == CKR_OK && m->f != NULL, SWORN_ERR_ARG,
                 "pkcs11: C_GetFunctionList of %s failed", path);
    memset(&args, 0, sizeof(args));
    /* The module may be called from watchdog threads: let it use the OS's locks. */
    args.flags = CKF_OS_LOCKING_OK;
    rv = m->f->C_Initialize(&args);
    if (rv != CKR_OK && rv != CKR_CRYPTOKI_ALREADY_INITIALIZED) {
        sworn_p11_error("C_Initialize", rv);
        goto fail;
    }
    /* Initialised by someone else in this process: not ours to finalise. */
    m->initialized = rv == CKR_OK;
    return 0;
fail:
    sworn_p11_unload(m);
    return -1;
}

void sworn_p11_unload(struct sworn_p11_module *m)
{
    if (m->f != NULL && m->initialized)
        (void)m->f->C_Finalize(NULL);
    /*
     * The module stays mapped (no dlclose): a call abandoned by the watchdog may still be running
     * inside it, and unmapping code under a thread is fatal. Loading it again reuses the mapping.
     */
    memset(m, 0, sizeof(*m));
}

/* Compare a space-padded PKCS#11 text field with a NUL-terminated wanted value. */
static int padded_equal(const CK_UTF8CHAR *field, size_t field_len, const char *want)
{
    size_t n = strlen(want);

    if (n > field_len || memcmp(field, want, n) != 0)
        return 0;
    for (size_t i = n; i < field_len; i++)
        if (field[i] != ' ')
            return 0;
    return 1;
}

static int token_matches(const CK_TOKEN_INFO *t, const struct sworn_pkcs11_uri *u)
{
    return (u->token[0] == '\0' || padded_equal(t->label, sizeof(t->label), u->token)) &&
           (u->manufacturer[0] == '\0' ||
            padded_equal(t->manufacturerID, sizeof(t->manufacturerID), u->manufacturer)) &&
           (u->serial[0] == '\0' ||
            padded_equal(t->serialNumber, sizeof(t->serialNumber), u->serial)) &&
           (u->model[0] == '\0' || padded_equal(t->model, sizeof(t->model), u->model));
}

int sworn_p11_find_slot(struct sworn_p11_module *m, const struct sworn_pkcs11_uri *uri,
                        CK_SLOT_ID *slot)
{
    CK_SLOT_ID slots[MAX_SLOTS];
    CK_ULONG n = MAX_SLOTS;
    int found = 0;
    CK_RV rv = m->f->C_GetSlotList(CK_TRUE, slots, &n);

    if (rv != CKR_OK)
        return sworn_p11_error("C_GetSlotList", rv);
    for (CK_ULONG i = 0; i < n; i++) {
        CK_TOKEN_INFO info;

        if (m->f->C_GetTokenInfo(slots[i], &info) != CKR_OK ||
            !(info.flags & CKF_TOKEN_INITIALIZED))
            continue;
        if (token_matches(&info, uri)) {
            *slot = slots[i];
            found++;
        }
    }
    if (found == 0)
        return sworn_err_set(SWORN_ERR_IO, "pkcs11: no token matches the URI");
    if (found > 1)
        return sworn_err_set(
            SWORN_ERR_ARG,
            "pkcs11: %d tokens match the URI; name one with token= or serial=", found);
    return 0;
}

int sworn_p11_find_free_slot(struct sworn_p11_module *m, CK_SLOT_ID *slot)
{
    CK_SLOT_ID slots[MAX_SLOTS];
    CK_ULONG n = MAX_SLOTS;
    CK_RV rv = m->f->C_GetSlotList(CK_TRUE, slots, &n);

    if (rv != CKR_OK)
        return sworn_p11_error("C_GetSlotList", rv);
    for (CK_ULONG i = 0; i < n; i++) {
        CK_TOKEN_INFO info;

        if (m->f->C_GetTokenInfo(slots[i], &info) == CKR_OK &&
            !(info.flags & CKF_TOKEN_INITIALIZED)) {
            *slot = slots[i];
            return 0;
        }
    }
    return sworn_err_set(SWORN_ERR_NOTFOUND, "pkcs11: no slot with an uninitialised token");
}

int sworn_p11_read_pin(const char *path, uint8_t pin[SWORN_P11_PIN_MAX], size_t *len)
{
    size_t n = 0;

    if (path == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "pkcs11: no PIN file configured");
    if (sworn_secretfile_read(path, "PIN file", pin, SWORN_P11_PIN_MAX, &n) < 0)
        return -1;
    /* A trailing newline is what editors add; it is not part of the PIN, and sending it would
     * burn one of the token's retries. */
    if (n > 0 && pin[n - 1] == '\n')
        n--;
    if (n > 0 && pin[n - 1] == '\r')
        n--;
    if (n == 0)
        return sworn_err_set(SWORN_ERR_ARG, "pkcs11: the PIN file %s is empty", path);
    *len = n;
    return 0;
}

static volatile int pin_refused; /* set once, by the thread that logged in, read after */

void sworn_p11_note_pin_refused(void)
{
    pin_refused = 1;
}

int sworn_p11_pin_was_refused(void)
{
    return pin_refused;
}

/*
 * hang.c -- a PKCS#11 module for tests that forwards every call to the real SoftHSMv2 module,
 * except that C_Sign blocks for as long as the file named by SWORN_HANG_FILE exists. It stands in
 * for a device that stops answering, so that the signer's watchdog can be tested against a real
 * token. (The variable names a file path, not a secret.) A C_Sign that blocks first creates
 * the file <SWORN_HANG_FILE>.entered, so a test can wait for a signature to be in flight instead
 * of sleeping.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <p11-kit/pkcs11.h>

#define REAL_MODULE "/usr/lib/softhsm/libsofthsm2.so"

CK_RV C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR list);

static CK_FUNCTION_LIST_PTR real;
static CK_FUNCTION_LIST shim;

static CK_RV hanging_sign(CK_SESSION_HANDLE s, CK_BYTE_PTR data, CK_ULONG len, CK_BYTE_PTR sig,
                          CK_ULONG_PTR sig_len)
{
    const char *flag = getenv("SWORN_HANG_FILE");
    struct timespec tick = {0, 10 * 1000 * 1000};
    char entered[4096];

    if (flag != NULL && access(flag, F_OK) == 0 &&
        snprintf(entered, sizeof(entered), "%s.entered", flag) < (int)sizeof(entered)) {
        int fd = open(entered, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

        if (fd >= 0)
            close(fd);
    }
    while (flag != NULL && access(flag, F_OK) == 0)
        nanosleep(&tick, NULL);
    return real->C_Sign(s, data, len, sig, sig_len);
}

CK_RV C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR list)
{
    if (real == NULL) {
        void *dl = dlopen(REAL_MODULE, RTLD_NOW | RTLD_LOCAL);
        CK_C_GetFunctionList get;

        if (dl == NULL)
            return CKR_GENERAL_ERROR;
        *(void **)&get = dlsym(dl, "C_GetFunctionList");
        if (get == NULL || get(&real) != CKR_OK)
            return CKR_GENERAL_ERROR;
        shim = *real;
        shim.C_Sign = hanging_sign;
    }
    *list = &shim;
    return CKR_OK;
}

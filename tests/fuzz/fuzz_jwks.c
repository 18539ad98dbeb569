/*
 * fuzz_jwks.c -- libFuzzer target for proxy/p_jwks.c (a JSON Web Key Set for delegation tokens).
 *
 * The input is read as a JWKS. Asserted: sworn_jwks_parse gives a set or NULL with a message;
 * a set holds 1..64 keys, each with a key of an accepted type (an alg that fits it), kids of at
 * most 256 bytes, no two alike; sworn_jwks_select for each kid finds that key or refuses with a
 * sentence, and never returns a key whose alg does not fit. Anything else aborts, which
 * libFuzzer reports as a crash.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "fuzz.h"
#include "p_jwks.h"
#include "p_jwt.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x))                                                                                  \
            abort();                                                                               \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const algs[] = {"ES256", "RS256", "EdDSA", "HS256", "none"};
    struct sworn_jwks *s = sworn_jwks_parse("fuzz", data, size);

    if (s == NULL) {
        CHECK(sworn_err_msg()[0] != '\0');
        sworn_err_clear();
        return 0;
    }
    CHECK(s->n >= 1 && s->n <= SWORN_JWKS_KEYS_MAX);
    for (size_t i = 0; i < s->n; i++) {
        const struct sworn_jwk *k = &s->keys[i];

        CHECK(k->key != NULL);
        CHECK(strlen(k->kid) <= SWORN_JWKS_KID_MAX);
        CHECK(k->alg[0] == '\0' || sworn_jwt_alg_fits(k->key, k->alg));
        for (size_t a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
            const char *why = NULL;
            const struct sworn_jwk *got =
                sworn_jwks_select(s, k->kid, strlen(k->kid), k->has_kid, algs[a], &why);

            CHECK((got == NULL) != (why == NULL));
            CHECK(got == NULL || (sworn_jwt_alg_fits(got->key, algs[a]) && got->verifies));
            CHECK(got == NULL || !k->has_kid || got == k);
        }
    }
    sworn_jwks_free(s);
    return 0;
}

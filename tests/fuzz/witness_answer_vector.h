/*
 * witness_answer_vector.h -- a real checkpoint note and the cosignature key of the witness that
 * cosigned it (a dev-stack log and its sworn-witness, `scripts/dev-stack up --with-witness`),
 * for fuzz_witness_answer.c and tests/unit/test_witness_answer.c.
 */
#ifndef SWORN_WITNESS_ANSWER_VECTOR_H
#define SWORN_WITNESS_ANSWER_VECTOR_H

#define WAV_NOTE                                                                                   \
    "dev.sworn.example/ds2\n3\npZAZvDrSwqZnnX1JfcublXDodJE8cJERmXS+UevH0IE=\n\n"                   \
    "\xe2\x80\x94 dev.sworn.example/ds2 "                                                          \
    "H+yw6jBFAiApa0nAgu/gD2wMn3+iyyE1d5ththLcGA8eX5tEvrXYbQIhAL9"                                  \
    "Ker5IKt60hOrnLU8dEYZV06TuSP9lkfntpTl1+QG7\n"
#define WAV_VKEY                                                                                   \
    "witness.dev.sworn.example/ds2+cdbc17a9+BIn+UqL8Iq0sAcYDhmSX2jr/xbktO3EcnWLTdKJYy/u8"
/* the witness's cosignature line of WAV_NOTE, as its 200 answer gave it */
#define WAV_COSIG                                                                                  \
    "\xe2\x80\x94 witness.dev.sworn.example/ds2 "                                                  \
    "zbwXqQAAAABrFvTv5KPwBvonr4liZBitEjb5agRhq65qVjMywI"                                           \
    "Rc3Ga4MhmF98n9sofyGb3Bh3P4IX+r1L/b+73ULQdArQq/17rsAg==\n"

#endif

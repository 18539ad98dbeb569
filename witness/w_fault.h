/*
 * w_fault.h -- fault injection points of the witness, for the crash tests only.
 *
 * sworn_witness_fault(point) does nothing in sworn-witness. The test build,
 * sworn-witness-testfault (built only with the tests, never installed), compiles w_fault.c with
 * SWORN_WITNESS_TEST_FAULT: when the environment variable SWORN_WITNESS_FAULT equals point, the
 * process stops itself with SIGSTOP there, so that a test sees the exact instant (waitpid with
 * WUNTRACED) and kills it with SIGKILL: deterministic, and no sleep.
 *
 * Points: "after-commit": the new state is durable, the answer not yet sent.
 */
#ifndef SWORN_W_FAULT_H
#define SWORN_W_FAULT_H

void sworn_witness_fault(const char *point);

#endif

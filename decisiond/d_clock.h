/*
 * d_clock.h -- the daemon's two clocks. Any thread.
 */
#ifndef SWORN_D_CLOCK_H
#define SWORN_D_CLOCK_H

#include <stdint.h>

/* Wall-clock time (CLOCK_REALTIME) in milliseconds since the Unix epoch: what entries record. */
uint64_t d_now_unix_ms(void);

/* Monotonic time (CLOCK_MONOTONIC) in microseconds: for latencies and deadlines only. */
uint64_t d_now_mono_us(void);

#endif

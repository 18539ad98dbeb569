/*
 * civil.h -- dates of the proleptic Gregorian calendar and days since 1970-01-01 (H. Hinnant's
 * days_from_civil and civil_from_days), for the RFC 3339 times of keyrings and of sworn-policy's
 * requests. Pure arithmetic: any year that fits, no time zones, no leap seconds; the callers
 * check their fields' ranges first. No errors, no state.
 */
#ifndef SWORN_CIVIL_H
#define SWORN_CIVIL_H

#include <stdint.h>

/* Days since 1970-01-01 of year y, month m (1..12), day d (1..31). */
int64_t sworn_days_from_civil(int64_t y, unsigned m, unsigned d);

/* The date of day z since 1970-01-01. OUT: *y, *m (1..12), *d (1..31). */
void sworn_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);

#endif

/*
 * fuzz_report_json.c -- libFuzzer target for decisiond's reading of a sworn-conformance JSON
 * report (decisiond/report_json.h), the bytes an admin peer submits in a ConformanceReportRequest.
 *
 * The input is the report. When it is read, the summary must hold the shape rules the log's
 * packer holds it to (sworn_frame_check_conformance_summary), its length must be the input's and
 * its digest the input's SHA-256: what the entry names is exactly what was submitted.
 * Deterministic: no clocks, no randomness, nothing carried between inputs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "frame.h"
#include "fuzz.h"
#include "report_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct sworn_report_summary rs; /* large: off the stack */
    uint8_t digest[32];

    if (sworn_report_json_read(data, size, &rs) != 0)
        return 0;
    SHA256(data, size, digest);
    if (sworn_frame_check_conformance_summary(&rs.s) != 0 || rs.s.report_length != size ||
        memcmp(rs.s.report_sha256.data, digest, 32) != 0 ||
        (rs.s.n_only > 0 && rs.s.only != rs.only))
        abort();
    return 0;
}

/*
 * test_verify_html.c -- the auditor's page (`sworn-verify verify --html OUT`, `compare --html
 * OUT`; verifier/sv_html.h, docs/verifier.md section 10).
 *
 * Records are made by the real tools as test_verify_content.c makes them: entries packed with
 * the recording side's generated code, appended with the log library's
 * sworn_log_append_receipts (what decisiond calls), a `sworn-log checkpoint` after each hour's
 * entries and `export-tiles`. The record spans eight hours of decisions by four principals to
 * four hosts, a start, two policy loads, a key event and an approved escalation; one principal
 * and one host are hostile markup, one principal is not ASCII.
 *
 * In process: sv_html_escape on hostile bytes (markup, quotes, controls, a bidi override, bytes
 * that are not UTF-8), and a page rendered from a report and gathered data far past every bound
 * (10,000 distinct principals, 5,000 failures with hostile messages, time stamps over 30 years
 * and near 2^64 ms), which must stay bounded, say what it cut and hold no markup of the
 * record's. Through the program: the page of a passing record (mode 0644, no temporary left,
 * no script, no URL, the origin, every check, the counts, the hostile strings escaped), of a
 * failing record (every failure with its entry), of `compare`, and an --html path that cannot
 * be written (exit 2).
 *
 * Then the page in a browser: Debian's chromium, headless, takes a screenshot (a PNG of the
 * window's size) and dumps the DOM it rendered (the origin, every check name and the counts).
 * Where chromium is absent that part is skipped (exit 77, with the reason) after the rest has
 * passed, except under CI=true, where its absence is a failure (scripts/install-deps installs
 * it). With SWORN_HTML_SCREENSHOT=PATH the screenshot is also copied to PATH: that is how
 * docs/images/verify-report.png is made (docs/auditor-guide.md).
 */
#define _GNU_SOURCE /* pidfd_open through syscall */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "logstore.h"
#include "record_fixture.h"
#include "sv_html.h"
#include "sv_stats.h"
#include "sv_util.h"
#include "sv_verify.h"
#include "sworn.pb-c.h"
#include "testutil.h"
#include "verify_fixture.h"

#define ORIGIN "audit.sworn.example/log"
#define KEY_NAME "audit.sworn.example"
#define T0 1772438400000ull /* 2026-03-02 08:00 UTC */
#define MINUTE 60000ull
#define HOUR 3600000ull
#define HOURS 8
#define BROWSER_TIMEOUT_MS 90000 /* a headless chromium run; killed (and failed) past it */

static const char hostile_principal[] = "<script>alert('p')</script>&\"x\"";
static const char hostile_principal_esc[] =
    "&lt;script&gt;alert(&#39;p&#39;)&lt;/script&gt;&amp;&quot;x&quot;";
static const char hostile_host[] = "evil.example\"><img src=x onerror=alert(1)>";
static const char hostile_host_esc[] = "evil.example&quot;&gt;&lt;img src=x onerror=alert(1)&gt;";
static const char utf8_principal[] = "agent-m\xc3\xbcller";
static const char utf8_principal_esc[] = "agent-m<span class=\"u\">&#xFC;</span>ller";

static const char *log_bin, *verify_bin;

struct fx {
    char *dir;
    EVP_PKEY *receipt_key; /* Ed25519 */
    uint8_t receipt_spki[44], receipt_id[32];
    char receipt_spki_b64[64];
    uint8_t policy_a[32], policy_b[32];
    uint64_t allow, deny, escalate; /* the decisions the demo record holds */
    size_t cuts[HOURS + 2];         /* a checkpoint after entry cuts[i] - 1 */
    size_t ncuts;
};

static char *P(const struct fx *f, const char *name)
{
    return sworn_test_path(f->dir, name);
}

/* ------------------------------------------------------------------------------------------ */
/* Entries, packed as decisiond packs them */

static void add_receipt(const struct fx *f, struct sworn_record *b, size_t i)
{
    uint8_t tbs[18 + 32], sig[64], *leaf_in = malloc(1 + b->len[i]);
    size_t siglen = sizeof(sig);
    Sworn__V1__Receipt r = SWORN__V1__RECEIPT__INIT;
    EVP_MD_CTX *c = EVP_MD_CTX_new();

    assert_non_null(leaf_in);
    leaf_in[0] = 0;
    memcpy(leaf_in + 1, b->e[i], b->len[i]);
    memcpy(tbs, "\xffsworn/v1 receipt", 17);
    tbs[17] = 0;
    sv_sha256(leaf_in, 1 + b->len[i], tbs + 18);
    free(leaf_in);
    assert_int_equal(EVP_DigestSignInit(c, NULL, NULL, NULL, f->receipt_key), 1);
    assert_int_equal(EVP_DigestSign(c, sig, &siglen, tbs, sizeof(tbs)), 1);
    EVP_MD_CTX_free(c);
    r.key_id.data = (uint8_t *)f->receipt_id;
    r.key_id.len = 32;
    r.signature.data = sig;
    r.signature.len = siglen;
    r.alg = 2;
    sworn_record_put_receipt(b, i, &r);
}

static void startup(struct sworn_record *b, const uint8_t *policy, uint64_t t_ms)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__StartupMeasurement sm = SWORN__V1__STARTUP_MEASUREMENT__INIT;
    Sworn__V1__MeasuredFile mf = SWORN__V1__MEASURED_FILE__INIT,
                            pf = SWORN__V1__MEASURED_FILE__INIT, *files[2] = {&mf, &pf};
    uint8_t sha[32];

    sv_sha256("sworn-decisiond", 15, sha);
    mf.path = "/usr/libexec/sworn/sworn-decisiond";
    mf.sha256.data = sha;
    mf.sha256.len = 32;
    mf.role = SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_EXECUTABLE;
    pf.path = "/etc/sworn/policy.yaml";
    pf.sha256.data = (uint8_t *)policy;
    pf.sha256.len = 32;
    pf.role = SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_POLICY;
    sm.n_files = 2;
    sm.files = files;
    sm.time_unix_ms = t_ms;
    sm.engine_uid = 990;
    sm.signer_uid = 991;
    e.kind_case = SWORN__V1__ENTRY__KIND_STARTUP;
    e.startup = &sm;
    sworn_record_add(b, &e);
}

static void policy_loaded(struct sworn_record *b, const uint8_t *digest, uint64_t t_ms)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__PolicyLoaded pl = SWORN__V1__POLICY_LOADED__INIT;

    pl.digest.data = (uint8_t *)digest;
    pl.digest.len = 32;
    pl.source = "/etc/sworn/policy.yaml";
    pl.time_unix_ms = t_ms;
    pl.version = 3;
    e.kind_case = SWORN__V1__ENTRY__KIND_POLICY_LOADED;
    e.policy_loaded = &pl;
    sworn_record_add(b, &e);
}

static void key_event(struct sworn_record *b, const char *statement, uint64_t t_ms)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__KeyEvent k = SWORN__V1__KEY_EVENT__INIT;

    k.statement.data = (uint8_t *)statement;
    k.statement.len = strlen(statement);
    k.time_unix_ms = t_ms;
    e.kind_case = SWORN__V1__ENTRY__KIND_KEY_EVENT;
    e.key_event = &k;
    sworn_record_add(b, &e);
}

/* A decision by principal to host; reason NULL drops the reason (an entry the check refuses). */
static void decision(struct sworn_record *b, const char *id, Sworn__V1__Effect effect,
                     const uint8_t *digest, uint64_t t_ms, const char *principal, const char *host,
                     const char *reason)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__DecisionRecord d = SWORN__V1__DECISION_RECORD__INIT;
    Sworn__V1__AuthorizationRequest rq = SWORN__V1__AUTHORIZATION_REQUEST__INIT;
    Sworn__V1__Principal pr = SWORN__V1__PRINCIPAL__INIT;
    Sworn__V1__Resource rs = SWORN__V1__RESOURCE__INIT;
    Sworn__V1__Context cx = SWORN__V1__CONTEXT__INIT;

    pr.id = (char *)principal;
    rs.scheme = "https";
    rs.host = (char *)host;
    rs.port = 443;
    rs.path = "/v1/items";
    cx.method = effect == SWORN__V1__EFFECT__EFFECT_DENY ? "DELETE" : "GET";
    rq.request_id = (char *)id;
    rq.principal = &pr;
    rq.operation = "http.request";
    rq.resource = &rs;
    rq.context = &cx;
    rq.time_unix_ms = t_ms;
    d.request = &rq;
    d.effect = effect;
    d.rule_id = "items";
    d.reason = reason != NULL ? (char *)reason : "";
    d.policy_digest.data = (uint8_t *)digest;
    d.policy_digest.len = 32;
    d.time_unix_ms = t_ms;
    e.kind_case = SWORN__V1__ENTRY__KIND_DECISION;
    e.decision = &d;
    sworn_record_add(b, &e);
}

static void resolution(struct sworn_record *b, const char *id, size_t of, uint64_t t_ms)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__EscalationResolved r = SWORN__V1__ESCALATION_RESOLVED__INIT;
    uint8_t leaf[32];

    sworn_record_leaf(b, of, leaf);
    r.request_id = (char *)id;
    r.effect = SWORN__V1__EFFECT__EFFECT_ALLOW;
    r.operator_ = "alice";
    r.reason = "approved on the phone";
    r.time_unix_ms = t_ms;
    r.escalation_index = of;
    r.escalation_hash.data = leaf;
    r.escalation_hash.len = 32;
    e.kind_case = SWORN__V1__ENTRY__KIND_ESCALATION_RESOLVED;
    e.escalation_resolved = &r;
    sworn_record_add(b, &e);
}

/*
 * The demo-like record: a start and its policy; HOURS hours of decisions (their number varies by
 * hour) by agent-1, agent-2, ci-bot and, once each, the hostile and the non-ASCII principal, to
 * four hosts (one hostile); an escalation approved in hour 3; a key event in hour 4; a policy
 * reload in hour 5. A checkpoint closes each hour (f->cuts).
 */
static void demo_record(struct fx *f, struct sworn_record *b)
{
    static const unsigned per_hour[HOURS] = {3, 5, 8, 6, 4, 9, 5, 3};
    static const char *const principals[] = {"agent-1", "agent-2", "ci-bot", "agent-1"};
    static const char *const hosts[] = {"api.example.com", "github.com", "pypi.org"};
    unsigned n = 0;

    f->allow = f->deny = f->escalate = 0;
    f->ncuts = 0;
    startup(b, f->policy_a, T0 + 1000);
    policy_loaded(b, f->policy_a, T0 + 1500);
    for (unsigned h = 0; h < HOURS; h++) {
        const uint8_t *digest = h >= 5 ? f->policy_b : f->policy_a;

        if (h == 5)
            policy_loaded(b, f->policy_b, T0 + h * HOUR + MINUTE);
        if (h == 4)
            key_event(b, "receipt key rotated: new key valid from 2026-03-02T12:30Z",
                      T0 + h * HOUR + 30 * MINUTE);
        for (unsigned k = 0; k < per_hour[h]; k++, n++) {
            char id[32];
            const char *who = principals[n % 4], *host = hosts[n % 3];
            uint64_t t = T0 + h * HOUR + (2 + 6 * k) * MINUTE;
            Sworn__V1__Effect eff =
                n % 5 == 3 ? SWORN__V1__EFFECT__EFFECT_DENY : SWORN__V1__EFFECT__EFFECT_ALLOW;

            snprintf(id, sizeof(id), "req-%u", n);
            if (n == 7)
                who = hostile_principal;
            if (n == 11)
                who = utf8_principal;
            if (n == 13)
                host = hostile_host;
            if (h == 3 && k == 2) {
                decision(b, id, SWORN__V1__EFFECT__EFFECT_ESCALATE, digest, t, who, host,
                         "rule items: deletes need an operator");
                f->escalate++;
                resolution(b, id, b->n - 1, t + 4 * MINUTE);
                add_receipt(f, b, b->n - 1);
                continue;
            }
            decision(b, id, eff, digest, t, who, host,
                     eff == SWORN__V1__EFFECT__EFFECT_DENY ? "rule items: DELETE is denied"
                                                           : "rule items matched");
            if (eff == SWORN__V1__EFFECT__EFFECT_ALLOW) {
                add_receipt(f, b, b->n - 1);
                f->allow++;
            } else {
                f->deny++;
            }
        }
        f->cuts[f->ncuts++] = b->n;
    }
}

/* Make DIR/name (tiles), DIR/name.db and DIR/name.policy from b, with a checkpoint after each of
 * f->cuts (and after the last entry). */
static void make_log(const struct fx *f, const char *name, const struct sworn_record *b)
{
    char dbn[128], keyn[128], pn[128], text[2048], *db, *key, *out, *pp;
    struct sworn_test_run r;
    size_t from = 0;

    snprintf(dbn, sizeof(dbn), "%s.db", name);
    snprintf(keyn, sizeof(keyn), "%s.key", name);
    snprintf(pn, sizeof(pn), "%s.policy", name);
    db = P(f, dbn);
    key = P(f, keyn);
    out = P(f, name);
    pp = P(f, pn);
    sworn_test_run_ok("keygen", NULL, log_bin, "keygen", "--name", KEY_NAME, "--out", key, NULL);
    sworn_test_run_ok("init", NULL, log_bin, "init", "--db", db, "--origin", ORIGIN, "--key", key,
                      "--key-name", KEY_NAME, NULL);
    for (size_t c = 0; c <= f->ncuts && from < b->n; c++) {
        size_t to = c < f->ncuts && f->cuts[c] <= b->n ? f->cuts[c] : b->n;
        struct sworn_log *log;
        uint64_t first;

        if (to <= from)
            continue;
        if (sworn_log_open(db, &log) != 0)
            fail_msg("open %s", db);
        if (sworn_log_append_receipts(log, (const uint8_t *const *)b->e + from, b->len + from,
                                      (const uint8_t *const *)b->r + from, b->rlen + from,
                                      to - from, &first) != 0)
            fail_msg("append_receipts failed");
        sworn_log_close(log);
        sworn_test_run_ok("checkpoint", NULL, log_bin, "checkpoint", "--db", db, NULL);
        from = to;
    }
    sworn_test_run_ok("export-tiles", NULL, log_bin, "export-tiles", "--db", db, out, NULL);
    sworn_test_runv(&r, NULL, log_bin, "vkey", "--db", db, NULL);
    sworn_test_run_must(&r, "vkey");
    r.out[strcspn(r.out, "\n")] = '\0';
    snprintf(text, sizeof(text),
             "origin %s\nlog %s\nentries sworn\nreceipt-key %s\nquotes ignore\n", ORIGIN, r.out,
             f->receipt_spki_b64);
    sworn_test_write_file(pp, text, strlen(text), 0600);
    sworn_test_run_free(&r);
    free(pp);
    free(db);
    free(key);
    free(out);
}

/* `sworn-verify verify --policy DIR/name.policy --html DIR/page DIR/name`; its exit status. */
static int verify_html(const struct fx *f, const char *name, const char *page)
{
    char pn[128];
    char *pol, *rec, *out;
    struct sworn_test_run r;
    int status;

    snprintf(pn, sizeof(pn), "%s.policy", name);
    pol = P(f, pn);
    rec = P(f, name);
    out = P(f, page);
    sworn_test_runv(&r, NULL, verify_bin, "verify", "--no-progress", "--policy", pol, "--html", out,
                    rec, NULL);
    status = r.status;
    if (status != 0 && status != 1)
        print_message("sworn-verify: %s\n%s\n", r.out, r.err);
    sworn_test_run_free(&r);
    free(pol);
    free(rec);
    free(out);
    return status;
}

static char *read_page(const struct fx *f, const char *page, size_t *len)
{
    char *path = P(f, page), *d = sworn_test_read_file(path, len);

    free(path);
    return d;
}

/* The rules every page keeps, whatever it shows: no script, no URL, no markup that fetches. */
static void assert_self_contained(const char *page, size_t len)
{
    assert_int_equal(strlen(page), len); /* no NUL byte */
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)page[i] >= 0x80 || (page[i] < 0x20 && page[i] != '\n'))
            fail_msg("byte %zu of the page is 0x%02x: the page is printable ASCII", i,
                     (unsigned char)page[i]);
    assert_null(strcasestr(page, "<script"));
    assert_null(strcasestr(page, "http://"));
    assert_null(strcasestr(page, "https://"));
    assert_null(strcasestr(page, "<img"));
    assert_null(strcasestr(page, "<link"));
    assert_null(strcasestr(page, "<iframe"));
    assert_null(strcasestr(page, "<object"));
    assert_null(strcasestr(page, "<embed"));
    assert_null(strcasestr(page, "href"));
    assert_null(strcasestr(page, "url("));
    assert_null(strcasestr(page, "@import"));
    assert_non_null(strstr(page, "Content-Security-Policy\" content=\"default-src 'none'"));
}

static void assert_has(const char *page, const char *s)
{
    if (strstr(page, s) == NULL)
        fail_msg("the page lacks \"%s\"", s);
}

/* ------------------------------------------------------------------------------------------ */

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    EVP_PKEY_CTX *kc = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
    uint8_t *p;

    f->dir = sworn_test_tmpdir("vhtml");
    assert_int_equal(EVP_PKEY_keygen_init(kc), 1);
    assert_int_equal(EVP_PKEY_keygen(kc, &f->receipt_key), 1);
    EVP_PKEY_CTX_free(kc);
    p = f->receipt_spki;
    assert_int_equal(i2d_PUBKEY(f->receipt_key, &p), 44);
    sv_sha256(f->receipt_spki, 44, f->receipt_id);
    sv_b64_encode(f->receipt_spki, 44, f->receipt_spki_b64, sizeof(f->receipt_spki_b64));
    sv_sha256("policy a", 8, f->policy_a);
    sv_sha256("policy b", 8, f->policy_b);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    sworn_test_tmpdir_drop(&f->dir);
    EVP_PKEY_free(f->receipt_key);
    free(f);
    return 0;
}

/* The escaper on hostile bytes, exactly. */
static void test_escape(void **state)
{
    static const struct {
        const char *in;
        size_t n;
        const char *out;
    } v[] = {
        {"plain-name_1.example", 20, "plain-name_1.example"},
        {"<b>&\"'", 6, "&lt;b&gt;&amp;&quot;&#39;"},
        {"a\\x01", 5, "a\\\\x01"},
        {"\x01", 1, "<span class=\"x\">\\x01</span>"},
        {"\x7f", 1, "<span class=\"x\">\\x7f</span>"},
        {"a\0b", 3, "a<span class=\"x\">\\x00</span>b"},
        {"\xff", 1, "<span class=\"x\">\\xff</span>"},
        {"\xc3", 1, "<span class=\"x\">\\xc3</span>"},
        {"\xc0\xaf", 2, "<span class=\"x\">\\xc0</span><span class=\"x\">\\xaf</span>"},
        /* U+202E RIGHT-TO-LEFT OVERRIDE: shown, never applied */
        {"x\xe2\x80\xaey", 5, "x<span class=\"x\">\\xe2\\x80\\xae</span>y"},
        /* U+200B ZERO WIDTH SPACE */
        {"\xe2\x80\x8b", 3, "<span class=\"x\">\\xe2\\x80\\x8b</span>"},
        /* U+0430 CYRILLIC SMALL LETTER A, a look-alike: a marked numeric reference */
        {"p\xd0\xb0y", 4, "p<span class=\"u\">&#x430;</span>y"},
        {"\xf0\x9f\x94\x91", 4, "<span class=\"u\">&#x1F511;</span>"},
        {"</td></tr></table><script>", 26, "&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;&lt;script&gt;"},
    };
    char out[256];

    (void)state;
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        size_t need = sv_html_escape(v[i].in, v[i].n, NULL, 0);
        size_t got = sv_html_escape(v[i].in, v[i].n, out, sizeof(out));

        assert_int_equal(need, strlen(v[i].out));
        assert_int_equal(got, need);
        assert_string_equal(out, v[i].out);
        /* One byte short: nothing usable (the empty string), and said so. */
        assert_true(sv_html_escape(v[i].in, v[i].n, out, need) == (size_t)-1);
        assert_string_equal(out, "");
    }
}

/* A report and gathered data far past every bound: the page stays bounded and says what it cut. */
static void test_bounds(void **state)
{
    struct sv_report *rep = calloc(1, sizeof(*rep));
    struct sv_stats st;
    struct sv_entry_info *info = calloc(1, sizeof(*info));
    struct sv_html_meta meta = {"sworn-verify test <b>", "/p/<policy>"};
    char *page, *p;
    size_t len, rects = 0;

    (void)state;
    assert_non_null(rep);
    assert_non_null(info);
    sv_stats_init(&st);
    snprintf(rep->record, sizeof(rep->record), "/records/<script>x</script>");
    snprintf(rep->origin, sizeof(rep->origin), "o.example/\"><script>alert(1)</script>");
    rep->stats = &st;
    for (unsigned i = 0; i < 5000; i++) {
        char item[64];

        snprintf(item, sizeof(item), "entry %u", i);
        sv_report_fail(rep, (enum sv_check_id)(i % SV_CHECK_COUNT), item, "bad-string",
                       "the name <script>alert(\"\xe2\x80\xae\")</script> \x01\xff is refused");
    }
    /* 10,000 principals and hosts over 30 years, one decision each; and times at the far end
     * of uint64_t's range. */
    info->kind = SV_ENTRY_DECISION;
    for (unsigned i = 0; i < 10000; i++) {
        info->effect = 1 + (int)(i % 3);
        info->time_unix_ms = T0 - 30ull * 365 * 24 * HOUR + (uint64_t)i * 94608ull * 1000;
        snprintf(info->principal, sizeof(info->principal), "<p%u>&'\"", i);
        snprintf(info->host, sizeof(info->host), "h%u.example\x01", i % 5000);
        sv_stats_entry(&st, i, info);
    }
    info->time_unix_ms = UINT64_MAX;
    sv_stats_entry(&st, 10000, info);
    sv_stats_mark(&st, SV_MARK_CHECKPOINT, 10001, UINT64_MAX - 1, 1);
    sv_stats_mark(&st, SV_MARK_QUOTE, 10001, 0, 1);
    for (unsigned i = 0; i < 1000; i++)
        sv_stats_mark(&st, SV_MARK_KEY_EVENT, 20000 + i, T0 + i * HOUR, 1);
    assert_int_equal(st.failures_total, 5000);
    assert_int_equal(st.nfailures, SV_STATS_FAILURES_MAX);
    assert_int_equal(st.principals.n, SV_STATS_NAMES_MAX);
    assert_int_equal(st.principals.other_names, 10001 - SV_STATS_NAMES_MAX);
    assert_int_equal(st.hosts.n, SV_STATS_NAMES_MAX);
    assert_int_equal(st.nevents, SV_STATS_EVENTS_MAX);
    assert_int_equal(st.oom, 0);

    assert_int_equal(sv_html_render_report(rep, &st, &meta, &page, &len), 0);
    assert_self_contained(page, len);
    assert_true(len < 4u << 20); /* every table bounded */
    assert_has(page, "VERIFICATION FAILED");
    assert_has(page, "o.example/&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
    assert_has(page, "/records/&lt;script&gt;x&lt;/script&gt;");
    assert_has(page, "sworn-verify test &lt;b&gt;");
    assert_has(page, "&lt;script&gt;alert(&quot;<span class=\"x\">\\xe2\\x80\\xae</span>&quot;)");
    assert_has(page, "4000 more failure(s) not listed");
    assert_has(page, "more principals not shown");
    assert_has(page, "more hosts not shown");
    assert_has(page, "names beyond the first 4096 distinct ones");
    assert_has(page, "488 more not listed");
    assert_has(page, "more than 240 bars");
    assert_has(page, "t=18446744073709551615 ms");
    assert_has(page, "1 marker(s) without a time");
    /* At most SV_HTML_BARS bars of three effects. */
    for (p = page; (p = strstr(p, "<rect x=")) != NULL; p++)
        rects++;
    assert_true(rects <= 3 * SV_HTML_BARS + 2 * SV_HTML_BARS);
    free(page);
    sv_stats_free(&st);
    free(info);
    free(rep);
}

/* The page of the demo record, through the program. */
static void test_page(void **state)
{
    struct fx *f = *state;
    struct sworn_record b = {0};
    char *page, *path, want[256];
    size_t len;
    struct stat sb;
    json_object *rep;

    demo_record(f, &b);
    make_log(f, "demo", &b);
    assert_int_equal(verify_html(f, "demo", "demo.html"), 0);
    path = P(f, "demo.html");
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0644);
    free(path);
    page = read_page(f, "demo.html", &len);
    assert_self_contained(page, len);
    assert_has(page, "sworn record: all checks passed");
    assert_has(page, ORIGIN);
    for (int i = 0; i < SV_CHECK_COUNT; i++) {
        snprintf(want, sizeof(want), "<td class=\"mono\">%s</td>", sv_check_name(i));
        assert_has(page, want);
    }
    snprintf(want, sizeof(want), "<span id=\"n-allow\">%llu</span>", (unsigned long long)f->allow);
    assert_has(page, want);
    snprintf(want, sizeof(want), "<span id=\"n-deny\">%llu</span>", (unsigned long long)f->deny);
    assert_has(page, want);
    snprintf(want, sizeof(want), "<span id=\"n-escalate\">%llu</span>",
             (unsigned long long)f->escalate);
    assert_has(page, want);
    /* The hostile strings, escaped; the raw ones nowhere. */
    assert_has(page, hostile_principal_esc);
    assert_has(page, hostile_host_esc);
    assert_has(page, utf8_principal_esc);
    assert_null(strstr(page, hostile_principal));
    assert_null(strstr(page, hostile_host));
    /* One bar per hour, a checkpoint marker in each, the key event and both policy loads. */
    assert_has(page, "Decisions per 1 hour from 2026-03-02 08:00 UTC to 2026-03-02 16:00 UTC");
    assert_has(page, "checkpoints 8</span>");
    assert_has(page, "key events 1</span>");
    assert_has(page, "policy loads 2</span>");
    assert_has(page, "<td>key event</td>");
    /* agent-1 made the most decisions: the principals' first row. */
    assert_has(page, "<td class=\"mono\">agent-1</td>");
    assert_has(page, "None: every check that ran passed.");
    /* The same verdict as the JSON report. */
    rep = sworn_verify_json(verify_bin, f->dir, "demo.policy", "demo", NULL, 0,
                            SWORN_VERIFY_NO_PROGRESS);
    sworn_verify_expect_only(rep, "");
    json_object_put(rep);
    {
        /* The temporary file is gone (renamed). */
        DIR *d = opendir(f->dir);
        struct dirent *de;

        assert_non_null(d);
        while ((de = readdir(d)) != NULL)
            if (strstr(de->d_name, ".tmp.") != NULL)
                fail_msg("a temporary file is left: %s", de->d_name);
        closedir(d);
    }
    free(page);
    sworn_record_free(&b);
}

/* A failing record: every failure with the entry that caused it. */
static void test_page_failures(void **state)
{
    struct fx *f = *state;
    struct sworn_record b = {0};
    uint8_t other[32];
    char *page, want[256];
    size_t len, bad_reason, bad_policy;

    demo_record(f, &b);
    sv_sha256("a policy never loaded", 21, other);
    bad_reason = b.n;
    decision(&b, "req-x1", SWORN__V1__EFFECT__EFFECT_DENY, f->policy_b, T0 + 8 * HOUR, "agent-1",
             "api.example.com", NULL);
    bad_policy = b.n;
    decision(&b, "req-x2", SWORN__V1__EFFECT__EFFECT_DENY, other, T0 + 8 * HOUR + MINUTE, "agent-2",
             hostile_host, "rule items: DELETE is denied");
    f->cuts[f->ncuts++] = b.n;
    make_log(f, "failing", &b);
    assert_int_equal(verify_html(f, "failing", "failing.html"), 1);
    page = read_page(f, "failing.html", &len);
    assert_self_contained(page, len);
    assert_has(page, "sworn record: VERIFICATION FAILED");
    assert_has(page, "2 failure(s), each with the entry");
    snprintf(want, sizeof(want), "<td class=\"mono\">entries</td><td class=\"mono\">entry %zu</td>",
             bad_reason);
    assert_has(page, want);
    snprintf(want, sizeof(want),
             "<td class=\"mono\">policy-digests</td><td class=\"mono\">entry %zu</td>"
             "<td><code>unknown-policy</code>",
             bad_policy);
    assert_has(page, want);
    free(page);
    sworn_record_free(&b);
}

/* compare --html, and an --html that cannot be written. */
static void test_page_compare(void **state)
{
    struct fx *f = *state;
    char *pol = P(f, "demo.policy"), *rec = P(f, "demo"), *out = P(f, "compare.html");
    char *nowhere = P(f, "no/such/folder/page.html"), *page;
    struct sworn_test_run r;
    struct stat sb;
    size_t len;

    sworn_test_runv(&r, NULL, verify_bin, "compare", "--policy", pol, "--html", out, rec, rec,
                    NULL);
    sworn_test_run_must(&r, "compare --html");
    sworn_test_run_free(&r);
    assert_int_equal(stat(out, &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0644);
    page = read_page(f, "compare.html", &len);
    assert_self_contained(page, len);
    assert_has(page, "sworn records: consistent");
    assert_has(page, ORIGIN);
    free(page);

    sworn_test_runv(&r, NULL, verify_bin, "verify", "--no-progress", "--policy", pol, "--html",
                    nowhere, rec, NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "page.html"));
    sworn_test_run_free(&r);
    sworn_test_runv(&r, NULL, verify_bin, "check-fork-proof", "--policy", pol, "--html", out, rec,
                    NULL);
    assert_int_equal(r.status, 2);
    sworn_test_run_free(&r);
    free(pol);
    free(rec);
    free(out);
    free(nowhere);
}

/* ------------------------------------------------------------------------------------------ */
/* The browser */

static char chromium[4096];

/* chromium on the PATH (Debian's package: /usr/bin/chromium); 0 when found. */
static int find_chromium(void)
{
    const char *path = getenv("PATH");
    char *copy, *save = NULL;

    if (path == NULL)
        path = "/usr/bin:/bin";
    copy = strdup(path);
    assert_non_null(copy);
    for (char *d = strtok_r(copy, ":", &save); d != NULL; d = strtok_r(NULL, ":", &save)) {
        snprintf(chromium, sizeof(chromium), "%s/chromium", d);
        if (access(chromium, X_OK) == 0) {
            free(copy);
            return 0;
        }
    }
    free(copy);
    chromium[0] = '\0';
    return -1;
}

/*
 * Run argv (argv[0] a path) in a process group of its own with HOME=home, stdout to out_path and
 * stderr to err_path, and wait for it to end, at most BROWSER_TIMEOUT_MS: its pidfd is polled,
 * so the wait ends when it exits. Past the deadline the whole group is killed and the test
 * fails. After it ends, whatever of its group is left (chromium's helpers) is killed too.
 * Returns its exit status.
 */
static int run_browser(const char *const *argv, const char *home, const char *out_path,
                       const char *err_path)
{
    pid_t pid = fork();
    int pidfd, status = -1, ready;
    struct pollfd pfd;

    assert_true(pid >= 0);
    if (pid == 0) {
        int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        if (setpgid(0, 0) != 0 || o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 ||
            setenv("HOME", home, 1) != 0)
            _exit(126);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    (void)setpgid(pid, pid); /* either side may win the race; the group is the same */
    pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    assert_true(pidfd >= 0);
    pfd.fd = pidfd;
    pfd.events = POLLIN;
    do
        ready = poll(&pfd, 1, BROWSER_TIMEOUT_MS);
    while (ready < 0 && errno == EINTR);
    close(pidfd);
    if (ready == 0) {
        kill(-pid, SIGKILL);
        waitpid(pid, &status, 0);
        fail_msg("%s did not end within %d ms: killed", argv[0], BROWSER_TIMEOUT_MS);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    kill(-pid, SIGKILL); /* helpers of its own group still running, if any (ESRCH: none) */
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void test_chromium(void **state)
{
    struct fx *f = *state;
    char *page = P(f, "demo.html"), *png = P(f, "demo.png"), *home = P(f, "chromium-home");
    char *profile = P(f, "chromium-home/profile"), *out = P(f, "chromium.out");
    char *err = P(f, "chromium.err"), url[4200], shot[4200], udd[4200], want[256], *dom, *img;
    size_t dom_len, img_len;
    const char *copy_to = getenv("SWORN_HTML_SCREENSHOT");
    int st;

    assert_int_equal(mkdir(home, 0700), 0);
    snprintf(url, sizeof(url), "file://%s", page);
    snprintf(shot, sizeof(shot), "--screenshot=%s", png);
    snprintf(udd, sizeof(udd), "--user-data-dir=%s", profile);
    {
        const char *argv[] = {chromium,
                              "--headless",
                              "--no-sandbox",
                              "--disable-gpu",
                              "--no-first-run",
                              "--disable-extensions",
                              "--disable-background-networking",
                              "--disable-component-update",
                              "--disable-sync",
                              "--hide-scrollbars",
                              udd,
                              shot,
                              "--window-size=1280,2000",
                              url,
                              NULL};

        st = run_browser(argv, home, out, err);
        if (st != 0)
            fail_msg("chromium --screenshot exited %d", st);
    }
    img = sworn_test_read_file(png, &img_len);
    assert_true(img_len > 1000);
    assert_memory_equal(img, "\x89PNG\r\n\x1a\n", 8);
    assert_memory_equal(img + 12, "IHDR", 4);
    assert_int_equal(be32((const uint8_t *)img + 16), 1280);
    assert_int_equal(be32((const uint8_t *)img + 20), 2000);
    if (copy_to != NULL && copy_to[0] != '\0')
        sworn_test_write_file(copy_to, img, img_len, 0644);
    free(img);
    {
        const char *argv[] = {chromium,
                              "--headless",
                              "--no-sandbox",
                              "--disable-gpu",
                              "--no-first-run",
                              "--disable-extensions",
                              "--disable-background-networking",
                              "--disable-component-update",
                              "--disable-sync",
                              udd,
                              "--dump-dom",
                              url,
                              NULL};

        st = run_browser(argv, home, out, err);
        if (st != 0)
            fail_msg("chromium --dump-dom exited %d", st);
    }
    dom = sworn_test_read_file(out, &dom_len);
    /* What the browser rendered: the origin, every check, the counts, the hostile strings as
     * text (the DOM serialised again escapes them again), and no element of theirs. */
    assert_has(dom, "sworn record: all checks passed");
    assert_has(dom, ORIGIN);
    for (int i = 0; i < SV_CHECK_COUNT; i++) {
        snprintf(want, sizeof(want), ">%s</td>", sv_check_name(i));
        assert_has(dom, want);
    }
    snprintf(want, sizeof(want), "<span id=\"n-allow\">%llu</span>", (unsigned long long)f->allow);
    assert_has(dom, want);
    snprintf(want, sizeof(want), "<span id=\"n-deny\">%llu</span>", (unsigned long long)f->deny);
    assert_has(dom, want);
    snprintf(want, sizeof(want), "<span id=\"n-escalate\">%llu</span>",
             (unsigned long long)f->escalate);
    assert_has(dom, want);
    assert_has(dom, "&lt;script&gt;alert('p')&lt;/script&gt;&amp;\"x\"");
    assert_null(strcasestr(dom, "<script"));
    assert_null(strcasestr(dom, "<img"));
    assert_has(dom, "<svg");
    free(dom);
    free(page);
    free(png);
    free(home);
    free(profile);
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),       cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_page),         cmocka_unit_test(test_page_failures),
        cmocka_unit_test(test_page_compare),
    };
    const struct CMUnitTest browser[] = {
        cmocka_unit_test(test_page),
        cmocka_unit_test(test_chromium),
    };
    const char *ci = getenv("CI");
    int rc;

    log_bin = sworn_test_bin("SWORN_LOG_BIN");
    verify_bin = sworn_test_bin("SWORN_VERIFY_BIN");
    rc = cmocka_run_group_tests_name("verify_html", tests, setup, teardown);
    if (rc != 0)
        return rc;
    if (find_chromium() != 0) {
        if (ci != NULL && strcmp(ci, "true") == 0) {
            fprintf(stderr, "FAILED: chromium is not on the PATH, and CI=true requires it "
                            "(scripts/install-deps installs Debian's chromium)\n");
            return 1;
        }
        printf("SKIPPED: the page in a browser: chromium is not on the PATH (Debian's package "
               "chromium; scripts/install-deps installs it); the other tests above passed\n");
        return 77;
    }
    return cmocka_run_group_tests_name("verify_html_chromium", browser, setup, teardown);
}

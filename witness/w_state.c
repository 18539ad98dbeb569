/*
 * w_state.c -- the witness's SQLite state (contract in w_state.h).
 *
 * Schema (version 1, in PRAGMA user_version):
 *     latest(origin TEXT PRIMARY KEY, size INTEGER >= 0, root BLOB of 32 bytes,
 *            checkpoint TEXT, cosigned_at INTEGER seconds)
 *     forks(id INTEGER PRIMARY KEY, origin TEXT, size INTEGER, note BLOB, seen_at INTEGER)
 *     trigger latest_no_rollback: an UPDATE that lowers size aborts.
 */
#include "w_state.h"

#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "err.h"

#define SCHEMA_VERSION 1

struct sworn_witness_state {
    sqlite3 *db;
    sqlite3_stmt *get, *put, *fork;
};

static int db_err(struct sworn_witness_state *st, const char *what)
{
    return sworn_err_set(SWORN_ERR_IO, "witness state: %s: %s", what, sqlite3_errmsg(st->db));
}

static int exec(struct sworn_witness_state *st, const char *sql)
{
    if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return db_err(st, sql);
    return 0;
}

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS latest ("
    " origin TEXT PRIMARY KEY NOT NULL,"
    " size INTEGER NOT NULL CHECK (size >= 0),"
    " root BLOB NOT NULL CHECK (length(root) = 32),"
    " checkpoint TEXT NOT NULL,"
    " cosigned_at INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS forks ("
    " id INTEGER PRIMARY KEY,"
    " origin TEXT NOT NULL,"
    " size INTEGER NOT NULL,"
    " note BLOB NOT NULL,"
    " seen_at INTEGER NOT NULL);"
    "CREATE TRIGGER IF NOT EXISTS latest_no_rollback BEFORE UPDATE OF size ON latest"
    " WHEN NEW.size < OLD.size BEGIN SELECT RAISE(ABORT, 'witness state: size decreases'); END;";

static int prepare(struct sworn_witness_state *st, const char *sql, sqlite3_stmt **out)
{
    if (sqlite3_prepare_v2(st->db, sql, -1, out, NULL) != SQLITE_OK)
        return db_err(st, "prepare");
    return 0;
}

int sworn_witness_state_open(const char *path, unsigned busy_ms, struct sworn_witness_state **out)
{
    struct sworn_witness_state *st = calloc(1, sizeof(*st));
    sqlite3_stmt *v = NULL;
    int version;

    if (st == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    if (sqlite3_open_v2(path, &st->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        sworn_err_set(SWORN_ERR_IO, "witness state: cannot open %s: %s", path,
                      st->db != NULL ? sqlite3_errmsg(st->db) : "out of memory");
        goto fail;
    }
    sqlite3_busy_timeout(st->db, (int)busy_ms);
    /* WAL and FULL: a commit is fsynced before it returns (w_state.h). */
    SWORN_GUARD(exec(st, "PRAGMA journal_mode=WAL"));
    SWORN_GUARD(exec(st, "PRAGMA synchronous=FULL"));
    SWORN_GUARD(exec(st, "BEGIN IMMEDIATE"));
    if (prepare(st, "PRAGMA user_version", &v) < 0 || sqlite3_step(v) != SQLITE_ROW) {
        db_err(st, "user_version");
        sqlite3_finalize(v);
        exec(st, "ROLLBACK");
        goto fail;
    }
    version = sqlite3_column_int(v, 0);
    sqlite3_finalize(v);
    if (version != 0 && version != SCHEMA_VERSION) {
        exec(st, "ROLLBACK");
        sworn_err_set(SWORN_ERR_CORRUPT, "witness state: %s has schema version %d, not %d", path,
                      version, SCHEMA_VERSION);
        goto fail;
    }
    if (exec(st, schema) < 0 || exec(st, "PRAGMA user_version=1") < 0 || exec(st, "COMMIT") < 0) {
        exec(st, "ROLLBACK");
        goto fail;
    }
    SWORN_GUARD(
        prepare(st, "SELECT size, root, cosigned_at FROM latest WHERE origin = ?1", &st->get));
    SWORN_GUARD(prepare(st,
                        "INSERT INTO latest (origin, size, root, checkpoint, cosigned_at) "
                        "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(origin) DO UPDATE SET "
                        "size = excluded.size, root = excluded.root, "
                        "checkpoint = excluded.checkpoint, cosigned_at = excluded.cosigned_at",
                        &st->put));
    /* At most SWORN_WITNESS_FORKS_MAX rows per origin: the first ones are the evidence; a log
     * that holds its key must not be able to fill the disk with more (red team 2026-12). */
    SWORN_GUARD(prepare(st,
                        "INSERT INTO forks (origin, size, note, seen_at) SELECT ?1, ?2, ?3, ?4 "
                        "WHERE (SELECT count(*) FROM forks WHERE origin = ?1) < ?5",
                        &st->fork));
    *out = st;
    return 0;
fail:
    sworn_witness_state_close(st);
    return -1;
}

void sworn_witness_state_close(struct sworn_witness_state *st)
{
    if (st == NULL)
        return;
    sqlite3_finalize(st->get);
    sqlite3_finalize(st->put);
    sqlite3_finalize(st->fork);
    sqlite3_close(st->db);
    free(st);
}

int sworn_witness_state_begin(struct sworn_witness_state *st)
{
    return exec(st, "BEGIN IMMEDIATE");
}

int sworn_witness_state_get(struct sworn_witness_state *st, const char *origin, int *found,
                            uint64_t *size, uint8_t root[SWORN_HASH_LEN], uint64_t *cosigned_at)
{
    int rc;

    *found = 0;
    *size = 0;
    *cosigned_at = 0;
    memset(root, 0, SWORN_HASH_LEN);
    sqlite3_reset(st->get);
    sqlite3_bind_text(st->get, 1, origin, -1, SQLITE_STATIC);
    rc = sqlite3_step(st->get);
    if (rc == SQLITE_ROW) {
        sqlite3_int64 s = sqlite3_column_int64(st->get, 0);
        const void *r = sqlite3_column_blob(st->get, 1);
        sqlite3_int64 at = sqlite3_column_int64(st->get, 2);

        if (s < 0 || at < 0 || r == NULL || sqlite3_column_bytes(st->get, 1) != SWORN_HASH_LEN) {
            sqlite3_reset(st->get);
            return sworn_err_set(SWORN_ERR_CORRUPT, "witness state: bad row for %s", origin);
        }
        *found = 1;
        *size = (uint64_t)s;
        memcpy(root, r, SWORN_HASH_LEN);
        *cosigned_at = (uint64_t)at;
        rc = sqlite3_step(st->get);
    }
    sqlite3_reset(st->get);
    if (rc != SQLITE_DONE)
        return db_err(st, "read the latest checkpoint");
    return 0;
}

int sworn_witness_state_put(struct sworn_witness_state *st, const char *origin, uint64_t size,
                            const uint8_t root[SWORN_HASH_LEN], const char *text, size_t text_len,
                            uint64_t time)
{
    int rc;

    if (size > SWORN_WITNESS_SIZE_MAX || time > SWORN_WITNESS_SIZE_MAX || text_len > INT32_MAX)
        return sworn_err_set(SWORN_ERR_ARG, "witness state: size or time out of range");
    sqlite3_reset(st->put);
    sqlite3_bind_text(st->put, 1, origin, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st->put, 2, (sqlite3_int64)size);
    sqlite3_bind_blob(st->put, 3, root, SWORN_HASH_LEN, SQLITE_STATIC);
    sqlite3_bind_text(st->put, 4, text, (int)text_len, SQLITE_STATIC);
    sqlite3_bind_int64(st->put, 5, (sqlite3_int64)time);
    rc = sqlite3_step(st->put);
    sqlite3_reset(st->put);
    if (rc != SQLITE_DONE)
        return db_err(st, "write the latest checkpoint");
    return 0;
}

int sworn_witness_state_record_fork(struct sworn_witness_state *st, const char *origin,
                                    uint64_t size, const char *note, size_t note_len, uint64_t time)
{
    int rc;

    if (size > SWORN_WITNESS_SIZE_MAX || time > SWORN_WITNESS_SIZE_MAX || note_len > INT32_MAX)
        return sworn_err_set(SWORN_ERR_ARG, "witness state: size or time out of range");
    sqlite3_reset(st->fork);
    sqlite3_bind_text(st->fork, 1, origin, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st->fork, 2, (sqlite3_int64)size);
    sqlite3_bind_blob(st->fork, 3, note, (int)note_len, SQLITE_STATIC);
    sqlite3_bind_int64(st->fork, 4, (sqlite3_int64)time);
    sqlite3_bind_int(st->fork, 5, SWORN_WITNESS_FORKS_MAX);
    rc = sqlite3_step(st->fork);
    sqlite3_reset(st->fork);
    if (rc != SQLITE_DONE)
        return db_err(st, "record a fork");
    return 0;
}

int sworn_witness_state_commit(struct sworn_witness_state *st)
{
    if (exec(st, "COMMIT") < 0) {
        sworn_witness_state_rollback(st);
        return -1;
    }
    return 0;
}

void sworn_witness_state_rollback(struct sworn_witness_state *st)
{
    if (sqlite3_get_autocommit(st->db) == 0)
        (void)sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

/*
 * secretfile.h -- reading secrets (key files, PIN files) from the file system.
 *
 * A secret file is opened with the checked open of safefile.h (SWORN_SAFEFILE_SECRET): no symbolic
 * link on its path, its folders root's or the caller's and not writable by others, the file a
 * regular file owned by root or the caller, with no permission bits for group or others (mode
 * 0600 or stricter); and it must be smaller than the caller's buffer. Anything else is refused
 * with a message that says how to fix it. Secrets never come from argv or the environment.
 */
#ifndef SWORN_SECRETFILE_H
#define SWORN_SECRETFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Read the secret file at path into buf (capacity cap; the file must hold at most cap - 1 bytes).
 * `what` names the file in errors ("key file", "PIN file"). OUT: *len.
 * Returns 0, or -1 with sworn_err set (SWORN_ERR_IO for the file's kind or mode, SWORN_ERR_FORMAT
 * for its size). The caller wipes buf whatever happens.
 */
int sworn_secretfile_read(const char *path, const char *what, uint8_t *buf, size_t cap,
                          size_t *len);

/*
 * Let uid own the secret files sworn_secretfile_read reads in this process, besides root and the
 * effective uid: the uid a process started as root drops to after opening its key (sworn-signer,
 * which reads the signer user's PIN file as root). Call it before starting threads.
 */
void sworn_secretfile_allow_owner(uid_t uid);

/*
 * The same, where uid `also` may own the file too (root checking the signer's PIN file, which is
 * the signer's user's); SWORN_SAFEFILE_NOBODY for none.
 */
int sworn_secretfile_read_owned(const char *path, const char *what, uid_t also, uint8_t *buf,
                                size_t cap, size_t *len);

#endif

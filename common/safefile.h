/*
 * safefile.h -- the one checked open of every security-relevant file: the configuration, the
 * policy, the vault, the PIN file, key files, and the programs the monitor runs.
 *
 * A file is accepted only when nobody but root and the caller could have written it or could
 * replace it, checked on the very descriptor that is then read:
 *   - the path is walked from "/" one component at a time (openat with O_NOFOLLOW), so no
 *     symbolic link is followed anywhere on it, in the folders or at the file itself; a relative
 *     path is taken from the current folder (getcwd, which holds no link), "." and ".." are
 *     resolved lexically (which, with no links, is what the kernel would do);
 *   - every folder on the way is owned by root or by the caller's effective uid and is not
 *     writable by group or others, unless it is sticky (a sticky folder's entries can be renamed
 *     or removed by their owners only, and the next component's owner is checked in turn: /tmp
 *     is fine for a folder of root's inside it);
 *   - the file itself is a regular file (opened O_NONBLOCK: a FIFO cannot hang the reader),
 *     owned by root, by the caller's effective uid or by `also`, and not writable by group or
 *     others; with SWORN_SAFEFILE_SECRET, no permission bit at all for group or others (0600 or
 *     stricter); in a folder others may write (a sticky one), it has exactly one link (another
 *     user could have hard-linked a file of root's there under the name checked).
 * The same checks apply in every mode, development included: a development stack keeps its files
 * in a folder of its own (docs/configuration.md, "File checks").
 *
 * Errors name the file (`what` and its path), the component at fault, its owner and mode, and
 * how to fix it. No allocation but the read buffer; thread-safe (getcwd aside, which reads the
 * process's current folder).
 */
#ifndef SWORN_SAFEFILE_H
#define SWORN_SAFEFILE_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#define SWORN_SAFEFILE_SECRET 1u /* no permission bits for group or others (0600 or stricter) */
#define SWORN_SAFEFILE_NOBODY ((uid_t)-1) /* no other owner than root and the caller */
#define SWORN_SAFEFILE_ANYONE ((uid_t)-2) /* any owner: the caller checked the owner otherwise */

/*
 * Open path for reading after the checks above. `also` may own the file (not its folders) as
 * well: the signer's user for its PIN file when root checks it; SWORN_SAFEFILE_NOBODY otherwise;
 * SWORN_SAFEFILE_ANYONE to skip the file's owner check (its folders are still checked).
 * OUT: *fd (O_RDONLY, O_CLOEXEC; close it), *st (its fstat; may be NULL).
 * Returns 0, or -1 with sworn_err set: SWORN_ERR_NOTFOUND (a component does not exist),
 * SWORN_ERR_IO (a check failed, or any other error), SWORN_ERR_RANGE (path too long).
 */
int sworn_safefile_open(const char *path, unsigned flags, uid_t also, const char *what, int *fd,
                        struct stat *st);

/*
 * sworn_safefile_open, then read the whole file (at most max bytes) from that descriptor into a
 * fresh allocation with a NUL after the last byte (free it): the bytes a parser is given are the
 * bytes that were checked. OUT: *data, *len. Returns 0, or -1 with sworn_err set as above, or
 * SWORN_ERR_RANGE when the file holds more than max bytes.
 */
int sworn_safefile_read(const char *path, unsigned flags, uid_t also, const char *what, size_t max,
                        char **data, size_t *len);

/*
 * Open the folder path (O_RDONLY | O_DIRECTORY, O_CLOEXEC) after the same walk: no link
 * anywhere, every folder on the way and the folder itself root's or the caller's and not
 * writable by group or others (sticky allowed on the way, not for the folder itself, whose
 * entries the caller is to trust). With create, a missing last component is made (mkdirat in
 * the checked parent, mode 0755). OUT: *fd (close it). Returns 0, or -1 with sworn_err set as
 * sworn_safefile_open.
 */
int sworn_safefile_opendir(const char *path, int create, const char *what, int *fd);

#endif

/*
 * r_work.h -- the checks on a --work folder (docs/sandbox.md, "Running it"). --work gives the
 * agent a folder of the host, read-write, and sworn-run later removes what is in it (without
 * --keep): sworn_run_work_check refuses the folders where either would harm the host or the
 * control plane. Every check is on the folder already opened (fd, not closed), by device and
 * inode, walking up with "..": a link swapped into the path after the open, or a bind mount of a
 * refused folder, changes nothing.
 *   - not / and not a folder right below it (/tmp, /home, /var, ...);
 *   - not in the system's trees (/proc /sys /dev /etc /usr /boot /bin /sbin /lib*), sworn's own
 *     folders (/run/sworn, /run/sworn-run, /var/lib/sworn, /var/log/sworn), the dev stack's
 *     folder (c->stack_dir) or the state folder (state_fd);
 *   - not a folder that holds the state folder, or the folder of c->hostlink, c->admin_socket
 *     or c->proxy_ca;
 *   - without c->keep, empty: what sworn-run removes at the end is only what the agent made.
 * Returns 0, or -1 with sworn_err set (SWORN_ERR_ARG: refused, naming why; SWORN_ERR_IO).
 */
#ifndef SWORN_R_WORK_H
#define SWORN_R_WORK_H

#include "r_conf.h"

int sworn_run_work_check(int fd, const char *work, int state_fd, const struct sworn_run_conf *c);

#endif

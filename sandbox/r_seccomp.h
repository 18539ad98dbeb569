/*
 * r_seccomp.h -- the agent's seccomp filter (docs/sandbox.md, "System calls"). Unlike the
 * control plane's allow-lists (common/seccomp.h), an agent runs arbitrary programs, so this is a
 * deny list over an allow-by-default: it refuses, with EPERM, the calls an agent has no business
 * making and that widen the kernel's attack surface or reach past the sandbox:
 *   ptrace, process_vm_readv/writev, kcmp (other processes' memory and descriptors);
 *   bpf, perf_event_open, userfaultfd, io_uring_setup/enter/register (the kernel's sharpest
 *     surfaces, the usual first step of a kernel exploit);
 *   keyctl, add_key, request_key (the kernel keyring is not namespaced);
 *   mount, umount2, pivot_root, chroot, move_mount, open_tree, fsopen, fsconfig, fsmount, fspick,
 *     mount_setattr, setns, unshare, and clone with any CLONE_NEW* flag (no new namespaces: no new
 *     user namespace whose capabilities would open more of the kernel);
 *   name_to_handle_at, open_by_handle_at (opening files by handle, past the mount tree);
 *   kexec_load, kexec_file_load, init_module, finit_module, delete_module, reboot, swapon,
 *     swapoff, acct, quotactl, syslog, iopl, ioperm, personality, lookup_dcookie;
 *   modify_ldt, memfd_secret;
 *   socket() of any family but AF_UNIX, AF_INET, AF_INET6 (no SOCK_RAW or SOCK_PACKET type in
 *     those) and AF_NETLINK with NETLINK_ROUTE; socketpair() of any family but AF_UNIX (raw frames
 *     and packets, vsock (a microVM's way to its host), and every other family is a kernel
 *     surface an agent has no use for);
 *   ioctl TIOCSTI, TIOCLINUX, TIOCSETD, TCXONC and TIOCEXCL (typing into sworn-run's terminal,
 *     changing its line discipline, stopping its output, shutting others out of it: the
 *     terminal outlives the agent);
 *   a mode with S_ISUID or S_ISGID in chmod, fchmod, fchmodat, fchmodat2, open, openat, creat,
 *     mkdir, mkdirat, mknod, mknodat (a set-id program of the sandbox's uid in /work would let
 *     whoever can reach the folder become that uid);
 *   clone3 and openat2: ENOSYS (their flags and mode are behind a pointer; the C library falls
 *     back to clone and openat).
 * A call from another ABI (i386, x32) kills the process. no_new_privs is set first.
 *
 * Returns 0 (installed), 1 (this architecture has no filter: nothing installed; sworn-run
 * refuses to start unless told otherwise), -1 with sworn_err set.
 */
#ifndef SWORN_R_SECCOMP_H
#define SWORN_R_SECCOMP_H

int sworn_run_seccomp_install(void);

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
// Confines the calling process before it parses an untrusted file (issue 27): rlimits, no core dumps, a network
// namespace where the kernel allows one, and a seccomp filter (libseccomp) that refuses network sockets, exec,
// ptrace and the other calls a media parser never needs.
#ifndef CSANDBOX_H
#define CSANDBOX_H

#include <stddef.h>
#include <sys/types.h>

/// Zero or negative: leave that limit as it is.
struct metascrub_sandbox_limits {
    long long cpu_seconds;
    long long address_space_bytes;
    long long file_size_bytes;
    /// RLIMIT_NOFILE.
    long long open_files;
    /// RLIMIT_NPROC: this many tasks beyond those the (new) uid already has.
    long long extra_tasks;
    /// Negative: keep the uid. Otherwise (the process must be root) become this uid and gid, capabilities dropped.
    long long uid;
    long long gid;
    /// Nonzero: Landlock; the process may then read only `readable` and write only in `writable`
    /// (newline-separated paths; NULL for none).
    int landlock;
    const char *readable;
    const char *writable;
};

#define METASCRUB_SANDBOX_RLIMITS 1
#define METASCRUB_SANDBOX_NETNS 2
#define METASCRUB_SANDBOX_SECCOMP 4
#define METASCRUB_SANDBOX_NO_NEW_PRIVS 8
#define METASCRUB_SANDBOX_LANDLOCK 16
#define METASCRUB_SANDBOX_USER 32

/// Applies what it can. Returns the METASCRUB_SANDBOX_* bits that took effect, or -errno when a resource limit,
/// the uid change or Landlock (when asked for) could not be set up: the caller must then refuse to go on. The
/// seccomp filter is an allow-list synchronised to every thread; Landlock needs the process single-threaded.
int metascrub_sandbox_enter(const struct metascrub_sandbox_limits *limits);

/// Starts `path` with `argv` (NULL-terminated) and this process's environment: standard input and output on
/// /dev/null, standard error inherited, every other descriptor closed in the child (the server's sockets never
/// reach a worker), the signal mask emptied and dispositions reset. Returns 0 and sets *pid, or an errno.
int metascrub_spawn(const char *path, char *const argv[], pid_t *pid);

/// Blocks until `pid` has ended, without reaping it (so its PID cannot be reused while a killer may still use
/// it): *exited 1 with the exit status in *code, or 0 with the signal. Returns 0 or an errno.
int metascrub_wait_exit(pid_t pid, int *exited, int *code);

/// Reaps `pid` once metascrub_wait_exit has seen it end.
void metascrub_reap(pid_t pid);

/// Landlock ABI version of the running kernel, 0 when it has none.
int metascrub_sandbox_landlock_abi(void);

/// PR_SET_DUMPABLE 0 for the server: no core dumps, and /proc/<server>/mem, fd and environ closed to processes of
/// the same uid (a worker) unless they could ptrace it anyway. 0 or an errno.
int metascrub_make_undumpable(void);

/// Starts this very executable again (its inode, even if the file was replaced since) with LD_BIND_NOW=1 in its
/// environment, unless it is there already; named `name` in ps either way. Returns an errno when it could not
/// (the process then goes on, lazily bound); does not return otherwise.
int metascrub_reexec_bound_now(char *const argv[], const char *name);

/// The size in bytes of the file system holding `path` (`*tmpfs` set when it is a tmpfs), or -errno.
long long metascrub_file_system_bytes(const char *path, int *tmpfs);

/// Moves this process into a mount namespace of its own, receiving the host's mount events and sending none. Only
/// while the process has a single thread (a namespace is entered by the calling thread alone): 0, or -errno
/// (-EBUSY with threads, -EPERM without CAP_SYS_ADMIN). Processes started later inherit it.
int metascrub_enter_private_mount_namespace(void);

/// Mounts a new tmpfs of `bytes` and `mode` with large folios (huge=within_size) on `path`, seen only in the
/// namespace metascrub_enter_private_mount_namespace made: 0, or -errno (without that namespace, why it is not
/// there: -EPERM when it was never asked for).
int metascrub_mount_private_tmpfs(const char *path, long long bytes, unsigned int mode);

/// Moves the executable's code onto anonymous transparent huge pages (a copy, replacing the file mapping in one
/// step), so that forked children inherit it mapped instead of faulting it in page by page. 0, or -errno when it
/// was left as it was (no huge pages to be had, a kernel without MADV_COLLAPSE). For a fork server only: profilers
/// that name code by its file no longer can in this process.
int metascrub_text_on_huge_pages(void);

/// Empties the capability bounding set (what an exec could gain back); 0, or -errno (EPERM without CAP_SETPCAP,
/// where a later drop fails the same way). The bounding set limits exec only, which the fork server never does.
int metascrub_bounding_set_clear(void);

/// Moves the calling process into a new, empty network namespace (needs CAP_SYS_ADMIN) and marks it inherited, so
/// metascrub_sandbox_enter in its forked children skips making one each. 0 or an errno.
int metascrub_sandbox_enter_network_namespace(void);

/// Compiles the seccomp allow-list once for this process image (metascrub_sandbox_enter does it on first use): a
/// fork server calls it before its first fork, so its children only load it. 0 or a negative errno.
int metascrub_seccomp_compile(void);

/// What a fork server's child does with its job's text: `run` runs it and returns the exit status, or -1 when the
/// text is not a job (the server is told EINVAL); `warm` (in the spare, while it waits; may be NULL) decodes a job
/// of the fork server's own making, so that decoding its real one takes no first-time page faults.
struct metascrub_zygote_runner {
    int (*run)(const char *job, void *context);
    void (*warm)(void *context);
    void *context;
};

/// The fork server: reads `job ID TEXT` and `kill ID` lines from `in`. It keeps one spare child forked ahead, which
/// dies with the parent, keeps no descriptor but 0-3 (0 its job pipe, then /dev/null; 1 /dev/null; 3 its done
/// pipe) and waits for its job; a job goes to the spare and the next spare is forked while it runs. Writes `ended
/// ID EXITED CODE` (EXITED 1: CODE is the exit status, from the child's word or its exit; 0: the signal) or `failed
/// ID ERRNO` to `out`. Single-threaded: call it from a process that started no threads. Returns 0 once `in` is
/// closed and every child has ended.
int metascrub_zygote_serve(int in, int out, const struct metascrub_zygote_runner *runner);

/// metascrub_spawn with `in` and `out` as the child's standard input and output (the fork server's pipes).
int metascrub_spawn_piped(const char *path, char *const argv[], int in, int out, pid_t *pid);

/// RLIMIT_* soft limit, or -1 for none.
long long metascrub_sandbox_limit(int resource);

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
#define _GNU_SOURCE
#include "sandbox_parts.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

/// Every system call a worker makes while it cleans or scans a file (found with `strace -f -c` over the fixtures:
/// the Swift runtime, Foundation, libdispatch, FFmpeg, LibRaw, libheif, exiv2), plus the harmless calls the same
/// libraries make on other paths. Anything not named here fails with EPERM: sockets of every family, io_uring,
/// pidfd_*, process_vm_*, ptrace, exec, mount, keyrings, bpf, new processes (only threads are allowed below).
/// Names unknown to this libseccomp or this architecture are skipped (they are then denied).
static const char *const allowed[] = {
    // Files and descriptors.
    "read", "write", "pread64", "pwrite64", "readv", "writev", "preadv", "pwritev", "preadv2", "pwritev2", "lseek",
    "open", "openat", "close", "close_range", "creat", "fstat", "stat", "lstat", "newfstatat", "statx", "statfs",
    "fstatfs", "access", "faccessat", "faccessat2", "readlink", "readlinkat", "getdents64", "getcwd", "dup", "dup2",
    "dup3", "fcntl", "flock", "ftruncate", "truncate", "fallocate", "fsync", "fdatasync", "sync_file_range",
    "fadvise64", "syncfs", "unlink", "unlinkat", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir",
    "copy_file_range", "sendfile", "splice", "pipe", "pipe2", "umask", "getxattr", "fgetxattr", "lgetxattr",
    "listxattr", "flistxattr", "llistxattr",
    // Owner, mode and times through a descriptor only: Landlock does not cover these on paths, so a path-based
    // chmod, chown or utimes (of the token file, of another job's folder) stays refused.
    "fchmod", "fchown",
    // Memory.
    "brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "mincore", "msync", "mlock", "munlock", "membarrier",
    // Threads, time, signals to itself, scheduling hints.
    "futex", "futex_waitv", "set_robust_list", "get_robust_list", "set_tid_address", "rseq", "sched_yield",
    "sched_getaffinity", "sched_getparam", "sched_getscheduler", "sched_get_priority_max", "sched_get_priority_min",
    "getpriority", "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time",
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigtimedwait", "sigaltstack",
    "restart_syscall", "exit", "exit_group", "arch_prctl",
    // libdispatch's event loop (no sockets: eventfd, timerfd, epoll over them).
    "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2",
    "timerfd_create", "timerfd_settime", "timerfd_gettime", "poll", "ppoll", "select", "pselect6",
    // Who am I.
    "getpid", "gettid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups",
    "getpgrp", "getpgid", "getsid", "uname", "sysinfo", "getrusage", "times", "getrandom", "getcpu",
    "capget",
};

static int allow(scmp_filter_ctx ctx, const char *name) {
    int number = seccomp_syscall_resolve_name(name);
    if (number == __NR_SCMP_ERROR) return 0;
    int rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, number, 0);
    // A name this architecture only emulates (a negative pseudo number) is not an error: it cannot be called.
    return rc == -EDOM || rc == -EINVAL ? 0 : rc;
}

/// Stands for the confined process's own PID in the compiled program (kill and tgkill to itself only): above
/// any PID the kernel hands out (pid_max is at most 2^22), so no other constant of the program can equal it.
#define SELF_PLACEHOLDER 0x7A5EED00u

/// The allow-list compiled to classic BPF once per process image: a fork server compiles it before its first fork
/// and every child only patches in its PID and loads it. libseccomp's rule database and code generation then run
/// once instead of once per file.
static struct sock_filter *compiled;
static unsigned short compiled_length;

static int add_rules(scmp_filter_ctx ctx) {
    // A binary search over the syscall numbers instead of a linear chain: the kernel emulates the program for
    // every syscall number when it loads it (its allow cache), and runs it on every call the worker makes.
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    for (size_t i = 0; rc == 0 && i < sizeof allowed / sizeof allowed[0]; i++) rc = allow(ctx, allowed[i]);
    const scmp_datum_t self = SELF_PLACEHOLDER;
    // Threads only: a clone without CLONE_THREAD (fork, a fork bomb) fails. clone3 passes its flags in memory the
    // filter cannot read, so it says ENOSYS and glibc falls back to clone.
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                                       SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    // Signals to itself only (abort, a thread's cancellation): never the server, another worker or a group.
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_EQ, self));
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_EQ, self));
    // Its own limits may be read (and lowered); another process's may not be touched.
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 1, SCMP_A0(SCMP_CMP_EQ, 0));
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(getrlimit), 0);
    // futimens is utimensat on a descriptor with no path.
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(utimensat), 1, SCMP_A1(SCMP_CMP_EQ, 0));
    // libdispatch lowers its worker threads' priority: its own threads only (who == 0).
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(setpriority), 1, SCMP_A1(SCMP_CMP_EQ, 0));
    // Thread names and reading its own state; never PR_SET_DUMPABLE or the securebits back.
    static const int prctl_options[] = { PR_SET_NAME, PR_GET_NAME, PR_GET_DUMPABLE, PR_GET_NO_NEW_PRIVS,
                                         PR_CAPBSET_READ, PR_GET_SECCOMP };
    for (size_t i = 0; rc == 0 && i < sizeof prctl_options / sizeof prctl_options[0]; i++) {
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
                              SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)prctl_options[i]));
    }
    // Terminal queries (isatty on standard error, FIONREAD on a pipe); no other ioctl reaches a driver.
    static const unsigned long ioctls[] = { TCGETS, TIOCGWINSZ, FIONREAD, FIOCLEX, FIONCLEX, FIONBIO };
    for (size_t i = 0; rc == 0 && i < sizeof ioctls / sizeof ioctls[0]; i++) {
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t)ioctls[i]));
    }
    return rc;
}

int metascrub_seccomp_compile(void) {
    if (compiled) return 0;
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
    if (!ctx) return -ENOMEM;
    int rc = add_rules(ctx);
    int fd = rc == 0 ? memfd_create("metascrub-seccomp", MFD_CLOEXEC) : -1;
    if (rc == 0 && fd < 0) rc = -errno;
    if (rc == 0) rc = seccomp_export_bpf(ctx, fd);
    seccomp_release(ctx);
    off_t size = rc == 0 ? lseek(fd, 0, SEEK_END) : 0;
    if (rc == 0 && (size <= 0 || size % (off_t)sizeof(struct sock_filter) != 0
                    || size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS)) rc = -EINVAL;
    struct sock_filter *program = rc == 0 ? malloc((size_t)size) : NULL;
    if (rc == 0 && !program) rc = -ENOMEM;
    if (rc == 0 && pread(fd, program, (size_t)size, 0) != size) rc = -EIO;
    if (fd >= 0) close(fd);
    if (rc != 0) {
        free(program);
        return rc;
    }
    compiled = program;
    compiled_length = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
    return 0;
}

int metascrub_seccomp_allowlist(void) {
    int rc = metascrub_seccomp_compile();
    if (rc != 0) return rc;
    struct sock_filter program[BPF_MAXINSNS];
    memcpy(program, compiled, compiled_length * sizeof *program);
    // The placeholder is compared where kill's and tgkill's first argument (low word) is (once when libseccomp
    // shares the two checks): none means the program is not the one written here, and it is not loaded.
    int patched = 0;
    for (unsigned short i = 0; i < compiled_length; i++) {
        if (program[i].code == (BPF_JMP | BPF_JEQ | BPF_K) && program[i].k == SELF_PLACEHOLDER) {
            program[i].k = (uint32_t)getpid();
            patched++;
        }
    }
    if (patched < 1 || patched > 2) return -EINVAL;
    struct sock_fprog fprog = { .len = compiled_length, .filter = program };
    // Every thread at once (a libdispatch thread must not stay unfiltered); no_new_privs is already set.
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &fprog) != 0) return -errno;
    return 0;
}

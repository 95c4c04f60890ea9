// SPDX-License-Identifier: GPL-3.0-or-later
// What a parser bug would give an attacker: code running inside a confined `metascrub worker`. Built by
// ServeSandboxTests into a shared object and loaded with LD_PRELOAD into the server, it stays inert except in a
// worker (argv[1] == "worker"), where it replaces usleep: the worker's stall hook calls usleep after the sandbox
// is entered, so every attempt below runs fully confined. Each attempt prints one line to standard error (the
// server's log): `metascrub-attack NAME rc=RC errno=NAME`. Without the sandbox these attempts succeed (they kill
// the server and chmod the token file): load it only into a test server, with a test token.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <link.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <linux/capability.h>
#include <linux/io_uring.h>
#include <ctype.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static int in_worker;
static char job_folder[4096];
// Recorded at exec, before any fork: the server, whether the worker was exec'd by it or forked by its fork server.
static pid_t server_pid;
static int forked;

__attribute__((constructor)) static void record(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "worker") != 0 || !getenv("METASCRUB_ATTACK")) return;
    server_pid = getppid();
    forked = argc > 2 && strcmp(argv[2], "--fork-server") == 0;
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--report") == 0) {
            char report[4096];
            snprintf(report, sizeof report, "%s", argv[i + 1]);
            snprintf(job_folder, sizeof job_folder, "%s", dirname(report));
        }
    }
    in_worker = 1;
}

static const char *errno_name(int e) {
    switch (e) {
    case 0: return "0";
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case ENOSYS: return "ENOSYS";
    case ENOENT: return "ENOENT";
    case EBADF: return "EBADF";
    case EAGAIN: return "EAGAIN";
    case ESRCH: return "ESRCH";
    case EXDEV: return "EXDEV";
    default: return "other";
    }
}

static void report(const char *name, long rc, int error) {
    dprintf(2, "metascrub-attack %s rc=%ld errno=%s\n", name, rc, rc < 0 ? errno_name(error) : "0");
}

#define TRY(name, call) do { errno = 0; long rc_ = (long)(call); report(name, rc_, errno); } while (0)

static int open_for(const char *path, int flags) { return open(path, flags | O_CLOEXEC, 0600); }

/// Job folders (`/job-` and six letters or digits, as mkdtemp makes them) in [start, start+size): this worker's own
/// in `counts[0]`, another request's in `counts[1]`.
static void count_jobs_in(const char *start, size_t size, int counts[2]) {
    const char *own = strstr(job_folder, "/job-");
    for (const char *p = memmem(start, size, "/job-", 5); p != NULL && p + 11 <= start + size;
         p = memmem(p + 1, (size_t)(start + size - p - 1), "/job-", 5)) {
        int name = 1;
        for (int i = 5; i < 11; i++) name = name && isalnum((unsigned char)p[i]);
        if (name) counts[own != NULL && strncmp(p, own, 11) == 0 ? 0 : 1]++;
    }
}

static int scan_program(struct dl_phdr_info *info, size_t size, void *counts) {
    (void)size;
    // The first object is the program itself: its data and bss, where the fork server read the server's lines.
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD || !(segment->p_flags & PF_W)) continue;
        count_jobs_in((const char *)(info->dlpi_addr + segment->p_vaddr), segment->p_memsz, counts);
    }
    return 1;
}

/// Job folders in the program's data and in the heap (the brk area, found page by page down from its end with
/// mincore, which fails where nothing is mapped): what a forked worker inherited, and its own job as a control.
static void count_jobs_in_memory(int counts[2]) {
    dl_iterate_phdr(scan_program, counts);
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    char *top = (char *)(((uintptr_t)sbrk(0) + page - 1) & ~(page - 1));
    char *low = top;
    unsigned char resident;
    while (mincore(low - page, page, &resident) == 0) low -= page;
    count_jobs_in(low, (size_t)(top - low), counts);
}

static void attack(void) {
    pid_t server = server_pid;
    dprintf(2, "metascrub-attack-job %s\n", job_folder);
    dprintf(2, "metascrub-attack-worker %s\n", forked ? "forked" : "exec");
    char path[4200];

    struct io_uring_params params;
    memset(&params, 0, sizeof params);
    TRY("io_uring_setup", syscall(SYS_io_uring_setup, 8, &params));
    TRY("socket_inet", socket(AF_INET, SOCK_STREAM, 0));
    TRY("socket_unix", socket(AF_UNIX, SOCK_STREAM, 0));
    TRY("socketpair", ({ int pair[2]; socketpair(AF_UNIX, SOCK_STREAM, 0, pair); }));
    // A connect on whatever descriptor the worker holds, towards the server's own loopback listener.
    const char *port = getenv("METASCRUB_ATTACK_PORT");
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port ? atoi(port) : 1) };
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    TRY("connect", connect(3, (struct sockaddr *)&to, sizeof to));

    TRY("pidfd_open", syscall(SYS_pidfd_open, server, 0));
    TRY("pidfd_getfd", syscall(SYS_pidfd_getfd, 3, 3, 0));
    TRY("ptrace_attach", ptrace(PTRACE_ATTACH, server, 0, 0));
    char byte;
    struct iovec local = { &byte, 1 }, remote = { (void *)0x400000, 1 };
    TRY("process_vm_readv", process_vm_readv(server, &local, 1, &remote, 1, 0));
    snprintf(path, sizeof path, "/proc/%d/mem", server);
    TRY("proc_mem_write", open_for(path, O_RDWR));
    snprintf(path, sizeof path, "/proc/%d/environ", server);
    TRY("proc_environ_read", open_for(path, O_RDONLY));

    TRY("kill_server", kill(server, SIGKILL));
    // A forked worker's parent is the fork server (an exec'd worker's is the server itself).
    TRY("kill_parent", kill(getppid(), SIGKILL));
    // Signal 0 asks the same permission as a real signal without killing the test runner should it pass.
    TRY("kill_group", kill(0, 0));
    TRY("tgkill_server", syscall(SYS_tgkill, server, server, SIGKILL));
    TRY("setuid_root", syscall(SYS_setuid, 0));

    const char *token = getenv("METASCRUB_ATTACK_TOKEN");
    TRY("read_token", open_for(token ? token : "/nonexistent", O_RDONLY));
    snprintf(path, sizeof path, "%s/..", job_folder);
    TRY("list_spool", open_for(path, O_RDONLY | O_DIRECTORY));
    snprintf(path, sizeof path, "%s/../job-planted/input", job_folder);
    TRY("read_other_job", open_for(path, O_RDONLY));
    TRY("write_other_job", open_for(path, O_WRONLY | O_TRUNC));
    snprintf(path, sizeof path, "%s/../escape", job_folder);
    TRY("write_spool", open_for(path, O_WRONLY | O_CREAT));
    TRY("write_tmp", open_for("/tmp/metascrub-attack-escape", O_WRONLY | O_CREAT));
    TRY("read_etc_shadow", open_for("/etc/shadow", O_RDONLY));
    snprintf(path, sizeof path, "%s/linked-token", job_folder);
    TRY("link_token", link(token ? token : "/nonexistent-token", path));
    TRY("chmod_token", chmod(token ? token : "/nonexistent-token", 0666));
    snprintf(path, sizeof path, "%s/../job-planted", job_folder);
    TRY("chmod_other_job", chmod(path, 0777));
    TRY("utimes_token", utimensat(AT_FDCWD, token ? token : "/nonexistent-token", NULL, 0));
    snprintf(path, sizeof path, "%s/output-link", job_folder);
    TRY("symlink_in_job", symlink(token ? token : "/nonexistent-token", path));

    TRY("fork", fork());
    TRY("clone_process", syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0));
    TRY("execve", execve("/bin/true", (char *const[]){ "true", NULL }, NULL));
    // The spool's tmpfs and the mount namespace a root server makes for it: neither undone nor left.
    TRY("umount_spool", syscall(SYS_umount2, "/dev/shm", MNT_DETACH));
    TRY("mount_over_job", syscall(SYS_mount, "tmpfs", job_folder, "tmpfs", 0L, NULL));
    TRY("unshare_namespaces", syscall(SYS_unshare, CLONE_NEWNS | CLONE_NEWUSER));

    // What it may still do: write a file in its own folder (the report and output go there).
    snprintf(path, sizeof path, "%s/attack-scratch", job_folder);
    int own = open_for(path, O_WRONLY | O_CREAT);
    TRY("write_own_job", own);
    // But never shorten one: a file that shrinks while the server sends it would stall the server.
    if (own >= 0 && write(own, "scratch", 7) == 7) {
        TRY("ftruncate_own_file", ftruncate(own, 1));
        TRY("truncate_own_file", truncate(path, 1));
        TRY("open_trunc_own_file", open_for(path, O_WRONLY | O_TRUNC));
    }
    if (own >= 0) {
        close(own);
        unlink(path);
    }
    // Signals to itself (abort, a thread's cancellation): the filter compiled once names this child's own PID.
    TRY("kill_self", kill(getpid(), 0));
    TRY("tgkill_self", syscall(SYS_tgkill, getpid(), gettid(), 0));
    struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
    struct __user_cap_data_struct caps[2] = { { 0 } };
    syscall(SYS_capget, &header, caps);
    // What an exec could gain back (exec is refused anyway): a worker that left uid 0 keeps none of it.
    int bounding = 0;
    for (int cap = 0; cap <= 63 && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++) {
        bounding += prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1;
    }
    dprintf(2, "metascrub-attack identity uid=%d euid=%d capbnd=%d capeff=%x%08x capprm=%x%08x\n", getuid(),
            geteuid(), bounding, caps[1].effective, caps[0].effective, caps[1].permitted, caps[0].permitted);
    int jobs[2] = { 0, 0 };
    count_jobs_in_memory(jobs);
    dprintf(2, "metascrub-attack jobs-in-memory own=%d other=%d\n", jobs[0] > 0, jobs[1]);
    dprintf(2, "metascrub-attack done\n");
}

/// A forked worker's argv is the fork server's: its job folder is the one Landlock is given to write in, which
/// the sandbox opens (O_PATH) just before the stall hook runs.
static void note_job_folder(const char *path, int flags) {
    const char *job = path && (flags & O_PATH) ? strstr(path, "/job-") : NULL;
    if (!in_worker || job_folder[0] || !job) return;
    size_t length = strcspn(job + 1, "/") + 1 + (size_t)(job - path);
    if (length < sizeof job_folder) snprintf(job_folder, length + 1, "%s", path);
}

int open(const char *path, int flags, ...) {
    static int (*real)(const char *, int, ...);
    if (!real) real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
    va_list rest;
    va_start(rest, flags);
    mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(rest, mode_t) : 0;
    va_end(rest);
    note_job_folder(path, flags);
    return real(path, flags, mode);
}

int usleep(useconds_t usec) {
    static int (*real)(useconds_t);
    if (!real) real = (int (*)(useconds_t))dlsym(RTLD_NEXT, "usleep");
    if (in_worker) {
        in_worker = 0;
        attack();
    }
    return real(usec);
}

// SPDX-License-Identifier: GPL-3.0-or-later
#define _GNU_SOURCE
#include "csandbox.h"
#include "sandbox_parts.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <spawn.h>
#include <unistd.h>

static int limit(int resource, long long value, long long hard_extra) {
    if (value <= 0) return 0;
    struct rlimit rl = { .rlim_cur = (rlim_t)value, .rlim_max = (rlim_t)(value + hard_extra) };
    struct rlimit old;
    // Never raise a hard limit the parent already lowered (that would fail anyway without privileges).
    if (getrlimit(resource, &old) == 0 && old.rlim_max != RLIM_INFINITY && rl.rlim_max > old.rlim_max) {
        rl.rlim_max = old.rlim_max;
        if (rl.rlim_cur > rl.rlim_max) rl.rlim_cur = rl.rlim_max;
    }
    return setrlimit(resource, &rl) == 0 ? 0 : -errno;
}

/// Sockets the parent let through exec (a server's listening socket or a client's connection, when its library
/// did not mark them close-on-exec): a worker must not be able to write to another client's connection.
int metascrub_descriptors_closed;

static int close_inherited_sockets(void) {
    if (metascrub_descriptors_closed) return 0;
    DIR *dir = opendir("/proc/self/fd");
    if (!dir) return -errno;
    int own = dirfd(dir);
    int closed = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        char *end = NULL;
        long fd = strtol(entry->d_name, &end, 10);
        if (end == entry->d_name || *end != '\0' || fd <= 2 || fd == own) continue;
        struct stat st;
        if (fstat((int)fd, &st) == 0 && S_ISSOCK(st.st_mode)) {
            close((int)fd);
            closed++;
        }
    }
    closedir(dir);
    return closed;
}

/// Set in a fork server that entered its own empty network namespace: its children are already in one, and a
/// namespace per child costs more kernel time than the rest of the confinement together.
static int network_namespace_inherited;

int metascrub_sandbox_enter_network_namespace(void) {
    if (unshare(CLONE_NEWNET) != 0) return errno;
    network_namespace_inherited = 1;
    return 0;
}

int metascrub_sandbox_enter(const struct metascrub_sandbox_limits *limits) {
    int applied = 0;
    int rc;
    if ((rc = close_inherited_sockets()) < 0) return rc;
    struct rlimit no_core = { 0, 0 };
    if (setrlimit(RLIMIT_CORE, &no_core) != 0) return -errno;
    // CPU: SIGXCPU at the soft limit, SIGKILL a second later.
    if ((rc = limit(RLIMIT_CPU, limits->cpu_seconds, 1)) != 0) return rc;
    if ((rc = limit(RLIMIT_AS, limits->address_space_bytes, 0)) != 0) return rc;
    if ((rc = limit(RLIMIT_FSIZE, limits->file_size_bytes, 0)) != 0) return rc;
    if ((rc = limit(RLIMIT_NOFILE, limits->open_files, 0)) != 0) return rc;
    applied |= METASCRUB_SANDBOX_RLIMITS;
    // An empty network namespace needs CAP_SYS_ADMIN (root, or a container that grants it); seccomp below refuses
    // sockets either way.
    if (network_namespace_inherited || unshare(CLONE_NEWNET) == 0) applied |= METASCRUB_SANDBOX_NETNS;
    if (limits->uid >= 0) {
        if ((rc = metascrub_drop_user(limits->uid, limits->gid)) != 0) return rc;
        applied |= METASCRUB_SANDBOX_USER;
    }
    // Counted against the real uid, whose other processes (the server, other workers) count too: a few more
    // threads than it has now, never a process (seccomp refuses those anyway).
    if (limits->extra_tasks > 0) {
        long long tasks = metascrub_tasks_of_user(getuid());
        if (tasks < 0) return (int)tasks;
        if ((rc = limit(RLIMIT_NPROC, tasks + limits->extra_tasks, 0)) != 0) return rc;
    }
    // Not dumpable again after the uid change (which resets it): /proc/<worker>/mem stays closed to others.
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (limits->landlock) {
        // Landlock confines the calling thread and what it starts later: another thread would stay free.
        if (metascrub_threads_of_self() != 1) return -EBUSY;
        if ((rc = metascrub_landlock(limits->readable, limits->writable)) != 0) return rc;
        applied |= METASCRUB_SANDBOX_LANDLOCK;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0) applied |= METASCRUB_SANDBOX_NO_NEW_PRIVS;
    if ((rc = metascrub_seccomp_allowlist()) != 0) return rc < 0 ? rc : -EINVAL;
    applied |= METASCRUB_SANDBOX_SECCOMP;
    return applied;
}

long long metascrub_sandbox_limit(int resource) {
    struct rlimit rl;
    if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return -1;
    return (long long)rl.rlim_cur;
}

extern char **environ;

int metascrub_reexec_bound_now(char *const argv[], const char *name) {
    if (getenv("LD_BIND_NOW") != NULL) {
        // Started through a descriptor, the process is named after its number: give it its own name back.
        prctl(PR_SET_NAME, name, 0, 0, 0);
        return 0;
    }
    size_t count = 0;
    while (environ[count] != NULL) count++;
    char **envp = calloc(count + 2, sizeof *envp);
    if (envp == NULL) return ENOMEM;
    memcpy(envp, environ, count * sizeof *envp);
    envp[count] = "LD_BIND_NOW=1";
    int self = open("/proc/self/exe", O_PATH | O_CLOEXEC);
    if (self >= 0) syscall(SYS_execveat, self, "", argv, envp, AT_EMPTY_PATH);
    int error = errno;
    if (self >= 0) close(self);
    free(envp);
    return error;
}

int metascrub_spawn(const char *path, char *const argv[], pid_t *pid) {
    return metascrub_spawn_with(path, argv, -1, -1, pid);
}

int metascrub_spawn_with(const char *path, char *const argv[], int in, int out, pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int rc = posix_spawn_file_actions_init(&actions);
    if (rc != 0) return rc;
    rc = posix_spawnattr_init(&attributes);
    if (rc != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return rc;
    }
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    if (rc == 0) rc = in >= 0 ? posix_spawn_file_actions_adddup2(&actions, in, 0)
                                : posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0) rc = out >= 0 ? posix_spawn_file_actions_adddup2(&actions, out, 1)
                                 : posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (rc == 0) rc = posix_spawnattr_setsigmask(&attributes, &none);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(&attributes, &all);
    if (rc == 0) rc = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    if (rc == 0) rc = posix_spawn(pid, path, &actions, &attributes, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    return rc;
}

int metascrub_wait_exit(pid_t pid, int *exited, int *code) {
    siginfo_t info;
    for (;;) {
        info.si_pid = 0;
        if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) == 0) break;
        if (errno != EINTR) return errno;
    }
    *exited = info.si_code == CLD_EXITED;
    *code = info.si_status;
    return 0;
}

void metascrub_reap(pid_t pid) {
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
}

int metascrub_sandbox_landlock_abi(void) { return metascrub_landlock_abi(); }

long long metascrub_file_system_bytes(const char *path, int *tmpfs) {
    struct statfs fs;
    if (statfs(path, &fs) != 0) return -errno;
    *tmpfs = fs.f_type == TMPFS_MAGIC;
    return (long long)fs.f_blocks * (long long)fs.f_bsize;
}

int metascrub_make_undumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : errno; }

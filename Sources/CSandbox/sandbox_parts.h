// SPDX-License-Identifier: GPL-3.0-or-later
// The pieces metascrub_sandbox_enter puts together (private to CSandbox).
#ifndef SANDBOX_PARTS_H
#define SANDBOX_PARTS_H

#include <sys/types.h>

/// The seccomp allow-list (all threads). 0 or a negative errno.
int metascrub_seccomp_allowlist(void);

/// Landlock ABI version the kernel speaks, 0 when none.
int metascrub_landlock_abi(void);

/// Restricts the calling thread (and what it starts later) to reading `readable` and writing in `writable`
/// (newline-separated paths), with no TCP and no signals or abstract sockets beyond itself. Sets no_new_privs.
int metascrub_landlock(const char *readable, const char *writable);

/// Leaves root for `uid`/`gid` for good, with no supplementary groups and every capability dropped (bounding,
/// ambient, permitted, effective). uid < 0: nothing to do. 0 or a negative errno.
int metascrub_drop_user(long long uid, long long gid);

/// Tasks (threads) the kernel counts against `uid`'s RLIMIT_NPROC, or a negative errno: from the fork server's
/// census when this process is its child and the census is recent, else by walking /proc.
long long metascrub_tasks_of_user(uid_t uid);

/// In a fork server, before a fork: counts every uid's tasks unless the last count is under 250 ms old.
void metascrub_task_census_refresh(void);

/// Set in a fork server's child once it closed every inherited descriptor above 2: the sandbox need not look for
/// inherited sockets.
extern int metascrub_descriptors_closed;

long long metascrub_threads_of_self(void);

/// metascrub_spawn with standard input and output on `in` and `out` (-1: /dev/null).
int metascrub_spawn_with(const char *path, char *const argv[], int in, int out, pid_t *pid);

#endif

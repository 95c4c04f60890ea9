// SPDX-License-Identifier: GPL-3.0-or-later
#define _GNU_SOURCE
#include "sandbox_parts.h"

#include <dirent.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int metascrub_bounding_set_clear(void) {
    for (int cap = 0; cap <= 63; cap++) {
        int present = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
        if (present < 0) break;
        // Each drop commits new credentials: only what is still there is dropped.
        if (present == 1 && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) return -errno;
    }
    return 0;
}

int metascrub_drop_user(long long uid, long long gid) {
    if (uid < 0) return 0;
    // The bounding set first (that needs CAP_SETPCAP, which setresuid is about to take away). A fork server's
    // children find it empty already.
    int cleared = metascrub_bounding_set_clear();
    if (cleared != 0) return cleared;
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return -errno;
    if (setgroups(0, NULL) != 0) return -errno;
    if (setresgid((gid_t)gid, (gid_t)gid, (gid_t)gid) != 0) return -errno;
    // Without SECBIT_KEEP_CAPS, leaving uid 0 for good clears the permitted and effective sets.
    if (setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) != 0) return -errno;
    struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
    struct __user_cap_data_struct data[2] = { { 0 } };
    if (syscall(SYS_capget, &header, data) != 0) return -errno;
    if (data[0].permitted | data[1].permitted | data[0].effective | data[1].effective) return -EPERM;
    if (setuid(0) == 0) return -EPERM; // could get root back: refuse to go on
    return 0;
}

/// Threads of a process from one stat of its task folder (`pid` relative to /proc, open as `proc`): procfs gives
/// that folder a link count of 2 plus its threads, cheaper than listing it. -1 when the process is gone.
static long long task_folder(int proc, const char *pid, uid_t *owner) {
    char path[64];
    snprintf(path, sizeof path, "%s/task", pid);
    struct stat st;
    if (fstatat(proc, path, &st, 0) != 0 || st.st_nlink < 2) return -1;
    *owner = st.st_uid;
    return (long long)st.st_nlink - 2;
}

/// Calls `each` with the owner and thread count of every process: -errno when /proc cannot be read.
static int each_process(void (*each)(uid_t owner, long long threads, void *context), void *context) {
    DIR *proc = opendir("/proc");
    if (!proc) return -errno;
    struct dirent *entry;
    while ((entry = readdir(proc)) != NULL) {
        if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
        uid_t owner;
        long long threads = task_folder(dirfd(proc), entry->d_name, &owner);
        if (threads >= 0) each(owner, threads, context);
    }
    closedir(proc);
    return 0;
}

struct user_count { uid_t uid; long long tasks; };

static void count_user(uid_t owner, long long threads, void *context) {
    struct user_count *count = context;
    if (owner == count->uid) count->tasks += threads;
}

/// A fork server's count of every uid's tasks, refreshed at most every `CENSUS_MAX_AGE_NS` right after a fork,
/// which later children inherit: walking /proc costs a child more than the rest of its confinement (a procfs lookup
/// per process). `valid` 0: no census (an exec'd worker, the CLI), or more uids than it holds; a child that finds
/// none, or one older than twice that age, walks /proc itself.
#define CENSUS_UIDS 64
#define CENSUS_MAX_AGE_NS 250000000LL
static struct { int valid; long long taken; int count; struct user_count users[CENSUS_UIDS]; } census;

static long long monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static void count_into_census(uid_t owner, long long threads, void *context) {
    int *overflow = context;
    int slot = 0;
    while (slot < census.count && census.users[slot].uid != owner) slot++;
    if (slot == CENSUS_UIDS) {
        *overflow = 1;
        return;
    }
    if (slot == census.count) census.users[census.count++] = (struct user_count){ owner, 0 };
    census.users[slot].tasks += threads;
}

void metascrub_task_census_refresh(void) {
    long long now = monotonic_ns();
    if (census.valid && now - census.taken < CENSUS_MAX_AGE_NS) return;
    census.count = 0;
    int overflow = 0;
    census.valid = each_process(count_into_census, &overflow) == 0 && !overflow;
    census.taken = now;
}

long long metascrub_tasks_of_user(uid_t uid) {
    struct user_count count = { uid, 0 };
    if (!census.valid || monotonic_ns() - census.taken > 2 * CENSUS_MAX_AGE_NS) {
        int rc = each_process(count_user, &count);
        return rc < 0 ? rc : count.tasks;
    }
    // The child itself was not there when the census was taken.
    count.tasks = 1;
    for (int i = 0; i < census.count; i++) if (census.users[i].uid == uid) count.tasks += census.users[i].tasks;
    return count.tasks;
}

long long metascrub_threads_of_self(void) {
    uid_t owner;
    long long threads = task_folder(AT_FDCWD, "/proc/self", &owner);
    return threads < 0 ? -errno : threads;
}

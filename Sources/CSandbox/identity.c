// SPDX-License-Identifier: GPL-3.0-or-later
#define _GNU_SOURCE
#include "sandbox_parts.h"

#include <dirent.h>
#include <stdio.h>
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int metascrub_drop_user(long long uid, long long gid) {
    if (uid < 0) return 0;
    // The bounding set first (that needs CAP_SETPCAP, which setresuid is about to take away).
    for (int cap = 0; cap <= 63; cap++) {
        if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0) break;
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) return -errno;
    }
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

/// Threads of a process from one stat of its task folder: procfs gives that folder a link count of 2 plus its
/// threads (cheaper than listing it, which a worker would do for every process of its uid on each start).
static long long threads_in(int proc, const char *pid, uid_t uid, int any_uid) {
    char path[64];
    snprintf(path, sizeof path, "%s/task", pid);
    struct stat st;
    if (fstatat(proc, path, &st, 0) != 0 || (!any_uid && st.st_uid != uid) || st.st_nlink < 2) return 0;
    return (long long)st.st_nlink - 2;
}

static long long scan_tasks_of_user(uid_t uid) {
    DIR *proc = opendir("/proc");
    if (!proc) return -errno;
    long long tasks = 0;
    struct dirent *entry;
    while ((entry = readdir(proc)) != NULL) {
        if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
        tasks += threads_in(dirfd(proc), entry->d_name, uid, 0);
    }
    closedir(proc);
    return tasks;
}

/// A fork server's count of every uid's tasks, taken at most `CENSUS_MAX_AGE_NS` before a fork, which its children
/// inherit: walking /proc costs a child more than the rest of its confinement (a procfs lookup per process).
/// `valid` 0: no census (an exec'd worker, the CLI), or more uids than it holds: the child walks /proc itself.
#define CENSUS_UIDS 64
#define CENSUS_MAX_AGE_NS 250000000LL
static struct { int valid; long long taken; int count; uid_t uid[CENSUS_UIDS]; long long tasks[CENSUS_UIDS]; } census;

static long long monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

void metascrub_task_census_refresh(void) {
    long long now = monotonic_ns();
    if (census.valid && now - census.taken < CENSUS_MAX_AGE_NS) return;
    census.valid = 0;
    census.count = 0;
    DIR *proc = opendir("/proc");
    if (!proc) return;
    struct dirent *entry;
    int overflow = 0;
    char path[64];
    while ((entry = readdir(proc)) != NULL && !overflow) {
        if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "%s/task", entry->d_name);
        struct stat st;
        if (fstatat(dirfd(proc), path, &st, 0) != 0 || st.st_nlink < 2) continue;
        int slot = 0;
        while (slot < census.count && census.uid[slot] != st.st_uid) slot++;
        if (slot == census.count) {
            if (slot == CENSUS_UIDS) {
                overflow = 1;
                break;
            }
            census.uid[slot] = st.st_uid;
            census.tasks[slot] = 0;
            census.count++;
        }
        census.tasks[slot] += (long long)st.st_nlink - 2;
    }
    closedir(proc);
    census.taken = now;
    census.valid = !overflow;
}

long long metascrub_tasks_of_user(uid_t uid) {
    if (!census.valid || monotonic_ns() - census.taken > 2 * CENSUS_MAX_AGE_NS) return scan_tasks_of_user(uid);
    // The child itself was not there when the census was taken.
    long long tasks = 1;
    for (int i = 0; i < census.count; i++) if (census.uid[i] == uid) tasks += census.tasks[i];
    return tasks;
}

long long metascrub_threads_of_self(void) {
    DIR *proc = opendir("/proc");
    if (!proc) return -errno;
    long long threads = threads_in(dirfd(proc), "self", 0, 1);
    closedir(proc);
    return threads;
}

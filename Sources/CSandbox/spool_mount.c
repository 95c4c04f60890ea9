// SPDX-License-Identifier: GPL-3.0-or-later
// The memory spool on a tmpfs of the server's own. Writing a file on a tmpfs mounted without `huge=` allocates,
// charges and later frees it one 4 KiB page at a time; that was half of every upload's and every output's write
// (two 670 KB files a request). A tmpfs mounted with huge=within_size stores a file in large folios instead, about
// five times cheaper to write, fault in and delete. Only the server's own mount namespace sees that tmpfs, so the
// host's /dev/shm is untouched, and the kernel frees everything left in it when the server's processes are gone.
#define _GNU_SOURCE
#include "csandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

/// Set once this process is in a mount namespace of its own whose mounts never propagate to the host's.
static int private_namespace;
/// Why it is not: not asked for yet, or the errno of the attempt.
static int namespace_error = EPERM;

/// Threads of this process, or -1 when /proc cannot say.
static int thread_count(void) {
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) return -1;
    int count = 0;
    for (struct dirent *entry; (entry = readdir(tasks));) {
        if (entry->d_name[0] != '.') count++;
    }
    closedir(tasks);
    return count;
}

static int enter(void) {
    // A mount namespace is entered by the calling thread only: the threads that exist now would stay behind.
    if (thread_count() != 1) return EBUSY;
    int host = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
    if (host < 0) return errno;
    int error = 0;
    if (unshare(CLONE_NEWNS) != 0) {
        error = errno;
    } else if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0) {
        // Receive the host's mounts and unmounts, send none; where that is refused, back to the host's namespace
        // rather than stay in one whose mounts would reach it.
        error = errno;
        setns(host, CLONE_NEWNS);
    }
    close(host);
    return error;
}

int metascrub_enter_private_mount_namespace(void) {
    if (!private_namespace) {
        namespace_error = enter();
        private_namespace = namespace_error == 0;
    }
    return -namespace_error;
}

int metascrub_mount_private_tmpfs(const char *path, long long bytes, unsigned int mode) {
    if (!private_namespace) return -namespace_error;
    char options[96];
    snprintf(options, sizeof options, "size=%lld,mode=%o,huge=within_size", bytes, mode & 07777);
    if (mount("metascrub-spool", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, options) != 0) return -errno;
    return 0;
}

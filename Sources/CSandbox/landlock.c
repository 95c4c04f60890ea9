// SPDX-License-Identifier: GPL-3.0-or-later
#define _GNU_SOURCE
#include "sandbox_parts.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

// The system headers here describe Landlock ABI 3; the kernel may speak a later one. Rights and fields past ABI 3,
// from the kernel's uapi/linux/landlock.h.
#define FS_TRUNCATE (1ULL << 14)
#define FS_IOCTL_DEV (1ULL << 15)
#define NET_BIND_TCP (1ULL << 0)
#define NET_CONNECT_TCP (1ULL << 1)
#define SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define SCOPE_SIGNAL (1ULL << 1)

struct ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct path_rule {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

int metascrub_landlock_abi(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int)abi;
}

static uint64_t handled_fs(int abi) {
    uint64_t rights = (1ULL << 13) - 1; // ABI 1: execute .. make_sym
    if (abi >= 2) rights |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3) rights |= FS_TRUNCATE;
    if (abi >= 5) rights |= FS_IOCTL_DEV;
    return rights;
}

static int add_path(int ruleset, const char *path, uint64_t access, uint64_t handled) {
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? 0 : -errno; // a library folder this system does not have
    // Rights that only mean something on a directory are refused by the kernel on a file.
    struct path_rule rule = { .allowed_access = access & handled, .parent_fd = fd };
    int rc = 0;
    if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0) {
        rule.allowed_access &= LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | FS_TRUNCATE;
        if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0) rc = -errno;
    }
    close(fd);
    return rc;
}

/// `paths`: newline-separated. Every path gets `access`.
static int add_paths(int ruleset, const char *paths, uint64_t access, uint64_t handled) {
    if (!paths) return 0;
    char *copy = strdup(paths);
    if (!copy) return -ENOMEM;
    int rc = 0;
    char *save = NULL;
    for (char *path = strtok_r(copy, "\n", &save); rc == 0 && path; path = strtok_r(NULL, "\n", &save)) {
        rc = add_path(ruleset, path, access, handled);
    }
    free(copy);
    return rc;
}

int metascrub_landlock(const char *readable, const char *writable) {
    int abi = metascrub_landlock_abi();
    if (abi < 1) return -EOPNOTSUPP;
    uint64_t handled = handled_fs(abi);
    struct ruleset_attr attr = { .handled_access_fs = handled };
    // No TCP bind or connect at all (seccomp refuses sockets too); no signals or abstract sockets outside itself.
    if (abi >= 4) attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP;
    if (abi >= 6) attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL;
    size_t size = abi >= 6 ? sizeof attr : abi >= 4 ? offsetof(struct ruleset_attr, scoped) : sizeof(uint64_t);
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (ruleset < 0) return -errno;
    const uint64_t read = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
    // No truncation: a worker writes every file it makes new (its output, summary and report), and a file that
    // shrinks while the server sends it must not be the worker's to make.
    const uint64_t write = read | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_MAKE_REG
        | LANDLOCK_ACCESS_FS_REMOVE_FILE;
    int rc = add_paths(ruleset, readable, read, handled);
    if (rc == 0) rc = add_paths(ruleset, writable, write, handled);
    if (rc == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) rc = -errno;
    if (rc == 0 && syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) rc = -errno;
    close(ruleset);
    return rc;
}

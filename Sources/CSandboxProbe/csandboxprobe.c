// SPDX-License-Identifier: GPL-3.0-or-later
// Tries what a sandboxed worker must not be able to do. Its own target, linked into metascrub-serve only: the
// metascrub binary keeps its promise of importing no socket function (ReliabilityTests).
#include "csandboxprobe.h"

#include <errno.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int metascrub_sandbox_probe_inet(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return errno;
    close(fd);
    return 0;
}

int metascrub_sandbox_probe_exec(void) {
    pid_t pid;
    char *argv[] = { "true", NULL };
    char *envp[] = { NULL };
    int rc = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, envp);
    if (rc != 0) return rc;
    int status = 0;
    waitpid(pid, &status, 0);
    // glibc reports a failed exec in the child as exit status 127.
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : EPERM;
}


// SPDX-License-Identifier: GPL-3.0-or-later
#define _GNU_SOURCE
#include <unistd.h>
#include "cplatform.h"
#include <sys/ioctl.h>
#include <fcntl.h>

ssize_t ms_copy_file_range(int fd_in, long long *off_in, int fd_out, size_t len) {
    loff_t off = (loff_t)*off_in;
    ssize_t n = copy_file_range(fd_in, &off, fd_out, NULL, len, 0);
    if (n > 0) *off_in = (long long)off;
    return n;
}

int ms_syncfs(int fd) {
    return syncfs(fd);
}

int ms_terminal_columns(int fd) {
    struct winsize ws;
    if (ioctl(fd, TIOCGWINSZ, &ws) != 0) return 0;
    return ws.ws_col;
}

int ms_start_writeback(int fd) {
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

#include <signal.h>
#include <errno.h>

static int ms_signal_write_fd = -1;

static void ms_signal_to_pipe(int signo) {
    int saved = errno;
    unsigned char byte = (unsigned char)signo;
    (void)!write(ms_signal_write_fd, &byte, 1);
    errno = saved;
}

int ms_signal_pipe_install(void) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return -1;
    ms_signal_write_fd = fds[1];
    struct sigaction action;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    action.sa_handler = ms_signal_to_pipe;
    if (sigaction(SIGINT, &action, NULL) != 0 || sigaction(SIGTERM, &action, NULL) != 0) return -1;
    return fds[0];
}

#include <sys/xattr.h>

ssize_t ms_flistxattr(int fd, char *list, size_t size) { return flistxattr(fd, list, size); }
ssize_t ms_fgetxattr(int fd, const char *name, void *value, size_t size) { return fgetxattr(fd, name, value, size); }
int ms_fsetxattr(int fd, const char *name, const void *value, size_t size) { return fsetxattr(fd, name, value, size, 0); }

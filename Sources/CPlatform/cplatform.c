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

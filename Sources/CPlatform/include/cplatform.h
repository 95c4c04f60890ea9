// SPDX-License-Identifier: GPL-3.0-or-later
// Linux calls that Glibc's Swift module does not export (they need _GNU_SOURCE).
#ifndef METASCRUB_CPLATFORM_H
#define METASCRUB_CPLATFORM_H
#include <stddef.h>
#include <sys/types.h>

/// copy_file_range(2): copies in the kernel; returns bytes copied or -1 with errno set.
ssize_t ms_copy_file_range(int fd_in, long long *off_in, int fd_out, size_t len);

/// The width of the terminal on `fd` in columns (TIOCGWINSZ, an ioctl Swift cannot call: it is variadic),
/// or 0 when `fd` is not a terminal.
int ms_terminal_columns(int fd);

/// syncfs(2): flushes every dirty page and the journal of the file system holding `fd`, in one call; returns 0 or
/// -1 with errno set (since Linux 5.8 it reports write-back errors not yet seen, like fsync).
int ms_syncfs(int fd);

/// sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE): starts write-back of the file's dirty pages without waiting,
/// so a later fsync finds them written (and their block allocations in an already running journal commit).
int ms_start_writeback(int fd);

#endif

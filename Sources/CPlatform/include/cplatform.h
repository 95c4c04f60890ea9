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

/// Installs a handler for SIGINT and SIGTERM that only writes the signal's number (one byte) to a pipe, the one
/// async-signal-safe way to hand it to a thread that can take locks and remove files. Returns the pipe's read end,
/// or -1 with errno set.
int ms_signal_pipe_install(void);

/// flistxattr(2), fgetxattr(2), fsetxattr(2) (sys/xattr.h, which Glibc's Swift module does not include).
ssize_t ms_flistxattr(int fd, char *list, size_t size);
ssize_t ms_fgetxattr(int fd, const char *name, void *value, size_t size);
int ms_fsetxattr(int fd, const char *name, const void *value, size_t size);

#endif

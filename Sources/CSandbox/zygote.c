// SPDX-License-Identifier: GPL-3.0-or-later
// The fork server's loop (issue 33 item 6): one single-threaded, pre-initialised parent that forks a fresh child
// per job, so a file costs about its clean instead of an exec, dynamic linking and argument parsing. The child
// confines itself exactly as an exec'd worker does; the parent never parses a file and never confines itself.
#define _GNU_SOURCE
#include "csandbox.h"
#include "sandbox_parts.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

// At most this many children at once: the server runs --workers of them, far fewer.
#define ZYGOTE_SLOTS 256
#define ZYGOTE_LINE 65536

struct zygote_child { long long id; pid_t pid; int pidfd; };

static int write_all(int fd, const char *text) {
    size_t left = strlen(text);
    while (left > 0) {
        ssize_t n = write(fd, text, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        text += n;
        left -= (size_t)n;
    }
    return 0;
}

/// The child's first steps, before any job code: nothing of the parent's descriptors (the job pipe, the other
/// children's pidfds) survives, and it dies with the parent, so no orphan parses on unsupervised.
static void become_child(void) {
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
    }
    metascrub_descriptors_closed = syscall(SYS_close_range, 3, ~0U, 0) == 0;
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
}

static int start_job(struct zygote_child *slots, int out, long long id, const char *job,
                     const struct metascrub_zygote_steps *steps) {
    char reply[96];
    void *prepared = steps->prepare(job, steps->context);
    if (prepared == NULL) {
        snprintf(reply, sizeof reply, "failed %lld %d\n", id, EINVAL);
        write_all(out, reply);
        return 1;
    }
    int slot = -1;
    for (int i = 0; i < ZYGOTE_SLOTS && slot < 0; i++) if (slots[i].pid == 0) slot = i;
    // A parent with a second thread could fork a child holding a lock that thread owned: refuse to fork then.
    int single = metascrub_threads_of_self() == 1;
    pid_t pid = slot < 0 ? (errno = EAGAIN, -1) : !single ? (errno = EDEADLK, -1) : fork();
    if (pid == 0) {
        become_child();
        _exit(steps->run(prepared, steps->context));
    }
    steps->discard(prepared);
    int pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
    if (pid > 0 && pidfd < 0) {
        // Cannot watch it: do not leave it running unwatched.
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        pid = -1;
    }
    if (pid < 0) {
        snprintf(reply, sizeof reply, "failed %lld %d\n", id, errno);
        write_all(out, reply);
        return single;
    }
    slots[slot] = (struct zygote_child){ id, pid, pidfd };
    // After the fork, while the child runs, not before it: the walk of /proc stays out of every request's way, and
    // the next child inherits it (one that finds it older than it accepts walks /proc itself).
    metascrub_task_census_refresh();
    return 1;
}

static void end_job(struct zygote_child *child, int out) {
    siginfo_t info = { 0 };
    while (waitid(P_PID, (id_t)child->pid, &info, WEXITED) < 0 && errno == EINTR) {}
    char reply[96];
    snprintf(reply, sizeof reply, "ended %lld %d %d\n", child->id, info.si_code == CLD_EXITED, info.si_status);
    close(child->pidfd);
    *child = (struct zygote_child){ 0, 0, -1 };
    write_all(out, reply);
}

static void kill_job(struct zygote_child *slots, long long id) {
    for (int i = 0; i < ZYGOTE_SLOTS; i++) {
        // Through the pidfd: the PID cannot have been reused while the child is unreaped, and it is reaped here only.
        if (slots[i].pid > 0 && slots[i].id == id) syscall(SYS_pidfd_send_signal, slots[i].pidfd, SIGKILL, NULL, 0);
    }
}

/// One request line: `job ID TEXT` or `kill ID`. 0: stop taking jobs (this process is no longer fit to fork).
static int handle(char *line, struct zygote_child *slots, int out, const struct metascrub_zygote_steps *steps) {
    long long id = 0;
    int used = 0;
    if (sscanf(line, "job %lld %n", &id, &used) == 1 && used > 0) {
        return start_job(slots, out, id, line + used, steps);
    }
    if (sscanf(line, "kill %lld", &id) == 1) kill_job(slots, id);
    return 1;
}

int metascrub_zygote_serve(int in, int out, const struct metascrub_zygote_steps *steps) {
    static struct zygote_child slots[ZYGOTE_SLOTS];
    static char buffer[ZYGOTE_LINE];
    static struct pollfd fds[ZYGOTE_SLOTS + 1];
    for (int i = 0; i < ZYGOTE_SLOTS; i++) slots[i] = (struct zygote_child){ 0, 0, -1 };
    signal(SIGPIPE, SIG_IGN);
    // What the warm-up freed goes back to the system: every fork copies the page tables of what stays mapped.
    malloc_trim(0);
    metascrub_task_census_refresh();
    size_t filled = 0;
    int open_input = 1;
    // The server uses the fork server only once it said so, and execs workers until then.
    if (write_all(out, "ready\n") != 0) return errno;
    for (;;) {
        int watched = 0, map[ZYGOTE_SLOTS];
        if (open_input) fds[watched++] = (struct pollfd){ .fd = in, .events = POLLIN };
        int first_child = watched;
        for (int i = 0; i < ZYGOTE_SLOTS; i++) {
            if (slots[i].pid == 0) continue;
            map[watched - first_child] = i;
            fds[watched++] = (struct pollfd){ .fd = slots[i].pidfd, .events = POLLIN };
        }
        if (!open_input && watched == 0) return 0;
        if (poll(fds, (nfds_t)watched, -1) < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        for (int k = first_child; k < watched; k++) {
            if (fds[k].revents) end_job(&slots[map[k - first_child]], out);
        }
        if (!open_input || !fds[0].revents) continue;
        ssize_t n = read(in, buffer + filled, sizeof buffer - 1 - filled);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            // The server is gone: nobody will read what its children write.
            open_input = 0;
            for (int i = 0; i < ZYGOTE_SLOTS; i++) if (slots[i].pid > 0) kill(slots[i].pid, SIGKILL);
            continue;
        }
        filled += (size_t)n;
        buffer[filled] = '\0';
        char *start = buffer, *newline;
        while ((newline = strchr(start, '\n')) != NULL) {
            *newline = '\0';
            // Unfit to fork: once the running children end this process exits, and the server execs workers.
            if (!handle(start, slots, out, steps)) open_input = 0;
            start = newline + 1;
        }
        filled = (size_t)(buffer + filled - start);
        memmove(buffer, start, filled);
        // A line longer than the buffer is not one the server sends: drop it rather than stall.
        if (filled == sizeof buffer - 1) filled = 0;
    }
}

int metascrub_spawn_piped(const char *path, char *const argv[], int in, int out, pid_t *pid) {
    return metascrub_spawn_with(path, argv, in, out, pid);
}

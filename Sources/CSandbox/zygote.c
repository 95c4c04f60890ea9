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
// The child's word on its done pipe: its exit status (0-127), or this for a job it could not decode.
#define ZYGOTE_MALFORMED 0x80

/// A child: `id` 0 while it is the spare (forked ahead, waiting on its job pipe); `job` the write end of that pipe
/// until the job is handed over; `done` the read end of the pipe the child writes its status to once its files are
/// written, before its exit; `answered` once the server was told, which may be before the child is reaped.
struct zygote_child { long long id; pid_t pid; int pidfd; int job; int done; int answered; };

static const struct zygote_child no_child = { 0, 0, -1, -1, -1, 0 };

/// The server's lines as the fork server reads them, and how much of it was ever written: a child is forked from
/// this memory, and wipes its copy first, since other requests' jobs (their folders, the sizes their limits were
/// set from) are no business of its upload's worker.
static char request_lines[ZYGOTE_LINE];
static size_t request_lines_used;

static int write_all(int fd, const char *text, size_t left) {
    while (left > 0) {
        ssize_t n = write(fd, text, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        text += n;
        left -= (size_t)n;
    }
    return 0;
}

static int reply(int out, const char *text) { return write_all(out, text, strlen(text)); }

/// The child's first steps, before any job code: it dies with the parent, so no orphan parses on unsupervised, and
/// nothing of the parent's descriptors (the server's socket, the other children's pipes and pidfds) survives but
/// its own two pipes: the job on 0, the done pipe on 3.
static void become_child(int job, int done) {
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    int job_high = fcntl(job, F_DUPFD_CLOEXEC, 16), done_high = fcntl(done, F_DUPFD_CLOEXEC, 16);
    int null = open("/dev/null", O_RDWR);
    if (job_high < 0 || done_high < 0 || null < 0) _exit(3);
    dup2(job_high, 0);
    dup2(null, 1);
    dup2(done_high, 3);
    metascrub_descriptors_closed = syscall(SYS_close_range, 4, ~0U, 0) == 0;
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
}

/// The spare's life: while it waits, it decodes a job of the fork server's making (its first decode would otherwise
/// take its page faults in this copy of the parent's memory after its own job came; an earlier request's job would
/// tell it about another upload); then it reads its job to the end of the pipe, runs it, and says how it ended on
/// the done pipe before the exit's teardown, which the server need not wait for. Never returns.
static void run_child(const struct metascrub_zygote_runner *runner) {
    memset(request_lines, 0, request_lines_used);
    if (runner->warm != NULL) runner->warm(runner->context);
    char *text = malloc(ZYGOTE_LINE);
    size_t filled = 0;
    ssize_t n = 0;
    while (text != NULL && filled < ZYGOTE_LINE - 1 && ((n = read(0, text + filled, ZYGOTE_LINE - 1 - filled)) > 0
                                                        || (n < 0 && errno == EINTR))) {
        if (n > 0) filled += (size_t)n;
    }
    unsigned char word = ZYGOTE_MALFORMED;
    if (text == NULL || n < 0) _exit(3);
    if (filled == 0) {
        // An empty job (or none: the pipe closed) is not one: said so, for a child that had an id.
        write_all(3, (const char *)&word, 1);
        _exit(2);
    }
    text[filled] = '\0';
    prctl(PR_SET_NAME, "metascrub", 0, 0, 0); // a child with a file now
    dup2(1, 0);
    int status = runner->run(text, runner->context);
    free(text);
    // Statuses are small (0, 2, 3); one past the word's range is said as 127, which is no success either.
    if (status >= 0) word = (unsigned char)(status > 127 ? 127 : status);
    write_all(3, (const char *)&word, 1);
    _exit(status < 0 ? 2 : status);
}

/// Forks the spare into a free slot (`*spare`, when asked for): 0, or an errno.
static int fork_spare(struct zygote_child *slots, const struct metascrub_zygote_runner *runner,
                      struct zygote_child **spare) {
    int slot = -1;
    for (int i = 0; i < ZYGOTE_SLOTS && slot < 0; i++) if (slots[i].pid == 0) slot = i;
    if (slot < 0) return EAGAIN;
    // A parent with a second thread could fork a child holding a lock that thread owned: refuse to fork then.
    if (metascrub_threads_of_self() != 1) return EDEADLK;
    int job[2], done[2];
    if (pipe2(job, O_CLOEXEC) != 0) return errno;
    // The fork server never blocks on a child: a job line fits an empty pipe (64 KiB), and one that does not is
    // refused rather than waited on.
    if (fcntl(job[1], F_SETFL, O_NONBLOCK) != 0 || pipe2(done, O_CLOEXEC | O_NONBLOCK) != 0) {
        int error = errno;
        close(job[0]);
        close(job[1]);
        return error;
    }
    // Named apart from birth, so that ps (and the tests) never take the spare for a child with a file; the name goes
    // back in the parent at once.
    // The parent's own name, read once: it never changes.
    static char name[16];
    if (name[0] == '\0') prctl(PR_GET_NAME, name, 0, 0, 0);
    prctl(PR_SET_NAME, "metascrub-spare", 0, 0, 0);
    pid_t pid = fork();
    if (pid == 0) {
        become_child(job[0], done[1]);
        run_child(runner);
    }
    int error = errno;
    prctl(PR_SET_NAME, name, 0, 0, 0);
    close(job[0]);
    close(done[1]);
    int pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
    if (pid > 0 && pidfd < 0) {
        // Cannot watch it: do not leave it running unwatched.
        error = errno;
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        pid = -1;
    }
    if (pid < 0) {
        close(job[1]);
        close(done[0]);
        return error;
    }
    slots[slot] = (struct zygote_child){ 0, pid, pidfd, job[1], done[0], 0 };
    if (spare != NULL) *spare = &slots[slot];
    // After the fork, while the spare waits or a child runs, not before it: the walk of /proc stays out of every
    // request's way, and the next spare inherits it (one that finds it older than it accepts walks /proc itself).
    metascrub_task_census_refresh();
    return 0;
}

/// The spare: forked, no job yet, and not seen to end (its done pipe still open: one that died is reaped later).
static struct zygote_child *spare_of(struct zygote_child *slots) {
    for (int i = 0; i < ZYGOTE_SLOTS; i++) {
        if (slots[i].pid > 0 && slots[i].job >= 0 && slots[i].done >= 0) return &slots[i];
    }
    return NULL;
}

/// Writes the job down the spare's pipe: 0, or an errno (the spare is then killed and reaped without a word).
static int hand_over(struct zygote_child *spare, long long id, const char *job) {
    spare->id = id;
    int error = write_all(spare->job, job, strlen(job)) == 0 ? 0 : errno;
    close(spare->job);
    spare->job = -1;
    if (error != 0) {
        syscall(SYS_pidfd_send_signal, spare->pidfd, SIGKILL, NULL, 0);
        spare->answered = 1;
    }
    return error;
}

/// Hands the job to the spare (forking one first when there is none), so a request does not wait for a fork.
/// 1, or 0 when this process is no longer fit to fork and should stop taking jobs.
static int start_job(struct zygote_child *slots, int out, long long id, const char *job,
                     const struct metascrub_zygote_runner *runner) {
    char line[96];
    struct zygote_child *spare = spare_of(slots);
    // Ids start at 1: 0 would read as a spare's.
    int error = id <= 0 ? EINVAL : spare == NULL ? fork_spare(slots, runner, &spare) : 0;
    if (error == 0) error = hand_over(spare, id, job);
    // A spare that died just before its job (its end not yet seen): one more, forked for this job.
    if (error == EPIPE && (error = fork_spare(slots, runner, &spare)) == 0) error = hand_over(spare, id, job);
    if (error == 0) return 1;
    snprintf(line, sizeof line, "failed %lld %d\n", id, error);
    reply(out, line);
    return error != EDEADLK;
}

/// The child's word, read as soon as it is written: the server streams the output while the child's exit tears
/// down its memory. The child is killed on its word (the signal lands a moment later): the server is told before
/// the child is gone and does not rely on its being gone, since its files are complete when it says its word and
/// what a compromised child could still do there it could as well have done before.
static void child_said(struct zygote_child *child, int out) {
    unsigned char word[16];
    ssize_t n = read(child->done, word, sizeof word);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    close(child->done);
    child->done = -1;
    if (n <= 0 || child->id == 0 || child->answered) return;
    char line[96];
    if (word[0] == ZYGOTE_MALFORMED) snprintf(line, sizeof line, "failed %lld %d\n", child->id, EINVAL);
    else snprintf(line, sizeof line, "ended %lld 1 %d\n", child->id, word[0] & 0x7f);
    syscall(SYS_pidfd_send_signal, child->pidfd, SIGKILL, NULL, 0);
    child->answered = 1;
    reply(out, line);
}

/// Reaps a child; says how it ended unless it said so itself (or was a spare that never had a job).
static void child_ended(struct zygote_child *child, int out) {
    siginfo_t info = { 0 };
    while (waitid(P_PID, (id_t)child->pid, &info, WEXITED) < 0 && errno == EINTR) {}
    char line[96];
    snprintf(line, sizeof line, "ended %lld %d %d\n", child->id, info.si_code == CLD_EXITED, info.si_status);
    int tell = child->id != 0 && !child->answered;
    close(child->pidfd);
    if (child->job >= 0) close(child->job);
    if (child->done >= 0) close(child->done);
    *child = no_child;
    if (tell) reply(out, line);
}

static void kill_job(struct zygote_child *slots, long long id) {
    for (int i = 0; i < ZYGOTE_SLOTS; i++) {
        // Through the pidfd: the PID cannot have been reused while the child is unreaped, and it is reaped here only.
        if (id > 0 && slots[i].pid > 0 && slots[i].id == id) {
            syscall(SYS_pidfd_send_signal, slots[i].pidfd, SIGKILL, NULL, 0);
        }
    }
}

/// One request line: `job ID TEXT` or `kill ID`. Sets `*handed` for a job (whose spare is to be replaced); 0 when
/// this process should stop taking jobs (it is no longer fit to fork).
static int handle_line(char *line, struct zygote_child *slots, int out, const struct metascrub_zygote_runner *runner,
                       int *handed) {
    long long id = 0;
    int used = 0;
    if (sscanf(line, "job %lld %n", &id, &used) == 1 && used > 0) {
        *handed = 1;
        return start_job(slots, out, id, line + used, runner);
    }
    if (sscanf(line, "kill %lld", &id) == 1) kill_job(slots, id);
    return 1;
}

/// What one poll round watches, and which slot each entry belongs to.
struct zygote_watch {
    struct pollfd fds[2 * ZYGOTE_SLOTS + 1];
    int slot[2 * ZYGOTE_SLOTS + 1];
    int count;
};

static void watch(struct zygote_watch *w, int fd, int slot) {
    w->fds[w->count] = (struct pollfd){ .fd = fd, .events = POLLIN };
    w->slot[w->count++] = slot;
}

int metascrub_zygote_serve(int in, int out, const struct metascrub_zygote_runner *runner) {
    static struct zygote_child slots[ZYGOTE_SLOTS];
    static struct zygote_watch w;
    for (int i = 0; i < ZYGOTE_SLOTS; i++) slots[i] = no_child;
    signal(SIGPIPE, SIG_IGN);
    // What the warm-up freed goes back to the system: every fork copies the page tables of what stays mapped.
    malloc_trim(0);
    metascrub_task_census_refresh();
    size_t filled = 0;
    int open_input = 1, spare_wanted = 0;
    // The server uses the fork server only once it said so, and execs workers until then.
    if (reply(out, "ready\n") != 0) return errno;
    // The first spare; each job handed over forks the next one while it runs, once nothing else is waiting.
    fork_spare(slots, runner, NULL);
    for (;;) {
        w.count = 0;
        if (open_input) watch(&w, in, -1);
        for (int i = 0; i < ZYGOTE_SLOTS; i++) {
            if (slots[i].pid == 0) continue;
            watch(&w, slots[i].pidfd, i);
            if (slots[i].done >= 0) watch(&w, slots[i].done, i);
        }
        if (!open_input && w.count == 0) return 0;
        // The next spare is forked when nothing else waits: a fork takes this process a few hundred microseconds,
        // in which a word that came or a job that arrived would wait (and two cores sit idle at two requests).
        // Tried once per job handed over: a fork that fails (a process limit) is not retried in a loop.
        spare_wanted = spare_wanted && open_input && spare_of(slots) == NULL;
        int ready = poll(w.fds, (nfds_t)w.count, spare_wanted ? 0 : -1);
        if (ready < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (ready == 0) {
            fork_spare(slots, runner, NULL);
            spare_wanted = 0;
            continue;
        }
        // The words first: a child that said and exited in the same round is answered with its word.
        for (int k = 0; k < w.count; k++) {
            struct zygote_child *child = w.slot[k] < 0 ? NULL : &slots[w.slot[k]];
            if (child != NULL && w.fds[k].revents && w.fds[k].fd == child->done) child_said(child, out);
        }
        for (int k = 0; k < w.count; k++) {
            struct zygote_child *child = w.slot[k] < 0 ? NULL : &slots[w.slot[k]];
            if (child != NULL && child->pid > 0 && w.fds[k].revents && w.fds[k].fd == child->pidfd) {
                if (child->done >= 0) child_said(child, out);
                child_ended(child, out);
            }
        }
        if (!open_input || !w.fds[0].revents) continue;
        ssize_t n = read(in, request_lines + filled, ZYGOTE_LINE - 1 - filled);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            // The server is gone: nobody will read what its children write.
            open_input = 0;
            for (int i = 0; i < ZYGOTE_SLOTS; i++) if (slots[i].pid > 0) kill(slots[i].pid, SIGKILL);
            continue;
        }
        filled += (size_t)n;
        request_lines[filled] = '\0';
        if (filled + 1 > request_lines_used) request_lines_used = filled + 1;
        char *start = request_lines, *newline;
        while ((newline = strchr(start, '\n')) != NULL) {
            *newline = '\0';
            // Unfit to fork: once the running children end this process exits, and the server execs workers.
            if (!handle_line(start, slots, out, runner, &spare_wanted)) open_input = 0;
            start = newline + 1;
        }
        filled = (size_t)(request_lines + filled - start);
        memmove(request_lines, start, filled);
        // A line longer than the buffer is not one the server sends: drop it rather than stall.
        if (filled == ZYGOTE_LINE - 1) filled = 0;
    }
}

int metascrub_spawn_piped(const char *path, char *const argv[], int in, int out, pid_t *pid) {
    return metascrub_spawn_with(path, argv, in, out, pid);
}

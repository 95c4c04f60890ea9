// SPDX-License-Identifier: GPL-3.0-or-later
// The request loop of scripts/serve-load, in C so that the load generator takes as little as possible of the
// 2 cores it shares with the tool being measured. One thread and one kept-open channel per concurrent client; the
// same loop drives both tools, each request a full round trip of the same bytes:
//   http PORT FILE C SECONDS MAX           POST /v1/clean on a kept-alive connection, response read in full
//   exiftool FILE C SECONDS MAX FOLDER     the bytes written to a fresh file, `-all= -o OUT IN -execute` on a warm
//                                          `exiftool -stay_open True -@ -`, {ready} awaited, OUT read in full,
//                                          both files removed
// Prints `requests failures elapsed_s tool_cpu_s` (the exiftool processes' CPU over the timed loop, -1 for http),
// then every latency in ms, one per line. Bounded by SECONDS and MAX.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *body;
static size_t body_size;
static int port;
static const char *folder;
static double deadline;
static atomic_long started, failures;
static long max_requests;
static double *latencies;
static atomic_long recorded;
// Every client set up (connected; exiftool warm), then the clock starts and all are let go at once.
static pthread_barrier_t ready, go;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int write_all(int fd, const char *data, size_t size) {
    while (size > 0) {
        ssize_t n = write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        data += n;
        size -= (size_t)n;
    }
    return 0;
}

/// Reads one HTTP response: headers up to the blank line, then Content-Length bytes. 1 for a 200 with a body.
static int read_response(int fd, char *buffer, size_t capacity) {
    size_t filled = 0;
    char *end = NULL;
    while (!end) {
        if (filled == capacity) return -1;
        ssize_t n = read(fd, buffer + filled, capacity - filled);
        if (n <= 0) return -1;
        filled += (size_t)n;
        end = memmem(buffer, filled, "\r\n\r\n", 4);
    }
    size_t head = (size_t)(end - buffer) + 4;
    int ok = memcmp(buffer, "HTTP/1.1 200", 12) == 0;
    const char *length = memmem(buffer, head, "\r\ncontent-length:", 17);
    if (!length) length = memmem(buffer, head, "\r\nContent-Length:", 17);
    if (!length) return -1;
    long long want = atoll(length + 17);
    long long have = (long long)(filled - head);
    while (have < want) {
        ssize_t n = read(fd, buffer, capacity);
        if (n <= 0) return -1;
        have += n;
    }
    return ok && want > 0;
}

static void *http_client(void *unused) {
    (void)unused;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        perror("connect");
        exit(2);
    }
    char head[256];
    int head_size = snprintf(head, sizeof head, "POST /v1/clean HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                             "Content-Type: image/jpeg\r\nContent-Length: %zu\r\n\r\n", body_size);
    size_t capacity = 1 << 20;
    char *buffer = malloc(capacity);
    pthread_barrier_wait(&ready);
    pthread_barrier_wait(&go);
    while (now() < deadline) {
        long index = atomic_fetch_add(&started, 1);
        if (index >= max_requests) break;
        double t0 = now();
        int ok = write_all(fd, head, (size_t)head_size) == 0 && write_all(fd, body, body_size) == 0
                 && read_response(fd, buffer, capacity) == 1;
        latencies[atomic_fetch_add(&recorded, 1)] = (now() - t0) * 1000;
        if (!ok) atomic_fetch_add(&failures, 1);
        if (!ok) break;
    }
    free(buffer);
    close(fd);
    return NULL;
}

struct exiftool { FILE *commands; FILE *replies; pid_t pid; };

/// utime + stime of a process, in clock ticks (the exiftool side's CPU, without its start-up).
static long long cpu_ticks(pid_t pid) {
    char path[64], text[2048];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
    if (fd >= 0) close(fd);
    if (n <= 0) return 0;
    text[n] = '\0';
    const char *after = strrchr(text, ')');
    long long utime = 0, stime = 0;
    if (after) sscanf(after + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld", &utime, &stime);
    return utime + stime;
}

static atomic_llong exiftool_ticks;

static void exiftool_command(struct exiftool *tool, const char *text) {
    fprintf(tool->commands, "%s\n-execute\n", text);
    fflush(tool->commands);
    char line[4096];
    while (fgets(line, sizeof line, tool->replies) && strncmp(line, "{ready", 6) != 0) {}
}

static struct exiftool exiftool_start(void) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) exit(2);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 2);
        execlp("exiftool", "exiftool", "-stay_open", "True", "-@", "-", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    struct exiftool tool = { fdopen(in[1], "w"), fdopen(out[0], "r"), pid };
    return tool;
}

static int clients;

static void *exiftool_client(void *argument) {
    long id = (long)argument;
    struct exiftool tool = exiftool_start();
    exiftool_command(&tool, "-ver"); // perl start and module loading: before the clock starts
    pthread_barrier_wait(&ready);
    pthread_barrier_wait(&go);
    long long ticks = cpu_ticks(tool.pid);
    size_t capacity = body_size * 2 + 4096;
    char *buffer = malloc(capacity);
    for (long n = 0; now() < deadline; n++) {
        long index = atomic_fetch_add(&started, 1);
        if (index >= max_requests) break;
        char source[4096], target[4096], command[8400];
        snprintf(source, sizeof source, "%s/ex-%ld-%ld-in.jpg", folder, id, n);
        snprintf(target, sizeof target, "%s/ex-%ld-%ld-out.jpg", folder, id, n);
        double t0 = now();
        int fd = open(source, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int ok = fd >= 0 && write_all(fd, body, body_size) == 0;
        if (fd >= 0) close(fd);
        snprintf(command, sizeof command, "-all=\n-o\n%s\n%s", target, source);
        exiftool_command(&tool, command);
        fd = open(target, O_RDONLY | O_CLOEXEC);
        ssize_t got = fd >= 0 ? read(fd, buffer, capacity) : -1;
        if (fd >= 0) close(fd);
        ok = ok && got > 0;
        unlink(source);
        unlink(target);
        latencies[atomic_fetch_add(&recorded, 1)] = (now() - t0) * 1000;
        if (!ok) atomic_fetch_add(&failures, 1);
    }
    atomic_fetch_add(&exiftool_ticks, cpu_ticks(tool.pid) - ticks);
    fprintf(tool.commands, "-stay_open\nFalse\n");
    fclose(tool.commands);
    fclose(tool.replies);
    while (wait(NULL) > 0 || errno == EINTR) {}
    free(buffer);
    return NULL;
}

int main(int argc, char **argv) {
    int http = argc == 7 && strcmp(argv[1], "http") == 0;
    int exif = argc == 7 && strcmp(argv[1], "exiftool") == 0;
    if (!http && !exif) {
        fprintf(stderr, "usage: load-client http PORT FILE C SECONDS MAX | exiftool FILE C SECONDS MAX FOLDER\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    const char *file = http ? argv[3] : argv[2];
    clients = atoi(http ? argv[4] : argv[3]);
    double seconds = atof(http ? argv[5] : argv[4]);
    max_requests = atol(http ? argv[6] : argv[5]);
    if (http) port = atoi(argv[2]);
    else folder = argv[6];
    struct stat st;
    int fd = open(file, O_RDONLY);
    if (fd < 0 || fstat(fd, &st) != 0) return 2;
    body_size = (size_t)st.st_size;
    body = malloc(body_size);
    if (read(fd, body, body_size) != (ssize_t)body_size) return 2;
    close(fd);
    latencies = calloc((size_t)max_requests + (size_t)clients, sizeof *latencies);
    pthread_t threads[64];
    if (clients < 1 || clients > 64) return 2;
    pthread_barrier_init(&ready, NULL, (unsigned)clients + 1);
    pthread_barrier_init(&go, NULL, (unsigned)clients + 1);
    for (long i = 0; i < clients; i++) {
        pthread_create(&threads[i], NULL, http ? http_client : exiftool_client, (void *)i);
    }
    pthread_barrier_wait(&ready);
    double t0 = now();
    deadline = t0 + seconds;
    pthread_barrier_wait(&go);
    for (int i = 0; i < clients; i++) pthread_join(threads[i], NULL);
    double elapsed = now() - t0;
    long n = atomic_load(&recorded);
    // The exiftool side's CPU over the timed loop; -1 for http (the caller measures the server).
    double tool_cpu = exif ? (double)atomic_load(&exiftool_ticks) / (double)sysconf(_SC_CLK_TCK) : -1;
    printf("%ld %ld %.6f %.3f\n", n, atomic_load(&failures), elapsed, tool_cpu);
    for (long i = 0; i < n; i++) printf("%.3f\n", latencies[i]);
    return 0;
}

// SPDX-License-Identifier: GPL-3.0-or-later
// A shared library opened with dlopen on the first use of one of its functions, not at process start (issue 19):
// linking libheif or LibRaw loaded their codecs and runtimes into every run, although most runs never need them.
#ifndef LAZY_LIBRARY_H
#define LAZY_LIBRARY_H

#include <pthread.h>

struct lazy_library {
    const char *soname;
    pthread_mutex_t lock;
    int tried;
    void *handle;
};

#define LAZY_LIBRARY(soname) {(soname), PTHREAD_MUTEX_INITIALIZER, 0, 0}

// The address of `name` in the library, or NULL when the library or the symbol is missing. The first call
// tries dlopen once; a missing library is not tried again.
void *lazy_library_symbol(struct lazy_library *library, const char *name);

// A forwarder with the library's own prototype (declared by the including file's header): resolves the symbol with
// the including file's `resolve(const char *)` and calls it, or answers `fallback` when the library is missing.
#define FORWARD(type, name, params, args, fallback)  \
    type name params {                               \
        __typeof__(&name) f = resolve(#name);        \
        return f ? f args : fallback;                \
    }

#define FORWARD_VOID(name, params, args)             \
    void name params {                               \
        __typeof__(&name) f = resolve(#name);        \
        if (f) f args;                               \
    }

#endif

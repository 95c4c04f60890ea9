// SPDX-License-Identifier: GPL-3.0-or-later
#include "lazy_library.h"

#include <dlfcn.h>
#include <stddef.h>

void *lazy_library_symbol(struct lazy_library *library, const char *name) {
    pthread_mutex_lock(&library->lock);
    if (!library->tried) {
        library->handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
        library->tried = 1;
    }
    void *handle = library->handle;
    pthread_mutex_unlock(&library->lock);
    return handle ? dlsym(handle, name) : NULL;
}

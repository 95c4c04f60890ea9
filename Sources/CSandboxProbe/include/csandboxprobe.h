// SPDX-License-Identifier: GPL-3.0-or-later
#ifndef CSANDBOXPROBE_H
#define CSANDBOXPROBE_H

/// After entering the sandbox: 0 when an AF_INET socket can be created, else the errno (EPERM under the filter).
int metascrub_sandbox_probe_inet(void);
/// After entering the sandbox: 0 when /bin/true could be exec'd in a child, else the errno.
int metascrub_sandbox_probe_exec(void);

#endif

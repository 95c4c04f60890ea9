// SPDX-License-Identifier: GPL-3.0-or-later
import CSandbox

// While this is the process's only thread (a mount namespace is entered by one thread): a mount namespace of the
// server's own, where the memory spool may get a tmpfs nobody else sees (MemorySpool). Refused without
// CAP_SYS_ADMIN, which changes nothing else.
_ = metascrub_enter_private_mount_namespace()
await ServeCommand.start()

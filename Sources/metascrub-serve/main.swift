// SPDX-License-Identifier: GPL-3.0-or-later
import CSandbox

// While this is the process's only thread (a mount namespace is entered by one thread): a mount namespace of the
// server's own, where the default memory spool gets a tmpfs nobody else sees (MemorySpool). Only when that spool
// will be used, since the namespace holds a copy of the host's mounts while the server runs. Refused without
// CAP_SYS_ADMIN, which changes nothing else; the server's start line says why.
let (command, settings) = ServeCommand.prepare()
if settings?.usesDefaultMemorySpool == true { _ = metascrub_enter_private_mount_namespace() }
await command.start(settings: settings)

// SPDX-License-Identifier: GPL-3.0-or-later
import CSandbox
import CSandboxProbe
import Foundation
import MetascrubCore
import MetascrubSandbox

/// `metascrub serve --probe-sandbox`: enters the sandbox as a worker does, then tries what it must not be able to do
/// and prints the outcome as JSON, so tests and operators can see what this kernel and container allow.
enum SandboxProbe {
    static func run(_ limits: SandboxLimits) throws(MetascrubError) -> String {
        let landlockABI = Sandbox.landlockABI // asked before the allow-list refuses the call
        let state = try Sandbox.enter(limits)
        let inet = metascrub_sandbox_probe_inet()
        let exec = metascrub_sandbox_probe_exec()
        let object: [String: Any] = [
            "applied": state.description,
            "landlock_abi": landlockABI,
            "network_namespace": state.networkNamespace,
            "seccomp": state.seccomp,
            "inet_socket": inet == 0 ? "allowed" : "refused (\(String(cString: strerror(inet))))",
            "exec": exec == 0 ? "allowed" : "refused (\(String(cString: strerror(exec))))",
            "rlimit_cpu": metascrub_sandbox_limit(Int32(RLIMIT_CPU.rawValue)),
            "rlimit_as": metascrub_sandbox_limit(Int32(RLIMIT_AS.rawValue)),
            "rlimit_fsize": metascrub_sandbox_limit(Int32(RLIMIT_FSIZE.rawValue)),
            "rlimit_core": metascrub_sandbox_limit(Int32(RLIMIT_CORE.rawValue)),
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}

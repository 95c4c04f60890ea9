// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

extension ItemCollector {
    /// A file damaged where no metadata can sit (inside or after the coded data): under the default policy the
    /// scan goes on and a `damaged-input` warning says where and what cannot be verified; the damaged bytes
    /// are copied unchanged. Under `damaged: refuse` the error is thrown as it always was.
    mutating func damaged(_ error: MetascrubError, at offset: Int64, _ what: String) throws {
        guard options.tolerateDamage else { throw error }
        notes.append(Note(.warning, code: "damaged-input", "damaged input at byte \(offset): \(what)", offset: offset))
    }
}

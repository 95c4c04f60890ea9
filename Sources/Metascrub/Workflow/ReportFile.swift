// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// `--report FILE`: written atomically like an output (a temp file beside it, renamed), or through a special file
/// (`/dev/stdout`, a FIFO), and never renamed over a link or a device.
public enum ReportFile {
    public static func write(_ text: String, to path: String) throws(MetascrubError) {
        let bytes = Array(text.utf8)
        do {
            switch try ExistingDestination.of(path) {
            case .writeThrough:
                try ExistingDestination.writeThrough(bytes, to: path)
            case .none, .regularFile:
                try AtomicWriter(fileSystem: PosixFileSystem()).replace(path, createFolders: false, write: { try $0.write(bytes) }, check: { _ in })
            }
        } catch {
            throw FileProcessor.typed(error)
        }
    }
}

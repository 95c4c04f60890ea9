// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import MetascrubFormats

enum EngineFixture {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func path(_ relative: String) -> String { root.appendingPathComponent("Fixtures/" + relative).path }

    static func tempDir() -> String {
        let dir = NSTemporaryDirectory() + "metascrub-engine-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// What a plain, fault-free clean of the fixture writes (the only other acceptable content of a target).
    static func cleanedReference(_ fixture: String, in dir: String) -> Data? {
        let out = dir + "/reference-" + (fixture as NSString).lastPathComponent
        let report = FileProcessor(options: ProcessingOptions(policy: try! PolicyCatalog.builtin("strict")))
            .clean(InputFile(path: path(fixture), relative: (fixture as NSString).lastPathComponent), output: .file(out))
        defer { try? FileManager.default.removeItem(atPath: out) }
        return report.status == .cleaned ? FileManager.default.contents(atPath: out) : nil
    }

    /// Every `.metascrub-*` entry below `dir`.
    static func temporaries(under dir: String) -> [String] {
        let all = FileManager.default.enumerator(atPath: dir)?.allObjects as? [String] ?? []
        return all.filter { ($0 as NSString).lastPathComponent.hasPrefix(PosixFileSystem.temporaryPrefix) }.sorted()
    }
}

extension CleanPlan {
    /// The plan with every finding of `key` kept: a cleaner that "forgets" to remove an item, as a bug would.
    func forgetting(_ key: String) -> CleanPlan {
        var plan = self
        for index in plan.findings.indices where plan.findings[index].item.key == key {
            plan.findings[index].disposition = .keep
        }
        return plan
    }
}

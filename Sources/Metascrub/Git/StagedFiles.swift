// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats

/// One file in the index that the commit being prepared adds or changes.
struct StagedEntry: Sendable, Equatable {
    var path: String
    var mode: String
    var sha: String
}

/// `scan --staged` and `clean --staged`: what a pre-commit hook checks is the index (what will be
/// committed), not the working tree, which may hold other, unstaged edits.
public struct StagedWorkflow: Sendable {
    public var engine: Engine
    public var filter: PathFilter
    let git: Git

    /// The repository around `directory` (the working directory).
    public init(engine: Engine, filter: PathFilter = PathFilter(), directory: String) throws(MetascrubError) {
        self.engine = engine
        self.filter = filter
        self.git = Git(top: try Git.topLevel(from: directory))
    }

    public var top: String { git.top }

    /// Added, copied or modified regular files in the index (renames count as additions; deletions and
    /// symbolic links have no content to check), in git's path order.
    func stagedEntries() throws(MetascrubError) -> [StagedEntry] {
        let changed = Set(try git.list(["diff", "--cached", "--name-only", "-z", "--no-renames", "--diff-filter=ACM"]))
        guard !changed.isEmpty else { return [] }
        var entries: [StagedEntry] = []
        for record in try git.list(["ls-files", "--stage", "-z"]) {
            // `<mode> <sha> <stage>\t<path>`
            guard let tab = record.firstIndex(of: "\t") else { continue }
            let fields = record[..<tab].split(separator: " ")
            let path = String(record[record.index(after: tab)...])
            guard fields.count == 3, changed.contains(path), fields[0] == "100644" || fields[0] == "100755",
                  filter.acceptsFile(path) else { continue }
            entries.append(StagedEntry(path: path, mode: String(fields[0]), sha: String(fields[1])))
        }
        return entries
    }

    /// Scans the staged blobs themselves, one at a time from `git cat-file --batch`.
    public func scan() throws(MetascrubError) -> Report {
        let entries = try stagedEntries()
        let processor = FileProcessor(options: engine.options)
        var reports: [FileReport] = []
        if !entries.isEmpty {
            let reader = try BlobReader(git)
            for entry in entries {
                do {
                    let blob = try reader.blob(entry.sha)
                    reports.append(processor.scan(source: MemoryByteSource(blob), path: entry.path))
                } catch {
                    var report = FileReport(path: entry.path, status: .error)
                    report.error = ErrorInfo(error)
                    reports.append(report)
                }
            }
        }
        return engine.makeReport(.scan, reports)
    }

    /// Cleans the staged files in the working tree and stages the result. A file whose working copy differs
    /// from its staged blob is refused: cleaning it and running `git add` would stage edits the user had
    /// deliberately left out of this commit.
    public func clean(progress: ProgressMeter? = nil) async throws(MetascrubError) -> Report {
        let entries = try stagedEntries()
        guard !entries.isEmpty else { return engine.makeReport(.clean, []) }
        let unstaged = Set(try git.list(["diff", "--name-only", "-z", "--no-renames"]))
        var refused: [String: FileReport] = [:]
        var inputs: [InputFile] = []
        for entry in entries {
            if unstaged.contains(entry.path) {
                var report = FileReport(path: entry.path, status: .error)
                report.error = ErrorInfo(code: "partially-staged", message:
                    "partially staged: the working tree differs from the index, so cleaning and re-staging it would commit unstaged changes; stage or stash them first (nothing was written)")
                refused[entry.path] = report
            } else {
                inputs.append(InputFile(path: Paths.join(git.top, entry.path), relative: entry.path, explicit: false))
            }
        }
        let cleaned = await engine.clean(inputs, output: .inPlace, progress: progress)
        var byPath: [String: FileReport] = [:]
        for (input, report) in zip(inputs, cleaned.files) {
            var report = report
            report.path = input.relative
            if report.output != nil { report.output = input.relative }
            byPath[input.relative] = report
        }
        let changed = inputs.map(\.relative).filter { byPath[$0]?.status == .cleaned }
        if !changed.isEmpty {
            // Through stdin, NUL-separated: any number of paths, any names.
            let list = changed.map { Array($0.utf8) + [0] }.flatMap { $0 }
            _ = try git.run(["add", "--pathspec-from-file=-", "--pathspec-file-nul"], input: list)
        }
        return engine.makeReport(.clean, entries.compactMap { refused[$0.path] ?? byPath[$0.path] })
    }
}

// SPDX-License-Identifier: GPL-3.0-or-later

/// The report for people: one block per file that has something to say, then a summary.
public struct TextReportRenderer: ReportRenderer {
    public var verbose: Bool
    /// ANSI colour on each file's status (a terminal that asked for it: see the CLI's --color and NO_COLOR).
    public var colour: Bool

    public init(verbose: Bool = false, colour: Bool = false) {
        self.verbose = verbose
        self.colour = colour
    }

    public func render(_ report: Report) throws -> String {
        var out = ""
        for file in report.files {
            out += renderFile(file, command: report.command)
        }
        out += renderSummary(report)
        return out
    }

    private func renderFile(_ file: FileReport, command: Report.Command) -> String {
        var head = "\(file.path): " + paint(file)
        if let format = file.format { head += " [\(format)]" }
        if let method = file.method, file.status == .cleaned { head += " by \(method.rawValue)" }
        if let output = file.output, output != file.path { head += " -> \(output)" }
        if let reason = file.reason { head += " (\(reason))" }
        var lines = [head]
        if let error = file.error { lines.append("  error: \(error.message)") }
        // Cleaning a folder of photos should read as one line per file; the items are in --verbose and JSON.
        if command == .clean, !verbose, file.status == .cleaned {
            // Items removed from inside a kept cover or attachment are removed items too: a photographer who
            // keeps album art wants to read that its GPS went.
            var counts: [String: Int] = [:]
            var inside = 0
            for finding in file.removedFindings {
                counts[finding.item.category.rawValue, default: 0] += 1
                if finding.item.parent != nil { inside += 1 }
            }
            let total = counts.values.reduce(0, +)
            if total == 0 {
                lines[0] += ": nothing removed"
            } else {
                lines[0] += ": \(total) item\(total == 1 ? "" : "s") removed ("
                    + counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"
                if inside > 0 { lines[0] += ", \(inside) of them inside embedded files" }
            }
        }
        let shown = verbose ? file.findings
            : command == .clean ? [] : file.findings.filter { $0.disposition != .keep && $0.item.parent == nil }
        if !shown.isEmpty {
            let keyWidth = min(44, shown.map(\.item.key.count).max() ?? 0)
            for finding in shown {
                let action = command == .clean && finding.outcome != .none ? finding.outcome.rawValue : finding.disposition.rawValue
                var line = "  " + pad(action, 8) + " " + pad(finding.item.category.rawValue, 10) + " "
                    + pad(finding.item.key, keyWidth) + "  " + finding.item.location
                if let detail = finding.item.detail { line += "  (\(detail))" }
                if let value = finding.item.value { line += "  = \(Self.printable(value))" }
                if verbose { line += "  [\(finding.rule)]" }
                if verbose, let reason = finding.reason { line += "  kept: \(reason)" }
                lines.append(line)
            }
        }
        if let reencode = file.reencode { lines.append("  reencode: \(reencode.summary)") }
        for note in file.notes where verbose || note.severity >= .warning || note.code.hasPrefix("orientation") {
            lines.append("  note: \(note.message)")
        }
        if verbose, let verification = file.verification {
            lines.append("  verified: rescan \(verification.rescan.rawValue), \(verification.content) \(verification.contentResult.rawValue)")
        }
        // A clean file says nothing unless asked: hooks and CI want only what needs attention.
        if !verbose, lines.count == 1, file.status == .clean || file.status == .skipped && file.reason == "not-media" {
            return ""
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The status word, coloured by what it asks of the reader: green done, yellow to act on, red failed or not checked.
    private func paint(_ file: FileReport) -> String {
        let word = file.status.rawValue
        guard colour else { return word }
        let code: String
        switch file.status {
        case .clean, .cleaned: code = "32"
        case .findings: code = "33"
        case .error: code = "31"
        case .skipped: code = file.reason?.hasPrefix("not checked") == true ? "31" : "2"
        }
        return "\u{1B}[\(code)m\(word)\u{1B}[0m"
    }

    private func renderSummary(_ report: Report) -> String {
        let s = report.summary
        let order: [FileStatus] = [.cleaned, .clean, .findings, .skipped, .error]
        let parts = order.compactMap { status in s.byStatus[status.rawValue].map { "\($0) \(status.rawValue)" } }
        var text = "\(s.files) file\(s.files == 1 ? "" : "s"): " + (parts.isEmpty ? "nothing to do" : parts.joined(separator: ", "))
        if !s.removedByCategory.isEmpty {
            let verb = report.command == .scan ? "to remove" : "removed"
            let cats = s.removedByCategory.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            text += "; items \(verb): " + cats.joined(separator: ", ")
        }
        return text + "\n"
    }

    private func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
    }

    /// Control characters in values would let a crafted file rewrite the terminal.
    static func printable(_ s: String) -> String {
        String(s.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : Character($0) })
    }
}

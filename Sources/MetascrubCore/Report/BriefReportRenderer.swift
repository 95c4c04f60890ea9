// SPDX-License-Identifier: GPL-3.0-or-later

/// One line per file that needs attention, for git hooks: a commit that is blocked should say which files
/// and why at a glance (`photo.jpg: location, device, time (strict policy: 14 items to remove)`).
/// Files with nothing to say produce no line; there is no summary.
public struct BriefReportRenderer: ReportRenderer {
    public init() {}

    public func render(_ report: Report) throws -> String {
        var out = ""
        for file in report.files {
            if let line = line(file, report) { out += line + "\n" }
        }
        return out
    }

    private func line(_ file: FileReport, _ report: Report) -> String? {
        let path = TextReportRenderer.printable(file.path)
        switch file.status {
        case .error:
            return "\(path): error: \(file.error?.message ?? "failed")"
        case .skipped:
            guard file.notes.contains(where: { $0.severity >= .warning }) else { return nil }
            return "\(path): skipped: \(file.reason ?? "")"
        case .clean:
            return nil
        case .findings, .cleaned:
            let top = file.removedFindings
            let forbidden = Set(file.findings.filter { $0.disposition == .fail && $0.item.parent == nil }.map(\.item.category))
            let categories = Set(top.map(\.item.category)).sorted()
            let names = categories.map { forbidden.contains($0) ? "\($0.rawValue) (forbidden)" : $0.rawValue }
            let verb = file.status == .cleaned ? "removed" : "to remove"
            let head = file.status == .cleaned ? "\(path): cleaned: " : "\(path): "
            var line = head + names.joined(separator: ", ") + " (\(report.policy.name) policy: \(top.count) item\(top.count == 1 ? "" : "s") \(verb))"
            if let reencode = file.reencode {
                let figure = reencode.psnr.map { "PSNR \(Reencoding.decimal($0, 1)) dB" } ?? "identical pixels"
                line += "; re-encoded \(reencode.from) → \(reencode.to) (\(figure))"
                if let output = file.output { line += " -> \(output)" }
            }
            return line
        }
    }
}

/// The closing screen of a long run shown on a terminal: how many files ended how, and what was removed
/// per category. Counts only; never names or values.
public struct RunSummaryRenderer: Sendable {
    public init() {}

    public func render(_ report: Report, seconds: Double) -> String {
        let s = report.summary
        func count(_ status: FileStatus) -> Int { s.byStatus[status.rawValue] ?? 0 }
        let scanned = s.files - count(.error)
        var rows: [(String, String)] = [("files scanned", "\(scanned)")]
        if report.command == .clean {
            rows.append(("cleaned", "\(count(.cleaned))"))
            rows.append(("already clean", "\(count(.clean))"))
        } else {
            rows.append(("with findings", "\(count(.findings))"))
            rows.append(("clean", "\(count(.clean))"))
        }
        var skipped: [String: Int] = [:]
        for file in report.files where file.status == .skipped {
            let reason = file.reason ?? "skipped"
            let kind = reason.hasPrefix("not-media") ? "not media" : reason.hasPrefix("uncleaned") ? "uncleaned"
                : reason.hasPrefix("symlink") ? "symlinks" : reason.hasPrefix("unsupported") ? "unsupported" : "other"
            skipped[kind, default: 0] += 1
        }
        let detail = skipped.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        rows.append(("skipped", "\(count(.skipped))" + (detail.isEmpty ? "" : "  (\(detail))")))
        rows.append(("failed", "\(count(.error))"))
        let verb = report.command == .clean ? "metadata removed" : "metadata to remove"
        let categories = s.removedByCategory.sorted { Category(rawValue: $0.key) ?? .structure < Category(rawValue: $1.key) ?? .structure }
        let total = categories.reduce(0) { $0 + $1.value }
        rows.append((verb, "\(total) item\(total == 1 ? "" : "s")"))
        let width = rows.map(\.0.count).max() ?? 0
        var out = "metascrub \(report.command.rawValue): \(s.files) file\(s.files == 1 ? "" : "s") in \(Self.seconds(seconds)), policy \(report.policy.name)\n"
        for (label, value) in rows {
            out += "  " + label + String(repeating: " ", count: width - label.count) + "  " + value + "\n"
        }
        for (category, n) in categories {
            out += "    " + category + String(repeating: " ", count: max(1, 12 - category.count)) + "\(n)\n"
        }
        return out
    }

    static func seconds(_ t: Double) -> String {
        let tenths = Int((t * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) s"
    }
}

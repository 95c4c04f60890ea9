// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Turns a report into bytes for people or machines.
public protocol ReportRenderer: Sendable {
    func render(_ report: Report) throws -> String
}

public enum ReportFormat: String, Sendable, CaseIterable {
    /// `brief`: one line per file that needs attention (hooks).
    case text, json, sarif, brief

    public func renderer(verbose: Bool = false, colour: Bool = false) -> any ReportRenderer {
        switch self {
        case .text: TextReportRenderer(verbose: verbose, colour: colour)
        case .brief: BriefReportRenderer()
        case .json: JSONReportRenderer()
        case .sarif: SARIFReportRenderer()
        }
    }
}

public struct JSONReportRenderer: ReportRenderer {
    public init() {}

    public func render(_ report: Report) throws -> String {
        if let bytes = try ParallelJSONReport.render(report, encoder: Self.encoder) {
            return String(decoding: bytes, as: UTF8.self) + "\n"
        }
        return String(decoding: try Self.encoder().encode(report), as: UTF8.self) + "\n"
    }

    /// Pretty-printed with sorted keys: the same report always gives the same bytes.
    @Sendable static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

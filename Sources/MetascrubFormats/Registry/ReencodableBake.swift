// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// An orientation the plan bakes that no lossless transform can (issue 16, `reencode: true`): what the
/// re-encoder needs to know. Handlers that can say so implement `FormatHandler.reencodableBake`; the pixel
/// work is the pipeline's (`OrientationReencoder`), not the handler's.
public struct ReencodableBake: Sendable, Equatable {
    public enum Coding: Sendable, Equatable {
        case jpeg
        case webp(lossless: Bool)
        /// Strips of 8- or 16-bit samples libtiff codes losslessly (`TIFFBake`).
        case tiff
    }

    public var coding: Coding
    /// The EXIF orientation value, 2...8.
    public var orientation: Int
    /// Index of the orientation item in the scan (and plan).
    public var item: Int
    /// Why no lossless bake exists, for the report.
    public var reason: String

    public init(coding: Coding, orientation: Int, item: Int, reason: String) {
        self.coding = coding
        self.orientation = orientation
        self.item = item
        self.reason = reason
    }
}

extension FormatHandler {
    /// Formats without a re-encode path have none.
    public func reencodableBake(input: any ByteSource, scan: ScanResult<Layout>, plan: CleanPlan) -> ReencodableBake? { nil }
}

extension FormatScan {
    /// See `FormatHandler.reencodableBake`; nil unless the policy allows re-encoding.
    public func reencodableBake(input: any ByteSource, plan: CleanPlan) -> ReencodableBake? {
        guard plan.policy.allowReencode else { return nil }
        return reencodable(input, plan)
    }
}

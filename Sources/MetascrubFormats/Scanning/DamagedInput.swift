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

    /// The top-level boxes of an ISOBMFF file (MP4/MOV, HEIF/AVIF). A file cut inside its last `mdat` (a
    /// recording stopped by a full card, an upload interrupted) keeps that box up to the end of the file: coded
    /// data holds no metadata the scan could miss, and the part that is there is copied as it is. Items whose
    /// data lies in the missing part are the format's to judge.
    mutating func topLevel(_ reader: BoxReader) throws -> BoxReader.Listing {
        do {
            return try reader.topLevel()
        } catch let error as MetascrubError {
            guard case .truncated(_, "mdat", let offset, _) = error, options.tolerateDamage else { throw error }
            var listing = try reader.boxes(in: 0..<offset, parentPath: "", depth: 0)
            guard listing.leftover == nil else { throw error }
            let head = try reader.source.read(at: offset, count: 8, format: reader.format, path: "mdat")
            let large = BigEndian.u32(head, 0) == 1
            let headerSize = large ? 16 : 8
            guard reader.source.size - offset >= Int64(headerSize) else { throw error }
            listing.boxes.append(Box(type: "mdat", offset: offset, size: reader.source.size - offset, headerSize: headerSize,
                                     sizeForm: large ? .large : .compact, path: "mdat"))
            try damaged(error, at: offset, "the file ends inside the sample data box (\(error.description)); the part that is there is copied byte for byte")
            return listing
        }
    }
}

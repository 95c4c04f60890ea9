// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Apple's maker note ("Apple iOS\0", big-endian IFD at offset 14, offsets relative to the note). exiv2 0.27 does
/// not decode it; the one entry worth surfacing is tag 0x0011, the content identifier that pairs a Live Photo's
/// still with its video (exiftool: MediaGroupUUID, formerly ContentIdentifier).
public enum AppleMakerNote {
    static let signature = Array("Apple iOS\0".utf8)
    static let contentIdentifierTag: UInt16 = 0x0011

    /// Whether an Apple maker note holds a content identifier; where its value is, relative to the note.
    static func contentIdentifier(in note: [UInt8]) -> Range<Int>? {
        guard note.count >= 16, note.starts(with: signature), note[12] == 0x4D, note[13] == 0x4D else { return nil }
        let count = BigEndian.u16(note, 14)
        guard count < 512, 16 + count * 12 <= note.count else { return nil }
        for i in 0..<count {
            let e = 16 + i * 12
            guard UInt16(BigEndian.u16(note, e)) == contentIdentifierTag, BigEndian.u16(note, e + 2) == 2 else { continue }
            let n = BigEndian.u32(note, e + 4)
            let at = n <= 4 ? e + 8 : BigEndian.u32(note, e + 8)
            return at + n <= note.count ? at..<at + n : nil
        }
        return nil
    }

    /// Adds `makernote:Apple.ContentIdentifier` as a child of the maker-note item, and a note: removing it (with
    /// the maker note) unpairs the photo from its Live Photo video.
    public static func itemiseContentIdentifier(
        _ block: ExifBlock, map: ExifItems, location: String, origin: Int64, into items: inout [MetadataItem], notes: inout [Note]
    ) {
        for (item, (directory, index)) in map.entryOfItem where directory == .exif {
            let entry = block.entries(directory)[index]
            guard entry.tag == ExifBlock.makerNote, let value = contentIdentifier(in: entry.value) else { continue }
            items.append(MetadataItem(
                key: "makernote:Apple.ContentIdentifier", category: .identity, location: "\(location)/ExifIFD/MakerNote/Apple.0x0011",
                offset: origin + Int64(entry.valueOffset + value.lowerBound), length: Int64(value.count),
                detail: "Live Photo content identifier (pairs this photo with its video)", parent: item))
            notes.append(Note(.info, code: "live-photo",
                              "Apple Live Photo: the maker note holds the content identifier that pairs this photo with a video; it goes with the maker note",
                              offset: origin + Int64(entry.valueOffset)))
        }
    }
}

// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The identifying fields of Sony's enciphered maker-note blocks 0x2010 and 0x9050, which exiv2 0.27 does not read
/// (0x9050 at all, 0x2010 only in the variant it calls Sony2010e, and there it sizes the date as one byte), and of
/// the plain ShotInfo block 0x3000. Where
/// each field lies depends on the model, as in ExifTool's `Sony::Tag2010b`–`e` and `Sony::Tag9050a`–`c` (the
/// conditions below are ExifTool's, on IFD0's Model). Sony enciphers these blocks with a byte substitution that
/// maps 0 to 0, so a field blanked in the stored bytes deciphers to zeros: nothing has to be re-enciphered.
enum SonyMakerNote {
    struct Field {
        var tag: UInt16
        var offset: Int
        var size: Int
        var name: String
        /// The model must match this (a regular expression, as ExifTool's condition) ...
        var when: String? = nil
        /// ... and must not match this.
        var unless: String? = nil
    }

    /// A layout of one block: the models it applies to, and its fields.
    struct Layout {
        var name: String
        var models: String
        var excluding = false
        var fields: [Field]
    }

    static let tag2010: UInt16 = 0x2010
    static let tag9050: UInt16 = 0x9050

    static func tag2010(dateAt offset: Int) -> [Field] {
        [Field(tag: tag2010, offset: 0, size: 4, name: "SequenceImageNumber"), Field(tag: tag2010, offset: 4, size: 4, name: "SequenceFileNumber"),
         Field(tag: tag2010, offset: offset, size: 7, name: "SonyDateTime")]
    }

    /// First match wins, per block, in ExifTool's order.
    static let layouts: [Layout] = [
        Layout(name: "Tag2010b", models: "^(SLT-A(65|77)V?|NEX-(7|VG20E)|Lunar)$", fields: tag2010(dateAt: 0x01B6)),
        Layout(name: "Tag2010c", models: "^(SLT-A(37|57)|NEX-F3)$", fields: tag2010(dateAt: 0x0210)),
        Layout(name: "Tag2010d", models: "^(DSC-(HX10V|HX20V|HX30V|HX200V|TX66|TX200V|TX300V|WX50|WX70|WX100|WX150))$", fields: tag2010(dateAt: 0x01FE)),
        Layout(name: "Tag2010e", models: "^(SLT-A99V?|HV|SLT-A58|ILCE-(3000|3500)|NEX-(3N|5R|5T|6|VG900|VG30E)|DSC-(RX100|RX1|RX1R)|Stellar|DSC-(HX300|HX50|HX50V|TX30|WX60|WX80|WX200|WX300))$",
               fields: tag2010(dateAt: 0x022C)),
        Layout(name: "Tag9050a", models: "^(DSC-|Stellar|ILCE-(1|6100|6300|6400|6500|6600|7C|7M3|7M4|7RM2|7RM3A?|7RM4A?|7RM5|7SM2|7SM3|9|9M2)|ILCA-99M2|ILME-FX3|ZV-)",
               excluding: true, fields: [
                   Field(tag: tag9050, offset: 0x0032, size: 4, name: "ShutterCount"),
                   Field(tag: tag9050, offset: 0x004C, size: 4, name: "ShutterCount2", when: "^(ILCE-(7(R|S|M2)?|[56]000|5100|QX1))\\b"),
                   Field(tag: tag9050, offset: 0x0051, size: 6, name: "SonyDateTime2", when: "^(ILCE-(7(R|S|M2)?|[56]000|5100|QX1))\\b"),
                   Field(tag: tag9050, offset: 0x007C, size: 4, name: "InternalSerialNumber", unless: "^(Lunar|NEX-(5N|7|VG20E)|SLT-|HV|ILCA-)"),
                   Field(tag: tag9050, offset: 0x00F0, size: 5, name: "InternalSerialNumber", when: "^(SLT-|HV|ILCA-)"),
                   Field(tag: tag9050, offset: 0x01A0, size: 4, name: "ShutterCount3", when: "^(ILCE-(5100|QX1)|ILCA-(68|77M2))"),
                   Field(tag: tag9050, offset: 0x01AA, size: 4, name: "ShutterCount3",
                         when: "^(SLT-A(58|99V?)|HV|NEX-(3N|5R|5T|6|VG900|VG30E)|ILCE-([35]000|3500))\\b"),
                   Field(tag: tag9050, offset: 0x01BD, size: 4, name: "ShutterCount3", when: "^(SLT-A(37|57|65|77)V?|Lunar|NEX-(F3|5N|7|VG20E))"),
               ]),
        // ExifTool tells the ILCE-9's second shutter count by its firmware (v5/v6 at 0x0050, else 0x0058): both go.
        Layout(name: "Tag9050b", models: "^(ILCE-(6100|6300|6400|6500|6600|7C|7M3|7RM2|7RM3A?|7RM4A?|7SM2|9|9M2)|ILCA-99M2|ZV-E10)", fields: [
            Field(tag: tag9050, offset: 0x003A, size: 4, name: "ShutterCount"),
            Field(tag: tag9050, offset: 0x0050, size: 4, name: "ShutterCount2", when: "^(ILCE-(6100|6400|6600|7C|7RM4A?|9M2|9)|ZV-E10)"),
            Field(tag: tag9050, offset: 0x0052, size: 4, name: "ShutterCount2", when: "^(ILCE-(7M3|7RM3A?))"),
            Field(tag: tag9050, offset: 0x0058, size: 4, name: "ShutterCount2", unless: "^(ILCA-99M2|ILCE-(6100|6400|6600|7C|7M3|7RM3A?|7RM4A?|9M2)|ZV-E10)"),
            Field(tag: tag9050, offset: 0x0088, size: 6, name: "InternalSerialNumber"),
            Field(tag: tag9050, offset: 0x019F, size: 4, name: "ShutterCount3", when: "^(ILCE-(6100|6400|6600|7C|7M3|7RM3A?|7RM4A?|9|9M2)|ZV-E10)\\b"),
            Field(tag: tag9050, offset: 0x01CB, size: 4, name: "ShutterCount3", when: "^(ILCE-(7RM2|7SM2))"),
            Field(tag: tag9050, offset: 0x01CD, size: 4, name: "ShutterCount3", when: "^(ILCE-(6300|6500)|ILCA-99M2)"),
        ]),
        Layout(name: "Tag9050c", models: "^(ILCE-(1|7M4|7RM5|7SM3)|ILME-FX3)", fields: [
            Field(tag: tag9050, offset: 0x003A, size: 4, name: "ShutterCount"),
            Field(tag: tag9050, offset: 0x0050, size: 4, name: "ShutterCount2"),
            Field(tag: tag9050, offset: 0x0088, size: 6, name: "InternalSerialNumber", when: "^(ILCE-(7M4|7RM5|7SM3)|ILME-FX3)"),
            Field(tag: tag9050, offset: 0x008A, size: 6, name: "InternalSerialNumber", when: "^(ILCE-1)"),
        ]),
    ]

    static let shotInfoTag: UInt16 = 0x3000

    /// Group names for the fields here (each an array of bytes in `MakerNoteFields.sonyArrays`).
    static func group(_ tag: UInt16) -> String { tag == tag2010 ? "Sony2010" : tag == shotInfoTag ? "SonyShotInfo" : "Sony9050" }

    /// The date and detected faces of ShotInfo (0x3000, not enciphered; ExifTool `Sony::ShotInfo`, which exiv2 0.27
    /// does not read), from its bytes: a byte order mark, the faces' offset (0x02) and the length of one face's
    /// entry (0x32), room for eight faces.
    static func shotInfoFields(_ block: [UInt8]) -> [Field] {
        guard block.count >= 0x34, block[0] == block[1], block[0] == 0x49 || block[0] == 0x4D else { return [] }
        let order: ByteOrder = block[0] == 0x49 ? .little : .big
        var fields = [Field(tag: shotInfoTag, offset: 0x06, size: 20, name: "SonyDateTime"),
                      Field(tag: shotInfoTag, offset: 0x30, size: 2, name: "FacesDetected")]
        let faces = Int(order.u16(block, 0x02)), length = Int(order.u16(block, 0x32))
        if faces >= 0x34, faces < block.count, length > 0 {
            fields.append(Field(tag: shotInfoTag, offset: faces, size: min(length * 8, block.count - faces), name: "FacePositions"))
        }
        return fields.filter { $0.offset + $0.size <= block.count }
    }

    /// The fields of `model`'s blocks that lie inside the entries the note has (`lengths`: entry tag to byte count).
    static func fields(model: String, lengths: [UInt16: Int64]) -> [Field] {
        func matches(_ pattern: String) -> Bool { (try? Regex(pattern)).map { model.firstMatch(of: $0) != nil } ?? false }
        var chosen: [UInt16: Layout] = [:]
        for layout in layouts {
            let tag = layout.fields[0].tag
            if chosen[tag] == nil, matches(layout.models) != layout.excluding { chosen[tag] = layout }
        }
        return chosen.values.flatMap(\.fields).filter { field in
            guard let length = lengths[field.tag], Int64(field.offset + field.size) <= length else { return false }
            return field.when.map(matches) ?? true && !(field.unless.map(matches) ?? false)
        }.sorted { ($0.tag, $0.offset) < ($1.tag, $1.offset) }
    }
}

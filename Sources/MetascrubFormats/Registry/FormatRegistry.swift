// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// One row of the format table: how to recognise the format, what can be done with it, and who does it.
public struct FormatEntry: Sendable {
    public var format: MediaFormat
    public var detect: @Sendable ([UInt8]) -> Bool
    /// nil: recognised, reported as unsupported, never passed on as clean.
    public var handler: AnyFormatHandler?
    public var capabilities: Capabilities
    /// Why a recognised format is not cleaned (shown in reports).
    public var unsupportedReason: String?
    /// The row that takes a file this row's magic matched when the file turns out to be another format, told apart
    /// by reading past the first bytes (a FLAC stream behind an ID3v2 tag starts like an MP3): its format id, or nil.
    public var variant: (@Sendable (any ByteSource) throws -> String?)?

    public init(
        _ format: MediaFormat, detect: @escaping @Sendable ([UInt8]) -> Bool, handler: (any FormatHandler)? = nil,
        capabilities: Capabilities = Capabilities(), unsupportedReason: String? = nil,
        variant: (@Sendable (any ByteSource) throws -> String?)? = nil
    ) {
        self.format = format
        self.detect = detect
        self.handler = handler.map { AnyFormatHandler($0) }
        self.capabilities = capabilities
        self.unsupportedReason = unsupportedReason
        self.variant = variant
    }
}

/// The one table a new format is added to. Order matters where magic overlaps: more specific rows first
/// (camera raws before plain TIFF, RIFF forms by their form type, ISOBMFF by brand).
public enum FormatRegistry {
    static let notYet = "cleaning this format is not implemented yet"
    static let mp4Capabilities = Capabilities([
        .xmp: .remove, .text: .remove, .embedded: .remove, .trailer: .remove, .tags: .remove, .timed: .remove,
    ])
    /// In-place cleaning of TIFF-structured raws: IPTC/Photoshop blocks, XMP, GPS, identifying EXIF and
    /// maker-note fields, metadata segments of embedded previews.
    static let rawCapabilities = Capabilities([.exif: .remove, .xmp: .remove, .iptc: .remove, .embedded: .remove])
    /// JPEG and PNG carry every still-image family.
    static let stillImageCapabilities = Capabilities([
        .exif: .remove, .xmp: .remove, .iptc: .remove, .icc: .remove, .text: .remove, .embedded: .remove, .trailer: .remove,
    ])

    public static let entries: [FormatEntry] = [
        FormatEntry(
            MediaFormat(id: "jpeg", name: "JPEG", kind: .image),
            detect: { Magic.starts($0, [0xFF, 0xD8, 0xFF]) },
            handler: JPEGFormat(),
            capabilities: stillImageCapabilities),
        FormatEntry(
            MediaFormat(id: "png", name: "PNG", kind: .image),
            detect: { Magic.starts($0, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) },
            handler: PNGFormat(),
            capabilities: stillImageCapabilities),
        FormatEntry(
            MediaFormat(id: "webp", name: "WebP", kind: .image),
            detect: { Magic.isRIFF($0, form: "WEBP") },
            handler: WebPFormat(),
            capabilities: Capabilities([.exif: .remove, .xmp: .remove, .icc: .remove, .trailer: .remove])),
        FormatEntry(
            MediaFormat(id: "gif", name: "GIF", kind: .image),
            detect: { Magic.ascii($0, "GIF87a") || Magic.ascii($0, "GIF89a") },
            handler: GIFFormat(),
            capabilities: Capabilities([.xmp: .remove, .icc: .remove, .text: .remove, .trailer: .remove])),
        FormatEntry(
            MediaFormat(id: "cr2", name: "Canon CR2", kind: .raw),
            detect: { Magic.isTIFF($0) && Magic.ascii($0, "CR", at: 8) }, handler: RawTIFFFormat(), capabilities: rawCapabilities),
        FormatEntry(
            MediaFormat(id: "orf", name: "Olympus ORF", kind: .raw),
            detect: { Magic.ascii($0, "IIRO") || Magic.ascii($0, "IIRS") || Magic.ascii($0, "MMOR") },
            handler: RawTIFFFormat(), capabilities: rawCapabilities),
        FormatEntry(
            MediaFormat(id: "rw2", name: "Panasonic RW2", kind: .raw),
            detect: { Magic.starts($0, [0x49, 0x49, 0x55, 0x00]) }, handler: RawTIFFFormat(), capabilities: rawCapabilities),
        FormatEntry(
            MediaFormat(id: "raf", name: "Fujifilm RAF", kind: .raw),
            detect: { Magic.ascii($0, "FUJIFILMCCD-RAW") }, handler: RawTIFFFormat(.raf),
            capabilities: Capabilities([.exif: .remove, .xmp: .remove, .embedded: .remove])),
        // Phase One IIQ: a TIFF whose sensor data and calibration sit in Phase One's maker note right after the
        // header ("IIII" at byte 8, `PhaseOneMakerNote`); cleaned in place like the other TIFF-based raws. It holds no
        // embedded files.
        FormatEntry(
            MediaFormat(id: "iiq", name: "Phase One IIQ", kind: .raw),
            detect: { Magic.isTIFF($0) && Magic.ascii($0, "IIII", at: 8) }, handler: RawTIFFFormat(),
            capabilities: Capabilities([.exif: .remove, .xmp: .remove, .iptc: .remove])),
        // A DNG whose IFD0 lies in the first bytes; other DNGs and the TIFF-based raws without a magic of their
        // own (NEF/NRW, ARW/SR2, PEF) are recognised by the TIFF row's scanner and cleaned by the same raw cleaner.
        FormatEntry(
            MediaFormat(id: "dng", name: "DNG (and NEF, ARW, PEF via TIFF)", kind: .raw),
            detect: { Magic.tiffIFD0Tags($0)?.contains(0xC612) ?? false }, handler: RawTIFFFormat(), capabilities: rawCapabilities),
        FormatEntry(
            MediaFormat(id: "tiff", name: "TIFF", kind: .image),
            detect: { Magic.isTIFF($0) },
            handler: TIFFFormat(),
            capabilities: Capabilities([
                .exif: .remove, .xmp: .remove, .iptc: .remove, .icc: .remove, .text: .remove, .embedded: .remove,
            ])),
        FormatEntry(
            MediaFormat(id: "psd", name: "Photoshop PSD/PSB", kind: .image),
            detect: { Magic.ascii($0, "8BPS") },
            handler: PSDFormat(),
            capabilities: Capabilities([
                .exif: .remove, .xmp: .remove, .iptc: .remove, .icc: .remove, .text: .remove, .embedded: .remove,
            ])),
        FormatEntry(
            MediaFormat(id: "cr3", name: "Canon CR3", kind: .raw),
            detect: { Magic.isobmffBrands($0)?.first == "crx " }, handler: RawTIFFFormat(.cr3),
            capabilities: Capabilities([.exif: .remove, .xmp: .remove, .embedded: .remove])),
        FormatEntry(
            MediaFormat(id: "avif", name: "AVIF", kind: .image),
            // AVIF files may name a generic major brand (mif1) and list avif among the compatible ones.
            detect: { head in
                guard let brands = Magic.isobmffBrands(head) else { return false }
                return ["avif", "avis"].contains(brands[0])
                    || (["mif1", "msf1", "miaf"].contains(brands[0]) && brands.dropFirst().contains { ["avif", "avis"].contains($0) })
            },
            handler: HEIFFormat(formatName: "AVIF"),
            capabilities: Capabilities([
                .exif: .remove, .xmp: .remove, .icc: .remove, .text: .remove, .embedded: .remove, .trailer: .remove,
            ])),
        FormatEntry(
            MediaFormat(id: "heif", name: "HEIF/HEIC", kind: .image),
            detect: { head in
                guard let brands = Magic.isobmffBrands(head) else { return false }
                return ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1", "avci"].contains(brands[0])
                    || brands.dropFirst().contains("mif1")
            },
            handler: HEIFFormat(),
            capabilities: Capabilities([
                .exif: .remove, .xmp: .remove, .icc: .remove, .text: .remove, .embedded: .remove, .trailer: .remove,
            ])),
        FormatEntry(
            MediaFormat(id: "jxl", name: "JPEG XL", kind: .image),
            detect: { Magic.starts($0, [0xFF, 0x0A]) || Magic.starts($0, [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) },
            handler: JXLFormat(),
            capabilities: Capabilities([.exif: .remove, .xmp: .remove, .embedded: .remove, .trailer: .remove])),
        FormatEntry(
            MediaFormat(id: "jp2", name: "JPEG 2000 (JP2/JPX/J2K)", kind: .image),
            detect: { Magic.starts($0, JP2Scanner.signature) || Magic.starts($0, [0xFF, 0x4F, 0xFF, 0x51]) },
            handler: JP2Format(),
            capabilities: Capabilities([.exif: .remove, .xmp: .remove, .iptc: .remove, .text: .remove])),
        FormatEntry(
            MediaFormat(id: "svg", name: "SVG", kind: .image),
            detect: { SVGScanner.detect($0) },
            handler: SVGFormat(),
            capabilities: Capabilities([.text: .remove])),
        FormatEntry(
            MediaFormat(id: "mov", name: "QuickTime MOV", kind: .video),
            detect: { head in
                if Magic.isobmffBrands(head)?.first == "qt  " { return true }
                // Old QuickTime files start with a moov/mdat/wide/free box instead of ftyp.
                return ["moov", "mdat", "wide", "free", "skip", "pnot"].contains { Magic.ascii(head, $0, at: 4) }
            },
            handler: MP4Format(formatName: "MOV"), capabilities: mp4Capabilities),
        FormatEntry(
            MediaFormat(id: "mp4", name: "MP4/M4A/3GP", kind: .video),
            detect: { Magic.isobmffBrands($0) != nil }, handler: MP4Format(), capabilities: mp4Capabilities),
        FormatEntry(
            MediaFormat(id: "matroska", name: "Matroska/WebM", kind: .video),
            detect: { Magic.starts($0, [0x1A, 0x45, 0xDF, 0xA3]) },
            handler: MatroskaFormat(),
            capabilities: Capabilities([.tags: .remove, .text: .remove, .embedded: .remove])),
        FormatEntry(
            MediaFormat(id: "avi", name: "AVI", kind: .video),
            detect: { Magic.isRIFF($0, form: "AVI ") },
            handler: AVIFormat(),
            capabilities: Capabilities([.tags: .remove, .text: .remove, .xmp: .remove])),
        FormatEntry(
            MediaFormat(id: "wav", name: "WAV", kind: .audio),
            detect: { Magic.isRIFF($0, form: "WAVE") || Magic.ascii($0, "RF64") },
            handler: WAVFormat.audio,
            capabilities: Capabilities([.xmp: .remove, .text: .remove, .tags: .remove, .embedded: .remove, .trailer: .remove])),
        FormatEntry(
            MediaFormat(id: "aiff", name: "AIFF", kind: .audio),
            detect: { Magic.ascii($0, "FORM") && (Magic.ascii($0, "AIFF", at: 8) || Magic.ascii($0, "AIFC", at: 8)) },
            handler: AIFFFormat.audio,
            capabilities: Capabilities([.xmp: .remove, .text: .remove, .tags: .remove, .embedded: .remove, .trailer: .remove])),
        FormatEntry(
            MediaFormat(id: "flac", name: "FLAC", kind: .audio),
            detect: { Magic.ascii($0, "fLaC") },
            handler: FLACFormat(),
            capabilities: Capabilities([.text: .remove, .tags: .remove, .embedded: .remove, .trailer: .remove])),
        FormatEntry(
            MediaFormat(id: "ogg", name: "Ogg", kind: .audio),
            detect: { Magic.ascii($0, "OggS") },
            handler: OggFormat(),
            capabilities: Capabilities([.text: .remove, .tags: .remove, .embedded: .remove])),
        FormatEntry(
            MediaFormat(id: "asf", name: "ASF/WMV/WMA", kind: .video),
            detect: { Magic.starts($0, [0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11]) },
            handler: ASFFormat(),
            capabilities: Capabilities([.tags: .remove, .text: .remove, .embedded: .remove])),
        FormatEntry(
            MediaFormat(id: "mpegts", name: "MPEG-TS/M2TS", kind: .video),
            detect: { Magic.isMPEGTS($0) },
            handler: MPEGTSFormat(),
            capabilities: Capabilities([.timed: .remove, .text: .remove])),
        FormatEntry(
            MediaFormat(id: "mp3", name: "MP3", kind: .audio),
            detect: { head in
                Magic.ascii(head, "ID3") || (head.count >= 2 && head[0] == 0xFF && head[1] & 0xE0 == 0xE0 && head[1] & 0x06 != 0)
            },
            handler: MP3Format(),
            capabilities: Capabilities([.text: .remove, .tags: .remove, .embedded: .remove, .trailer: .remove]),
            variant: { try FLACFormat.isBehindID3($0) ? "flac" : nil }),
        // A PDF may have bytes before its header (the standard allows 1024).
        FormatEntry(
            MediaFormat(id: "pdf", name: "PDF", kind: .document),
            detect: { head in Array(head.prefix(1024)).firstRange(of: Array("%PDF-".utf8)) != nil },
            handler: PDFFormat(),
            capabilities: Capabilities([.xmp: .remove, .text: .remove, .embedded: .remove])),
        // Last among the media rows: only what no native handler claims.
        FormatEntry(
            MediaFormat(id: "avformat", name: "libavformat (FLV, MPEG-PS, MXF, CAF, NUT, WavPack, …)", kind: .video),
            detect: { AVContainers.detect($0) },
            handler: AVFormat(),
            capabilities: Capabilities([.tags: .remove, .text: .remove, .embedded: .remove, .timed: .remove])),
        FormatEntry(
            MediaFormat(id: "bmp", name: "BMP", kind: .image),
            detect: { Magic.ascii($0, "BM") && $0.count >= 26 && $0[6] == 0 && $0[7] == 0 && $0[8] == 0 && $0[9] == 0 },
            unsupportedReason: notYet),
    ]

    /// Which containers the libavformat row cleans and which stay with the native handlers.
    public static var generalPathSummary: String { AVContainers.summary }

    /// The first row whose magic matches the file's first bytes.
    public static func detect(_ head: [UInt8], in table: [FormatEntry] = entries) -> FormatEntry? {
        table.first { $0.detect(head) }
    }

    /// The row for a whole file: the first row whose magic matches its first bytes, or the variant that row names.
    public static func detect(_ source: any ByteSource, head: [UInt8], in table: [FormatEntry] = entries) throws -> FormatEntry? {
        guard let entry = detect(head, in: table) else { return nil }
        guard let variant = try entry.variant?(source) else { return entry }
        return table.first { $0.format.id == variant } ?? entry
    }
}

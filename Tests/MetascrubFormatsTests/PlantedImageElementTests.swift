// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import MetascrubFormats
import MetascrubNative
import XCTest

/// Every image and raw row of the format registry, one cleaned file each: an element of the container's own kind
/// that no reader knows, and bytes after the fields of one it knows, each carrying a stranger's name and position.
/// Under strict, share and location the clean removes them or refuses; a `cleaned` or `clean` answer with the
/// planted bytes still in the output (as text, UTF-16, or inside a zlib or Brotli stream) fails. A row added to the
/// registry without a case here fails too.
final class PlantedImageElementTests: XCTestCase {
    struct Variant: Sendable {
        var name: String
        var bytes: [UInt8]
    }

    /// The cleaned fixture each row starts from, and how planted elements are written into it.
    struct Plan: Sendable {
        var fixture: String
        var plant: @Sendable ([UInt8]) -> [Variant]
    }

    static let text = Planted.bytes

    /// Cases that still leak, named so the rest holds; each must keep leaking until it is fixed and taken out.
    /// A RAF's blocks are not yet checked against the file's length, so bytes after them are copied.
    static let knownGaps: Set<String> = ["raf bytes after the last block"]

    static let plans: [String: Plan] = [
        "jpeg": Plan(fixture: "jpeg/gps-full.jpg") { b in [
            Variant(name: "APP10 segment",
                    bytes: Surgery.jpegInsert(b, Surgery.jpegSegment(0xEA, Array("PLNT\0".utf8) + text))),
            Variant(name: "JFIF slack", bytes: Surgery.jpegJFIFWithSlack(b, text)),
            Variant(name: "bytes after EOI", bytes: b + text),
        ] },
        "png": Plan(fixture: "png/text.png") { b in [
            Variant(name: "private ancillary chunk",
                    bytes: Surgery.pngInsertBeforeEnd(b, Surgery.pngChunk("prVt", text))),
            Variant(name: "zlib-compressed private chunk",
                    bytes: Surgery.pngInsertBeforeEnd(b, Surgery.pngChunk("zpLt", (try? Zlib.deflate(text)) ?? []))),
            Variant(name: "sRGB slack", bytes: Surgery.pngInsertAfterHeader(b, Surgery.pngChunk("sRGB", [0] + text))),
            Variant(name: "gAMA slack",
                    bytes: Surgery.pngInsertAfterHeader(b, Surgery.pngChunk("gAMA", Surgery.be(45455, 4) + text))),
        ] },
        "gif": Plan(fixture: "gif/comment.gif") { b in [
            Variant(name: "application extension",
                    bytes: Surgery.gifInsert(b, [0x21, 0xFF, 11] + Array("PLANTEDX1.0".utf8)
                                             + Surgery.gifSubBlocks(text))),
            Variant(name: "unknown extension label",
                    bytes: Surgery.gifInsert(b, [0x21, 0x99] + Surgery.gifSubBlocks(text))),
            Variant(name: "NETSCAPE2.0 extra sub-block",
                    bytes: Surgery.gifInsert(b, [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1, 0, 0]
                                             + Surgery.gifSubBlocks(text))),
        ] },
        "webp": Plan(fixture: "webp/animated.webp") { b in
            [Variant(name: "unknown chunk", bytes: Surgery.riffAppend(b, Surgery.riffChunk("PLNT", text)))]
                + (Surgery.riffGrow(b, type: "VP8X", text).map { [Variant(name: "VP8X slack", bytes: $0)] } ?? [])
        },
        "tiff": tiffPlan("tiff/le.tif"),
        "cr2": tiffPlan("raw/stub.cr2"),
        "orf": tiffPlan("raw/olympus.orf"),
        "rw2": tiffPlan("raw/panasonic.rw2"),
        "iiq": tiffPlan("raw/phaseone.iiq"),
        "dng": tiffPlan("raw/adobe.dng"),
        "raf": Plan(fixture: "raw/skeleton.raf") { b in
            [Variant(name: "bytes after the last block", bytes: b + text)]
        },
        "psd": Plan(fixture: "psd/layers.psd") { b in [
            Variant(name: "unknown image resource (UTF-16)",
                    bytes: Surgery.psdInsertResource(b, id: 0x7A69, Planted.utf16BE)),
            Variant(name: "path resource holding no path", bytes: Surgery.psdInsertResource(b, id: 0x0BB5, text)),
            Variant(name: "resolution resource slack",
                    bytes: Surgery.psdInsertResource(b, id: 0x03ED, [0, 72, 0, 0, 0, 1, 0, 1, 0, 72, 0, 0, 0, 1, 0, 1]
                                                     + text)),
        ] },
        "cr3": Plan(fixture: "raw/skeleton.cr3") { b in [
            Variant(name: "unknown top-level box", bytes: b + Surgery.box("plnt", text)),
            Variant(name: "free box with text", bytes: b + Surgery.box("free", text)),
        ] },
        "heif": heifPlan("heic/exif-xmp.heic"),
        "avif": heifPlan("heic/exif.avif"),
        "jxl": Plan(fixture: "jxl/exif-xmp.jxl") { b in [
            Variant(name: "unknown box", bytes: b + Surgery.box("plnt", text)),
            Variant(name: "brob xml box", bytes: b + Surgery.box("brob", Array("xml ".utf8) + Planted.brotli(xmp))),
            Variant(name: "brob unknown box",
                    bytes: b + Surgery.box("brob", Array("plnt".utf8) + Planted.brotli(text))),
        ] },
        "jp2": Plan(fixture: "jp2/geo-gps.jp2") { b in [
            Variant(name: "unknown box", bytes: b + Surgery.box("plnt", text)),
            Variant(name: "free box with text", bytes: b + Surgery.box("free", text)),
            Variant(name: "xml box", bytes: b + Surgery.box("xml ", xmp)),
        ] },
        "svg": Plan(fixture: "svg/inkscape.svg") { b in
            let foreign = " xmlns:plnt=\"urn:x-planted\""
            return [
                Variant(name: "foreign element", bytes: svgBeforeEnd(b, "<plnt:note\(foreign)>\(Planted.text)</plnt:note>")),
                Variant(name: "comment", bytes: svgBeforeEnd(b, "<!-- \(Planted.text) -->")),
                Variant(name: "foreign attribute", bytes: svgRootAttribute(b, "\(foreign) plnt:path=\"\(Planted.name) \(Planted.position)\"")),
                Variant(name: "processing instruction after the root", bytes: b + Array("\n<?plnt \(Planted.text)?>\n".utf8)),
            ]
        },
    ]

    /// `element` inserted before the SVG root's end tag.
    static func svgBeforeEnd(_ b: [UInt8], _ element: String) -> [UInt8] {
        let text = String(decoding: b, as: UTF8.self)
        guard let end = text.range(of: "</svg>", options: .backwards) else { return b }
        return Array((String(text[..<end.lowerBound]) + element + String(text[end.lowerBound...])).utf8)
    }

    /// `attributes` added to the SVG root element's start tag.
    static func svgRootAttribute(_ b: [UInt8], _ attributes: String) -> [UInt8] {
        let text = String(decoding: b, as: UTF8.self)
        guard let start = text.range(of: "<svg") else { return b }
        return Array((String(text[..<start.upperBound]) + attributes + String(text[start.upperBound...])).utf8)
    }

    /// The displayed pixels: ImageMagick decodes images; an SVG is rendered by librsvg first.
    static func pixels(_ id: String, _ path: String, in dir: TempDir) -> String? {
        guard id == "svg" else { return Oracle.pixels(path, autoOrient: false) }
        let png = dir.file((path as NSString).lastPathComponent + ".png")
        guard Tool.run(["rsvg-convert", path, "-o", png]).status == 0 else { return nil }
        return Oracle.pixels(png, autoOrient: false)
    }

    static var xmp: [UInt8] {
        Array(("<x:xmpmeta xmlns:x=\"adobe:ns:meta/\">"
            + "<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">"
            + "<rdf:Description rdf:about=\"\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:source>\(Planted.text)"
            + "</dc:source></rdf:Description></rdf:RDF></x:xmpmeta>").utf8)
    }

    static func tiffPlan(_ fixture: String) -> Plan {
        Plan(fixture: fixture) { b in [
            Variant(name: "unknown ASCII tag in IFD0", bytes: Surgery.tiffAddTag(b, tag: 0xC7A1, ascii: text)),
            Variant(name: "bytes no IFD references", bytes: b + text),
        ] }
    }

    static func heifPlan(_ fixture: String) -> Plan {
        Plan(fixture: fixture) { b in
            var variants = [Variant(name: "unknown top-level box", bytes: b + Surgery.box("plnt", text))]
            if let boxes = Surgery.path(b, ["meta", "iprp", "ipco"]), let ipco = boxes.last {
                let free = Surgery.box("free", text)
                variants.append(Variant(name: "free box in ipco",
                                        bytes: Surgery.isoInsert(b, at: ipco.end, free, ancestors: boxes)))
            }
            if let boxes = Surgery.path(b, ["meta", "hdlr"]), let hdlr = boxes.last {
                let fields = Array(b[(hdlr.start + 8)..<(hdlr.start + 32)])
                variants.append(Variant(name: "hdlr name", bytes: Surgery.isoReplace(
                    b, hdlr, with: Surgery.box("hdlr", fields + text + [0]), ancestors: Array(boxes.dropLast()))))
            }
            if let boxes = Surgery.path(b, ["meta", "iinf"]), let iinf = boxes.last {
                let entries = Surgery.children(b, (iinf.start + 12 + (b[iinf.start + 8] == 0 ? 2 : 4))..<iinf.end)
                if let infe = entries.first, b[infe.start + 8] == 2 {
                    // version 2: version/flags, item id, protection index, item type, then the name.
                    let fields = Array(b[(infe.start + 8)..<infe.end])
                    let named = Surgery.box("infe", Array(fields[0..<12]) + text + Array(fields[12...]))
                    let bytes = Surgery.isoReplace(b, infe, with: named, ancestors: boxes)
                    variants.append(Variant(name: "infe item name", bytes: bytes))
                }
            }
            if let boxes = Surgery.path(b, ["meta", "dinf"]), let dinf = boxes.last {
                // A second data reference naming a file in a user's folder, which no item uses.
                let entries = Surgery.box("url ", [0, 0, 0, 1]) + Surgery.box("url ", [0, 0, 0, 0] + text + [0])
                let named = Surgery.box("dinf", Surgery.box("dref", [0, 0, 0, 0, 0, 0, 0, 2] + entries))
                let bytes = Surgery.isoReplace(b, dinf, with: named, ancestors: Array(boxes.dropLast()))
                variants.append(Variant(name: "dref url naming a path", bytes: bytes))
            }
            if let ftyp = Surgery.children(b, 0..<b.count).first, ftyp.type == "ftyp" {
                // Two brands that spell the planted name: four free bytes each.
                let grown = Surgery.box("ftyp", Array(b[(ftyp.start + 8)..<ftyp.end]) + Array("Planted ".utf8))
                let bytes = Surgery.isoReplace(b, ftyp, with: grown, ancestors: [])
                variants.append(Variant(name: "ftyp brands", bytes: bytes))
            }
            return variants
        }
    }

    /// BMP is recognised but not cleaned: the planted file must be refused.
    static func unsupportedVariants(_ dir: TempDir) -> [Variant] {
        let bmp = dir.file("base.bmp")
        Tool.run(["convert", "-size", "8x8", "xc:red", bmp])
        let bytes = [UInt8](FileManager.default.contents(atPath: bmp) ?? Data())
        return [Variant(name: "bytes after the pixels", bytes: bytes + text)]
    }

    func testEveryImageRowHasACase() {
        for entry in FormatRegistry.entries where [.image, .raw].contains(entry.format.kind) {
            XCTAssertTrue(Self.plans[entry.format.id] != nil || entry.handler == nil,
                          "\(entry.format.id): a new image row needs a planted-element case here")
        }
    }

    func testPlantedElementsInStillImagesGoOrTheCleanRefuses() throws {
        try check(kinds: [.image])
    }

    func testPlantedElementsInRawsGoOrTheCleanRefuses() throws {
        try check(kinds: [.raw])
    }

    func check(kinds: Set<MediaFormat.Kind>) throws {
        try Tool.require("brotli", "convert", "rsvg-convert")
        let dir = TempDir()
        let only = ProcessInfo.processInfo.environment["PLANTED_FORMAT"]
        for entry in FormatRegistry.entries where kinds.contains(entry.format.kind) {
            let id = entry.format.id
            if let only, only != id { continue }
            let variants: [Variant]
            var reference: String?
            if let plan = Self.plans[id] {
                let base = dir.file("base-\(id)-" + (plan.fixture as NSString).lastPathComponent)
                let report = Run.clean(Fixture.path(plan.fixture), to: base)
                XCTAssertTrue([.cleaned, .clean].contains(report.status),
                              "\(id): base fixture does not clean: \(report.error.map { "\($0)" } ?? "")")
                let path = report.status == .cleaned ? base : Fixture.path(plan.fixture)
                let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
                XCTAssertEqual(Planted.findings(in: bytes), [], "\(id): the base already holds planted text")
                variants = plan.plant(bytes)
                if entry.format.kind == .image { reference = Self.pixels(id, path, in: dir) }
            } else if entry.handler == nil {
                variants = Self.unsupportedVariants(dir)
            } else {
                continue  // testEveryImageRowHasACase names it
            }
            for variant in variants {
                check(id: id, variant, reference: reference, in: dir)
            }
        }
    }

    func check(id: String, _ variant: Variant, reference: String?, in dir: TempDir) {
        let label = "\(id) \(variant.name)"
        if Self.knownGaps.contains(label) {
            let input = dir.file("\(id)-gap"), output = dir.file("\(id)-gap-out")
            FileManager.default.createFile(atPath: input, contents: Data(variant.bytes))
            let report = Run.clean(input, to: output)
            let left = !Planted.findings(atPath: output).isEmpty
            let leaked = report.status == .clean || (report.status == .cleaned && left)
            XCTAssertTrue(leaked, "\(label) no longer leaks: take it out of knownGaps")
            return
        }
        let input = dir.file("\(id)-planted")
        FileManager.default.createFile(atPath: input, contents: Data(variant.bytes))
        XCTAssertNotEqual(Planted.findings(in: variant.bytes), [], "\(label): the search does not see what was planted")
        for policy in ["strict", "share", "location"] {
            let output = dir.file("\(id)-\(policy)-out")
            try? FileManager.default.removeItem(atPath: output)
            let report = Run.clean(input, to: output, policy: policy)
            switch report.status {
            case .cleaned:
                XCTAssertEqual(Planted.findings(atPath: output), [],
                               "\(policy) \(label): cleaned with the planted bytes left")
                if let reference {
                    XCTAssertEqual(Self.pixels(id, output, in: dir), reference,
                                   "\(policy) \(label): pixels differ")
                }
                let again = Run.clean(output, to: dir.file("\(id)-\(policy)-again"), policy: policy)
                XCTAssertEqual(again.status, .clean, "\(policy) \(label): not a fixed point")
            case .clean:
                XCTFail("\(policy) \(label): called clean with planted bytes in it: "
                        + "\(Planted.findings(in: variant.bytes))")
            case .error, .skipped, .findings:
                // A refusal: nothing may have been written.
                let written = FileManager.default.fileExists(atPath: output)
                XCTAssertFalse(written && !Planted.findings(atPath: output).isEmpty,
                               "\(policy) \(label): refused but wrote the planted bytes")
            }
        }
    }
}

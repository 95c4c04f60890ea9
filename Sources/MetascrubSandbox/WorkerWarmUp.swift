// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubFormats
import MetascrubNative

#if canImport(Glibc)
import Glibc
#endif

/// A fork server's warm-up: it cleans and scans a few small photos it made itself, through the very job path its
/// children take (a job as JSON, decoded, run), so a child inherits filled type and conformance caches instead of
/// building them for every file. The files carry what uploads carry (EXIF with a position, XMP, PNG text) so the
/// removal, rebuild and proof paths all run. Nothing here reads a file it did not write; no thread is started (a
/// fork server must stay single-threaded).
public enum WorkerWarmUp {
    /// Runs each sample through `run` (a job as JSON; the fork server's own child entry point) under each policy,
    /// in a folder of its own made in `parent` and removed after. Best effort: a failure only costs the children
    /// their warm start, and is said on standard error.
    public static func run(in parent: String, policies: [String], run: (Data) -> Int32) {
        var template = Array((parent + "/metascrub-warm-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            let text = "metascrub worker: no fork server warm-up (cannot create a folder in \(parent)); "
            FileHandle.standardError.write(Data((text + "children start cold\n").utf8))
            return
        }
        let folder = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var failed: [String] = []
        // A server's jobs carry limits, which the samples below must not (this process is never confined): their
        // decoding is warmed on its own.
        let limited = WorkerJob(mode: .clean, input: folder, output: folder, report: folder, summary: folder,
                                policy: "", limits: .forFile(ofSize: 1, cpuSeconds: 1))
        if let json = try? JSONEncoder().encode(limited) { _ = try? WorkerJob.decode(json: json) }
        for (name, bytes) in samples() {
            let input = folder + "/" + name
            guard FileManager.default.createFile(atPath: input, contents: Data(bytes)) else { continue }
            for (index, policy) in policies.sorted().enumerated() {
                for mode in WorkerJob.Mode.allCases {
                    let stem = "\(folder)/\(index)-\(mode.rawValue)-\(name)"
                    // With and without the full report and digests, as the server asks for them.
                    let job = WorkerJob(mode: mode, input: input, output: mode == .clean ? stem + ".out" : nil,
                                        report: index == 0 ? stem + ".json" : nil, summary: stem + ".summary",
                                        policy: policy, digests: index == 0, limits: nil)
                    guard let json = try? JSONEncoder().encode(job), run(json) == 0 else {
                        failed.append("\(name) \(mode.rawValue) \(policy)")
                        continue
                    }
                }
            }
        }
        if !failed.isEmpty {
            let text = "metascrub worker: fork server warm-up failed (\(failed.joined(separator: ", "))); "
                + "children start cold\n"
            FileHandle.standardError.write(Data(text.utf8))
        }
    }

    /// A JPEG and a PNG of 48×32 pixels with a camera's EXIF (make, model, time, GPS), an XMP packet and, in the
    /// PNG, a text chunk.
    static func samples() -> [(String, [UInt8])] {
        var pixels: [UInt8] = []
        for y in 0..<32 {
            for x in 0..<48 { pixels += [UInt8(x * 5), UInt8(y * 8), 128] }
        }
        let raster = Raster(width: 48, height: 32, layout: .rgb, pixels: pixels)
        let exif = exifBlock()
        let xmp = Array(xmpPacket.utf8)
        var out: [(String, [UInt8])] = []
        let jpegSegments = [segment(0xE1, Array("Exif\0\0".utf8) + exif),
                            segment(0xE1, Array("http://ns.adobe.com/xap/1.0/\0".utf8) + xmp)]
        if let jpeg = try? JPEGEncoder.encode(raster, settings: .init(quality: 90, subsampling: .s420),
                                              segments: jpegSegments) {
            out.append(("sample.jpg", jpeg))
        }
        let chunks = [PNGEncoder.chunk("eXIf", exif),
                      PNGEncoder.chunk("iTXt", Array("XML:com.adobe.xmp\0\0\0\0\0".utf8) + xmp),
                      PNGEncoder.chunk("tEXt", Array("Author\0Warm Up".utf8))]
        if let png = try? PNGEncoder.encode(raster, chunks: chunks) { out.append(("sample.png", png)) }
        return out
    }

    private static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let length = payload.count + 2
        return [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    private static func exifBlock() -> [UInt8] {
        let order = ByteOrder.big
        func ascii(_ tag: UInt16, _ text: String) -> ExifEntry {
            let value = Array(text.utf8) + [0]
            return ExifEntry(tag: tag, type: 2, count: UInt32(value.count), value: value)
        }
        func short(_ tag: UInt16, _ v: UInt16) -> ExifEntry {
            ExifEntry(tag: tag, type: 3, count: 1, value: order.bytes(v))
        }
        func rationals(_ tag: UInt16, _ values: [(UInt32, UInt32)]) -> ExifEntry {
            ExifEntry(tag: tag, type: 5, count: UInt32(values.count),
                      value: values.flatMap { order.bytes($0.0) + order.bytes($0.1) })
        }
        let directories: [ExifDirectory: [ExifEntry]] = [
            .ifd0: [ascii(0x010F, "WarmUpMake"), ascii(0x0110, "WarmUpModel"), short(0x0112, 1),
                    ascii(0x0131, "metascrub"), ascii(0x013B, "Warm Up")],
            .exif: [ascii(0x9003, "2026:01:02 03:04:05"), ascii(0xA431, "WARM-0001")],
            .gps: [ascii(0x0001, "N"), rationals(0x0002, [(48, 1), (51, 1), (2904, 100)]),
                   ascii(0x0003, "E"), rationals(0x0004, [(2, 1), (17, 1), (4020, 100)])],
        ]
        return ExifWriter(order: order, directories: directories, thumbnail: nil).build()?.bytes ?? []
    }

    private static let xmpPacket = """
        <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?>
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
        <rdf:Description rdf:about="" xmlns:exif="http://ns.adobe.com/exif/1.0/"
         xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/"
         exif:GPSLatitude="48,51.484N" exif:GPSLongitude="2,17.67E" photoshop:City="Paris">
        <dc:creator><rdf:Seq><rdf:li>Warm Up</rdf:li></rdf:Seq></dc:creator>
        <dc:rights><rdf:Alt><rdf:li xml:lang="x-default">© Warm Up</rdf:li></rdf:Alt></dc:rights>
        </rdf:Description></rdf:RDF></x:xmpmeta>
        <?xpacket end="w"?>
        """
}

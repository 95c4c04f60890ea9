// SPDX-License-Identifier: GPL-3.0-or-later
import CJPEGStream
import Foundation

/// A JPEG's own coding, read back with libjpeg: each component's sampling factors and quantisation table, and
/// the tables themselves. Encoding other pixels with it keeps the source's quality exactly, where an IJG quality
/// estimated from the luminance table only matches tables made by libjpeg-style encoders (issue 16).
public struct JPEGSourceCoding: Sendable, Equatable {
    public struct Component: Sendable, Equatable {
        public var horizontal: Int
        public var vertical: Int
        public var table: Int
    }

    /// In frame order: Y, Cb, Cr, or the one grey component.
    public var components: [Component]
    /// Table number → its 64 values in natural (row-major) order.
    public var tables: [Int: [UInt16]]
    public var progressive: Bool
    /// Whether the tables and sampling were transposed for a turn that swaps the axes.
    public var transposed = false

    public static var encoderName: String { "libjpeg-turbo (libjpeg API)" }

    /// The coding of `jpeg`. Throws `NativeError.library` with the reason when the JPEG is not an 8-bit
    /// Huffman-coded YCbCr or greyscale image (those keep the quality ladder) or its header does not read.
    public static func read(_ jpeg: [UInt8]) throws -> JPEGSourceCoding {
        var raw = jpeg_coding()
        var message = [CChar](repeating: 0, count: 200)
        let rc = jpeg.withUnsafeBufferPointer { jpeg_read_coding($0.baseAddress, $0.count, &raw, &message) }
        guard rc == 0 else { throw NativeError.library(name: "libjpeg", message: text(message)) }
        let count = Int(raw.components)
        let h = tuple3(raw.h_sampling), v = tuple3(raw.v_sampling), t = tuple3(raw.table_number)
        let components = (0..<count).map { Component(horizontal: h[$0], vertical: v[$0], table: t[$0]) }
        let defined = [raw.table_defined.0, raw.table_defined.1, raw.table_defined.2, raw.table_defined.3]
        var tables: [Int: [UInt16]] = [:]
        withUnsafeBytes(of: raw.tables) { bytes in
            let values = bytes.bindMemory(to: UInt16.self)
            for table in 0..<4 where defined[table] != 0 { tables[table] = Array(values[(table * 64)..<(table * 64 + 64)]) }
        }
        return JPEGSourceCoding(components: components, tables: tables, progressive: raw.progressive != 0)
    }

    /// The coding for the image turned so its axes swap (orientations 5–8): each table transposed and each
    /// component's horizontal and vertical sampling swapped, as jpegtran does for its transposing transforms,
    /// so every frequency keeps its step size along the same image direction.
    public func transposedForTurn() -> JPEGSourceCoding {
        var out = self
        out.transposed.toggle()
        out.components = components.map { Component(horizontal: $0.vertical, vertical: $0.horizontal, table: $0.table) }
        out.tables = tables.mapValues { table in (0..<64).map { table[($0 % 8) * 8 + $0 / 8] } }
        return out
    }

    /// "2x2,1x1,1x1": the sampling factors per component, as the report shows them.
    public var samplingSummary: String { components.map { "\($0.horizontal)x\($0.vertical)" }.joined(separator: ",") }

    /// Encodes `raster` (grey for one component, RGB for three) with exactly these tables and sampling: accurate
    /// DCT, optimised Huffman tables, sequential, JFIF.
    public func encode(_ raster: Raster) throws -> [UInt8] {
        guard raster.channels == components.count else {
            throw NativeError.library(name: "metascrub", message: "a \(raster.channels)-channel image is not encoded with \(components.count) components")
        }
        var raw = jpeg_coding()
        raw.components = Int32(components.count)
        let pad = components + Array(repeating: Component(horizontal: 1, vertical: 1, table: 0), count: 3 - components.count)
        raw.h_sampling = (Int32(pad[0].horizontal), Int32(pad[1].horizontal), Int32(pad[2].horizontal))
        raw.v_sampling = (Int32(pad[0].vertical), Int32(pad[1].vertical), Int32(pad[2].vertical))
        raw.table_number = (Int32(pad[0].table), Int32(pad[1].table), Int32(pad[2].table))
        raw.table_defined = ((tables[0] != nil ? 1 : 0), (tables[1] != nil ? 1 : 0), (tables[2] != nil ? 1 : 0), (tables[3] != nil ? 1 : 0))
        withUnsafeMutableBytes(of: &raw.tables) { bytes in
            let values = bytes.bindMemory(to: UInt16.self)
            for (number, table) in tables where (0..<4).contains(number) {
                for k in 0..<64 { values[number * 64 + k] = table[k] }
            }
        }
        var message = [CChar](repeating: 0, count: 200)
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let rc = raster.pixels.withUnsafeBufferPointer {
            jpeg_encode_coded($0.baseAddress, Int32(raster.width), Int32(raster.height), &raw, &output, &size, &message)
        }
        guard rc == 0, let output else { throw NativeError.library(name: "libjpeg", message: Self.text(message)) }
        defer { free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    private static func text(_ message: [CChar]) -> String {
        String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func tuple3(_ t: (Int32, Int32, Int32)) -> [Int] { [Int(t.0), Int(t.1), Int(t.2)] }
}

// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Baking an EXIF orientation into every frame of an APNG (issue 16): each frame's samples are turned exactly
/// like a still PNG's (`PNGOrientation`), its fcTL rectangle is turned with the canvas, and the fcTL/fdAT
/// sequence numbers are written afresh (a re-deflated frame may need another number of chunks). Delays,
/// dispose and blend operations stay: they mean the same on the turned canvas.
enum APNGOrientation {
    /// One frame as stored: its fcTL (nil for a default image that is not part of the animation), whether its
    /// data is the IDAT (the default image) or fdAT chunks, and its zlib stream.
    struct Frame {
        var control: FrameControl?
        var isDefaultImage: Bool
        var compressed: [UInt8]
        var offset: Int64
    }

    struct FrameControl: Equatable {
        var width: Int
        var height: Int
        var x: Int
        var y: Int
        /// delay_num, delay_den, dispose_op, blend_op, as stored.
        var timing: [UInt8]

        init(width: Int, height: Int, x: Int, y: Int, timing: [UInt8]) {
            (self.width, self.height, self.x, self.y, self.timing) = (width, height, x, y, timing)
        }

        init(_ data: [UInt8], offset: Int64) throws {
            guard data.count == 26 else {
                throw MetascrubError.malformed(format: "PNG", path: "fcTL", offset: offset, reason: "fcTL is \(data.count) bytes, 26 expected")
            }
            self.init(width: BigEndian.u32(data, 4), height: BigEndian.u32(data, 8), x: BigEndian.u32(data, 12),
                      y: BigEndian.u32(data, 16), timing: Array(data[20..<26]))
        }

        func bytes(sequence: Int) -> [UInt8] {
            BigEndian.bytes32(sequence) + BigEndian.bytes32(width) + BigEndian.bytes32(height)
                + BigEndian.bytes32(x) + BigEndian.bytes32(y) + timing
        }

        /// The rectangle as it lies on the canvas (`canvasWidth`×`canvasHeight` as stored) displayed under
        /// `orientation`: its two corner pixels mapped like every pixel is.
        func turned(_ orientation: Int, canvasWidth w: Int, canvasHeight h: Int) -> FrameControl {
            func map(_ px: Int, _ py: Int) -> (Int, Int) {
                switch orientation {
                case 2: return (w - 1 - px, py)
                case 3: return (w - 1 - px, h - 1 - py)
                case 4: return (px, h - 1 - py)
                case 5: return (py, px)
                case 6: return (h - 1 - py, px)
                case 7: return (h - 1 - py, w - 1 - px)
                case 8: return (py, w - 1 - px)
                default: return (px, py)
                }
            }
            let a = map(x, y), b = map(x + width - 1, y + height - 1)
            let (nw, nh) = orientation >= 5 ? (height, width) : (width, height)
            return FrameControl(width: nw, height: nh, x: min(a.0, b.0), y: min(a.1, b.1), timing: timing)
        }
    }

    /// The frames in file order, their data gathered across chunks.
    static func frames(_ source: any ByteSource, _ structure: PNGStructure) throws -> [Frame] {
        var frames: [Frame] = []
        var control: (FrameControl, Int64)?
        for chunk in structure.chunks {
            switch chunk.type {
            case "fcTL":
                control = (try FrameControl(try source.read(at: chunk.dataOffset, count: Int(chunk.length)), offset: chunk.offset), chunk.offset)
            case "IDAT", "fdAT":
                let isDefault = chunk.type == "IDAT"
                let skip = isDefault ? 0 : 4
                guard chunk.length >= Int64(skip) else {
                    throw MetascrubError.malformed(format: "PNG", path: "fdAT", offset: chunk.offset, reason: "fdAT shorter than its sequence number")
                }
                let data = try source.read(at: chunk.dataOffset + Int64(skip), count: Int(chunk.length) - skip)
                if let last = frames.last, last.isDefaultImage == isDefault, control == nil {
                    frames[frames.count - 1].compressed += data
                } else {
                    frames.append(Frame(control: control?.0, isDefaultImage: isDefault, compressed: data, offset: chunk.offset))
                    control = nil
                }
            default:
                break
            }
        }
        return frames
    }

    /// The frame's header: the IHDR's depth, colour type and interlace at the frame's size.
    static func header(_ frame: Frame, _ canvas: PNGStructure.Header) throws -> PNGStructure.Header {
        var h = canvas
        if let control = frame.control, !frame.isDefaultImage {
            guard control.width > 0, control.height > 0, control.x + control.width <= canvas.width,
                  control.y + control.height <= canvas.height else {
                throw MetascrubError.malformed(format: "PNG", path: "fcTL", offset: frame.offset,
                                               reason: "frame \(control.width)×\(control.height) at \(control.x),\(control.y) lies outside the \(canvas.width)×\(canvas.height) canvas")
            }
            (h.width, h.height) = (control.width, control.height)
        }
        return h
    }

    /// Every fcTL, IDAT and fdAT chunk of the turned animation, in order, sequence numbers from 0.
    static func bake(_ source: any ByteSource, _ structure: PNGStructure, orientation: Int) throws -> [[UInt8]] {
        let canvas = structure.header
        var sequence = 0
        var body: [[UInt8]] = []
        for frame in try frames(source, structure) {
            let h = try header(frame, canvas)
            let raw = try PNGOrientation.rawSamples(frame.compressed, header: h, path: frame.isDefaultImage ? "IDAT" : "fdAT", offset: frame.offset)
            let stream = try PNGOrientation.orientedStream(raw, header: h, orientation: orientation)
            if let control = frame.control {
                body.append(PNGStructure.chunk("fcTL", control.turned(orientation, canvasWidth: canvas.width, canvasHeight: canvas.height)
                    .bytes(sequence: sequence)))
                sequence += 1
            }
            if frame.isDefaultImage {
                body += PNGOrientation.split(stream, "IDAT")
            } else {
                body += PNGOrientation.split(stream, "fdAT") {
                    defer { sequence += 1 }
                    return BigEndian.bytes32(sequence)
                }
            }
        }
        return body
    }

    /// Whether `cleaned` holds the frames of `original` turned by `orientation`: the same number of frames, each
    /// rectangle turned, timing unchanged, and samples equal to the original's turned (re-read from both files).
    static func verify(original: any ByteSource, _ before: PNGStructure, cleaned: any ByteSource, _ after: PNGStructure,
                       orientation: Int) throws -> String? {
        let a = try frames(original, before), b = try frames(cleaned, after)
        guard a.count == b.count else { return "\(b.count) frames, \(a.count) expected" }
        for (index, (x, y)) in zip(a, b).enumerated() {
            guard x.isDefaultImage == y.isDefaultImage,
                  x.control?.turned(orientation, canvasWidth: before.header.width, canvasHeight: before.header.height) == y.control else {
                return "frame \(index): frame control or placement differs"
            }
            let expected = PNGOrientation.oriented(try PNGOrientation.rawSamples(x.compressed, header: try header(x, before.header), path: "fdAT", offset: x.offset),
                                                   header: try header(x, before.header), orientation: orientation)
            let actual = try PNGOrientation.rawSamples(y.compressed, header: try header(y, after.header), path: "fdAT", offset: y.offset)
            guard expected == actual else { return "frame \(index): samples differ" }
        }
        return nil
    }
}

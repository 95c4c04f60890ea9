// SPDX-License-Identifier: GPL-3.0-or-later
import CAVBridge
import MetascrubCore

#if canImport(Glibc)
import Glibc
#endif

/// Applies the policy's decisions to a libavformat remux, and proves the streams survived it.
struct AVCleaner {
    let layout: AVLayout
    let items: [MetadataItem]
    let plan: CleanPlan

    func run(_ input: any ByteSource, to output: any OutputSink) throws -> CleanResult {
        guard let sink = output as? any PatchableOutputSink else {
            throw MetascrubError.unsupported(format: AVFormat.format, reason: "libavformat's muxers need an output they can seek in")
        }
        guard let muxer = AVContainers.muxer(demuxer: layout.demuxer, head: layout.head) else {
            let removed = Set(plan.findings.indices.filter { !plan.keeps($0) }.map { items[$0].key }).sorted()
            throw MetascrubError.unsupported(
                format: layout.demuxer,
                reason: "libavformat reads \(layout.demuxer) but cannot write it, so \(removed.joined(separator: ", ")) cannot be removed")
        }
        var outcomes: [Int: Outcome] = [:]
        let keepStreams = (0..<layout.streamCount).map { stream in layout.streamItems[stream].map { plan.keeps($0) } ?? true }
        let keepChapters = !layout.chapterItems.isEmpty && layout.chapterItems.allSatisfy { plan.keeps($0) }
        if !keepChapters { for item in layout.chapterItems { outcomes[item] = .removed } }
        var kept: [AVKeptTag] = []
        for (entry, item) in layout.tags where plan.keeps(item) {
            let survives: Bool
            switch entry.kind {
            case .formatTag: survives = true
            case .streamTag: survives = entry.index < keepStreams.count && keepStreams[entry.index]
            case .chapterTag: survives = keepChapters
            default: survives = false  // programs are not carried into the output
            }
            if survives {
                kept.append(AVKeptTag(kind: entry.kind, index: entry.index, key: entry.key, value: entry.value))
            } else {
                outcomes[item] = .removed
            }
        }
        try AVLibrary.remux(input, to: sink, muxer: muxer, keepStreams: keepStreams, keepChapters: keepChapters, tags: kept,
                            format: layout.demuxer)
        var result = CleanResult(method: .remux, outcomes: outcomes)
        result.notes.append(Note(.info, code: "libavformat-remux",
                                 "remuxed by libavformat (\(layout.demuxer) -> \(muxer) muxer, stream copy, bitexact)"))
        return result
    }

    /// Every audio and video stream of the original decodes to the same frames in the cleaned file, in order;
    /// the cleaned file has no stream the original did not have.
    static func verify(original: any ByteSource, cleaned: any ByteSource, layout: AVLayout) throws -> ContentCheck {
        // Both files are decoded at once, the cleaned one on a thread of its own (not a pool thread, which
        // the engine's jobs may all be holding): decoding is nearly all of a clean's time on large files.
        let job = DigestJob(cleaned, format: layout.demuxer)
        var thread = pthread_t()
        let retained = Unmanaged.passRetained(job)
        let started = pthread_create(&thread, nil, { opaque in
            Unmanaged<DigestJob>.fromOpaque(opaque!).takeRetainedValue().run()
            return nil
        }, retained.toOpaque()) == 0
        if !started {
            retained.release()
            job.run()
        }
        let before = Result { try AVLibrary.digest(original, format: layout.demuxer) }
        if started { pthread_join(thread, nil) }
        let beforeDigests = try before.get()
        let after = try job.result!.get()
        return compare(beforeDigests, after, layout: layout)
    }

    /// One file's digest on another thread, handed over as a raw pointer and joined before `result` is read:
    /// the source is used by that thread alone until `run` returns.
    final class DigestJob {
        let source: any ByteSource
        let format: String
        var result: Result<[cav_stream_digest], any Error>?

        init(_ source: any ByteSource, format: String) {
            self.source = source
            self.format = format
        }

        func run() { result = Result { try AVLibrary.digest(source, format: format) } }
    }

    static func compare(_ before: [cav_stream_digest], _ after: [cav_stream_digest], layout: AVLayout) -> ContentCheck {
        func same(_ a: cav_stream_digest, _ b: cav_stream_digest) -> Bool {
            a.decoded == b.decoded && a.frames == b.frames && a.errors == b.errors && a.hash == b.hash
        }
        var next = 0
        var problems: [String] = []
        for digest in before {
            let index = Int(digest.index)
            if next < after.count, same(digest, after[next]) {
                next += 1
            } else if layout.streamItems[index] == nil {
                problems.append("stream #\(index) (\(digest.frames) \(digest.decoded == 1 ? "frames" : "packets")) differs or is missing")
            }
        }
        if next < after.count { problems.append("the cleaned file has \(after.count - next) stream(s) the original did not") }
        let frames = before.filter { $0.decoded == 1 }.reduce(Int64(0)) { $0 + $1.frames }
        let method = "libavcodec frame hashes (\(before.filter { $0.decoded == 1 }.count) decoded streams, \(frames) frames)"
        return ContentCheck(method: method, passed: problems.isEmpty, detail: problems.isEmpty ? nil : problems.joined(separator: "; "))
    }
}

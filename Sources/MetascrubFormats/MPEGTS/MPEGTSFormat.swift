// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What the transport-stream scanner learned: per item the same-size byte replacements, and the ranges the
/// cleaner may change (everything else must stay byte-identical).
public struct MPEGTSLayout: Sendable {
    var patches: [Int: [InPlacePatches.Patch]] = [:]
    /// SEI payload bytes and SDT packets: the only bytes a clean may change.
    var mutable: [Range<Int64>] = []
    var packetSize = 188
    var packets = 0
    /// Per data-stream item: its PID and the file offset of each of its packets (the 0x47 byte).
    var dataStreams: [Int: (pid: Int, packets: [Int64])] = [:]
    /// Every PMT packet that declares a data stream: its offset and bytes, and where its section starts.
    var pmtPackets: [(offset: Int64, bytes: [UInt8], sectionStart: Int)] = []
    /// Items of user-private program descriptors (dropped from every PMT when one goes).
    var strangeDescriptors: Set<Int> = []
}

/// MPEG-2 transport streams and Blu-ray/AVCHD M2TS (192-byte packets): H.264 user_data_unregistered SEI
/// messages (AVCHD MDPM camera data with date, time zone and GPS; encoder option strings) are neutralised in
/// place with same-length filler that keeps the NAL's emulation prevention valid, so no packet is re-cut and
/// no timestamp moves; decoding ignores these messages. SDT service and provider names are blanked and the
/// section CRC recomputed. Data streams no player shows (KLV telemetry, timed metadata, private data) become null
/// packets and leave the PMT (`MPEGTSStreamTable`).
public struct MPEGTSFormat: FormatHandler {
    public init() {}

    static let format = "MPEG-TS"
    static let maxSEI = 1 << 20

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<MPEGTSLayout> {
        try Scanner.scan(input, options: options)
    }

    struct Stream {
        var zeros = 0
        /// The SEI NAL being collected (header byte first) and the file offset of each byte.
        var nal: [UInt8] = []
        var offsets: [Int64] = []
        var collecting = false
        var afterStartCode = false
    }

    struct Scanner: LayoutScanner {
        let input: any ByteSource
        var found: ItemCollector
        var layout = MPEGTSLayout()
        var keyIndex: [String: Int] = [:]
        var counts: [Int: Int] = [:]
        var pmtPIDs: Set<Int> = []
        var videoPIDs: Set<Int> = []
        var streams: [Int: Stream] = [:]
        var unfixable = 0
        var dataPIDs: [Int: MPEGTSStreamTable.DataStream] = [:]
        var pcrPIDs: Set<Int> = []
        var dataPackets: [Int: [Int64]] = [:]
        /// Packets of PIDs not yet declared, before the first PMT: a data stream may start before its table.
        var undeclared: [Int: [Int64]] = [:]
        var undeclaredCount = 0
        var sawPMT = false
        /// PIDs a PMT lists (streams and the program clock), and ATSC's PSIP base PID, which no PMT lists.
        var declared: Set<Int> = [0x1FFB]

        init(input: any ByteSource, options: ScanOptions) {
            self.input = input
            found = ItemCollector(options)
        }

        /// One item per key for the whole file (MDPM repeats in every GOP); its replacements accumulate.
        mutating func item(_ key: String, _ category: Category, offset: Int64, length: Int64, location: String, detail: String,
                           value: String? = nil, parent: Int? = nil) -> Int {
            if let i = keyIndex[key] {
                counts[i, default: 1] += 1
                return i
            }
            let item = found.add(key, category, location: location, offset: offset, length: length, value: value, detail: detail,
                                 parent: parent)
            keyIndex[key] = item
            return item
        }

        mutating func run() throws {
            let size = input.size
            let head = try input.read(at: 0, count: Int(min(size, 400)), format: format, path: "first packets")
            let packetSize: Int
            if head.count > 376, head[0] == 0x47, head[188] == 0x47 { packetSize = 188 }
            else if head.count > 388, head[4] == 0x47, head[196] == 0x47 { packetSize = 192 }
            else { throw MetascrubError.malformed(format: format, path: "packet sync", offset: 0, reason: "no 0x47 sync byte every 188 or 192 bytes") }
            layout.packetSize = packetSize
            let prefix = packetSize - 188
            guard size % Int64(packetSize) == 0 else {
                throw MetascrubError.truncated(format: format, path: "last packet", offset: size - size % Int64(packetSize),
                                               needed: Int64(packetSize) - size % Int64(packetSize))
            }
            let perRead = (1 << 20) / packetSize
            var at: Int64 = 0
            while at < size {
                let n = Int(min(Int64(perRead * packetSize), size - at))
                let block = try input.read(at: at, count: n)
                var p = 0
                while p < n {
                    let q = p + prefix
                    let offset = at + Int64(q)
                    guard block[q] == 0x47 else {
                        throw MetascrubError.malformed(format: format, path: "packet #\(layout.packets)", offset: offset, reason: "lost sync (no 0x47)")
                    }
                    try packet(block, q, offset: offset)
                    layout.packets += 1
                    p += packetSize
                }
                at += Int64(n)
            }
            for pid in streams.keys.sorted() { try endNAL(pid) }
            try dataStreamItems()
            for (i, n) in counts where n > 1 { found.items[i].detail = (found.items[i].detail ?? "") + ", in \(n) places" }
            if unfixable > 0 {
                throw MetascrubError.unsupported(format: format, reason: "\(unfixable) SEI user-data messages cannot be neutralised in place")
            }
        }

        mutating func packet(_ b: [UInt8], _ q: Int, offset: Int64) throws {
            let pid = Int(b[q + 1] & 0x1F) << 8 | Int(b[q + 2])
            if dataPIDs[pid] != nil {
                dataPackets[pid, default: []].append(offset)
                return
            }
            if pid > 0x1F, pid != MPEGTSStreamTable.nullPID, !pmtPIDs.contains(pid), !declared.contains(pid), undeclaredCount < 1 << 16 {
                undeclared[pid, default: []].append(offset)
                undeclaredCount += 1
            }
            let pusi = b[q + 1] & 0x40 != 0
            let afc = (b[q + 3] >> 4) & 3
            var o = q + 4
            if afc & 2 != 0 { o += 1 + Int(b[o]) }
            guard afc & 1 != 0, o < q + 188 else { return }
            if pid == 0 && pusi {
                try psi(b, o, q, offset: offset) { s, lo, hi in
                    var i = lo + 8
                    while i + 4 <= hi {
                        let program = Int(s[i]) << 8 | Int(s[i + 1])
                        if program != 0 { pmtPIDs.insert(Int(s[i + 2] & 0x1F) << 8 | Int(s[i + 3])) }
                        i += 4
                    }
                }
            } else if pmtPIDs.contains(pid) && pusi {
                try psi(b, o, q, offset: offset) { s, lo, hi in
                    guard s[lo] == 0x02, lo + 12 <= hi else { return }
                    sawPMT = true
                    pcrPIDs.insert(Int(s[lo + 8] & 0x1F) << 8 | Int(s[lo + 9]))
                    var declaresData = false
                    let infoEnd = min(lo + 12 + (Int(s[lo + 10] & 0x0F) << 8 | Int(s[lo + 11])), hi)
                    for d in MPEGTSStreamTable.descriptors(s[lo + 12..<infoEnd]) where MPEGTSStreamTable.isStrange(d.tag) {
                        let item = found.add("mpegts:pmt-descriptor", .content, location: "PMT/program descriptor 0x\(String(d.tag, radix: 16))",
                                             offset: offset + Int64(d.range.lowerBound - q), length: Int64(d.range.count),
                                             detail: "user-private program descriptor no player reads, \(d.range.count) bytes", unknown: true)
                        found.inspect(item, payload: Array(s[d.range]), origin: offset + Int64(d.range.lowerBound - q))
                        layout.strangeDescriptors.insert(item)
                        declaresData = true
                    }
                    declared.formUnion(pcrPIDs)
                    var i = infoEnd
                    while i + 5 <= hi {
                        let type = s[i]
                        let es = Int(s[i + 1] & 0x1F) << 8 | Int(s[i + 2])
                        let next = i + 5 + (Int(s[i + 3] & 0x0F) << 8 | Int(s[i + 4]))
                        if type == 0x1B { videoPIDs.insert(es) }
                        declared.insert(es)
                        if let data = MPEGTSStreamTable.dataStream(type: type, descriptors: s[(i + 5)..<min(next, hi)]) {
                            dataPIDs[es] = data
                            declaresData = true
                        }
                        i = next
                    }
                    if declaresData {
                        layout.pmtPackets.append((offset, Array(s), lo - q))
                        layout.mutable.append(offset..<offset + 188)
                    }
                }
            } else if pid == 0x11 && pusi {
                try sdt(b, o, q, offset: offset)
            } else if videoPIDs.contains(pid) {
                var start = o
                if pusi {
                    guard o + 9 <= q + 188, b[o] == 0, b[o + 1] == 0, b[o + 2] == 1 else { return }
                    start = o + 9 + Int(b[o + 8])
                }
                if start < q + 188 { try es(pid, b, start, q + 188, base: offset - Int64(q)) }
            }
        }

        /// One item per data stream that has packets; each of its packets becomes a null packet when it goes.
        mutating func dataStreamItems() throws {
            for (pid, early) in undeclared where dataPIDs[pid] != nil {
                dataPackets[pid] = early + (dataPackets[pid] ?? [])
            }
            // Packets on a PID no table lists: nothing demultiplexes them.
            for pid in undeclared.keys.sorted() where sawPMT && dataPIDs[pid] == nil && !declared.contains(pid) && !pmtPIDs.contains(pid) {
                let packets = undeclared[pid] ?? []
                guard let first = packets.first else { continue }
                let idx = found.add("mpegts:undeclared-pid", .content, location: "PID 0x\(String(pid, radix: 16))", offset: first,
                                    length: Int64(packets.count * 188), detail: "\(packets.count) packets on a PID no table lists", unknown: true)
                layout.patches[idx] = packets.map { InPlacePatches.Patch(offset: $0, bytes: MPEGTSStreamTable.nullPacket) }
                layout.mutable += packets.map { $0..<$0 + 188 }
            }
            for pid in dataPackets.keys.sorted() {
                guard let data = dataPIDs[pid], let packets = dataPackets[pid], let first = packets.first else { continue }
                guard !pcrPIDs.contains(pid) else {
                    throw MetascrubError.unsupported(format: format, reason: "the program clock is carried on the PID of a data stream (0x\(String(pid, radix: 16)))")
                }
                let idx = found.add("mpegts:data-stream", data.category, location: "PID 0x\(String(pid, radix: 16))", offset: first,
                                    length: Int64(packets.count * 188), detail: "\(data.name), \(packets.count) packets",
                                    unknown: data.unknown)
                layout.dataStreams[idx] = (pid, packets)
                layout.mutable += packets.map { $0..<$0 + 188 }
            }
        }

        /// A PSI section that starts in this packet (sections spanning packets are not needed here).
        func psi(_ b: [UInt8], _ o: Int, _ q: Int, offset: Int64, _ body: (ArraySlice<UInt8>, Int, Int) throws -> Void) throws {
            let start = o + 1 + Int(b[o])
            guard start + 3 <= q + 188 else { return }
            let length = Int(b[start + 1] & 0x0F) << 8 | Int(b[start + 2])
            let end = start + 3 + length - 4  // before the CRC
            guard end <= q + 188, end > start + 8 else { return }
            try body(b[q..<q + 188], start, end)
        }

        mutating func sdt(_ b: [UInt8], _ o: Int, _ q: Int, offset: Int64) throws {
            let start = o + 1 + Int(b[o])
            guard start + 11 <= q + 188, b[start] == 0x42 else { return }
            let length = Int(b[start + 1] & 0x0F) << 8 | Int(b[start + 2])
            let crcAt = start + 3 + length - 4
            guard crcAt + 4 <= q + 188 else { return }
            var packet = Array(b[q..<q + 188])
            let base = offset - Int64(q)
            var changed: [Int] = []
            var i = start + 11
            while i + 5 <= crcAt {
                let loopLength = Int(b[i + 3] & 0x0F) << 8 | Int(b[i + 4])
                var d = i + 5
                let dEnd = min(i + 5 + loopLength, crcAt)
                while d + 2 <= dEnd {
                    let tag = b[d], len = Int(b[d + 1])
                    if tag == 0x48, d + 2 + len <= dEnd, len >= 2 {
                        let pLen = Int(b[d + 3])
                        let provider = d + 4..<min(d + 4 + pLen, dEnd)
                        let nameLenAt = d + 4 + pLen
                        var fields: [(Range<Int>, String, Category)] = [(provider, "mpegts:sdt:ServiceProvider", .identity)]
                        if nameLenAt < dEnd {
                            fields.append((nameLenAt + 1..<min(nameLenAt + 1 + Int(b[nameLenAt]), dEnd), "mpegts:sdt:ServiceName", .content))
                        }
                        for (range, key, category) in fields where !range.isEmpty {
                            guard b[range].contains(where: { $0 != 0x20 && $0 != 0 }) else { continue }
                            let idx = item(key, category, offset: base + Int64(range.lowerBound), length: Int64(range.count),
                                           location: "SDT/service", detail: "DVB service descriptor text", value: ValueText.render(b[range]))
                            for k in range { packet[k - q] = 0x20 }
                            changed.append(idx)
                        }
                    }
                    d += 2 + len
                }
                i += 5 + loopLength
            }
            guard !changed.isEmpty else { return }
            let crc = CRC32.mpeg(packet[(start - q)..<(crcAt - q)])
            packet[crcAt - q] = UInt8(crc >> 24); packet[crcAt - q + 1] = UInt8(crc >> 16 & 0xFF)
            packet[crcAt - q + 2] = UInt8(crc >> 8 & 0xFF); packet[crcAt - q + 3] = UInt8(crc & 0xFF)
            let whole = InPlacePatches.Patch(offset: offset, bytes: packet)
            // Every changed name in this section comes back together (one CRC), so each item carries the packet.
            for idx in Set(changed) { layout.patches[idx, default: []].append(whole) }
            layout.mutable.append(whole.range)
        }

        mutating func es(_ pid: Int, _ b: [UInt8], _ lo: Int, _ hi: Int, base: Int64) throws {
            var s = streams[pid] ?? Stream()
            for i in lo..<hi {
                let byte = b[i]
                if s.afterStartCode {
                    s.afterStartCode = false
                    s.collecting = byte & 0x1F == 6
                    if s.collecting {
                        s.nal = [byte]
                        s.offsets = [base + Int64(i)]
                    }
                } else if s.collecting {
                    if s.nal.count < maxSEI {
                        s.nal.append(byte)
                        s.offsets.append(base + Int64(i))
                    } else {
                        s.collecting = false
                        found.note(Note(.warning, code: "sei-too-large", "an SEI NAL unit over \(maxSEI) bytes was not inspected", offset: s.offsets.first))
                    }
                }
                if byte == 1 && s.zeros >= 2 {
                    if s.collecting {
                        if s.nal.count > 1 {
                            s.nal.removeLast()
                            s.offsets.removeLast()
                        }
                        streams[pid] = s
                        try endNAL(pid)
                        s = streams[pid] ?? Stream()
                    }
                    s.afterStartCode = true
                    s.collecting = false
                }
                s.zeros = byte == 0 ? s.zeros + 1 : 0
            }
            streams[pid] = s
        }

        /// A complete SEI NAL: its user-data messages become items with their same-length replacements.
        mutating func endNAL(_ pid: Int) throws {
            guard var s = streams[pid], s.collecting, !s.nal.isEmpty else { return }
            // The start code's 00 00 01 were appended before the end was known.
            let nal = s.nal
            let offsets = s.offsets
            s.collecting = false
            s.nal = []
            s.offsets = []
            streams[pid] = s
            for m in H264SEI.messages(nal: nal) where m.payloadType == H264SEI.userDataUnregistered && !m.isNeutralised {
                let at = offsets[m.escapedRange.lowerBound]
                let where_ = "PID 0x\(String(pid, radix: 16))/SEI/user_data_unregistered"
                let idx: Int
                if m.isMDPM {
                    idx = item("h264:sei:MDPM", .device, offset: at, length: Int64(m.escapedRange.count), location: where_,
                               detail: "AVCHD MDPM camera data (\(m.payloadSize) bytes)")
                    let entries = H264SEI.mdpmEntries(m.payload)
                    let kinds = Set(entries.map { H264SEI.kind(ofMDPMTag: $0.tag) })
                    if kinds.contains(.time) {
                        _ = item("h264:sei:MDPM/DateTimeOriginal", .time, offset: at, length: Int64(m.escapedRange.count), location: where_ + "/MDPM",
                                 detail: "capture date and time zone", value: H264SEI.mdpmDate(entries), parent: idx)
                    }
                    if kinds.contains(.location) {
                        _ = item("h264:sei:MDPM/GPS", .location, offset: at, length: Int64(m.escapedRange.count), location: where_ + "/MDPM",
                                 detail: "GPS position", parent: idx)
                    }
                    if kinds.contains(.device) {
                        _ = item("h264:sei:MDPM/Make", .device, offset: at, length: Int64(m.escapedRange.count), location: where_ + "/MDPM",
                                 detail: "camera make and model", parent: idx)
                    }
                    if kinds.contains(.settings) {
                        _ = item("h264:sei:MDPM/CameraSettings", .device, offset: at, length: Int64(m.escapedRange.count), location: where_ + "/MDPM",
                                 detail: "exposure, gain and recording settings", parent: idx)
                    }
                } else {
                    let x264 = m.uuid == H264SEI.x264UUID
                    idx = item(x264 ? "h264:sei:user-data" : "h264:sei:user-data:other", x264 ? .software : .content, offset: at,
                               length: Int64(m.escapedRange.count), location: where_,
                               detail: x264 ? "x264 encoder options string (\(m.payloadSize) bytes)" : "unregistered user data (\(m.payloadSize) bytes)",
                               value: x264 ? ValueText.render(m.payload.dropFirst(16)) : nil)
                    if !x264 { found.items[idx].isUnknown = true }
                }
                guard let filler = H264SEI.neutralised(nal: nal, message: m) else {
                    unfixable += 1
                    continue
                }
                // Escaped bytes may sit in several TS packets: one replacement per contiguous run of file offsets.
                var runStart = m.escapedRange.lowerBound
                for k in m.escapedRange.lowerBound..<m.escapedRange.upperBound {
                    let last = k + 1 == m.escapedRange.upperBound
                    if last || offsets[k + 1] != offsets[k] + 1 {
                        let bytes = Array(filler[(runStart - m.escapedRange.lowerBound)...(k - m.escapedRange.lowerBound)])
                        let patch = InPlacePatches.Patch(offset: offsets[runStart], bytes: bytes)
                        layout.patches[idx, default: []].append(patch)
                        layout.mutable.append(patch.range)
                        runStart = k + 1
                    }
                }
            }
        }
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<MPEGTSLayout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        var removed = Set(scan.items.indices.filter { !plan.keeps($0) })
        for i in Array(removed) { if let p = scan.items[i].parent { removed.insert(p) } }
        var patches = InPlacePatches()
        var seen = Set<Int64>()
        for i in removed.sorted() {
            for p in layout.patches[i] ?? [] where seen.insert(p.offset).inserted { patches.add(p.offset, p.bytes) }
        }
        let gone = Set(removed.compactMap { layout.dataStreams[$0]?.pid })
        let strange = !layout.strangeDescriptors.isDisjoint(with: removed)
        if !gone.isEmpty || strange {
            for i in removed.sorted() {
                for at in layout.dataStreams[i]?.packets ?? [] { patches.add(at, MPEGTSStreamTable.nullPacket) }
            }
            for pmt in layout.pmtPackets {
                if let rewritten = MPEGTSStreamTable.pmt(pmt.bytes, sectionStart: pmt.sectionStart, removing: gone, strangeDescriptors: strange) {
                    patches.add(pmt.offset, rewritten)
                }
            }
        }
        // A kept SDT name in a section whose other name goes: the whole packet (one CRC) is rewritten, so both go.
        return try SameOffset.write(patches, format: Self.format, from: input, to: output, note: Note(.info, code: "sei-neutralised",
            "SEI user-data payloads were overwritten in place with filler of the same length; packets, timestamps and coded slices are unchanged"))
    }

    public func verifyContent(original: any ByteSource, _ before: MPEGTSLayout, cleaned: any ByteSource, _ after: MPEGTSLayout, result: CleanResult) throws -> ContentCheck {
        let method = "every TS packet byte-identical except neutralised SEI user-data payloads and SDT names"
        // Everything but the ranges a clean may overwrite, at the same offsets.
        var core: [Range<Int64>] = [], at: Int64 = 0
        for r in before.mutable.sorted(by: { $0.lowerBound < $1.lowerBound }) + [original.size..<original.size] {
            if r.lowerBound > at { core.append(at..<r.lowerBound) }
            at = max(at, r.upperBound)
        }
        return try SameOffset.verify(original: original, cleaned: cleaned, core: core, sameLayout: original.size == cleaned.size,
                                     method: method, part: "packet data")
    }
}

// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer entry point (issue 8): built only by scripts/fuzz with `-sanitize=fuzzer,address`, never by the
// normal build (Package.swift adds this target only when METASCRUB_FUZZ=1).
//
// One binary for every reader and remuxer: METASCRUB_FUZZ_FORMAT=<format id> (jpeg, png, webp, gif, tiff, psd, dng, heif,
// avif, jxl, mp4, mov, matroska, avi, wav, aiff, flac, ogg, asf, mpegts, mp3) sends every input to that format's
// handler whatever its magic bytes say, so the fuzzer's mutations reach the parser; unset, inputs go wherever
// the registry's detection sends them.
//
// Each input: scan from memory, apply the strict policy, clean into a memory sink, re-scan the output and compare
// content, exactly as the engine does with files. Typed errors are the expected outcome for most inputs; only a
// crash (a trap, an out-of-bounds access, a sanitizer report) or a timeout is a finding.
import MetascrubCore
import MetascrubFormats

#if canImport(Glibc)
import Glibc
#endif

/// Read once: the handler under test.
nonisolated(unsafe) private var forcedHandler: AnyFormatHandler? = {
    guard let raw = getenv("METASCRUB_FUZZ_FORMAT") else { return nil }
    let id = String(cString: raw)
    guard let entry = FormatRegistry.entries.first(where: { $0.format.id == id }), let handler = entry.handler else {
        let message = "MetascrubFuzz: no handler for format \(id)\n"
        _ = message.withCString { write(2, $0, strlen($0)) }
        exit(2)
    }
    return handler
}()

nonisolated(unsafe) private var strict: Policy = try! PolicyCatalog.builtin("strict")

/// Inputs above this are skipped: the parsers' limits are checked against the real size, and big inputs only
/// slow the fuzzer down.
private let maxInput = 1 << 20

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count <= maxInput else { return -1 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let source = MemoryByteSource(bytes)
    let handler: AnyFormatHandler
    if let forcedHandler {
        handler = forcedHandler
    } else {
        let head = Array(bytes.prefix(Magic.headLength))
        guard let entry = FormatRegistry.detect(head), let found = entry.handler else { return 0 }
        handler = found
    }
    do {
        let scan = try handler.scan(source, options: ScanOptions(includeValues: true))
        let findings = strict.evaluate(scan.items)
        guard !findings.allSatisfy({ $0.disposition == .keep }) else { return 0 }
        let plan = CleanPlan(findings: findings, policy: strict)
        let sink = MemoryOutputSink()
        let result = try scan.clean(source, plan: plan, to: sink)
        let cleaned = MemoryByteSource(sink.bytes)
        let rescan = try scan.rescan(cleaned)
        _ = strict.evaluate(rescan.scan.items)
        _ = try rescan.verifyContent(original: source, cleaned: cleaned, result: result)
    } catch {
        // A typed error is a correct answer to a broken file.
    }
    return 0
}

// SwiftPM links an executable target with `main` renamed to `<target>_main` (`--defsym main=MetascrubFuzz_main`),
// which hides libFuzzer's own `main`; this one hands control to libFuzzer's driver instead.
@_silgen_name("LLVMFuzzerRunDriver")
private func runDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

@_cdecl("MetascrubFuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runDriver(&count, &arguments) { data, size in fuzzOneInput(data, size) }
}

// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// A clean never replaces a file it was not asked to change: existing outputs it did not make, the input under
/// another name, devices, FIFOs and links; in place it keeps the file's owner, group and extended attributes; an
/// interrupted run removes its temp files. All through the real binary.
final class SafeWritesTests: XCTestCase {
    var tmp: String!

    override func setUpWithError() throws {
        try Harness.requireBinary()
        tmp = Harness.makeTemp("safe")
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: tmp) }

    private func write(_ text: String, _ path: String) {
        try? FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
    }

    private func lstatMode(_ path: String) -> mode_t {
        var st = stat()
        return lstat(path, &st) == 0 ? st.st_mode & S_IFMT : 0
    }

    func testOutputDirRefusesFilesItDidNotWriteAndOverwriteReplacesThem() {
        Harness.copy("jpeg/gps-full.jpg", to: "\(tmp!)/src/a.jpg")
        Harness.copy("jpeg/orient-1.jpg", to: "\(tmp!)/src/b.jpg")
        write("not a photo, someone's file\n", "\(tmp!)/dist/a.jpg")
        write("unrelated\n", "\(tmp!)/dist/readme.txt")
        let first = Harness.metascrub(["clean", "\(tmp!)/src", "--output-dir", "\(tmp!)/dist", "--json"])
        XCTAssertEqual(first.status, 3, first.stderr)
        XCTAssertEqual(Harness.data("\(tmp!)/dist/a.jpg"), Data("not a photo, someone's file\n".utf8), "an unrelated file was replaced")
        XCTAssertEqual(Harness.data("\(tmp!)/dist/readme.txt"), Data("unrelated\n".utf8))
        XCTAssertTrue(Harness.exists("\(tmp!)/dist/b.jpg"), "the other files are still done")
        XCTAssertTrue(first.out.contains("--overwrite"), first.out)
        let b = Harness.data("\(tmp!)/dist/b.jpg")

        // The same run again: b.jpg holds exactly this input's output, so it is not a conflict.
        try? FileManager.default.removeItem(atPath: "\(tmp!)/dist/a.jpg")
        let again = Harness.metascrub(["clean", "\(tmp!)/src", "--output-dir", "\(tmp!)/dist", "-q"])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(Harness.data("\(tmp!)/dist/b.jpg"), b)

        // A changed source makes the old output a file this input did not write: refused, then --overwrite.
        Harness.copy("jpeg/orient-2.jpg", to: "\(tmp!)/src/b.jpg")
        XCTAssertEqual(Harness.metascrub(["clean", "\(tmp!)/src", "--output-dir", "\(tmp!)/dist", "-q"]).status, 3)
        XCTAssertEqual(Harness.data("\(tmp!)/dist/b.jpg"), b)
        let forced = Harness.metascrub(["clean", "\(tmp!)/src", "--output-dir", "\(tmp!)/dist", "-q", "--overwrite"])
        XCTAssertEqual(forced.status, 0, forced.stderr)
        XCTAssertNotEqual(Harness.data("\(tmp!)/dist/b.jpg"), b)

        // --output onto an existing file is the same rule.
        write("keep me\n", "\(tmp!)/out.jpg")
        XCTAssertEqual(Harness.metascrub(["clean", "\(tmp!)/src/a.jpg", "--output", "\(tmp!)/out.jpg", "-q"]).status, 3)
        XCTAssertEqual(Harness.data("\(tmp!)/out.jpg"), Data("keep me\n".utf8))
    }

    func testOutputNamingTheInputIsAUsageError() {
        Harness.copy("jpeg/gps-full.jpg", to: "\(tmp!)/src/a.jpg")
        let original = Harness.data("\(tmp!)/src/a.jpg")
        let same = Harness.metascrub(["clean", "\(tmp!)/src/a.jpg", "--output", "\(tmp!)/src/./a.jpg"])
        XCTAssertEqual(same.status, 2, same.stderr)
        XCTAssertTrue(same.stderr.contains("--in-place"), same.stderr)
        let folder = Harness.metascrub(["clean", "\(tmp!)/src", "--output-dir", "\(tmp!)/src/"])
        XCTAssertEqual(folder.status, 2, folder.stderr)
        // A named file mirrored onto itself (its folder as the output folder) is refused for that file.
        let mirrored = Harness.metascrub(["clean", "\(tmp!)/src/a.jpg", "--output-dir", "\(tmp!)/src", "--overwrite"])
        XCTAssertEqual(mirrored.status, 3, mirrored.stderr)
        XCTAssertEqual(Harness.data("\(tmp!)/src/a.jpg"), original)
        let report = Harness.metascrub(["scan", "\(tmp!)/src/a.jpg", "--report", "\(tmp!)/src/a.jpg"])
        XCTAssertEqual(report.status, 2, report.stderr)
        XCTAssertEqual(Harness.data("\(tmp!)/src/a.jpg"), original)
    }

    func testSpecialFilesAreWrittenThroughAndLinksRefused() throws {
        let input = "\(tmp!)/a.jpg"
        Harness.copy("jpeg/gps-full.jpg", to: input)
        XCTAssertEqual(Harness.metascrub(["clean", input, "--output", "\(tmp!)/ref.jpg", "-q"]).status, 0)
        let cleaned = try XCTUnwrap(Harness.data("\(tmp!)/ref.jpg"))

        // /dev/null stays a device.
        let null = Harness.metascrub(["clean", input, "--output", "/dev/null", "-q"])
        XCTAssertEqual(null.status, 0, null.stderr)
        XCTAssertEqual(lstatMode("/dev/null"), S_IFCHR)

        // /dev/stdout: the verified bytes on standard output.
        let stdout = Harness.metascrub(["clean", input, "--output", "/dev/stdout", "-q"])
        XCTAssertEqual(stdout.status, 0, stdout.stderr)
        XCTAssertEqual(stdout.stdout, cleaned)

        // A FIFO is opened and written, not replaced by a regular file.
        let fifo = "\(tmp!)/pipe"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/sh")
        reader.arguments = ["-c", "cat \"$0\" > \"$1\"", fifo, "\(tmp!)/from-fifo"]
        try reader.run()
        let viaFifo = Harness.metascrub(["clean", input, "--output", fifo, "-q"])
        reader.waitUntilExit()
        XCTAssertEqual(viaFifo.status, 0, viaFifo.stderr)
        XCTAssertEqual(lstatMode(fifo), S_IFIFO)
        XCTAssertEqual(Harness.data("\(tmp!)/from-fifo"), cleaned)

        // A symbolic link is refused and left as it was, for outputs and for reports.
        write("target\n", "\(tmp!)/target.txt")
        try FileManager.default.createSymbolicLink(atPath: "\(tmp!)/link.jpg", withDestinationPath: "\(tmp!)/target.txt")
        let link = Harness.metascrub(["clean", input, "--output", "\(tmp!)/link.jpg", "--overwrite", "--json"])
        XCTAssertEqual(link.status, 3, link.stderr)
        XCTAssertTrue(link.out.contains("symbolic link"), link.out)
        XCTAssertEqual(lstatMode("\(tmp!)/link.jpg"), S_IFLNK)
        XCTAssertEqual(Harness.data("\(tmp!)/target.txt"), Data("target\n".utf8))
        let reportLink = Harness.metascrub(["scan", input, "-q", "--report", "\(tmp!)/link.jpg"])
        XCTAssertEqual(reportLink.status, 4, reportLink.stderr)
        XCTAssertEqual(lstatMode("\(tmp!)/link.jpg"), S_IFLNK)

        // --report /dev/stdout writes the report there.
        let reportOut = Harness.metascrub(["scan", input, "-q", "--report", "/dev/stdout"])
        XCTAssertEqual(reportOut.status, 1, reportOut.stderr)
        XCTAssertTrue(reportOut.out.lowercased().contains("gps"), reportOut.out)
    }

    func testInPlaceKeepsOwnerGroupAndExtendedAttributes() throws {
        let input = "\(tmp!)/a.jpg"
        Harness.copy("jpeg/gps-full.jpg", to: input)
        let xattr = "import os, sys; os.setxattr(sys.argv[1], 'user.project', b'holiday')"
        try XCTSkipIf(Harness.exec("python3", ["-c", xattr, input]).status != 0, "this file system has no user extended attributes")
        chmod(input, 0o640)
        let asRoot = getuid() == 0
        if asRoot { XCTAssertEqual(chown(input, 1234, 5678), 0) }
        let result = Harness.metascrub(["clean", input, "--in-place", "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        var st = stat()
        XCTAssertEqual(stat(input, &st), 0)
        XCTAssertEqual(st.st_mode & 0o7777, 0o640)
        if asRoot {
            XCTAssertEqual(st.st_uid, 1234)
            XCTAssertEqual(st.st_gid, 5678)
        }
        let read = Harness.exec("python3", ["-c", "import os, sys; print(os.getxattr(sys.argv[1], 'user.project').decode())", input])
        XCTAssertEqual(read.out, "holiday\n", read.stderr)
        XCTAssertFalse(result.out.contains("not-kept"), result.out)
        let rescan = Harness.metascrub(["scan", input, "-q"])
        XCTAssertEqual(rescan.status, 0, "the file was cleaned: \(rescan.stderr)")
    }

    func testSigintRemovesTheRunsTemporaryFilesAndExits130() throws {
        let tree = "\(tmp!)/tree", reference = "\(tmp!)/ref"
        let fixtures = ["jpeg/gps-full.jpg", "jpeg/orient-1.jpg", "jpeg/orient-2.jpg"]
        for i in 0..<200 { Harness.copy(fixtures[i % 3], to: "\(tree)/d\(i / 20)/f\(i).jpg") }
        XCTAssertEqual(Harness.metascrub(["clean", tree, "--output-dir", reference, "-q"]).status, 0)
        let originals = Dictionary(uniqueKeysWithValues: (0..<200).map { i in
            ("d\(i / 20)/f\(i).jpg", Harness.data(Harness.fixture(fixtures[i % 3]))!)
        })

        let process = Process()
        process.executableURL = URL(fileURLWithPath: Harness.binary)
        process.arguments = ["clean", tree, "--in-place", "-q", "--jobs", "2"]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Interrupt once the run is under way: the first file replaced.
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning, Date() < deadline,
              !originals.contains(where: { Harness.data("\(tree)/\($0.key)") != $0.value }) {
            usleep(2_000)
        }
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 130, stderr)
        XCTAssertTrue(stderr.contains("interrupted by SIGINT"), stderr)

        let left = FileManager.default.enumerator(atPath: tree)!.compactMap { $0 as? String }.filter { $0.contains(".metascrub-") }
        XCTAssertEqual(left, [], "temp files left by the interrupted run")
        var cleaned = 0
        for (relative, original) in originals {
            let now = Harness.data("\(tree)/\(relative)")
            if now == Harness.data("\(reference)/\(relative)") { cleaned += 1; continue }
            XCTAssertEqual(now, original, "\(relative) is neither its original nor its cleaned output")
        }
        XCTAssertLessThan(cleaned, 200, "the run was interrupted before the end")
    }
}

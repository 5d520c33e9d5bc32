import Foundation
import NewsstandTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Tests of the fault-injecting test server over real sockets, with curl as the client (an
/// independent HTTP implementation, so the server cannot agree with itself by accident).
@Suite("TestHTTPServer", .timeLimit(.minutes(5)))
struct TestHTTPServerTests {
    // MARK: - Normal responses

    @Test func fullGetCarriesBodyAndHeaders() async throws {
        let body = serverTestRandomBytes(100_000)
        try await withTestServer { server in
            server.serve("/a.bin", bytes: body)
            let response = try await curl(server.url("/a.bin"))
            #expect(response.exitCode == 0)
            #expect(response.status == 200)
            expectBytes(response.body, body)
            #expect(response.header("Content-Length") == "100000")
            #expect(response.header("Accept-Ranges") == "bytes")
            #expect(response.header("Content-Type") == "application/octet-stream")
            #expect(response.header("Last-Modified") == "Mon, 01 Jan 2024 00:00:00 GMT")
            let etag = try #require(response.header("ETag"))
            #expect(etag.count == 18 && etag.hasPrefix("\"") && etag.hasSuffix("\""), "strong quoted ETag: \(etag)")
            #expect(response.header("Date")?.hasSuffix(" GMT") == true)
            #expect(server.requestCount("/a.bin") == 1)
            #expect(server.bodyBytesSent("/a.bin") == body.count)
            let request = try #require(server.requests("/a.bin").first)
            #expect(request.method == "GET")
            #expect(request.uri == "/a.bin")
            #expect(request.header("user-agent")?.hasPrefix("curl/") == true)
            #expect(request.header("Range") == nil)
        }
    }

    @Test func headSendsHeadersWithoutBody() async throws {
        try await withTestServer { server in
            server.serve("/a.bin", bytes: serverTestRandomBytes(5_000))
            let response = try await curl(server.url("/a.bin"), ["-I"])
            #expect(response.status == 200)
            #expect(response.header("Content-Length") == "5000")
            #expect(server.bodyBytesSent("/a.bin") == 0)
            #expect(server.requests("/a.bin").first?.method == "HEAD")
            try await expectHeadThenGetOnOneConnection(server.url("/a.bin"), bodyCount: 5_000)
        }
    }

    @Test func unknownPathIs404AndOtherMethodsAre405() async throws {
        try await withTestServer { server in
            server.serve("/a.bin", bytes: [1, 2, 3])
            let missing = try await curl(server.url("/nope"))
            #expect(missing.status == 404)
            #expect(server.requestCount("/nope") == 1)
            let post = try await curl(server.url("/a.bin"), ["-X", "POST", "--data", "x"])
            #expect(post.status == 405)
            #expect(post.header("Allow") == "GET, HEAD")
        }
    }

    @Test func customValidatorsAndReplacedContent() async throws {
        try await withTestServer { server in
            server.serve(
                "/doc.txt",
                bytes: Array("first".utf8),
                etag: "\"v1\"",
                lastModified: Date(timeIntervalSince1970: 951_782_400),
                contentType: "text/plain"
            )
            let first = try await curl(server.url("/doc.txt"))
            #expect(first.header("ETag") == "\"v1\"")
            #expect(first.header("Last-Modified") == "Tue, 29 Feb 2000 00:00:00 GMT")
            #expect(first.header("Content-Type") == "text/plain")

            // Replacing the content without an explicit ETag derives a new one from the bytes.
            server.serve("/doc.txt", bytes: Array("second".utf8))
            let second = try await curl(server.url("/doc.txt"))
            server.serve("/doc.txt", bytes: Array("third!".utf8))
            let third = try await curl(server.url("/doc.txt"))
            expectBytes(second.body, Array("second".utf8))
            expectBytes(third.body, Array("third!".utf8))
            #expect(second.header("ETag") != nil && second.header("ETag") != third.header("ETag"))
        }
    }

    @Test func keepAliveReusesTheConnection() async throws {
        try await withTestServer { server in
            server.serve("/a.bin", bytes: serverTestRandomBytes(200_000))
            let directory = try TemporaryDirectory()
            let result = try await runProcess(
                "/usr/bin/env",
                [
                    "curl", "-sS", "--max-time", "30", "-w", "%{num_connects}\n",
                    "-o", directory.path("1"), server.url("/a.bin"),
                    "-o", directory.path("2"), server.url("/a.bin"),
                ])
            #expect(result.status == 0)
            #expect(result.stdout == "1\n0\n", "second transfer should reuse the first connection")
            #expect(server.requestCount("/a.bin") == 2)
        }
    }

    // MARK: - Ranges

    @Test func rangeGivesPartialContent() async throws {
        let body = serverTestRandomBytes(10_000)
        try await withTestServer { server in
            server.serve("/a.bin", bytes: body)
            let middle = try await curl(server.url("/a.bin"), ["-H", "Range: bytes=100-199"])
            #expect(middle.status == 206)
            #expect(middle.header("Content-Range") == "bytes 100-199/10000")
            #expect(middle.header("Content-Length") == "100")
            expectBytes(middle.body, Array(body[100..<200]))

            let rest = try await curl(server.url("/a.bin"), ["-H", "Range: bytes=9000-"])
            #expect(rest.status == 206)
            #expect(rest.header("Content-Range") == "bytes 9000-9999/10000")
            expectBytes(rest.body, Array(body[9000...]))

            // A last position past the end is clipped to the end.
            let clipped = try await curl(server.url("/a.bin"), ["-H", "Range: bytes=9990-20000"])
            #expect(clipped.header("Content-Range") == "bytes 9990-9999/10000")
            expectBytes(clipped.body, Array(body[9990...]))

            #expect(server.requests("/a.bin").first?.header("range") == "bytes=100-199")
            #expect(server.bodyBytesSent("/a.bin") == 100 + 1000 + 10)
        }
    }

    @Test func suffixRangeGivesTheTail() async throws {
        let body = serverTestRandomBytes(10_000)
        try await withTestServer { server in
            server.serve("/a.bin", bytes: body)
            let tail = try await curl(server.url("/a.bin"), ["-H", "Range: bytes=-500"])
            #expect(tail.status == 206)
            #expect(tail.header("Content-Range") == "bytes 9500-9999/10000")
            expectBytes(tail.body, Array(body[9500...]))

            // A suffix longer than the body is the whole body, still as a 206.
            let whole = try await curl(server.url("/a.bin"), ["-H", "Range: bytes=-20000"])
            #expect(whole.status == 206)
            #expect(whole.header("Content-Range") == "bytes 0-9999/10000")
        }
    }

    @Test func unsatisfiableRangeIs416() async throws {
        try await withTestServer { server in
            server.serve("/a.bin", bytes: serverTestRandomBytes(1_000))
            let response = try await curl(server.url("/a.bin"), ["-H", "Range: bytes=1000-"])
            #expect(response.status == 416)
            #expect(response.header("Content-Range") == "bytes */1000")
            #expect(server.bodyBytesSent("/a.bin") == 0)
        }
    }

    @Test func multipleOrInvalidRangesGetTheFullBody() async throws {
        try await withTestServer { server in
            server.serve("/a.bin", bytes: serverTestRandomBytes(1_000))
            let multiple = try await curl(server.url("/a.bin"), ["-H", "Range: bytes=0-9,20-29"])
            #expect(multiple.status == 200)
            #expect(multiple.body.count == 1_000)
            let backwards = try await curl(server.url("/a.bin"), ["-H", "Range: bytes=50-10"])
            #expect(backwards.status == 200)
            let otherUnit = try await curl(server.url("/a.bin"), ["-H", "Range: items=0-1"])
            #expect(otherUnit.status == 200)
        }
    }

    @Test func ifRangeHonoursOnlyTheCurrentValidators() async throws {
        let body = serverTestRandomBytes(4_000)
        try await withTestServer { server in
            server.serve("/a.bin", bytes: body)
            let head = try await curl(server.url("/a.bin"), ["-I"])
            let etag = try #require(head.header("ETag"))
            let lastModified = try #require(head.header("Last-Modified"))

            let matching = try await curl(
                server.url("/a.bin"), ["-H", "Range: bytes=1000-", "-H", "If-Range: \(etag)"])
            #expect(matching.status == 206)
            expectBytes(matching.body, Array(body[1000...]))

            let stale = try await curl(server.url("/a.bin"), ["-H", "Range: bytes=1000-", "-H", "If-Range: \"stale\""])
            #expect(stale.status == 200)
            expectBytes(stale.body, body)

            let sameDate = try await curl(
                server.url("/a.bin"),
                ["-H", "Range: bytes=1000-", "-H", "If-Range: \(lastModified)"]
            )
            #expect(sameDate.status == 206)
            let otherDate = try await curl(
                server.url("/a.bin"),
                ["-H", "Range: bytes=1000-", "-H", "If-Range: Tue, 02 Jan 2024 00:00:00 GMT"]
            )
            #expect(otherDate.status == 200)

            // The content changes: the old ETag no longer lets the Range through.
            server.serve("/a.bin", bytes: serverTestRandomBytes(4_000))
            let changed = try await curl(server.url("/a.bin"), ["-H", "Range: bytes=1000-", "-H", "If-Range: \(etag)"])
            #expect(changed.status == 200)
            #expect(changed.body.count == 4_000)
        }
    }

    @Test func weakETagIsNeverHonouredByIfRange() async throws {
        try await withTestServer { server in
            server.serve("/a.bin", bytes: serverTestRandomBytes(4_000), etag: "\"abc\"")
            server.setFaults("/a.bin", Faults(weakETag: true))
            let head = try await curl(server.url("/a.bin"), ["-I"])
            #expect(head.header("ETag") == "W/\"abc\"")
            for validator in ["W/\"abc\"", "\"abc\""] {
                let response = try await curl(
                    server.url("/a.bin"),
                    ["-H", "Range: bytes=1000-", "-H", "If-Range: \(validator)"]
                )
                #expect(response.status == 200, "If-Range: \(validator)")
                #expect(response.body.count == 4_000)
            }
            // Without If-Range the Range itself still works.
            let plain = try await curl(server.url("/a.bin"), ["-H", "Range: bytes=1000-"])
            #expect(plain.status == 206)
        }
    }

    @Test func conditionalGetAnswers304() async throws {
        try await withTestServer { server in
            server.serve("/a.bin", bytes: serverTestRandomBytes(1_000), etag: "\"v7\"")
            let byETag = try await curl(server.url("/a.bin"), ["-H", "If-None-Match: \"v7\""])
            #expect(byETag.status == 304)
            #expect(byETag.body.isEmpty)
            let byDate = try await curl(
                server.url("/a.bin"),
                ["-H", "If-Modified-Since: Mon, 01 Jan 2024 00:00:00 GMT"]
            )
            #expect(byDate.status == 304)
            let other = try await curl(server.url("/a.bin"), ["-H", "If-None-Match: \"v6\""])
            #expect(other.status == 200)
        }
    }

    // MARK: - Faults

    @Test func ignoreRangeSendsEverything() async throws {
        let body = serverTestRandomBytes(5_000)
        try await withTestServer { server in
            server.serve("/a.bin", bytes: body)
            server.setFaults("/a.bin", Faults(ignoreRange: true))
            let response = try await curl(server.url("/a.bin"), ["-H", "Range: bytes=1000-"])
            #expect(response.status == 200)
            expectBytes(response.body, body)
            #expect(response.header("Content-Range") == nil)
            #expect(response.header("Accept-Ranges") == nil)
        }
    }

    /// Ranges are honoured for the first N requests that carry one, then ignored; requests without
    /// a Range do not count.
    @Test func honourRangeRequestsStopsHonouringAfterN() async throws {
        let body = serverTestRandomBytes(5_000)
        try await withTestServer { server in
            server.serve("/a.bin", bytes: body)
            server.setFaults("/a.bin", Faults(honourRangeRequests: 1))
            let plain = try await curl(server.url("/a.bin"))
            #expect(plain.status == 200)
            let first = try await curl(server.url("/a.bin"), ["-H", "Range: bytes=1000-1999"])
            #expect(first.status == 206)
            expectBytes(first.body, Array(body[1000..<2000]))
            #expect(first.header("Content-Range") == "bytes 1000-1999/5000")
            let second = try await curl(server.url("/a.bin"), ["-H", "Range: bytes=1000-1999"])
            #expect(second.status == 200)
            expectBytes(second.body, body)
            #expect(second.header("Content-Range") == nil)
        }
    }

    @Test func cutOnceThenWholeAndResumable() async throws {
        let body = serverTestRandomBytes(300_000)
        try await withTestServer { server in
            server.serve("/a.bin", bytes: body)
            server.setFaults("/a.bin", Faults(cutAfterBytes: 100_000))

            let cut = try await curl(server.url("/a.bin"))
            #expect(cut.exitCode == 18, "curl reports a partial transfer: \(cut.stderr)")
            #expect(cut.status == 200)
            expectBytes(cut.body, Array(body[..<100_000]))
            #expect(server.bodyBytesSent("/a.bin") == 100_000)

            // Resume from what arrived: only the rest is sent.
            server.resetCounters()
            let rest = try await curl(server.url("/a.bin"), ["-H", "Range: bytes=100000-"])
            #expect(rest.exitCode == 0)
            #expect(rest.status == 206)
            expectBytes(cut.body + rest.body, body)
            #expect(server.bodyBytesSent("/a.bin") == 200_000)

            let whole = try await curl(server.url("/a.bin"))
            #expect(whole.exitCode == 0)
            expectBytes(whole.body, body)
        }
    }

    @Test func cutEveryResponseAndHeadDoesNotUseACut() async throws {
        try await withTestServer { server in
            server.serve("/a.bin", bytes: serverTestRandomBytes(50_000))
            server.setFaults("/a.bin", Faults(cutAfterBytes: 0, cutResponses: 2))
            _ = try await curl(server.url("/a.bin"), ["-I"])
            let first = try await curl(server.url("/a.bin"))
            let second = try await curl(server.url("/a.bin"))
            let third = try await curl(server.url("/a.bin"))
            #expect(first.exitCode != 0 && first.body.isEmpty)
            #expect(second.exitCode != 0 && second.body.isEmpty)
            #expect(third.exitCode == 0 && third.body.count == 50_000)
        }
    }

    @Test func resetOnCutResetsTheConnection() async throws {
        try await withTestServer { server in
            server.serve("/a.bin", bytes: serverTestRandomBytes(50_000))
            server.setFaults("/a.bin", Faults(cutAfterBytes: 1_000, resetOnCut: true))
            let response = try await curl(server.url("/a.bin"))
            #expect(response.exitCode == 56, "connection reset: \(response.stderr)")
            #expect(response.body.count <= 1_000)
        }
    }

    @Test func truncateEveryResponse() async throws {
        let body = serverTestRandomBytes(50_000)
        try await withTestServer { server in
            server.serve("/a.bin", bytes: body)
            server.setFaults("/a.bin", Faults(truncateAfterBytes: 7_000))
            for _ in 0..<2 {
                let response = try await curl(server.url("/a.bin"))
                #expect(response.exitCode == 18)
                #expect(response.header("Content-Length") == "50000")
                expectBytes(response.body, Array(body[..<7_000]))
            }
            #expect(server.bodyBytesSent("/a.bin") == 14_000)
        }
    }

    @Test func unavailableWithRetryAfterForTheFirstRequests() async throws {
        try await withTestServer { server in
            server.serve("/a.bin", bytes: serverTestRandomBytes(1_000))
            server.setFaults("/a.bin", Faults(unavailableResponses: 2, retryAfter: "1"))
            for _ in 0..<2 {
                let response = try await curl(server.url("/a.bin"))
                #expect(response.status == 503)
                #expect(response.header("Retry-After") == "1")
            }
            let served = try await curl(server.url("/a.bin"))
            #expect(served.status == 200)
            #expect(served.body.count == 1_000)
            #expect(server.requestCount("/a.bin") == 3)
            #expect(server.bodyBytesSent("/a.bin") == 1_000, "error texts are not counted")
        }
    }

    @Test func statusOverride() async throws {
        try await withTestServer { server in
            server.serve("/a.bin", bytes: serverTestRandomBytes(1_000))
            server.setFaults("/a.bin", Faults(status: 403, statusResponses: 1))
            #expect(try await curl(server.url("/a.bin")).status == 403)
            #expect(try await curl(server.url("/a.bin")).status == 200)

            server.setFaults("/a.bin", Faults(status: 500))
            for _ in 0..<3 {
                let response = try await curl(server.url("/a.bin"))
                #expect(response.status == 500)
                #expect(String(decoding: response.body, as: UTF8.self).contains("500"))
            }
            server.setFaults("/a.bin", Faults(status: 416, statusResponses: 1))
            let unsatisfiable = try await curl(server.url("/a.bin"), ["-H", "Range: bytes=1000-"])
            #expect(unsatisfiable.status == 416)
            #expect(unsatisfiable.header("Content-Range") == "bytes */1000")
        }
    }

    @Test func redirect() async throws {
        let target = serverTestRandomBytes(2_000)
        try await withTestServer { server in
            server.serve("/target.bin", bytes: target)
            server.setFaults("/old.bin", Faults(redirectTo: "/target.bin"))
            let redirect = try await curl(server.url("/old.bin"))
            #expect(redirect.status == 302)
            #expect(redirect.header("Location") == "/target.bin")
            let followed = try await curl(server.url("/old.bin"), ["-L"])
            #expect(followed.status == 200)
            expectBytes(followed.body, target)
            #expect(server.requestCount("/target.bin") == 1)
        }
    }

    @Test func slowDripTakesAboutTheExpectedTime() async throws {
        let body = serverTestRandomBytes(30_000)
        try await withTestServer { server in
            server.serve("/slow.bin", bytes: body)
            server.setFaults("/slow.bin", Faults(bytesPerSecond: 20_000))
            let clock = ContinuousClock()
            let started = clock.now
            let response = try await curl(server.url("/slow.bin"))
            let elapsed = clock.now - started
            expectBytes(response.body, body)
            // 30 kB at 20 kB/s is 1.5 s in theory (the first chunk leaves at once): allow slack.
            #expect(elapsed >= .milliseconds(1_100), "took \(elapsed)")
        }
    }

    @Test func omitContentLengthSendsChunked() async throws {
        let body = serverTestRandomBytes(150_000)
        try await withTestServer { server in
            server.serve("/a.bin", bytes: body)
            server.setFaults("/a.bin", Faults(omitContentLength: true))
            let response = try await curl(server.url("/a.bin"))
            #expect(response.status == 200)
            #expect(response.header("Content-Length") == nil)
            #expect(response.header("Transfer-Encoding") == "chunked")
            expectBytes(response.body, body)
            // HEAD must not carry a chunked body, or the connection's next answer would break.
            try await expectHeadThenGetOnOneConnection(server.url("/a.bin"), bodyCount: body.count)
        }
    }

    @Test func omitValidatorsAndContentDisposition() async throws {
        try await withTestServer { server in
            server.serve("/a.bin", bytes: serverTestRandomBytes(3_000), etag: "\"v1\"")
            server.setFaults(
                "/a.bin",
                Faults(omitValidators: true, contentDisposition: "attachment; filename=\"issue 1.pdf\"")
            )
            let response = try await curl(server.url("/a.bin"), ["-H", "Range: bytes=10-", "-H", "If-Range: \"v1\""])
            #expect(response.header("ETag") == nil)
            #expect(response.header("Last-Modified") == nil)
            #expect(response.header("Content-Disposition") == "attachment; filename=\"issue 1.pdf\"")
            #expect(response.status == 200, "without validators If-Range cannot match")
        }
    }

    // MARK: - Directories

    @Test func serveDirectoryStreamsALargeFile() async throws {
        let directory = try TemporaryDirectory()
        let size = 50 * 1024 * 1024
        let content = try randomData(size)
        try FileManager.default.createDirectory(atPath: directory.path("nested"), withIntermediateDirectories: true)
        try content.write(to: URL(fileURLWithPath: directory.path("nested/big file.bin")))
        try Data("hi\n".utf8).write(to: URL(fileURLWithPath: directory.path("small.txt")))

        try await withTestServer { server in
            server.serveDirectory(directory.root)
            let output = directory.path("download.bin")
            let response = try await curl(server.url("/nested/big%20file.bin"), [], output: output)
            #expect(response.exitCode == 0)
            #expect(response.header("Content-Length") == String(size))
            #expect(response.header("ETag")?.hasPrefix("\"") == true)
            let downloaded = try Data(contentsOf: URL(fileURLWithPath: output))
            #expect(downloaded.count == size)
            expectBytes(downloaded, content)
            #expect(server.bodyBytesSent("/nested/big file.bin") == size)

            let start = size - 70_000
            let tail = try await curl(server.url("/nested/big%20file.bin"), ["-H", "Range: bytes=\(start)-"])
            #expect(tail.status == 206)
            #expect(tail.header("Content-Range") == "bytes \(start)-\(size - 1)/\(size)")
            expectBytes(tail.body, content.subdata(in: start..<size))

            let small = try await curl(server.url("/small.txt"))
            expectBytes(small.body, Array("hi\n".utf8))
            #expect(small.header("Content-Type")?.hasPrefix("text/plain") == true)

            #expect(try await curl(server.url("/nested")).status == 404, "directories are not served")
            #expect(try await curl(server.url("/missing.bin")).status == 404)
            let escape = try await curl(server.url("/../\(directory.name)/small.txt"), ["--path-as-is"])
            #expect(escape.status == 404, "no way out of the served directory")
        }
    }

    @Test func fileETagChangesWhenTheFileChanges() async throws {
        let directory = try TemporaryDirectory()
        let file = URL(fileURLWithPath: directory.path("a.bin"))
        try Data(serverTestRandomBytes(1_000)).write(to: file)
        try await withTestServer { server in
            server.serveDirectory(directory.root)
            let first = try #require(try await curl(server.url("/a.bin"), ["-I"]).header("ETag"))
            try Data(serverTestRandomBytes(2_000)).write(to: file)
            let second = try await curl(server.url("/a.bin"), ["-H", "Range: bytes=500-", "-H", "If-Range: \(first)"])
            #expect(second.header("ETag") != first)
            #expect(second.status == 200)
            #expect(second.body.count == 2_000)
        }
    }

    // MARK: - Lifecycle

    @Test func shutdownIsIdempotentAndClosesThePort() async throws {
        let server = try await TestHTTPServer.start()
        server.serve("/a.bin", bytes: [1, 2, 3])
        #expect(try await curl(server.url("/a.bin")).status == 200)
        try await server.shutdown()
        try await server.shutdown()
        let refused = try await curl(server.url("/a.bin"))
        #expect(refused.exitCode == 7, "connection refused after shutdown")
    }

    @Test func withTestServerShutsDownOnThrow() async throws {
        struct Expected: Error {}
        let url = UrlBox()
        await #expect(throws: Expected.self) {
            try await withTestServer { server in
                url.value = server.url("/")
                throw Expected()
            }
        }
        let refused = try await curl(try #require(url.value))
        #expect(refused.exitCode == 7)
    }

    // MARK: - sample-server

    @Test func sampleServerServesAndStopsOnSIGTERM() async throws {
        let executable = try #require(sampleServerPath(), "build the sample-server product first (swift build)")
        let directory = try TemporaryDirectory()
        let content = serverTestRandomBytes(200_000)
        try Data(content).write(to: URL(fileURLWithPath: directory.path("issue.bin")))
        let portFile = directory.path("port")

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [
            "--root", directory.root, "--port-file", portFile, "--cut-after", "1000", "--cut-path", "/issue.bin",
        ]
        let stdout = Pipe()
        process.standardOutput = stdout
        let exit = ExitWaiter(process)
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

        let port = try await waitForPortFile(portFile)
        let base = "http://127.0.0.1:\(port)"
        let cut = try await curl(base + "/issue.bin")
        #expect(cut.exitCode == 18)
        expectBytes(cut.body, Array(content[..<1000]))
        let whole = try await curl(base + "/issue.bin")
        #expect(whole.exitCode == 0)
        expectBytes(whole.body, content)

        process.terminate()  // SIGTERM
        let status = try await exit.wait(timeout: .seconds(10))
        #expect(status == 0)
        #expect(process.terminationReason == .exit)
        let printed = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(printed.hasPrefix("listening on \(base)\n"), "stdout: \(printed)")
    }

    @Test func sampleServerRejectsBadArguments() async throws {
        let executable = try #require(sampleServerPath(), "build the sample-server product first (swift build)")
        for arguments in [["--port", "x", "--root", "/tmp"], ["--bogus"], [], ["--root", "/definitely/not/here"]] {
            let result = try await runProcess(executable, arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.hasPrefix("error: "), "\(arguments): \(result.stderr)")
        }
    }
}

// MARK: - Helpers

/// A HEAD and then a GET on one kept-alive connection: a HEAD answer that carried any body
/// bytes would corrupt the GET's answer.
private func expectHeadThenGetOnOneConnection(_ url: String, bodyCount: Int) async throws {
    let directory = try TemporaryDirectory()
    let result = try await runProcess(
        "/usr/bin/env",
        [
            "curl", "-sS", "--max-time", "30", "-I", "-o", directory.path("head"), url,
            "--next", "-sS", "--max-time", "30", "-o", directory.path("get"), "-w", "%{http_code} %{num_connects}", url,
        ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "200 0", "GET answered on the HEAD's connection")
    let got = try Data(contentsOf: URL(fileURLWithPath: directory.path("get")))
    #expect(got.count == bodyCount)
}

/// Compares bytes and, on a mismatch, says where they differ. A plain `#expect(a == b)` on
/// large arrays would print and diff every element, which takes minutes.
private func expectBytes(
    _ actual: some Collection<UInt8>,
    _ expected: some Collection<UInt8>,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard actual.count == expected.count else {
        Issue.record("got \(actual.count) bytes, expected \(expected.count)", sourceLocation: sourceLocation)
        return
    }
    let left = Array(actual)
    let right = Array(expected)
    // memcmp first: a debug build compares tens of MiB element by element only slowly.
    let same = left.withUnsafeBytes { l in
        right.withUnsafeBytes { r in
            // No base address only for empty buffers, and the counts are equal.
            guard let a = l.baseAddress, let b = r.baseAddress else { return true }
            return memcmp(a, b, l.count) == 0
        }
    }
    if !same, let index = zip(left, right).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
        Issue.record("bytes differ first at offset \(index)", sourceLocation: sourceLocation)
    }
}

/// What curl saw.
private struct CurlResponse {
    var exitCode: Int32
    var status: Int
    /// Header fields of the last response (after redirects with -L), names as sent.
    var headers: [(String, String)]
    var body: [UInt8]
    var stderr: String

    func header(_ name: String) -> String? {
        headers.last { $0.0.lowercased() == name.lowercased() }?.1
    }
}

/// Fetches `url` with curl; `output` keeps the body in that file (for large bodies).
private func curl(_ url: String, _ arguments: [String] = [], output: String? = nil) async throws -> CurlResponse {
    let directory = try TemporaryDirectory()
    let bodyPath = output ?? directory.path("body")
    let headerPath = directory.path("headers")
    let result = try await runProcess(
        "/usr/bin/env",
        ["curl", "-sS", "--max-time", "30", "-o", bodyPath, "-D", headerPath, "-w", "%{http_code}"] + arguments + [url]
    )
    // curl creates neither file when nothing arrives.
    let rawHeaders = (try? String(contentsOfFile: headerPath, encoding: .utf8)) ?? ""
    let body = output == nil ? ((try? Data(contentsOf: URL(fileURLWithPath: bodyPath))).map { [UInt8]($0) } ?? []) : []
    return CurlResponse(
        exitCode: result.status,
        status: Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0,
        headers: parseLastHeaderBlock(rawHeaders),
        body: body,
        stderr: result.stderr
    )
}

private func parseLastHeaderBlock(_ raw: String) -> [(String, String)] {
    var blocks: [[(String, String)]] = []
    for line in raw.components(separatedBy: "\r\n") {
        if line.hasPrefix("HTTP/") {
            blocks.append([])
        } else if let colon = line.firstIndex(of: ":"), !blocks.isEmpty {
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            blocks[blocks.count - 1].append((name, value))
        }
    }
    return blocks.last ?? []
}

private struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs a program to its end without blocking a thread of the concurrency pool (tests run in
/// parallel on it, and the server under test must never wait for it).
private func runProcess(_ executable: String, _ arguments: [String]) async throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let stdout = Pipe()
    let stderr = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    let exit = ExitWaiter(process)
    try process.run()
    let status: Int32
    do {
        status = try await exit.wait(timeout: .seconds(60))
    } catch {
        process.terminate()
        throw error
    }
    // Output here is a few bytes (curl writes bodies to files), so the pipes never fill up.
    return ProcessResult(
        status: status,
        stdout: String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
        stderr: String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    )
}

/// Turns a process's termination into something to await; set up before `run()`.
private final class ExitWaiter: Sendable {
    private let stream: AsyncStream<Int32>

    init(_ process: Process) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.stream = stream
        process.terminationHandler = { finished in
            continuation.yield(finished.terminationStatus)
            continuation.finish()
        }
    }

    func wait(timeout: Duration) async throws -> Int32 {
        try await withThrowingTaskGroup(of: Int32?.self) { group in
            group.addTask {
                for await status in self.stream { return status }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            guard let status = first else { throw TimedOut() }
            return status
        }
    }
}

private struct TimedOut: Error {}

/// A fresh directory, removed when the value goes away.
private final class TemporaryDirectory {
    let root: String
    var name: String { (root as NSString).lastPathComponent }

    init() throws {
        root = try makeTemporaryDirectory().path
    }

    func path(_ relative: String) -> String {
        root + "/" + relative
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }
}

/// A value set from inside a closure and read afterwards.
private final class UrlBox: Sendable {
    private let storage = Mutex<String?>(nil)

    var value: String? {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}

private func waitForPortFile(_ path: String) async throws -> Int {
    for _ in 0..<200 {
        if let text = try? String(contentsOfFile: path, encoding: .utf8), let port = Int(text) {
            return port
        }
        try await Task.sleep(for: .milliseconds(50))
    }
    throw TimedOut()
}

/// The sample-server binary: next to the test runner, or in this package's debug build folder.
private func sampleServerPath() -> String? {
    var candidates: [String] = []
    if let explicit = ProcessInfo.processInfo.environment["SAMPLE_SERVER_PATH"] { candidates.append(explicit) }
    let runner = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    candidates.append(runner.deletingLastPathComponent().appendingPathComponent("sample-server").path)
    let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    candidates.append(packageRoot.appendingPathComponent(".build/debug/sample-server").path)
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
}

private func serverTestRandomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
}

/// Random bytes from the kernel, fast enough for tens of MiB.
private func randomData(_ count: Int) throws -> Data {
    let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom"))
    defer { try? handle.close() }
    var data = Data(capacity: count)
    // The kernel hands out at most 32 MiB per read, so read until there is enough.
    while data.count < count {
        guard let part = try handle.read(upToCount: count - data.count), !part.isEmpty else { break }
        data.append(part)
    }
    return data
}

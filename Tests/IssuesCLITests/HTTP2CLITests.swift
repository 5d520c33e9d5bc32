import Foundation
import NewsstandTestSupport
import Testing

/// `issues download` over HTTPS speaks HTTP/2 where the server offers it in the TLS handshake (ALPN), and
/// HTTP/1.1 where it does not; a resume over HTTP/2 sends `Range` and `If-Range` on a stream like on a
/// connection. Against the test server with a CA made in the test, and against nginx (`listen … ssl http2`)
/// when it is installed.
@Suite(.timeLimit(.minutes(5))) struct HTTP2CLITests {
    /// Three assets of one issue on an HTTPS server (offering h2 or not), a library holding them, and the CA.
    func withServer(
        http2: Bool, faults: Faults? = nil, _ body: (TestHTTPServer, URL, [[UInt8]], String) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { folder in
            let ca = try TestCertificateAuthority.make(in: folder.appendingPathComponent("ca"))
            try await withTestServer(tls: try ca.serverTLSConfiguration(), http2: http2) { server in
                let bodies = (0..<3).map { patternBytes(count: 300_000 + $0 * 1000, seed: UInt64(30 + $0)) }
                var add = ["add", "Multiplexed", "--date", "2026-11-20"]
                for (n, bytes) in bodies.enumerated() {
                    server.serve("/m\(n).bin", bytes: bytes)
                    if let faults { server.setFaults("/m\(n).bin", faults) }
                    add += ["--asset", server.url("/m\(n).bin")]
                }
                let library = folder.appendingPathComponent("library")
                let added = try CommandRunner.issues(add, library: library)
                #expect(added.status == 0, "\(added.stderr)")
                try await body(server, library, bodies, ca.certificatePath)
            }
        }
    }

    func downloaded(_ library: URL, _ n: Int) -> Data? {
        try? Data(contentsOf: library.appendingPathComponent("Multiplexed/m\(n).bin"))
    }

    @Test func downloadsOverHTTP2WhereTheServerOffersIt() async throws {
        try await withServer(http2: true) { server, library, bodies, ca in
            let r = try CommandRunner.issues(["download", "--cacert", ca, "--jobs", "3"], library: library)
            #expect(r.status == 0, "\(r.stderr)")
            for (n, bytes) in bodies.enumerated() {
                #expect(downloaded(library, n) == Data(bytes))
                let versions = server.requests("/m\(n).bin").map(\.version)
                #expect(versions == ["HTTP/2.0"], "asset \(n): \(versions)")
            }
        }
    }

    @Test func fallsBackToHTTP11WhenTheServerOffersNoH2() async throws {
        try await withServer(http2: false) { server, library, bodies, ca in
            let r = try CommandRunner.issues(["download", "--cacert", ca, "--jobs", "3"], library: library)
            #expect(r.status == 0, "\(r.stderr)")
            for (n, bytes) in bodies.enumerated() {
                #expect(downloaded(library, n) == Data(bytes))
                #expect(server.requests("/m\(n).bin").map(\.version) == ["HTTP/1.1"])
            }
        }
    }

    /// The first answer of each asset is cut after 100,000 bytes (its stream closed); the retry asks for the rest
    /// with `Range` and `If-Range` over HTTP/2, and no byte already on disk is fetched again.
    @Test func resumesOverHTTP2WithRangeAndIfRange() async throws {
        try await withServer(http2: true, faults: Faults(cutAfterBytes: 100_000)) { server, library, bodies, ca in
            let r = try CommandRunner.issues(["download", "--cacert", ca, "--jobs", "3"], library: library)
            #expect(r.status == 0, "\(r.stderr)")
            for (n, bytes) in bodies.enumerated() {
                #expect(downloaded(library, n) == Data(bytes))
                let requests = server.requests("/m\(n).bin")
                #expect(requests.map(\.version) == ["HTTP/2.0", "HTTP/2.0"], "asset \(n)")
                let resumed = try #require(requests.last)
                let range = try #require(resumed.header("Range"))
                #expect(range.hasPrefix("bytes=") && range != "bytes=0-", "\(range)")
                #expect(resumed.header("If-Range") != nil)
                // What was sent: one body and the overlap of what the cut dropped in flight, never a second body.
                #expect(server.bodyBytesSent("/m\(n).bin") < bytes.count + 100_000)
            }
        }
    }

    /// nginx with `listen … ssl http2` (Debian's nginx-light has the module), when installed: the download
    /// goes over HTTP/2, and a segmented one (`--segments 4`, ranges on connections of their own) over HTTP/1.1.
    @Test func nginxWithHTTP2() async throws {
        let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let nginx else { return }  // `make bench-deps` installs it; the test server covers the rest
        try await withTemporaryDirectory { folder in
            let ca = try TestCertificateAuthority.make(in: folder.appendingPathComponent("ca"))
            let www = folder.appendingPathComponent("www")
            try FileManager.default.createDirectory(at: www, withIntermediateDirectories: true)
            let small = patternBytes(count: 200_000, seed: 41)
            let large = patternBytes(count: 16 << 20, seed: 42)
            try Data(small).write(to: www.appendingPathComponent("small.bin"))
            try Data(large).write(to: www.appendingPathComponent("large.bin"))
            let conf = folder.appendingPathComponent("nginx")
            try FileManager.default.createDirectory(at: conf, withIntermediateDirectories: true)
            let port = try freeTCPPort()
            let user = getuid() == 0 ? "user root root;" : ""
            try Data(
                """
                \(user)
                daemon off;
                pid \(conf.path)/nginx.pid;
                error_log \(conf.path)/error.log warn;
                events { worker_connections 64; }
                http {
                    access_log \(conf.path)/access.log;
                    log_format proto '$request_uri $server_protocol';
                    client_body_temp_path \(conf.path)/body; proxy_temp_path \(conf.path)/proxy;
                    fastcgi_temp_path \(conf.path)/fastcgi; uwsgi_temp_path \(conf.path)/uwsgi;
                    scgi_temp_path \(conf.path)/scgi;
                    server {
                        listen 127.0.0.1:\(port) ssl http2;
                        ssl_certificate \(ca.serverCertificatePath);
                        ssl_certificate_key \(ca.serverKeyPath);
                        access_log \(conf.path)/protocols.log proto;
                        root \(www.path);
                    }
                }

                """.utf8
            ).write(to: conf.appendingPathComponent("nginx.conf"))
            let process = Process()
            process.executableURL = URL(fileURLWithPath: nginx)
            process.arguments = ["-p", conf.path, "-e", "\(conf.path)/error.log", "-c", "\(conf.path)/nginx.conf"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            defer {
                process.terminate()
                process.waitUntilExit()
            }
            try await waitUntil("nginx listens on \(port)") { canConnect(port: port) }
            let library = folder.appendingPathComponent("library")
            let base = "https://127.0.0.1:\(port)"
            for (name, file) in [("Small", "small.bin"), ("Large", "large.bin")] {
                let added = try CommandRunner.issues(
                    ["add", name, "--date", "2026-11-20", "--asset", "\(base)/\(file)"], library: library)
                #expect(added.status == 0, "\(added.stderr)")
            }
            let plain = try CommandRunner.issues(["download", "Small", "--cacert", ca.certificatePath], library: library)
            #expect(plain.status == 0, "\(plain.stderr)")
            #expect(try Data(contentsOf: library.appendingPathComponent("Small/small.bin")) == Data(small))
            let segmented = try CommandRunner.issues(
                ["download", "Large", "--cacert", ca.certificatePath, "--segments", "4"], library: library)
            #expect(segmented.status == 0, "\(segmented.stderr)")
            #expect(try Data(contentsOf: library.appendingPathComponent("Large/large.bin")) == Data(large))
            let log = try String(contentsOf: conf.appendingPathComponent("protocols.log"), encoding: .utf8)
            let lines = log.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            #expect(lines.filter { $0.first == "/small.bin" }.map(\.last) == ["HTTP/2.0"], "\(log)")
            let ranges = lines.filter { $0.first == "/large.bin" }
            #expect(ranges.count > 1, "\(log)")
            #expect(ranges.allSatisfy { $0.last == "HTTP/1.1" }, "\(log)")
        }
    }

    private func freeTCPPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRNOTAVAIL) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP relay on 127.0.0.1 to a server, which a test can cut (as if the server stopped) and restore, so that lost
/// connections are tested without stopping a server other tests use.
///
/// While cut, it drops every relayed connection and closes new ones as soon as they are accepted.
public final class TCPRelay: @unchecked Sendable {
    /// Writes to a socket without `SIGPIPE`: a peer that closed its end (a connection cut, a client gone) makes the
    /// write fail instead of killing the test process.
    private static func send(_ socket: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
        Glibc.send(socket, bytes, count, Int32(MSG_NOSIGNAL))
    }

    /// The port it listens on.
    public let port: Int
    private let listener: Int32
    private let target: (host: String, port: Int)
    private let lock = NSLock()
    private var sockets: [Int32] = []
    private var isCut = false
    private var isPaused = false
    private var forwarded = 0
    private var cutAfter: Int?
    private var acceptedStartup: Set<String>?

    /// Starts relaying to `host`:`port` (an IPv4 address), listening on `address` (a loopback address: a server's
    /// certificate for 127.0.0.1 does not name 127.0.0.2).
    public init(to host: String, port targetPort: Int, listeningOn address: String = "127.0.0.1") throws {
        target = (host, targetPort)
        (listener, port) = try LoopbackListener.listen(backlog: 64, host: address)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Refuses, as PgBouncer does, a client whose startup message names a parameter outside `accepted`.
    ///
    /// The client gets PgBouncer's error (`unsupported startup parameter`, SQLSTATE 08P01) instead of the server;
    /// `nil` relays every startup message. Only for clients that start without TLS (`sslmode=disable`).
    public func acceptStartupParameters(_ accepted: Set<String>?) { lock.withLock { acceptedStartup = accepted } }

    /// Cuts every connection now and refuses new ones until ``restore()``.
    public func cut() {
        let open = lock.withLock {
            isCut = true
            defer { sockets = [] }
            return sockets
        }
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// Cuts once `bytes` more have gone from clients to the server.
    public func cut(afterForwarding bytes: Int) { lock.withLock { cutAfter = forwarded + bytes } }

    /// Relays again.
    public func restore() { lock.withLock { isCut = false } }

    /// Holds what either side sends, keeping every connection open (a server that stopped answering), until
    /// ``resume()``.
    public func pause() { lock.withLock { isPaused = true } }

    /// Passes on what was held, and relays again.
    public func resume() { lock.withLock { isPaused = false } }

    /// Whether it is cut.
    public var cutNow: Bool { lock.withLock { isCut } }

    /// The bytes that have gone from clients to the server so far.
    public var forwardedBytes: Int { lock.withLock { forwarded } }

    /// Stops listening and drops every connection.
    public func stop() {
        cut()
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 { return }
            if lock.withLock({ isCut }) {
                close(client)
                continue
            }
            var startup: [UInt8] = []
            if let accepted = lock.withLock({ acceptedStartup }) {
                guard let message = Self.readMessage(client) else {
                    close(client)
                    continue
                }
                if let refused = Self.startupParameters(message).first(where: { !accepted.contains($0) && $0 != "user" && $0 != "database" }) {
                    var fields: [UInt8] = []
                    for (code, text) in [("S", "FATAL"), ("V", "FATAL"), ("C", "08P01"), ("M", "unsupported startup parameter: \(refused)")] {
                        fields += Array(code.utf8) + Array(text.utf8) + [0]
                    }
                    fields.append(0)
                    let reply = [UInt8(ascii: "E")] + withUnsafeBytes(of: UInt32(fields.count + 4).bigEndian, Array.init) + fields
                    _ = reply.withUnsafeBytes { Self.send(client, $0.baseAddress, $0.count) }
                    close(client)
                    continue
                }
                startup = message
            }
            let server = connectToTarget()
            guard server >= 0 else {
                close(client)
                continue
            }
            if !startup.isEmpty { _ = startup.withUnsafeBytes { Self.send(server, $0.baseAddress, $0.count) } }
            lock.withLock { sockets += [client, server] }
            let pair = Pair()
            for (from, to, upstream) in [(client, server, true), (server, client, false)] {
                let thread = Thread { [self] in
                    pump(from: from, to: to, upstream: upstream)
                    // The second pump to end closes both sockets.
                    if pair.end() {
                        lock.withLock { sockets.removeAll { $0 == client || $0 == server } }
                        close(client)
                        close(server)
                    }
                }
                thread.start()
            }
        }
    }

    /// The two directions of one relayed connection.
    private final class Pair: @unchecked Sendable {
        private let lock = NSLock()
        private var running = 2

        /// Ends one direction; `true` for the last.
        func end() -> Bool {
            lock.withLock {
                running -= 1
                return running == 0
            }
        }
    }

    /// A message without a type byte (a startup message: its length, then its body), read whole; `nil` if the client
    /// closed first.
    private static func readMessage(_ fd: Int32) -> [UInt8]? {
        func read(count: Int) -> [UInt8]? {
            var bytes = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let got = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress.map { $0 + done }, count - done) }
                if got <= 0 { return nil }
                done += got
            }
            return bytes
        }
        guard let header = read(count: 4) else { return nil }
        let length = Int(header.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        guard length >= 8, length < 1 << 16, let body = read(count: length - 4) else { return nil }
        return header + body
    }

    /// The parameter names of a startup message (after its length and protocol version, name and value pairs).
    private static func startupParameters(_ message: [UInt8]) -> [String] {
        let strings = message.dropFirst(8).split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        return stride(from: 0, to: strings.count - 1, by: 2).map { strings[$0] }.filter { !$0.isEmpty }
    }

    private func connectToTarget() -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = LoopbackListener.address(target.host, port: target.port)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            return -1
        }
        return fd
    }

    private func pump(from: Int32, to: Int32, upstream: Bool) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            while lock.withLock({ isPaused && !isCut }) { usleep(10_000) }
            if upstream {
                let due = lock.withLock {
                    forwarded += count
                    guard let limit = cutAfter, forwarded >= limit else { return false }
                    cutAfter = nil
                    return true
                }
                if due {
                    cut()
                    break
                }
            }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { Self.send(to, $0.baseAddress.map { $0 + sent }, count - sent) }
                if written <= 0 { break }
                sent += written
            }
            if sent < count { break }
        }
        shutdown(from, Int32(SHUT_RDWR))
        shutdown(to, Int32(SHUT_RDWR))
    }
}

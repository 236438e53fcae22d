import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP server on 127.0.0.1 that accepts connections and never answers: a client waits on it for as long as a test
/// needs to look at the client process.
public final class SilentServer: @unchecked Sendable {
    /// The port it listens on.
    public let port: Int
    private let socket: Int32
    private let accepted = NSLock()
    private var connections: [Int32] = []

    /// Starts listening on a free port.
    public init() throws {
        let (fd, port) = try LoopbackListener.listen(backlog: 8)
        self.port = port
        socket = fd
        let thread = Thread { [self] in
            while true {
                let connection = accept(fd, nil, nil)
                if connection < 0 { return }
                accepted.withLock { connections.append(connection) }
            }
        }
        thread.start()
    }

    /// Stops listening and drops the connections.
    public func stop() {
        shutdown(socket, Int32(SHUT_RDWR))
        close(socket)
        accepted.withLock {
            for connection in connections { close(connection) }
            connections = []
        }
    }
}

/// A listening TCP socket on 127.0.0.1, on a free port, for the tests' servers.
enum LoopbackListener {
    /// The socket and its port.
    static func listen(backlog: Int32) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SilentServerError(description: "socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, backlog) == 0 else {
            close(fd)
            throw SilentServerError(description: "bind or listen failed")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}

/// Why a silent server could not start.
public struct SilentServerError: Error, CustomStringConvertible {
    public var description: String
}

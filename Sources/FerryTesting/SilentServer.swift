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

/// Why a silent server could not start.
public struct SilentServerError: Error, CustomStringConvertible {
    public var description: String
}

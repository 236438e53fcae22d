import FerryCore
import Synchronization
import Testing

@Suite struct PartsTests {
    /// Every element mapped once, in order, whatever the parts: more parts than fit, one part, an empty array.
    @Test(arguments: [(0, 4), (10, 4), (1000, 1), (1000, 3), (1001, 4), (5000, 64)])
    func mapsEveryElementInOrder(count: Int, parts: Int) async throws {
        let elements = Array(0..<count)
        let calls = Mutex(0)
        let mapped = try await Parts.map(elements, parts: parts, minimumPart: 100) { value in
            calls.withLock { $0 += 1 }
            return value * 3
        }
        #expect(mapped == elements.map { $0 * 3 })
        #expect(calls.withLock { $0 } == count)
    }

    struct Refused: Error, Equatable { let value: Int }

    /// An element whose transform throws fails the whole map with that error.
    @Test func anErrorInAnyPartIsThrown() async throws {
        await #expect(throws: Refused(value: 777)) {
            _ = try await Parts.map(Array(0..<1000), parts: 4, minimumPart: 100) { value in
                if value == 777 { throw Refused(value: value) }
                return value
            }
        }
    }
}

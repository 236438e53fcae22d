import Dispatch
import FerryCore
import Synchronization
import Testing

/// A pool makes a value only when none is spare, and no two threads ever hold the same value.
@Suite struct ReusePoolTests {
    final class Counter: @unchecked Sendable {
        var uses = 0
    }

    @Test func aValueGivenBackIsTakenAgainBeforeAnotherIsMade() throws {
        let pool = ReusePool<Counter>()
        var made = 0
        let first = pool.take {
            made += 1; return Counter()
        }
        pool.give(first)
        let again = pool.take {
            made += 1; return Counter()
        }
        #expect(again === first && made == 1)
        let second = pool.take {
            made += 1; return Counter()
        }
        #expect(second !== first && made == 2)
        struct Refused: Error {}
        #expect(throws: Refused.self) { try pool.take { throw Refused() } }
    }

    @Test func threadsNeverShareAValue() {
        let pool = ReusePool<Counter>()
        let made = Atomic<Int>(0)
        let held = Mutex<Set<ObjectIdentifier>>([])
        let clash = Atomic<Bool>(false)
        DispatchQueue.concurrentPerform(iterations: 2000) { _ in
            let counter = pool.take {
                made.add(1, ordering: .relaxed)
                return Counter()
            }
            let fresh = held.withLock { $0.insert(ObjectIdentifier(counter)).inserted }
            if !fresh { clash.store(true, ordering: .relaxed) }
            counter.uses += 1
            held.withLock { _ = $0.remove(ObjectIdentifier(counter)) }
            pool.give(counter)
        }
        let clashed = clash.load(ordering: .relaxed)
        #expect(!clashed)
        // No more values than threads ran at once (a few), however many uses.
        let count = made.load(ordering: .relaxed)
        #expect(count <= 64)
    }
}

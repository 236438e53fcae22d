import FerryCore
import Foundation
import Synchronization
import Testing

@Suite struct BackgroundReleaseTests {
    /// Counts its instances' deinits, and takes a while to free, like a batch of decoded records.
    final class Spent: Sendable {
        let freed: Counter
        init(freed: Counter) { self.freed = freed }
        deinit {
            Thread.sleep(forTimeInterval: 0.001)
            freed.value.add(1, ordering: .relaxed)
        }
    }

    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    @Test("every value handed over is freed, and never more than the limit wait")
    func boundedBacklog() async throws {
        let release = BackgroundRelease(limit: 3)
        let freed = Counter()
        var most = 0
        for _ in 0..<200 {
            release.release(Spent(freed: freed))
            most = max(most, release.backlog)
        }
        #expect(most <= 3)
        #expect(most >= 1, "nothing was handed to the background thread")
        let deadline = Date().addingTimeInterval(10)
        while freed.value.load(ordering: .relaxed) < 200 && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(freed.value.load(ordering: .relaxed) == 200)
        #expect(release.backlog == 0)
    }

    @Test("with a limit of zero the caller frees every value itself")
    func zeroLimitFreesInline() {
        let release = BackgroundRelease(limit: 0)
        let freed = Counter()
        for _ in 0..<5 {
            release.release(Spent(freed: freed))
            #expect(release.backlog == 0)
        }
        #expect(freed.value.load(ordering: .relaxed) == 5)
    }
}

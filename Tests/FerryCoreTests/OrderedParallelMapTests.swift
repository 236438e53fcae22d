import FerryCore
import Synchronization
import Testing

@Suite struct OrderedParallelMapTests {
    struct Stop: Error {}

    @Test(arguments: [1, 2, 4])
    func returnsResultsInInputOrder(workers: Int) throws {
        var next = 0
        var results: [Int] = []
        try OrderedParallelMap.run(
            workers: workers,
            produce: { () -> Int? in
                defer { next += 1 }
                return next < 500 ? next : nil
            },
            transform: { value in
                // Uneven work, so later items often finish first.
                var spin = 0
                for index in 0..<((500 - value) * 50) { spin &+= index }
                return value * 2 + (spin == -1 ? 1 : 0)
            },
            consume: { results.append($0) })
        #expect(results == (0..<500).map { $0 * 2 })
    }

    @Test func keepsAtMostTheWindowInFlight() throws {
        let inFlight = Mutex((current: 0, peak: 0))
        var next = 0
        try OrderedParallelMap.run(
            workers: 3, window: 4,
            produce: { () -> Int? in
                defer { next += 1 }
                guard next < 200 else { return nil }
                inFlight.withLock { state in
                    state.current += 1
                    state.peak = max(state.peak, state.current)
                }
                return next
            },
            transform: { $0 },
            consume: { _ in inFlight.withLock { $0.current -= 1 } })
        #expect(inFlight.withLock { $0.peak } <= 4)
    }

    @Test func stopsAtTheFirstConsumerError() {
        var consumed = 0
        var next = 0
        #expect(throws: Stop.self) {
            try OrderedParallelMap.run(
                workers: 2,
                produce: { () -> Int? in
                    defer { next += 1 }
                    return next < 1000 ? next : nil
                },
                transform: { $0 },
                consume: { value in
                    if value == 10 { throw Stop() }
                    consumed += 1
                })
        }
        #expect(consumed == 10)
        #expect(next < 1000)
    }

    @Test func pipelineDrainsOnDemand() throws {
        var results: [String] = []
        let pipeline = OrderedPipeline<Int, String>(workers: 2, transform: { "\($0)" }, consume: { results.append($0) })
        for value in 0..<50 { try pipeline.submit(value) }
        try pipeline.drain()
        #expect(results == (0..<50).map { "\($0)" })
        try pipeline.submit(99)
        try pipeline.drain()
        #expect(results.last == "99")
        pipeline.cancel()
    }
}

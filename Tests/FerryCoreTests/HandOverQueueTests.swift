import FerryCore
import Foundation
import Synchronization
import Testing

@Suite struct HandOverQueueTests {
    struct Broken: Error, Equatable {}

    /// Items of two producers all reach the consumer, each producer's in its order, and the queue ends when both do.
    @Test func everyItemOfEveryProducerArrivesInItsOrder() throws {
        let queue = HandOverQueue<(Int, Int)>(depth: 3, producers: 2)
        for producer in 0..<2 {
            Thread {
                do {
                    for index in 0..<100 { try queue.push((producer, index)) }
                    queue.finish(nil)
                } catch {
                    queue.finish(error)
                }
            }.start()
        }
        var seen: [[Int]] = [[], []]
        while let (producer, index) = try queue.pop() { seen[producer].append(index) }
        #expect(seen == [Array(0..<100), Array(0..<100)])
    }

    /// A producer's failure reaches the consumer after the items handed over before it, and stops the other producer
    /// at its next push, which is no failure of its own.
    @Test func aFailureComesAfterTheItemsBeforeItAndStopsTheOtherProducer() throws {
        let queue = HandOverQueue<Int>(depth: 2, producers: 2)
        let stopped = Mutex(false)
        Thread {
            do {
                while true { try queue.push(0) }
            } catch {
                stopped.withLock { $0 = error is HandOverQueue<Int>.Stopped }
                queue.finish(error)
            }
        }.start()
        Thread {
            try? queue.push(1)
            queue.finish(Broken())
        }.start()
        var taken: [Int] = []
        #expect(throws: Broken()) {
            while let item = try queue.pop() { taken.append(item) }
        }
        #expect(taken.contains(1) && stopped.withLock { $0 }, "\(taken)")
    }

    /// A consumer that cancels stops a producer blocked on a full queue.
    @Test func cancellingStopsABlockedProducer() {
        let queue = HandOverQueue<Int>(depth: 1, producers: 1)
        let ended = Mutex<(any Error)?>(nil)
        Thread {
            do {
                for index in 0..<10 { try queue.push(index) }
                queue.finish(nil)
            } catch {
                ended.withLock { $0 = error }
                queue.finish(error)
            }
        }.start()
        queue.cancel()
        queue.waitUntilFinished()
        #expect(ended.withLock { $0 } is HandOverQueue<Int>.Stopped)
        #expect(queue.count == 0)
    }
}

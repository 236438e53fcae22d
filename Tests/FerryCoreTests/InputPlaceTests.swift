import FerryCore
import Testing

@Suite struct InputPlaceTests {
    @Test func packsIntoANumberThatRisesThroughTheReading() throws {
        let places = [
            InputPlace(file: 0, line: 1), InputPlace(file: 0, line: 1, item: 1), InputPlace(file: 0, line: 1, item: 200),
            InputPlace(file: 0, line: 2), InputPlace(file: 1, line: 1), InputPlace(file: InputPlace.maxFile, line: InputPlace.maxLine),
        ]
        let numbers = try places.map { try #require($0.packed) }
        #expect(numbers == numbers.sorted())
        #expect(Set(numbers).count == numbers.count)
        #expect(numbers.map(InputPlace.init(packed:)) == places)
        // A ledger's sequence holds 62 bits.
        #expect(try #require(numbers.last) < Int64(1) << 62)
    }

    @Test func itemsPastTheLastShareItsNumberAndTooLargePlacesDoNotPack() {
        #expect(InputPlace(file: 0, line: 5, item: 1000).packed == InputPlace(file: 0, line: 5, item: InputPlace.maxItem).packed)
        #expect(InputPlace(file: 0, line: InputPlace.maxLine + 1).packed == nil)
        #expect(InputPlace(file: InputPlace.maxFile + 1, line: 1).packed == nil)
        #expect(InputPlace(file: -1, line: 1).packed == nil)
    }
}

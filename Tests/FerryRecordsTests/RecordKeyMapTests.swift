import FerryRecords
import Testing

@Suite struct RecordKeyMapTests {
    @Test func behavesLikeADictionary() {
        var map = RecordKeyMap<Int32>()
        var reference: [RecordKey: Int32] = [:]
        for index in 0..<5000 {
            let key = RecordKey(zoneName: "Z\(index % 3)", ownerName: "o", recordName: "r\(index % 4000)")
            #expect(map.updateValue(Int32(index), forKey: key) == reference.updateValue(Int32(index), forKey: key))
            map[key, default: 0] += 1
            reference[key, default: 0] += 1
        }
        #expect(map.count == reference.count)
        for (key, value) in reference { #expect(map[key] == value) }
        let missing = RecordKey(zoneName: "Z9", ownerName: "o", recordName: "r1")
        #expect(map[missing] == nil)
        map[missing] = 7
        #expect(map[missing] == 7 && map.count == reference.count + 1)
    }
}

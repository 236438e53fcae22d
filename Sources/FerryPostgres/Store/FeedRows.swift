/// What a page of the change feed's rows were taken into, how many rows came, and the change sequence of the last one
/// taken.
struct FeedRows<Content: Sendable>: Sendable {
    var content: Content
    var count = 0
    var lastSequence: Int64?
}

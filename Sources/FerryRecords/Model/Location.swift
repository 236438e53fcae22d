/// A geographic location, as CloudKit's `LOCATION` type (a `CLLocation`) holds it.
public struct Location: Sendable, Hashable {
    /// Degrees north, −90…90.
    public var latitude: Double
    /// Degrees east, −180…180.
    public var longitude: Double
    /// The radius of uncertainty of the position, in meters.
    public var horizontalAccuracy: Double?
    /// The uncertainty of the altitude, in meters.
    public var verticalAccuracy: Double?
    /// Meters above sea level.
    public var altitude: Double?
    /// Meters per second.
    public var speed: Double?
    /// Degrees clockwise from true north.
    public var course: Double?
    /// When the location was measured, in milliseconds since 1970.
    public var timestamp: Int64?

    /// Creates a location.
    public init(
        latitude: Double, longitude: Double, horizontalAccuracy: Double? = nil, verticalAccuracy: Double? = nil,
        altitude: Double? = nil, speed: Double? = nil, course: Double? = nil, timestamp: Int64? = nil
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.altitude = altitude
        self.speed = speed
        self.course = course
        self.timestamp = timestamp
    }
}

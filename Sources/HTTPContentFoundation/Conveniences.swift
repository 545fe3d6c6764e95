import Foundation
import HTTPContent

// Foundation conveniences over the Foundation-free core: `URL`s where the core takes `String`s,
// `Data` where it takes `[UInt8]`, and `Date`s read from HTTP date headers.

extension Request {
    /// A request for a `URL`.
    ///
    ///     let request = Request("GET", url: URL(string: "https://example.org/")!)
    public init(_ method: String = "GET", url: URL, headers: Headers = Headers(), body: RequestBody? = nil,
                options: RequestOptions = RequestOptions()) {
        self.init(method, url.absoluteString, headers: headers, body: body, options: options)
    }

    /// The request's URL as a `URL`, or nil if it does not parse as one.
    public var foundationURL: URL? { URL(string: url) }
}

extension RequestBody {
    /// `data` sent as it is, with an optional Content-Type (the caller's header wins).
    public static func data(_ data: Data, contentType: String? = nil) -> RequestBody {
        .bytes([UInt8](data), contentType: contentType)
    }
}

extension ResponseHead {
    /// The final URL (after redirects) as a `URL`.
    public var foundationURL: URL? { URL(string: url) }

    /// The `Date` header as a `Date` (nil when absent or not an HTTP date).
    public var date: Date? { headers["date"].flatMap(HTTPDate.parse) }

    /// The `Last-Modified` header as a `Date`.
    public var lastModified: Date? { headers["last-modified"].flatMap(HTTPDate.parse) }

    /// The `Expires` header as a `Date` (an invalid value such as "0" means "already expired"
    /// to caches; it is nil here).
    public var expires: Date? { headers["expires"].flatMap(HTTPDate.parse) }

    /// When `Retry-After` says to retry: an HTTP date, or a number of seconds counted from
    /// `now` (default: the response's `Date`, else the current time).
    public func retryAfter(now: Date? = nil) -> Date? {
        guard let value = headers["retry-after"]?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let seconds = Int(value), seconds >= 0 {
            return (now ?? date ?? Date()).addingTimeInterval(TimeInterval(seconds))
        }
        return HTTPDate.parse(value)
    }
}

extension Response where Content == ByteBuffer {
    /// The body as `Data` (a copy).
    public var data: Data { content.withUnsafeBytes { Data($0) } }
}

extension ByteBuffer {
    /// The bytes as `Data` (a copy).
    public var data: Data { withUnsafeBytes { Data($0) } }
}

extension Client {
    /// GET `url` into `handler`.
    ///
    ///     let response = try client.get(URL(string: "https://example.org/data.json")!, handler: JSON())
    public func get<Handler: ContentHandler>(_ url: URL, headers: Headers = Headers(),
                                             handler: Handler) throws(HTTPContentError) -> Response<Handler.Content> {
        try send(Request("GET", url: url, headers: headers), handler: handler)
    }

    /// GET `url` without blocking a thread (see `send(_:handler:progress:) async`).
    public func get<Handler: ContentHandler>(_ url: URL, headers: Headers = Headers(),
                                             handler: Handler) async throws(HTTPContentError) -> Response<Handler.Content> {
        try await send(Request("GET", url: url, headers: headers), handler: handler)
    }

    /// The body of `url` as `Data`, or the error of a status outside 200–299 (or `acceptance`).
    public func data(from url: URL, headers: Headers = Headers(), maxSize: Int? = nil,
                     acceptance: Acceptance = Acceptance()) async throws(HTTPContentError) -> (Data, ResponseHead) {
        let r = try await send(Request("GET", url: url, headers: headers),
                               handler: Bytes(maxSize: maxSize, acceptance: acceptance))
        return (r.data, r.head)
    }
}

/// HTTP dates (RFC 9110 §5.6.7): IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), and the
/// obsolete RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`)
/// forms a recipient must still read. Parsed by hand: no locale, no formatter state.
public enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The date `text` names, or nil if it is not an HTTP date.
    public static func parse(_ text: String) -> Date? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        var day: Int?, month: Int?, year: Int?, time: String?
        if parts.count == 6, parts[5] == "GMT" {            // IMF-fixdate
            (day, month, year, time) = (Int(parts[1]), monthIndex(parts[2]), Int(parts[3]), parts[4])
        } else if parts.count == 4, parts[3] == "GMT" {     // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
            let dmy = parts[1].split(separator: "-").map(String.init)
            guard dmy.count == 3, let yy = Int(dmy[2]) else { return nil }
            // Two-digit years: 70-99 are 19xx, 00-69 are 20xx.
            let full = dmy[2].count == 2 ? (yy < 70 ? 2000 + yy : 1900 + yy) : yy
            (day, month, year, time) = (Int(dmy[0]), monthIndex(dmy[1]), full, parts[2])
        } else if parts.count == 5 {                         // asctime: Sun Nov  6 08:49:37 1994
            (day, month, year, time) = (Int(parts[2]), monthIndex(parts[1]), Int(parts[4]), parts[3])
        } else {
            return nil
        }
        guard let day, let month, let year, let time, (1...31).contains(day), year >= 1 else { return nil }
        let hms = time.split(separator: ":").map { Int($0) }
        guard hms.count == 3, let h = hms[0], let m = hms[1], let s = hms[2],
              (0...23).contains(h), (0...59).contains(m), (0...60).contains(s) else { return nil }
        let days = daysFromCivil(year: year, month: month + 1, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86400 + h * 3600 + m * 60 + s))
    }

    /// `date` as an IMF-fixdate, the form HTTP senders use.
    public static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let rest = seconds - days * 86400
        let (y, m, d) = civilFromDays(days)
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(weekday), \(two(d)) \(months[m - 1].capitalized) \(y) \(two(rest / 3600)):\(two(rest / 60 % 60)):\(two(rest % 60)) GMT"
    }

    private static func monthIndex(_ name: String) -> Int? { months.firstIndex(of: name.lowercased()) }

    // Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian, day 0 = 1970-01-01).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}

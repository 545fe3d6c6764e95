#if canImport(Glibc)
import Glibc
#endif

/// A `format` checker: applied to strings when formats are asserted (`assertFormat`, or a
/// meta-schema with the format-assertion vocabulary); other types always pass.
public struct SchemaFormat: Sendable {
    public let name: String
    public let check: @Sendable (String) -> Bool

    public init(name: String, check: @escaping @Sendable (String) -> Bool) {
        self.name = name
        self.check = check
    }

    /// The formats the validator knows: date-time, date, time, duration, email, idn-email,
    /// hostname, idn-hostname (IDNA2008 by libidn2), ipv4, ipv6, uri, uri-reference, iri,
    /// iri-reference, uri-template, uuid, regex, json-pointer, relative-json-pointer.
    public static let builtin: [String: SchemaFormat] = {
        var out: [String: SchemaFormat] = [:]
        func add(_ name: String, _ check: @escaping @Sendable (String) -> Bool) { out[name] = SchemaFormat(name: name, check: check) }
        add("date-time") { SchemaDates.dateTime(Array($0.utf8)) != nil }
        add("date") { SchemaDates.date(Array($0.utf8)[...]) != nil }
        add("time") { SchemaDates.time(Array($0.utf8)[...]) != nil }
        add("duration") { SchemaFormatChecks.duration($0) }
        add("email") { SchemaFormatChecks.email($0) }
        add("idn-email") { SchemaIDNA.idnEmail($0) }
        add("hostname") { SchemaIDNA.hostname($0) }
        add("idn-hostname") { SchemaIDNA.idnHostname($0) }
        add("ipv4") { SchemaFormatChecks.ipv4($0) }
        add("ipv6") { SchemaFormatChecks.ipv6($0) }
        add("uri") { SchemaFormatChecks.uri($0, requireScheme: true) }
        add("uri-reference") { SchemaFormatChecks.uri($0, requireScheme: false) }
        add("iri") { SchemaTemplateFormats.iri($0, requireScheme: true) }
        add("iri-reference") { SchemaTemplateFormats.iri($0, requireScheme: false) }
        add("uuid") { SchemaFormatChecks.uuid($0) }
        add("regex") { (try? SchemaRegex($0)) != nil }
        add("json-pointer") { SchemaFormatChecks.jsonPointer($0) }
        add("relative-json-pointer") { SchemaTemplateFormats.relativeJSONPointer($0) }
        add("uri-template") { SchemaTemplateFormats.uriTemplate($0) }
        return out
    }()
}

/// RFC 3339 dates and times, parsed into their fields.
public struct SchemaDateTime: Sendable, Equatable {
    public var year, month, day: Int
    public var hour, minute, second: Int
    /// Nanoseconds (fraction digits beyond nine are dropped).
    public var nanosecond: Int
    /// Offset from UTC in minutes (0 for "Z").
    public var offsetMinutes: Int
}

enum SchemaDates {
    private static func digits(_ s: ArraySlice<UInt8>, _ at: Int, _ n: Int) -> Int? {
        guard at + n <= s.endIndex else { return nil }
        var v = 0
        for i in at..<(at + n) {
            let c = s[i]
            guard c >= 0x30, c <= 0x39 else { return nil }
            v = v * 10 + Int(c - 0x30)
        }
        return v
    }

    static func daysIn(_ month: Int, _ year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// full-date: YYYY-MM-DD.
    static func date(_ s: ArraySlice<UInt8>) -> (Int, Int, Int)? {
        let b = s.startIndex
        guard s.count == 10, s[b + 4] == 0x2D, s[b + 7] == 0x2D,
              let y = digits(s, b, 4), let m = digits(s, b + 5, 2), let d = digits(s, b + 8, 2),
              (1...12).contains(m), d >= 1, d <= daysIn(m, y) else { return nil }
        return (y, m, d)
    }

    /// full-time: HH:MM:SS[.frac](Z|±HH:MM); a leap second only at 23:59:60 UTC.
    static func time(_ s: ArraySlice<UInt8>) -> (Int, Int, Int, Int, Int)? {
        var i = s.startIndex
        guard let h = digits(s, i, 2), i + 8 <= s.endIndex, s[i + 2] == 0x3A, s[i + 5] == 0x3A,
              let mi = digits(s, i + 3, 2), let se = digits(s, i + 6, 2),
              h <= 23, mi <= 59, se <= 60 else { return nil }
        i += 8
        var nanos = 0
        if i < s.endIndex, s[i] == 0x2E {
            i += 1
            var n = 0
            var scale = 100_000_000
            while i < s.endIndex, s[i] >= 0x30, s[i] <= 0x39 {
                nanos += Int(s[i] - 0x30) * scale
                scale /= 10
                n += 1
                i += 1
            }
            guard n > 0 else { return nil }
        }
        guard i < s.endIndex else { return nil }
        var offset = 0
        switch s[i] {
        case 0x5A, 0x7A: i += 1
        case 0x2B, 0x2D:
            let sign = s[i] == 0x2D ? -1 : 1
            guard let oh = digits(s, i + 1, 2), i + 6 <= s.endIndex, s[i + 3] == 0x3A,
                  let om = digits(s, i + 4, 2), oh <= 23, om <= 59 else { return nil }
            offset = sign * (oh * 60 + om)
            i += 6
        default: return nil
        }
        guard i == s.endIndex else { return nil }
        if se == 60 {
            // The leap second is at 23:59:60 in UTC.
            var utc = h * 60 + mi - offset
            utc = ((utc % 1440) + 1440) % 1440
            guard utc == 23 * 60 + 59 else { return nil }
        }
        return (h, mi, se, nanos, offset)
    }

    static func dateTime(_ s: [UInt8]) -> SchemaDateTime? {
        guard s.count >= 20, s[10] == 0x54 || s[10] == 0x74,
              let (y, m, d) = date(s[0..<10]), let (h, mi, se, ns, off) = time(s[11...]) else { return nil }
        return SchemaDateTime(year: y, month: m, day: d, hour: h, minute: mi, second: se, nanosecond: ns, offsetMinutes: off)
    }
}

enum SchemaFormatChecks {
    static func duration(_ s: String) -> Bool {
        var it = Array(s.utf8)[...]
        guard it.first == 0x50 else { return false }
        it = it.dropFirst()
        if it.isEmpty { return false }
        func component(_ allowed: [UInt8]) -> [UInt8]? {
            var units: [UInt8] = []
            var order = 0
            while let c = it.first, c != 0x54 {
                var n = 0
                while let d = it.first, d >= 0x30, d <= 0x39 { it = it.dropFirst(); n += 1 }
                guard n > 0, let u = it.first, let pos = allowed.firstIndex(of: u), pos >= order else { return nil }
                order = pos + 1
                units.append(u)
                it = it.dropFirst()
            }
            return units
        }
        guard let dateUnits = component(Array("YMWD".utf8)) else { return false }
        if dateUnits.contains(0x57) && dateUnits.count > 1 { return false }
        // RFC 3339 appendix A: the units present are consecutive (years and days need months;
        // hours and seconds need minutes).
        func consecutive(_ units: [UInt8], _ order: String) -> Bool {
            units.isEmpty || order.contains(String(decoding: units, as: UTF8.self))
        }
        if !dateUnits.contains(0x57) && !consecutive(dateUnits, "YMD") { return false }
        var timeUnits: [UInt8] = []
        if it.first == 0x54 {
            it = it.dropFirst()
            guard let t = component(Array("HMS".utf8)), !t.isEmpty, it.isEmpty, consecutive(t, "HMS") else { return false }
            timeUnits = t
            if dateUnits.contains(0x57) { return false }
        }
        return it.isEmpty && !(dateUnits.isEmpty && timeUnits.isEmpty)
    }

    /// RFC 1123 host names, A-labels checked by IDNA2008 (`SchemaIDNA`).
    static func hostname(_ s: String) -> Bool { SchemaIDNA.hostname(s) }

    static func ipv4(_ s: String) -> Bool {
        let parts = Array(s.utf8).split(separator: 0x2E, omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        for p in parts {
            guard !p.isEmpty, p.count <= 3, p.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
            if p.count > 1 && p.first == 0x30 { return false }
            guard let v = Int(String(decoding: p, as: UTF8.self)), v <= 255 else { return false }
        }
        return true
    }

    static func ipv6(_ s: String) -> Bool {
        guard s.utf8.allSatisfy({ $0 < 0x80 }), !s.contains("%") else { return false }
        var buf = [UInt8](repeating: 0, count: 16)
        return inet_pton(AF_INET6, s, &buf) == 1
    }

    static func email(_ s: String) -> Bool {
        guard let at = s.lastIndex(of: "@") else { return false }
        let local = s[..<at], domain = s[s.index(after: at)...]
        guard !local.isEmpty, !domain.isEmpty else { return false }
        if local.hasPrefix("\"") {
            guard local.count >= 2, local.hasSuffix("\"") else { return false }
        } else {
            guard local.first != ".", local.last != ".", !local.contains("..") else { return false }
            let allowed = Set("!#$%&'*+-/=?^_`{|}~.".utf8)
            for c in local.utf8 {
                let ok = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || allowed.contains(c) || c >= 0x80
                if !ok { return false }
            }
        }
        if domain.hasPrefix("[") && domain.hasSuffix("]") {
            let inner = String(domain.dropFirst().dropLast())
            if inner.hasPrefix("IPv6:") { return ipv6(String(inner.dropFirst(5))) }
            return ipv4(inner)
        }
        return hostname(String(domain))
    }

    static func uuid(_ s: String) -> Bool {
        let b = Array(s.utf8)
        guard b.count == 36 else { return false }
        for (i, c) in b.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                if c != 0x2D { return false }
            } else if !((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)) {
                return false
            }
        }
        return true
    }

    static func jsonPointer(_ s: String) -> Bool {
        if s.isEmpty { return true }
        let b = Array(s.utf8)
        guard b[0] == 0x2F else { return false }
        for i in 0..<b.count where b[i] == 0x7E {
            guard i + 1 < b.count, b[i + 1] == 0x30 || b[i + 1] == 0x31 else { return false }
        }
        return true
    }

    /// RFC 3986 URI (`requireScheme`) or URI reference: the characters it allows, valid
    /// percent-escapes, a well-formed scheme, and brackets only around an IP literal host.
    static func uri(_ s: String, requireScheme: Bool) -> Bool {
        let b = Array(s.utf8)
        let unreserved = Set("-._~".utf8), subDelims = Set("!$&'()*+,;=".utf8), gen = Set(":/?#[]@".utf8)
        var i = 0
        var hashes = 0
        while i < b.count {
            let c = b[i]
            if c == 0x25 {
                guard i + 2 < b.count, isHex(b[i + 1]), isHex(b[i + 2]) else { return false }
                i += 3
                continue
            }
            let alnum = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
            guard alnum || unreserved.contains(c) || subDelims.contains(c) || gen.contains(c) else { return false }
            if c == 0x23 { hashes += 1 }
            i += 1
        }
        guard hashes <= 1 else { return false }
        let parts = SchemaURI.parse(s)
        if requireScheme {
            guard let scheme = parts.scheme, !scheme.isEmpty else { return false }
            guard s.utf8.first.map({ ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) }) == true else { return false }
        } else if parts.scheme == nil, let colon = parts.path.firstIndex(of: ":"),
                  !parts.path[..<colon].contains("/") {
            return false   // a relative path's first segment cannot hold ":"
        }
        if let authority = parts.authority {
            var host = Substring(authority)
            // authority = [ userinfo "@" ] host [ ":" port ]: one "@" at most, no brackets in
            // the userinfo, and a port of digits only.
            if let at = host.firstIndex(of: "@") {
                let userinfo = host[..<at]
                if userinfo.contains("[") || userinfo.contains("]") { return false }
                host = host[host.index(after: at)...]
                if host.contains("@") { return false }
            }
            if host.hasPrefix("[") {
                guard let close = host.firstIndex(of: "]") else { return false }
                let literal = String(host[host.index(after: host.startIndex)..<close])
                // IPvFuture: "v" is case-insensitive, as ABNF strings are.
                guard ipv6(literal) || literal.hasPrefix("v") || literal.hasPrefix("V") else { return false }
                let rest = host[host.index(after: close)...]
                guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isNumber)) else { return false }
            } else if host.contains("[") || host.contains("]") {
                return false
            } else if let colon = host.firstIndex(of: ":") {
                guard host[host.index(after: colon)...].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
            }
        } else if s.contains("[") || s.contains("]") {
            return false
        }
        return true
    }

    private static func isHex(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
    }
}

/// Parsing and writing RFC 3339 date-times (the built-in date-time transformer's two directions).
public enum SchemaDateTimeText {
    /// The fields of an RFC 3339 date-time, or nil.
    public static func parse(_ text: String) -> SchemaDateTime? { SchemaDates.dateTime(Array(text.utf8)) }

    /// RFC 3339 text with its offset ("Z" for 0), fraction only when non-zero.
    public static func format(_ d: SchemaDateTime) -> String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        var year = String(d.year)
        while year.count < 4 { year = "0" + year }
        var s = "\(year)-\(two(d.month))-\(two(d.day))T\(two(d.hour)):\(two(d.minute)):\(two(d.second))"
        if d.nanosecond > 0 {
            var frac = String(d.nanosecond)
            while frac.count < 9 { frac = "0" + frac }
            while frac.hasSuffix("0") { frac.removeLast() }
            s += "." + frac
        }
        if d.offsetMinutes == 0 { return s + "Z" }
        let m = abs(d.offsetMinutes)
        return s + (d.offsetMinutes < 0 ? "-" : "+") + two(m / 60) + ":" + two(m % 60)
    }
}

extension SchemaDateTime {
    /// Seconds since 1970-01-01T00:00:00Z (a leap second counts as the second before it).
    public var epochSeconds: Int64 {
        // Days from civil (Howard Hinnant's algorithm).
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = Int64((month + 9) % 12)
        let doy = (153 * mp + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146097 + doe - 719468
        let secs = Int64(hour * 3600 + minute * 60 + min(second, 59))
        return days * 86400 + secs - Int64(offsetMinutes) * 60
    }
}

import CPlist
#if canImport(Glibc)
import Glibc
#endif

/// Parses a whole property list, XML or binary (sniffed from its first bytes), with libplist,
/// after `PlistScan` has checked its depth and size, and converts libplist's tree to a
/// `PlistValue`.
///
/// libplist 2.2's XML parser is its own (not libxml2): it reads no DTD, resolves no external
/// entity and never opens a file or a socket; a document declaring entities is refused.
/// It reports no error position, so a malformed document's error has no offset unless the
/// scan found the fault.
public enum PlistParser {
    /// - Throws: `.decode` for a malformed document or one nested deeper than `maxDepth`,
    ///   `.tooLarge` beyond `maxSize` bytes or `maxObjects` values, `.invalidArgument` for
    ///   options out of range.
    public static func parse(_ bytes: UnsafeRawBufferPointer, options: PlistOptions = PlistOptions()) throws(HTTPContentError) -> PlistValue {
        try options.validate()
        guard bytes.count <= options.maxSize else {
            throw HTTPContentError(.tooLarge, "plist of \(bytes.count) bytes exceeds the limit of \(options.maxSize) bytes")
        }
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            throw HTTPContentError(.decode, "the body is empty, which is not a property list", offset: 0)
        }
        let format = PlistFormat.sniff(bytes)
        var root: plist_t?
        let chars = base.assumingMemoryBound(to: CChar.self)
        switch format {
        case .binary:
            try PlistScan.binary(bytes, options)
            plist_from_bin(chars, UInt32(bytes.count), &root)
        case .xml:
            try PlistScan.xml(bytes, options)
            plist_from_xml(chars, UInt32(bytes.count), &root)
        }
        guard let root else {
            throw HTTPContentError(.decode, format == .binary
                ? "malformed binary plist (libplist could not read it)"
                : "malformed XML plist (libplist could not read it; entity and DTD declarations are refused)")
        }
        defer { plist_free(root) }
        var converter = PlistConverter(options: options)
        defer { converter.close() }
        return try converter.convert(root, level: 0)
    }

    public static func parse(_ bytes: [UInt8], options: PlistOptions = PlistOptions()) throws(HTTPContentError) -> PlistValue {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(HTTPContentError) -> PlistValue in try parse(raw, options: options) }
        }
        return try result.get()
    }
}

/// libplist tree → PlistValue. libplist 2.2's getters lose two things its tree keeps: the sign
/// of an integer above Int64.max (stored as 64 bits plus a length of 8 for signed, 16 for
/// unsigned) and dates beyond ±68 years from 2001 (the getter returns int32 seconds of a
/// double). Both are recovered exactly by comparing with a probe node
/// (`plist_compare_node_value` compares the full stored value), or for dates the probe cannot
/// match, by reading the double from the node's own binary encoding.
struct PlistConverter {
    let options: PlistOptions
    private var objects = 0
    private var intProbe: plist_t?

    init(options: PlistOptions) { self.options = options }

    mutating func close() {
        if let intProbe { plist_free(intProbe) }
        intProbe = nil
    }

    private mutating func count() throws(HTTPContentError) {
        objects += 1
        if objects > options.maxObjects {
            throw HTTPContentError(.tooLarge, "plist holds more than \(options.maxObjects) values")
        }
    }

    mutating func convert(_ node: plist_t, level: Int) throws(HTTPContentError) -> PlistValue {
        try count()
        switch plist_get_node_type(node) {
        case PLIST_DICT:
            guard level < options.maxDepth else { throw tooDeep() }
            var members: [PlistMember] = []
            members.reserveCapacity(Int(plist_dict_get_size(node)))
            var iter: plist_dict_iter?
            plist_dict_new_iter(node, &iter)
            defer { free(iter) }
            while true {
                var key: UnsafeMutablePointer<CChar>?
                var item: plist_t?
                plist_dict_next_item(node, iter, &key, &item)
                guard let item else { free(key); break }
                let name = key.map { String(cString: $0) } ?? ""
                free(key)
                try count()
                members.append(PlistMember(key: name, value: try convert(item, level: level + 1)))
            }
            return .dictionary(members)
        case PLIST_ARRAY:
            guard level < options.maxDepth else { throw tooDeep() }
            let n = plist_array_get_size(node)
            var items: [PlistValue] = []
            items.reserveCapacity(Int(n))
            // An iterator, not plist_array_get_item: libplist 2.2 indexes only arrays built by
            // plist_array_append_item, so on a binary plist's arrays get_item walks the list
            // from the start each time (24,242 elements: 2.1 s by index, under 1 ms iterated).
            var iter: plist_array_iter?
            plist_array_new_iter(node, &iter)
            defer { free(iter) }
            while true {
                var item: plist_t?
                plist_array_next_item(node, iter, &item)
                guard let item else { break }
                items.append(try convert(item, level: level + 1))
            }
            return .array(items)
        case PLIST_STRING, PLIST_KEY:
            var len: UInt64 = 0
            guard let p = plist_get_string_ptr(node, &len) else { return .string("") }
            return .string(String(decoding: UnsafeRawBufferPointer(start: p, count: Int(len)), as: UTF8.self))
        case PLIST_UINT:
            var u: UInt64 = 0
            plist_get_uint_val(node, &u)
            guard u > UInt64(Int64.max) else { return .int(Int64(u)) }
            // Stored signed (a negative integer) when it equals a node made by plist_new_uint,
            // which libplist marks as signed; else unsigned.
            if intProbe == nil { intProbe = plist_new_uint(u) } else { plist_set_uint_val(intProbe, u) }
            return plist_compare_node_value(node, intProbe) != 0 ? .int(Int64(bitPattern: u)) : .uint(u)
        case PLIST_REAL:
            var d = 0.0
            plist_get_real_val(node, &d)
            return .real(d)
        case PLIST_BOOLEAN:
            var b: UInt8 = 0
            plist_get_bool_val(node, &b)
            return .bool(b != 0)
        case PLIST_DATE:
            return .date(PlistDate(secondsSince2001: try date(node)))
        case PLIST_DATA:
            var len: UInt64 = 0
            guard let p = plist_get_data_ptr(node, &len), len > 0 else { return .data([]) }
            return .data(Array(UnsafeRawBufferPointer(start: p, count: Int(len))))
        case PLIST_UID:
            var u: UInt64 = 0
            plist_get_uid_val(node, &u)
            return .uid(u)
        default:
            throw HTTPContentError(.decode, "plist holds a value of an unknown type")
        }
    }

    private func tooDeep() -> HTTPContentError {
        HTTPContentError(.decode, "plist nesting exceeds the maximum depth of \(options.maxDepth)")
    }

    /// The date's seconds since 2001, exactly as stored.
    private mutating func date(_ node: plist_t) throws(HTTPContentError) -> Double {
        var sec: Int32 = 0
        var usec: Int32 = 0
        plist_get_date_val(node, &sec, &usec)
        // libplist stores sec + usec / 1e6; a non-negative whole second count within int32
        // range reads back exactly when a probe made from it compares equal.
        if sec != Int32.min, sec >= 0 {
            // A fresh probe each time: libplist 2.2's plist_set_date_val stores a struct timeval
            // where its date nodes hold a double (length 16, not 8), so a probe set that way
            // never compares equal and every date fell to the slow exact path (plist_to_bin per
            // date: over half of a binary plist's decoding time).
            guard let probe = plist_new_date(sec, usec) else { return try PlistConverter.storedDouble(node) }
            defer { plist_free(probe) }
            let candidate = Double(sec) + Double(usec) / 1_000_000
            if plist_compare_node_value(node, probe) != 0, PlistConverter.probeFormulaHolds {
                return candidate
            }
        }
        return try PlistConverter.storedDouble(node)
    }

    /// Whether libplist computes a date from (sec, usec) as `Double(sec) + Double(usec) / 1e6`,
    /// checked once against its own binary encoding (else every date takes the exact path).
    private static let probeFormulaHolds: Bool = {
        for (sec, usec) in [(Int32(5), Int32(123_457)), (Int32(641_000_000), Int32(999_999)), (Int32(1), Int32(100_000))] {
            guard let node = plist_new_date(sec, usec) else { return false }
            defer { plist_free(node) }
            guard let stored = try? storedDouble(node), stored == Double(sec) + Double(usec) / 1_000_000 else { return false }
        }
        return true
    }()

    /// A date node's double, read from the node's binary encoding (`3` marker + 8 bytes).
    static func storedDouble(_ node: plist_t) throws(HTTPContentError) -> Double {
        var out: UnsafeMutablePointer<CChar>?
        var len: UInt32 = 0
        plist_to_bin(node, &out, &len)
        guard let out else { throw HTTPContentError(.decode, "libplist could not encode a date") }
        defer { plist_to_bin_free(out) }
        let bytes = UnsafeRawBufferPointer(start: out, count: Int(len))
        guard bytes.count >= 17, bytes[8] == 0x33 else { throw HTTPContentError(.decode, "libplist encoded a date unexpectedly") }
        var bits: UInt64 = 0
        for i in 9..<17 { bits = bits << 8 | UInt64(bytes[i]) }
        return Double(bitPattern: bits)
    }
}

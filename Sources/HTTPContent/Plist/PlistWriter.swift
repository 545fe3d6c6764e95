import CPlist
#if canImport(Glibc)
import Glibc
#endif

extension PlistValue {
    /// The value as a property list document in `format`, written by libplist.
    ///
    /// XML dates are written in whole seconds (the format has no fraction; earlier seconds
    /// are kept, as `plistlib` does). Integers of both signs, dates far from 2001 and
    /// fractional binary dates are exact.
    /// - Throws: `.invalidArgument` for a string or key holding NUL (libplist's strings are C
    ///   strings), a UID above 2^32-1 (libplist 2.2's limit), control characters in XML text (which libplist would drop, and `plistlib`
    ///   refuses), or nesting deeper than `PlistOptions.depthCeiling`.
    public func serialized(format: PlistFormat) throws(HTTPContentError) -> [UInt8] {
        let writer = PlistWriter(format: format)
        let root = try writer.node(self, level: 0)
        defer { plist_free(root) }
        var out: UnsafeMutablePointer<CChar>?
        var len: UInt32 = 0
        switch format {
        case .xml: plist_to_xml(root, &out, &len)
        case .binary: plist_to_bin(root, &out, &len)
        }
        guard let out else { throw HTTPContentError(.invalidArgument, "libplist could not write the property list") }
        defer { if format == .xml { plist_to_xml_free(out) } else { plist_to_bin_free(out) } }
        let bytes = Array(UnsafeRawBufferPointer(start: out, count: Int(len)))
        return format == .xml && writer.earlyDates.value ? PlistWriter.padYears(bytes) : bytes
    }
}

/// PlistValue → libplist tree.
struct PlistWriter {
    let format: PlistFormat
    /// Set when a date before the year 1000 is written: libplist writes its year with fewer
    /// than four digits ("1-01-01T..."), which neither Apple's format nor plistlib accepts.
    final class Flag { var value = false }
    let earlyDates = Flag()

    init(format: PlistFormat) { self.format = format }

    /// Zero-pads every `<date>` year to four digits.
    static func padYears(_ xml: [UInt8]) -> [UInt8] {
        let tag = Array("<date>".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(xml.count + 64)
        var i = 0
        while i < xml.count {
            if xml[i] == tag[0], i + tag.count <= xml.count, Array(xml[i..<i + tag.count]) == tag {
                out += tag
                i += tag.count
                var j = i
                while j < xml.count, xml[j] >= 0x30, xml[j] <= 0x39 { j += 1 }
                if j < xml.count, xml[j] == UInt8(ascii: "-"), j - i < 4 {
                    out += [UInt8](repeating: 0x30, count: 4 - (j - i))
                }
                continue
            }
            out.append(xml[i])
            i += 1
        }
        return out
    }

    func node(_ value: PlistValue, level: Int) throws(HTTPContentError) -> plist_t {
        switch value {
        case .dictionary(let members):
            try depth(level)
            let dict = plist_new_dict()!
            for m in members {
                let child: plist_t
                do {
                    try text(m.key, what: "a dictionary key")
                    child = try node(m.value, level: level + 1)
                } catch {
                    plist_free(dict)
                    throw error
                }
                plist_dict_set_item(dict, m.key, child)
            }
            return dict
        case .array(let items):
            try depth(level)
            let array = plist_new_array()!
            for item in items {
                do {
                    plist_array_append_item(array, try node(item, level: level + 1))
                } catch {
                    plist_free(array)
                    throw error
                }
            }
            return array
        case .string(let s):
            try text(s, what: "a string")
            return plist_new_string(s)
        case .int(let i): return plist_new_uint(UInt64(bitPattern: i))
        case .uint(let u):
            guard u > UInt64(Int64.max) else { return plist_new_uint(u) }
            // plist_new_uint marks its value signed; an unsigned one comes from a 16-byte int.
            return try single([0x14] + [UInt8](repeating: 0, count: 8) + bigEndian(u))
        case .real(let d): return plist_new_real(d)
        case .bool(let b): return plist_new_bool(b ? 1 : 0)
        case .date(let date):
            var seconds = date.secondsSince2001
            if seconds < -31_000_000_000 { earlyDates.value = true }
            if format == .xml {
                seconds = seconds.rounded(.down)
                if seconds >= Double(Int32.min) + 1, seconds <= Double(Int32.max) {
                    return plist_new_date(Int32(seconds), 0)
                }
            }
            guard seconds.isFinite else { throw HTTPContentError(.invalidArgument, "a plist date must be finite") }
            return try single([0x33] + bigEndian(seconds.bitPattern))
        case .data(let bytes):
            return bytes.withUnsafeBufferPointer { buf in
                buf.baseAddress.map { $0.withMemoryRebound(to: CChar.self, capacity: buf.count) { plist_new_data($0, UInt64(buf.count)) } }
                    ?? plist_new_data(nil, 0)
            }
        case .uid(let u):
            // libplist 2.2's plist_new_uid makes a node its binary writer cannot write; a UID
            // read from a binary plist writes fine. It reads no UID wider than 32 bits.
            guard u <= UInt64(UInt32.max) else {
                throw HTTPContentError(.invalidArgument, "UID \(u) is above 2^32-1, the largest libplist 2.2 reads or writes")
            }
            let size = u <= 0xFF ? 1 : u <= 0xFFFF ? 2 : 4
            return try single([0x80 | UInt8(size - 1)] + bigEndian(u).suffix(size))
        }
    }

    private func depth(_ level: Int) throws(HTTPContentError) {
        if level >= PlistOptions.depthCeiling {
            throw HTTPContentError(.invalidArgument, "plist nesting exceeds \(PlistOptions.depthCeiling) levels")
        }
    }

    private func text(_ s: String, what: String) throws(HTTPContentError) {
        for b in s.utf8 where b < 0x20 || b == 0x7F {
            if b == 0 { throw HTTPContentError(.invalidArgument, "\(what) holds NUL, which libplist cannot write") }
            if format == .xml, b != 0x09, b != 0x0A, b != 0x0D {
                throw HTTPContentError(.invalidArgument, "\(what) holds control character \(b), which XML plists cannot carry (use data, or the binary format)")
            }
        }
    }

    private func bigEndian(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * $0)) } }

    /// A node libplist's constructors cannot make, read from a one-object binary plist.
    private func single(_ object: [UInt8]) throws(HTTPContentError) -> plist_t {
        var doc: [UInt8] = Array("bplist00".utf8) + object + [8]
        doc += [0, 0, 0, 0, 0, 0, 1, 1] + bigEndian(1) + bigEndian(0) + bigEndian(UInt64(8 + object.count))
        var node: plist_t?
        doc.withUnsafeBufferPointer { buf in
            buf.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buf.count) { plist_from_bin($0, UInt32(buf.count), &node) }
        }
        guard let node else { throw HTTPContentError(.invalidArgument, "libplist could not make a value") }
        return node
    }
}

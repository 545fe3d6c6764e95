/// A value that can be sent as a JSON body. The library's JSON generator (yajl_gen) conforms its
/// values to this; `FormValue` conforms with the minimal generator below, which is enough for
/// request bodies until then.
public protocol JSONBodyEncodable {
    /// The value as JSON text, in UTF-8.
    /// - Throws: `.invalidArgument` for what JSON cannot represent (NaN, infinities, non-UTF-8 text).
    func encodedJSON() throws(HTTPContentError) -> [UInt8]
}

extension FormValue: JSONBodyEncodable {
    /// RFC 8259 JSON: dictionaries keep their order (and repeated keys), `.bytes` must be UTF-8
    /// and become a string, non-finite doubles are refused.
    public func encodedJSON() throws(HTTPContentError) -> [UInt8] {
        var out: [UInt8] = []
        try MinimalJSON.write(self, to: &out)
        return out
    }
}

/// The minimal JSON generator behind `FormValue.encodedJSON()`.
enum MinimalJSON {
    static func write(_ value: FormValue, to out: inout [UInt8]) throws(HTTPContentError) {
        switch value {
        case .string(let s): writeString(s.utf8, to: &out)
        case .bytes(let b): writeString(try utf8(b, what: "a bytes value"), to: &out)
        case .int(let i): out += String(i).utf8
        case .double(let d):
            guard d.isFinite else {
                throw HTTPContentError(.invalidArgument, "\(d) cannot be sent as JSON (not a finite number)")
            }
            out += d.description.utf8
        case .bool(let b): out += (b ? "true" : "false").utf8
        case .null: out += "null".utf8
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                try write(item, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .dictionary(let pairs):
            out.append(UInt8(ascii: "{"))
            for (i, pair) in pairs.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(try utf8(pair.key, what: "a key"), to: &out)
                out.append(UInt8(ascii: ":"))
                try write(pair.value, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func utf8(_ bytes: [UInt8], what: String) throws(HTTPContentError) -> String.UTF8View {
        guard let s = String(validating: bytes, as: UTF8.self) else {
            throw HTTPContentError(.invalidArgument, "\(what) is not valid UTF-8 and cannot be sent as JSON")
        }
        return s.utf8
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    private static func writeString(_ utf8: String.UTF8View, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for b in utf8 {
            switch b {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20, 0x7F:
                out += Array("\\u00".utf8) + [hex[Int(b >> 4)], hex[Int(b & 0xF)]]
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

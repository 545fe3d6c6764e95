import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

/// An `hc_json`: one JSON value plus what has been lent out from it (child handles, strings),
/// cached so every borrowed pointer lives as long as this node. Children are made on demand.
final class JSONNode {
    /// Changed only by `reset`, between two borrowed uses.
    /// Changed only with `typeCode` beside it (no observer: `exchange` swaps it in place).
    @exclusivity(unchecked) private(set) var value: JSONValue
    /// `value`'s hc_json_type, kept beside it: reading it needs no copy of the value (a copy
    /// retains and releases a container's storage; path streaming asks once per item).
    @exclusivity(unchecked) private(set) var typeCode: Int32
    /// True for roots from hc_json_parse, which the caller frees; borrowed nodes ignore hc_json_free.
    let ownedByCaller: Bool
    /// Child handles by member/element index, allocated on first use.
    @exclusivity(unchecked) private var children: [JSONNode?] = []
    /// Member names copied for C (freed with the node), and those lent from a parsed tape.
    @exclusivity(unchecked) private var keys: [Int: (UnsafeMutablePointer<CChar>, Int)] = [:]
    @exclusivity(unchecked) private var lentKeys: [Int: (UnsafeMutablePointer<CChar>, Int)] = [:]
    @exclusivity(unchecked) private var text: (UnsafeMutablePointer<CChar>, Int)?
    /// This string's (or number text's) bytes on the parsed document's tape, which the parent
    /// node's value keeps alive: lent to C instead of a copy.
    @exclusivity(unchecked) var lent: UnsafeRawBufferPointer?
    /// Whether anything was lent or cached since the last `reset` (most items are read without).
    @exclusivity(unchecked) private var touched = false

    init(_ value: JSONValue, ownedByCaller: Bool = false) {
        self.value = value
        typeCode = JSONNode.typeCode(value)
        self.ownedByCaller = ownedByCaller
    }

    deinit { dropLent() }

    @inline(__always)
    static func typeCode(_ value: JSONValue) -> Int32 {
        switch value {
        case .null: return 0
        case .bool: return 1
        case .int: return 2
        case .double: return 3
        case .number: return 4
        case .string: return 5
        case .array: return 6
        case .object: return 7
        }
    }

    /// Frees what was lent out of the current value.
    private func dropLent() {
        if !keys.isEmpty { for (p, _) in keys.values { free(p) } }
        if let (p, _) = text { free(p) }
        // Child nodes may nest as deep as the caller walked: release them iteratively. They are
        // moved out of `children` first, so the work list holds the last references.
        if !children.isEmpty { JSONNodeTeardown.release(&children) }
    }

    /// Makes a borrowed node stand for another value, dropping everything lent from the last one
    /// (path streaming lends one node per item for the duration of a call, and reuses it).
    func reset(to value: JSONValue) {
        self.value = value
        typeCode = JSONNode.typeCode(value)
        forgetLent()
    }

    /// Swaps `other` in as this borrowed node's value (path streaming lends each item so for one
    /// call, then swaps it back out), dropping what was lent from the value it held: no copy, no
    /// retain or release of the value's storage.
    /// Inlined into the item callback, which calls it twice per item.
    @inline(__always)
    func exchange(_ other: inout JSONValue) {
        swap(&value, &other)
        typeCode = JSONNode.typeCode(value)
        lent = nil
        if touched { forgetLent() }
    }

    /// Drops what was lent or cached from the previous value.
    private func forgetLent() {
        lent = nil
        guard touched else { return }
        touched = false
        dropLent()
        if !keys.isEmpty { keys = [:] }
        if !lentKeys.isEmpty { lentKeys = [:] }
        text = nil
    }

    /// The child at a member or element index (the caller checked the range).
    func child(_ index: Int) -> JSONNode? {
        touched = true
        if index >= 0, index < children.count, let c = children[index] { return c }
        let v: JSONValue
        switch value {
        case .array(let a) where index >= 0 && index < a.count: v = a[index]
        case .object(let o) where index >= 0 && index < o.count: v = o[index].value
        default: return nil
        }
        if children.isEmpty { children = Array(repeating: nil, count: value.count) }
        let node = JSONNode(v)
        // A parsed document's strings are lent from its tape, which this node's value keeps.
        switch value {
        case .array(let a): node.lent = a.lendableText(at: index)
        case .object(let o): node.lent = o.lendableText(at: index)
        default: break
        }
        children[index] = node
        return node
    }

    /// The node at a key path, one cached step at a time.
    func descend(_ components: [String]) -> JSONNode? {
        var node = self
        for c in components {
            guard let i = node.value.childIndex(c), let next = node.child(i) else { return nil }
            node = next
        }
        return node
    }

    func key(_ index: Int) -> (UnsafeMutablePointer<CChar>, Int)? {
        touched = true
        if let k = keys[index] ?? lentKeys[index] { return k }
        guard case .object(let o) = value, index >= 0, index < o.count else { return nil }
        if let lent = o.lendableKey(at: index), let base = lent.baseAddress {
            let k = (UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: CChar.self)), lent.count)
            lentKeys[index] = k
            return k
        }
        guard let copy = cCopy(o[index].key) else { return nil }
        keys[index] = copy
        return copy
    }

    /// The string's bytes, or a number's text, NUL-terminated (the length tells embedded NULs).
    func textCopy() -> (UnsafeMutablePointer<CChar>, Int)? {
        touched = true
        if let text { return text }
        if let lent, let base = lent.baseAddress {
            return (UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: CChar.self)), lent.count)
        }
        let s: String
        switch value {
        case .string(let str): s = str
        default:
            guard let n = value.numberText else { return nil }
            s = n
        }
        text = cCopy(s)
        return text
    }
}

/// A malloc'd NUL-terminated copy of the UTF-8 bytes and their count (NULs kept).
func cCopy(_ s: String) -> (UnsafeMutablePointer<CChar>, Int)? {
    var s = s
    return s.withUTF8 { utf8 in
        guard let p = malloc(utf8.count + 1)?.assumingMemoryBound(to: CChar.self) else { return nil }
        if let base = utf8.baseAddress { memcpy(p, base, utf8.count) }
        p[utf8.count] = 0
        return (p, utf8.count)
    }
}

/// Releases child nodes without recursion (the pattern of JSONTeardown in the core).
final class JSONNodeTeardown {
    private var work: [JSONNode] = []
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Takes the nodes out of `nodes` (left empty): were the caller to keep references, each
    /// node would die only when the caller's array does, inside the parent's deinit, one stack
    /// frame deeper per level.
    static func release(_ nodes: inout [JSONNode?]) {
        if let active = pthread_getspecific(key) {
            Unmanaged<JSONNodeTeardown>.fromOpaque(active).takeUnretainedValue().work
                .append(contentsOf: nodes.compactMap { $0 })
            nodes = []
            return
        }
        let me = JSONNodeTeardown()
        me.work = nodes.compactMap { $0 }
        nodes = []
        pthread_setspecific(key, Unmanaged.passUnretained(me).toOpaque())
        while let node = me.work.popLast() { _ = consume node }
        pthread_setspecific(key, nil)
    }
}

// MARK: - Value handles

/// `hc_json_kind` values.
let HC_JSON_INVALID: Int32 = -1

@_cdecl("hc_json_free")
public func hc_json_free(_ value: OpaquePointer?) {
    guard let node = borrowHandle(value, as: JSONNode.self), node.ownedByCaller else { return }
    releaseHandle(value, as: JSONNode.self)
}

@_cdecl("hc_json_type")
public func hc_json_type(_ value: OpaquePointer?) -> Int32 {
    guard let node = borrowHandle(value, as: JSONNode.self) else { return HC_JSON_INVALID }
    return node.typeCode
}

private func borrowed(_ node: JSONNode) -> OpaquePointer {
    OpaquePointer(Unmanaged.passUnretained(node).toOpaque())
}

@_cdecl("hc_json_get")
public func hc_json_get(_ value: OpaquePointer?, _ keyPath: UnsafePointer<CChar>?) -> OpaquePointer? {
    guard let node = borrowHandle(value, as: JSONNode.self) else { nullArgument("value"); return nil }
    guard let path = string(keyPath) else { nullArgument("key_path"); return nil }
    guard let found = node.descend(JSONValue.keyPathComponents(path)) else {
        fail(.invalidArgument, "hc_json_get: no value at \"\(path)\"")
        return nil
    }
    return borrowed(found)
}

@_cdecl("hc_json_get_path")
public func hc_json_get_path(_ value: OpaquePointer?, _ components: UnsafePointer<UnsafePointer<CChar>?>?,
                             _ count: Int) -> OpaquePointer? {
    guard let node = borrowHandle(value, as: JSONNode.self) else { nullArgument("value"); return nil }
    guard count == 0 || components != nil, count >= 0 else { nullArgument("components"); return nil }
    var parts: [String] = []
    for i in 0..<count {
        guard let c = string(components?[i]) else { nullArgument("components[\(i)]"); return nil }
        parts.append(c)
    }
    guard let found = node.descend(parts) else {
        fail(.invalidArgument, "hc_json_get_path: no value at [\(parts.joined(separator: ", "))]")
        return nil
    }
    return borrowed(found)
}

@_cdecl("hc_json_array_length")
public func hc_json_array_length(_ value: OpaquePointer?) -> Int {
    guard let node = borrowHandle(value, as: JSONNode.self), case .array(let a) = node.value else { return 0 }
    return a.count
}

@_cdecl("hc_json_array_at")
public func hc_json_array_at(_ value: OpaquePointer?, _ index: Int) -> OpaquePointer? {
    guard let node = borrowHandle(value, as: JSONNode.self) else { nullArgument("value"); return nil }
    guard case .array(let a) = node.value else { fail(.invalidArgument, "hc_json_array_at: not an array"); return nil }
    guard index >= 0, index < a.count, let child = node.child(index) else {
        fail(.invalidArgument, "hc_json_array_at: index \(index) out of range (\(a.count) elements)")
        return nil
    }
    return borrowed(child)
}

@_cdecl("hc_json_object_size")
public func hc_json_object_size(_ value: OpaquePointer?) -> Int {
    guard let node = borrowHandle(value, as: JSONNode.self), case .object(let o) = node.value else { return 0 }
    return o.count
}

@_cdecl("hc_json_object_member_at")
public func hc_json_object_member_at(_ value: OpaquePointer?, _ index: Int,
                                     _ key: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                     _ keyLen: UnsafeMutablePointer<Int>?) -> OpaquePointer? {
    guard let node = borrowHandle(value, as: JSONNode.self) else { nullArgument("value"); return nil }
    guard case .object(let o) = node.value else { fail(.invalidArgument, "hc_json_object_member_at: not an object"); return nil }
    guard index >= 0, index < o.count, let child = node.child(index), let k = node.key(index) else {
        fail(.invalidArgument, "hc_json_object_member_at: index \(index) out of range (\(o.count) members)")
        return nil
    }
    key?.pointee = UnsafePointer(k.0)
    keyLen?.pointee = k.1
    return borrowed(child)
}

@_cdecl("hc_json_string")
public func hc_json_string(_ value: OpaquePointer?, _ data: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                           _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let node = borrowHandle(value, as: JSONNode.self) else { return nullArgument("value") }
    guard let data, let len else { return nullArgument("data or len") }
    guard case .string = node.value, let t = node.textCopy() else {
        return fail(.invalidArgument, "hc_json_string: the value is not a string")
    }
    data.pointee = UnsafePointer(t.0)
    len.pointee = t.1
    return HC_OK
}

@_cdecl("hc_json_number_text")
public func hc_json_number_text(_ value: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let node = borrowHandle(value, as: JSONNode.self) else { nullArgument("value"); return nil }
    guard node.value.numberText != nil, let t = node.textCopy() else {
        fail(.invalidArgument, "hc_json_number_text: the value is not a number")
        return nil
    }
    return UnsafePointer(t.0)
}

@_cdecl("hc_json_int64")
public func hc_json_int64(_ value: OpaquePointer?, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    guard let node = borrowHandle(value, as: JSONNode.self) else { return nullArgument("value") }
    guard let out else { return nullArgument("out") }
    guard let i = node.value.int64Value else {
        return fail(.invalidArgument, "hc_json_int64: the value is not an integer that fits in 64 bits")
    }
    out.pointee = i
    return HC_OK
}

@_cdecl("hc_json_double")
public func hc_json_double(_ value: OpaquePointer?, _ out: UnsafeMutablePointer<Double>?) -> Int32 {
    guard let node = borrowHandle(value, as: JSONNode.self) else { return nullArgument("value") }
    guard let out else { return nullArgument("out") }
    guard let d = node.value.doubleValue else { return fail(.invalidArgument, "hc_json_double: the value is not a number") }
    out.pointee = d
    return HC_OK
}

@_cdecl("hc_json_bool")
public func hc_json_bool(_ value: OpaquePointer?, _ out: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let node = borrowHandle(value, as: JSONNode.self) else { return nullArgument("value") }
    guard let out else { return nullArgument("out") }
    guard let b = node.value.boolValue else { return fail(.invalidArgument, "hc_json_bool: the value is not a boolean") }
    out.pointee = b ? 1 : 0
    return HC_OK
}

@_cdecl("hc_json_serialize")
public func hc_json_serialize(_ value: OpaquePointer?, _ pretty: Int32,
                              _ data: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?,
                              _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let data, let len else { return nullArgument("data or len") }
    data.pointee = nil
    len.pointee = 0
    guard let node = borrowHandle(value, as: JSONNode.self) else { return nullArgument("value") }
    do {
        let bytes = try node.value.serialized(pretty: pretty != 0)
        guard let p = mallocCopy(bytes) else {
            return fail(.invalidArgument, "hc_json_serialize: out of memory")
        }
        data.pointee = p
        len.pointee = bytes.count
        return HC_OK
    } catch {
        return fail(error)
    }
}

import HTTPContent

/// What one format's handlers take beyond what every handler has (a schema, a record path, a
/// digest, an allocator). Each format declares its own subclass in its ABI file and hands an
/// instance to its specs; its setters find it with `HandlerSpec.settings(_:)`, and a handler
/// without it refuses the setter (or ignores it, where the header says so). A new format adds a
/// subclass in its own file, never a field to `HandlerSpec`.
class HandlerSettings {}

/// An `hc_handler`: how to handle a body, not the handling itself. Every send asks it for a
/// fresh Swift handler, so one hc_handler can serve many requests, in sequence or at once.
final class HandlerSpec {
    /// Makes the Swift handler for one transfer from the settings made here.
    let factory: (HandlerSpec) -> any ContentHandler
    // Set by the caller between sends, read once per send: no dynamic exclusivity checks.
    @exclusivity(unchecked) var acceptance: Acceptance
    /// Largest body accepted, for handlers that take a limit (0: none).
    @exclusivity(unchecked) var maxSize = 0
    /// The format's own settings (nil: it has none), read by `factory` at each send.
    let settings: HandlerSettings?

    init(acceptance: Acceptance = Acceptance(), settings: HandlerSettings? = nil,
         factory: @escaping (HandlerSpec) -> any ContentHandler) {
        self.acceptance = acceptance
        self.settings = settings
        self.factory = factory
    }

    /// The format's settings if they are of type `type`.
    func settings<Settings: HandlerSettings>(_ type: Settings.Type) -> Settings? { settings as? Settings }

    var limit: Int? { maxSize > 0 ? maxSize : nil }

    func make() -> any ContentHandler { factory(self) }
}

/// A bytes handler's settings: the caller's memory for bodies of known length, as
/// `Accumulator.storage` (made when the allocator is set, not for every request).
final class BytesSettings: HandlerSettings {
    @exclusivity(unchecked) private(set) var storage: ((Int) -> (UnsafeMutableRawPointer, () -> Void)?)?
    /// The allocator's minimum size: shorter bodies never reach `storage`.
    @exclusivity(unchecked) private(set) var storageMinimumSize = 0

    func setAllocator(minSize: Int, allocate: AllocCallback?, release: ReleaseCallback?,
                      userdata: UnsafeMutableRawPointer?) {
        guard let allocate else {
            storage = nil
            storageMinimumSize = 0
            return
        }
        storageMinimumSize = minSize
        storage = { size in
            guard size >= minSize, let memory = allocate(userdata, size) else { return nil }
            return (memory, { release?(userdata, memory) })
        }
    }
}

@_cdecl("hc_handler_discard_new")
public func hc_handler_discard_new() -> OpaquePointer? {
    retainHandle(HandlerSpec { Discard(acceptance: $0.acceptance) })
}

@_cdecl("hc_handler_bytes_new")
public func hc_handler_bytes_new(_ maxSize: Int) -> OpaquePointer? {
    let memory = BytesSettings()
    let spec = HandlerSpec(settings: memory) { spec in
        let bytes = Bytes(maxSize: spec.limit, acceptance: spec.acceptance)
        bytes.storage = memory.storage
        bytes.storageMinimumSize = memory.storageMinimumSize
        return bytes
    }
    spec.maxSize = maxSize
    return retainHandle(spec)
}

@_cdecl("hc_handler_free")
public func hc_handler_free(_ handler: OpaquePointer?) {
    releaseHandle(handler, as: HandlerSpec.self)
}

@_cdecl("hc_handler_accept_any_status")
public func hc_handler_accept_any_status(_ handler: OpaquePointer?) -> Int32 {
    guard let spec = borrowHandle(handler, as: HandlerSpec.self) else { return nullArgument("handler") }
    spec.acceptance.statusCodes = []
    return HC_OK
}

@_cdecl("hc_handler_accept_status")
public func hc_handler_accept_status(_ handler: OpaquePointer?, _ low: Int32, _ high: Int32) -> Int32 {
    guard let spec = borrowHandle(handler, as: HandlerSpec.self) else { return nullArgument("handler") }
    guard low <= high, low >= 100, high <= 999 else {
        return fail(.invalidArgument, "hc_handler_accept_status: \(low)-\(high) is not a range of status codes")
    }
    spec.acceptance.statusCodes.append(Int(low)...Int(high))
    return HC_OK
}

@_cdecl("hc_handler_accept_any_type")
public func hc_handler_accept_any_type(_ handler: OpaquePointer?) -> Int32 {
    guard let spec = borrowHandle(handler, as: HandlerSpec.self) else { return nullArgument("handler") }
    spec.acceptance.contentTypes = []
    return HC_OK
}

@_cdecl("hc_handler_accept_type")
public func hc_handler_accept_type(_ handler: OpaquePointer?, _ range: UnsafePointer<CChar>?) -> Int32 {
    guard let spec = borrowHandle(handler, as: HandlerSpec.self) else { return nullArgument("handler") }
    guard let text = string(range) else { return nullArgument("media_range") }
    guard let parsed = MediaRange(parsing: text) else {
        return fail(.invalidArgument, "hc_handler_accept_type: \"\(text)\" is not a media range")
    }
    spec.acceptance.contentTypes.append(parsed)
    return HC_OK
}

@_cdecl("hc_handler_set_max_size")
public func hc_handler_set_max_size(_ handler: OpaquePointer?, _ maxSize: Int) -> Int32 {
    guard let spec = borrowHandle(handler, as: HandlerSpec.self) else { return nullArgument("handler") }
    spec.maxSize = maxSize
    return HC_OK
}

@_cdecl("hc_defaults_accept_status")
public func hc_defaults_accept_status(_ pairs: UnsafePointer<Int32>?, _ count: Int) -> Int32 {
    guard pairs != nil || count == 0 else { return nullArgument("low_high_pairs") }
    var ranges: [ClosedRange<Int>] = []
    for i in 0..<count {
        let low = Int(pairs![2 * i]), high = Int(pairs![2 * i + 1])
        guard low <= high, low >= 100, high <= 999 else {
            return fail(.invalidArgument, "hc_defaults_accept_status: \(low)-\(high) is not a range of status codes")
        }
        ranges.append(low...high)
    }
    Acceptance.setDefaultStatusCodes(ranges)
    return HC_OK
}

@_cdecl("hc_defaults_reset")
public func hc_defaults_reset() {
    Acceptance.resetDefaults()
    ServerMessage.keyPaths = ServerMessage.defaultKeyPaths
}

public typealias AllocCallback = @convention(c) (UnsafeMutableRawPointer?, Int) -> UnsafeMutableRawPointer?
public typealias ReleaseCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void

@_cdecl("hc_handler_bytes_set_allocator")
public func hc_handler_bytes_set_allocator(_ handler: OpaquePointer?, _ minSize: Int, _ allocate: AllocCallback?,
                                           _ release: ReleaseCallback?, _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    guard let spec = borrowHandle(handler, as: HandlerSpec.self) else { return nullArgument("handler") }
    // Other handlers ignore it (the header: "for a bytes handler").
    spec.settings(BytesSettings.self)?.setAllocator(minSize: minSize, allocate: allocate, release: release,
                                                    userdata: userdata)
    return HC_OK
}

@_cdecl("hc_defaults_accept_types")
public func hc_defaults_accept_types(_ ranges: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int) -> Int32 {
    guard ranges != nil || count == 0 else { return nullArgument("media_ranges") }
    var parsed: [MediaRange] = []
    for i in 0..<count {
        guard let text = string(ranges![i]), let range = MediaRange(parsing: text) else {
            return fail(.invalidArgument, "hc_defaults_accept_types: entry \(i) is not a media range")
        }
        parsed.append(range)
    }
    Acceptance.setDefaultContentTypes(parsed)
    return HC_OK
}

@_cdecl("hc_defaults_server_message_paths")
public func hc_defaults_server_message_paths(_ paths: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int) -> Int32 {
    guard paths != nil || count == 0 else { return nullArgument("key_paths") }
    var list: [String] = []
    for i in 0..<count {
        guard let text = string(paths![i]) else { return fail(.invalidArgument, "hc_defaults_server_message_paths: entry \(i) is NULL") }
        list.append(text)
    }
    ServerMessage.keyPaths = count == 0 ? ServerMessage.defaultKeyPaths : list
    return HC_OK
}

@_cdecl("hc_handler_empty_statuses")
public func hc_handler_empty_statuses(_ handler: OpaquePointer?, _ codes: UnsafePointer<Int32>?, _ count: Int) -> Int32 {
    guard let spec = borrowHandle(handler, as: HandlerSpec.self) else { return nullArgument("handler") }
    guard codes != nil || count == 0 else { return nullArgument("codes") }
    spec.acceptance.emptyStatusCodes = Set((0..<count).map { Int(codes![$0]) })
    return HC_OK
}

@_cdecl("hc_handler_empty_methods")
public func hc_handler_empty_methods(_ handler: OpaquePointer?, _ methods: UnsafePointer<UnsafePointer<CChar>?>?,
                                     _ count: Int) -> Int32 {
    guard let spec = borrowHandle(handler, as: HandlerSpec.self) else { return nullArgument("handler") }
    guard methods != nil || count == 0 else { return nullArgument("methods") }
    var set: Set<String> = []
    for i in 0..<count {
        guard let text = string(methods![i]) else { return fail(.invalidArgument, "hc_handler_empty_methods: entry \(i) is NULL") }
        set.insert(text)
    }
    spec.acceptance.emptyMethods = set
    return HC_OK
}

/// The class that holds a copy-on-write value's fields: it can copy itself.
protocol CopyOnWriteStorage: AnyObject {
    func copy() -> Self
}

/// A value's fields in one class instance that its copies share, copied before a change while
/// shared: copying the value copies one reference. Used by the values that every request's path
/// copies (`ResponseHead`, `Acceptance`, `HTTPContentError`), where copying each field would cost
/// a reference count per field per copy.
struct CopyOnWrite<Storage: CopyOnWriteStorage> {
    private var storage: Storage

    init(_ storage: Storage) {
        self.storage = storage
    }

    /// The fields, to read.
    var value: Storage { storage }

    /// The fields, to change: copied first if another value shares them.
    var unique: Storage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            return storage
        }
    }

    /// Whether both share one instance (then they are equal without looking further).
    func isSame(as other: CopyOnWrite) -> Bool { storage === other.storage }
}

extension CopyOnWrite: Sendable where Storage: Sendable {}

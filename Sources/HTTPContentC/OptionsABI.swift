/// What every `hc_<format>_options_set` and `_get` does before and after its own switch: find
/// the options handle, read the option's number, check the value's range, fill the out
/// pointer. Each format's ABI file keeps only what its options mean.

/// Sets option `option` of the options handle `opts` to `value`.
/// - Parameters:
///   - function: the C name, for messages.
///   - checkRange: refuse values outside 0...INT32_MAX (the format checks its own otherwise).
///   - wide: the options that take any value from 0 to INT64_MAX.
///   - apply: the format's part: sets the option on the handle's box, returns a code.
/// - Returns: `HC_EINVALID_ARG` for a NULL handle, an unknown option or a value out of range,
///   else what `apply` returns.
func setOption<Box: AnyObject, Option: RawRepresentable>(
    _ opts: OpaquePointer?, _ option: Int32, _ value: Int64, _ function: String, checkRange: Bool = true,
    wide: (Option) -> Bool = { _ in false }, _ apply: (Box, Option) -> Int32
) -> Int32 where Option.RawValue == Int32 {
    guard let box = borrowHandle(opts, as: Box.self) else { return nullArgument("opts", in: function) }
    guard let which = Option(rawValue: option) else {
        return fail(.invalidArgument, "\(function): unknown option \(option)")
    }
    if checkRange {
        guard value >= 0, value <= Int64(Int32.max) || wide(which) else {
            return fail(.invalidArgument, "\(function): value \(value) out of range for option \(option)")
        }
    }
    return apply(box, which)
}

/// Reads option `option` of the options handle `opts` into `*out`.
/// - Parameters:
///   - function: the C name, for messages.
///   - read: the format's part: the option's value in the handle's box.
/// - Returns: `HC_EINVALID_ARG` for a NULL handle or `out`, or an unknown option; else `HC_OK`.
func getOption<Box: AnyObject, Option: RawRepresentable>(
    _ opts: OpaquePointer?, _ option: Int32, _ out: UnsafeMutablePointer<Int64>?, _ function: String,
    _ read: (Box, Option) -> Int64
) -> Int32 where Option.RawValue == Int32 {
    guard let box = borrowHandle(opts, as: Box.self) else { return nullArgument("opts", in: function) }
    guard let out else { return nullArgument("value", in: function) }
    guard let which = Option(rawValue: option) else {
        return fail(.invalidArgument, "\(function): unknown option \(option)")
    }
    out.pointee = read(box, which)
    return HC_OK
}

/// An on/off option as `_get` reports it.
func optionFlag(_ on: Bool) -> Int64 { on ? 1 : 0 }

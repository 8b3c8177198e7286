import CLibPQ

/// Parameters laid out the way `PQexecParams`/`PQexecPrepared` want them: parallel arrays of
/// types, value pointers, lengths and formats. `NULL` is a nil value pointer.
struct BoundParameters {
    private var types: [Oid] = []
    private var lengths: [Int32] = []
    private var formats: [Int32] = []
    /// All values back to back; text values are NUL-terminated as libpq requires.
    private var storage: [UInt8] = []
    private var offsets: [Int?] = []

    init(_ parameters: [(any PostgresEncodable)?]) {
        for parameter in parameters {
            guard let value = parameter?.postgresParameter else {
                types.append(0)
                lengths.append(0)
                formats.append(0)
                offsets.append(nil)
                continue
            }
            types.append(value.typeOID)
            lengths.append(Int32(value.bytes.count))
            formats.append(value.format.rawValue)
            offsets.append(storage.count)
            storage.append(contentsOf: value.bytes)
            if value.format == .text { storage.append(0) }
        }
        // A trailing byte keeps `storage` non-empty, so an empty binary value (`bytea ''`) still
        // gets a non-nil pointer and is not mistaken for NULL.
        storage.append(0)
    }

    var count: Int32 { Int32(types.count) }

    /// Calls `body(count, types, values, lengths, formats)` with pointers valid for its duration.
    func withPointers<R>(
        _ body: (
            Int32, UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
            UnsafePointer<Int32>?
        ) throws -> R
    ) rethrows -> R {
        try storage.withUnsafeBytes { raw in
            let base = raw.bindMemory(to: CChar.self).baseAddress
            let values: [UnsafePointer<CChar>?] = offsets.map { offset in
                offset.flatMap { offset in base.map { $0 + offset } }
            }
            return try types.withUnsafeBufferPointer { types in
                try values.withUnsafeBufferPointer { values in
                    try lengths.withUnsafeBufferPointer { lengths in
                        try formats.withUnsafeBufferPointer { formats in
                            try body(
                                count, types.baseAddress, values.baseAddress, lengths.baseAddress,
                                formats.baseAddress)
                        }
                    }
                }
            }
        }
    }
}

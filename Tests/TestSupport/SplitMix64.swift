import Foundation

/// A small, fast, reproducible random source (SplitMix64) for property-style tests: the same seed
/// gives the same cases on every run, so a failure can be replayed.
public struct SplitMix64: RandomNumberGenerator {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SplitMix64 {
    /// Text as users, clients and documents send it, for the codecs' property tests: every ASCII
    /// character (controls, quotes, slashes, backslashes) and non-ASCII of two, three and four
    /// bytes, U+2028 among them; up to `maxLength` scalars.
    public mutating func text(maxLength: Int = 30) -> String {
        let pool: [Unicode.Scalar] = (0..<0x80).compactMap(Unicode.Scalar.init) + ["é", "ß", "—", "\u{2028}", "😀", "中"]
        var text = ""
        for _ in 0..<Int.random(in: 0...maxLength, using: &self) { text.unicodeScalars.append(pool.randomElement(using: &self)!) }
        return text
    }
}

extension SplitMix64 {
    /// A date between 1970 and 2100, to the millisecond.
    public mutating func date() -> Date {
        Date(timeIntervalSince1970: Double(Int64.random(in: 0...4_102_444_800_000, using: &self)) / 1000)
    }

    /// `make`'s value half of the time, else nil.
    public mutating func maybe<T>(_ make: (inout SplitMix64) -> T) -> T? {
        Bool.random(using: &self) ? make(&self) : nil
    }
}

import BusCore
import CivilCalendar
import Foundation

extension InMemoryTable {
    /// A `like`/`ilike` pattern as SQL reads it once PostgREST's `*` became `%` (as `RestSQL`
    /// binds it): `%` any run of characters, `_` one character, `\` takes the next one literally.
    struct LikePattern {
        enum Token: Equatable {
            case anyRun, anyOne
            case literal(Unicode.Scalar)
        }

        let tokens: [Token]
        let caseInsensitive: Bool

        init(_ pattern: String, caseInsensitive: Bool) {
            self.caseInsensitive = caseInsensitive
            let text = pattern.replacingOccurrences(of: "*", with: "%")
            var tokens: [Token] = []
            var escaped = false
            for scalar in (caseInsensitive ? text.lowercased() : text).unicodeScalars {
                if escaped {
                    tokens.append(.literal(scalar))
                    escaped = false
                } else if scalar == "\\" {
                    escaped = true
                } else {
                    tokens.append(scalar == "%" ? .anyRun : scalar == "_" ? .anyOne : .literal(scalar))
                }
            }
            self.tokens = tokens
        }

        /// Whether the whole of `text` matches (greedy, going back to the last `%` on a mismatch).
        func matches(_ text: String) -> Bool {
            let scalars = Array((caseInsensitive ? text.lowercased() : text).unicodeScalars)
            var (token, scalar) = (0, 0)
            var lastRun: (token: Int, scalar: Int)?
            while scalar < scalars.count {
                if token < tokens.count, tokens[token] == .anyRun {
                    lastRun = (token, scalar)
                    token += 1
                } else if token < tokens.count, tokens[token] == .anyOne || tokens[token] == .literal(scalars[scalar]) {
                    token += 1
                    scalar += 1
                } else if let run = lastRun {
                    token = run.token + 1
                    scalar = run.scalar + 1
                    lastRun = (run.token, run.scalar + 1)
                } else {
                    return false
                }
            }
            return tokens[token...].allSatisfy { $0 == .anyRun }
        }
    }

    /// The instant a timestamp filter names, in microseconds since 1970: any form
    /// `RestTimestamp.canonical` accepts (a date alone is midnight UTC, no zone is UTC).
    enum RestInstant {
        static func microseconds(_ text: String) -> Int64? {
            guard let canonical = RestTimestamp.canonical(text) else { return nil }
            // Canonical: `YYYY-MM-DDTHH:MM[:SS[.f{1,6}]](Z|±HH[[:]MM])`.
            var cursor = Cursor(bytes: Array(canonical.utf8))
            let year = cursor.number(4, after: 0)
            let month = cursor.number(2, after: 1)
            let day = cursor.number(2, after: 1)
            let hour = cursor.number(2, after: 1)
            let minute = cursor.number(2, after: 1)
            let second = cursor.take(":") ? cursor.number(2, after: 0) : 0
            var micro: Int64 = 0
            if cursor.take(".") {
                var places = 0
                while places < 6, let digit = cursor.digit() {
                    micro = micro * 10 + digit
                    places += 1
                }
                for _ in places..<6 { micro *= 10 }
            }
            var offset: Int64 = 0
            if !cursor.take("Z") {
                let sign: Int64 = cursor.take("-") ? -1 : 1
                _ = cursor.take("+")
                let hours = cursor.number(2, after: 0)
                _ = cursor.take(":")
                offset = sign * (hours * 3600 + cursor.number(2, after: 0) * 60)
            }
            let seconds = CivilCalendar.days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offset
            return seconds * 1_000_000 + micro
        }

        struct Cursor {
            let bytes: [UInt8]
            var index = 0

            /// Skips `separators` bytes, then reads up to `count` digits (0 when none are left).
            mutating func number(_ count: Int, after separators: Int) -> Int64 {
                index += separators
                var value: Int64 = 0
                for _ in 0..<count {
                    guard let digit = digit() else { break }
                    value = value * 10 + digit
                }
                return value
            }

            mutating func digit() -> Int64? {
                guard index < bytes.count, (48...57).contains(bytes[index]) else { return nil }
                defer { index += 1 }
                return Int64(bytes[index] - 48)
            }

            mutating func take(_ character: Unicode.Scalar) -> Bool {
                guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
                index += 1
                return true
            }
        }
    }
}

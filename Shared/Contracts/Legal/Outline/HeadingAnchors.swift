/// Anchors for headings, the way readers expect from GitHub-style markdown: lower case, letters
/// and digits kept, every run of anything else one hyphen, none at either end.
/// `"7. Your Rights (GDPR & CCPA)"` becomes `"7-your-rights-gdpr-ccpa"`.
public enum Slug {
    /// The anchor of a title; `"section"` when nothing usable is left (a title of punctuation).
    public static func make(_ title: String) -> String {
        var slug = ""
        var pendingHyphen = false
        for character in title.lowercased() {
            if character.isLetter || character.isNumber {
                if pendingHyphen && !slug.isEmpty { slug.append("-") }
                pendingHyphen = false
                slug.append(character)
            } else if character == "'" || character == "\u{2019}" {
                // Apostrophes vanish rather than split a word: "Children's" → "childrens".
                continue
            } else {
                pendingHyphen = true
            }
        }
        return slug.isEmpty ? "section" : slug
    }
}

/// The anchors already used in one document, so each new one is unique: a repeated slug gets
/// `-1`, `-2`, … (skipping any suffix a heading already took literally). Remembers the last
/// suffix per slug, so many equal headings cost linear time, not quadratic.
public struct AnchorSet: Sendable {
    private var used: Set<String> = []
    private var lastSuffix: [String: Int] = [:]

    public init() {}

    public mutating func claim(_ slug: String) -> String {
        var candidate = slug
        var suffix = lastSuffix[slug] ?? 0
        while used.contains(candidate) {
            suffix += 1
            candidate = "\(slug)-\(suffix)"
        }
        lastSuffix[slug] = suffix
        used.insert(candidate)
        return candidate
    }
}

/// Heading text as a reader sees it: inline markup removed, the words kept.
public enum InlineText {
    /// Drops emphasis and code markers (`*`, `**`, `__`, `` ` ``), keeps link text without its
    /// target (`[text](url)` → `text`), resolves backslash escapes (`\#` → `#`) and collapses
    /// whitespace. Single `_` is left alone: it is common inside words and e-mail addresses.
    /// Linear in the length of the text, whatever it holds (an operator's 1 MiB heading of
    /// brackets must not stall every read).
    public static func plain(_ text: Substring) -> String {
        let characters = Array(text)
        let count = characters.count
        // For each position, where the next "]" and ")" are (or `count`): lookups in O(1).
        var nextBracket = [Int](repeating: count, count: count + 1)
        var nextParen = [Int](repeating: count, count: count + 1)
        for index in stride(from: count - 1, through: 0, by: -1) {
            nextBracket[index] = characters[index] == "]" ? index : nextBracket[index + 1]
            nextParen[index] = characters[index] == ")" ? index : nextParen[index + 1]
        }
        var output = ""
        var index = 0
        while index < count {
            let character = characters[index]
            let next = index + 1 < count ? characters[index + 1] : nil
            switch character {
            case "\\" where next?.isPunctuation == true || next?.isSymbol == true:
                output.append(characters[index + 1])
                index += 2
                continue
            case "*", "`":
                break
            case "_" where next == "_":
                index += 2
                continue
            case "]" where next == "(" && nextParen[index + 1] < count:
                // `](target)`: the link text was kept; its target is skipped.
                index = nextParen[index + 1] + 1
                continue
            case "[":
                // An opening bracket whose "]" is followed by "(" is link syntax, not text.
                let close = nextBracket[index + 1]
                if !(close + 1 < count && characters[close + 1] == "(" && nextParen[close + 1] < count) {
                    output.append(character)
                }
            default:
                output.append(character)
            }
            index += 1
        }
        return output.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }
}

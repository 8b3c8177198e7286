/// Anchors for headings, the way readers expect from GitHub-style markdown: lower case, letters
/// and digits kept, every run of anything else one hyphen, none at either end.
/// `"7. Your Rights (GDPR & CCPA)"` becomes `"7-your-rights-gdpr-ccpa"`.
enum Slug {
    /// The anchor of a title; `"section"` when nothing usable is left (a title of punctuation).
    static func make(_ title: String) -> String {
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
/// `-1`, `-2`, … (skipping any suffix a heading already took literally).
struct AnchorSet {
    private var used: Set<String> = []

    mutating func claim(_ slug: String) -> String {
        var candidate = slug
        var suffix = 0
        while used.contains(candidate) {
            suffix += 1
            candidate = "\(slug)-\(suffix)"
        }
        used.insert(candidate)
        return candidate
    }
}

/// Heading text as a reader sees it: inline markup removed, the words kept.
enum InlineText {
    /// Drops emphasis and code markers (`*`, `**`, `__`, `` ` ``), keeps link text without its
    /// target (`[text](url)` → `text`), resolves backslash escapes (`\#` → `#`) and collapses
    /// whitespace. Single `_` is left alone: it is common inside words and e-mail addresses.
    static func plain(_ text: Substring) -> String {
        var output = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            let next = text.index(after: index)
            switch character {
            case "\\" where next < text.endIndex && text[next].isPunctuationOrSymbol:
                output.append(text[next])
                index = text.index(after: next)
                continue
            case "*", "`":
                break
            case "_" where next < text.endIndex && text[next] == "_":
                index = text.index(after: next)
                continue
            case "]":
                // `](target)`: keep the text before it, skip the target.
                if next < text.endIndex, text[next] == "(", let close = text[next...].firstIndex(of: ")") {
                    index = text.index(after: close)
                    continue
                }
                output.append(character)
            case "[":
                // An opening bracket with a matching `](` later is link syntax, not text.
                if let close = text[next...].firstIndex(of: "]"), text.index(after: close) < text.endIndex,
                    text[text.index(after: close)] == "("
                {
                    break
                }
                output.append(character)
            default:
                output.append(character)
            }
            index = next
        }
        return output.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }
}

extension Character {
    var isPunctuationOrSymbol: Bool { isPunctuation || isSymbol }
}

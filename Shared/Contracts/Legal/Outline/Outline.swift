/// The outline of a markdown document: its h2 sections and h3 subsections, in order, each with
/// an anchor a client can link to (the app's heading navigation, the gateway's HTML pages).
///
/// A pure function of the content, so it is computed on read and never stored: a fix to the
/// parser applies to every version at once. Legal serves it, and the gateway's pages give their
/// headings these same anchors (one rule, here), so an outline entry links to its heading. It follows CommonMark for what it looks at:
///
/// - An ATX heading is up to three spaces of indentation, exactly two or three `#`, then a space,
///   a tab or the end of the line. `#` alone and `####`… are not in the outline; `##x` and
///   four-space-indented lines are not headings at all.
/// - An optional closing run of `#` (preceded by a space or tab) is dropped, as are surrounding
///   spaces; a heading with no text left is skipped.
/// - Lines inside fenced code blocks (```` ``` ```` or `~~~`, three or more, closed by a fence of
///   the same character at least as long) are ignored; an unclosed fence runs to the end.
/// - Setext headings (text underlined with `===`/`---`) are not used by our documents and are not
///   recognised.
public enum Outline {
    /// The outline of `markdown`.
    public static func entries(of markdown: String) -> [LegalOutlineEntry] {
        var entries: [LegalOutlineEntry] = []
        var anchors = AnchorSet()
        var fence: Fence?
        // Lines end at LF, CR or CRLF (CommonMark); CRLF leaves an empty line between, which
        // changes nothing here. Splitting the UTF-8 bytes, not `Character`s, keeps a 1 MiB
        // document cheap: only the first few characters of most lines are ever looked at.
        let newline = { (byte: UInt8) in byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") }
        for bytes in markdown.utf8.split(omittingEmptySubsequences: false, whereSeparator: newline) {
            let line = Substring(bytes)
            if let open = fence {
                if open.isClosed(by: line) { fence = nil }
                continue
            }
            if let opening = Fence(opening: line) {
                fence = opening
                continue
            }
            guard let (level, text) = heading(line), level == 2 || level == 3 else { continue }
            let title = InlineText.plain(text)
            guard !title.isEmpty else { continue }
            entries.append(LegalOutlineEntry(level: level, title: title, anchor: anchors.claim(Slug.make(title))))
        }
        return entries
    }

    /// The level (1–6) and raw text of an ATX heading line, or `nil` when it is not one.
    public static func heading(_ line: Substring) -> (level: Int, text: Substring)? {
        guard let start = indentationEnd(line) else { return nil }
        let rest = line[start...]
        let level = rest.prefix { $0 == "#" }.count
        guard (1...6).contains(level) else { return nil }
        var text = rest.dropFirst(level)
        if let first = text.first, first != " " && first != "\t" { return nil }
        text = trimmed(text)
        // A closing sequence: trailing `#`s that are the whole text or follow a space or tab.
        let withoutHashes = text.reversed().drop { $0 == "#" }
        if withoutHashes.count < text.count {
            let kept = text.prefix(withoutHashes.count)
            if kept.isEmpty || kept.last == " " || kept.last == "\t" { text = trimmed(kept) }
        }
        return (level, text)
    }

    /// Where the text starts after at most three spaces of indentation; `nil` for four or more
    /// (an indented code block) or a leading tab.
    public static func indentationEnd(_ line: Substring) -> Substring.Index? {
        let spaces = line.prefix { $0 == " " }.count
        guard spaces <= 3, line.dropFirst(spaces).first != "\t" else { return nil }
        return line.index(line.startIndex, offsetBy: spaces)
    }

    public static func trimmed(_ text: Substring) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else {
            return text[text.endIndex...]
        }
        return text[first...last]
    }
}

/// An open fenced code block: its fence character and length.
public struct Fence: Sendable {
    let character: Character
    let length: Int

    /// The fence a line opens, if it opens one (` ``` `, `~~~~ swift`; a backtick fence's info
    /// string may not contain a backtick, so `` ```x``` `` is inline code, not a fence).
    public init?(opening line: Substring) {
        guard let start = Outline.indentationEnd(line), let character = line[start...].first,
            character == "`" || character == "~"
        else { return nil }
        let run = line[start...].prefix { $0 == character }.count
        guard run >= 3 else { return nil }
        if character == "`", line[start...].dropFirst(run).contains("`") { return nil }
        self.character = character
        self.length = run
    }

    /// Whether `line` closes this fence: the same character, at least as many, nothing after but spaces.
    public func isClosed(by line: Substring) -> Bool {
        guard let start = Outline.indentationEnd(line) else { return false }
        let run = line[start...].prefix { $0 == character }.count
        return run >= length && Outline.trimmed(line[start...].dropFirst(run)).isEmpty
    }
}

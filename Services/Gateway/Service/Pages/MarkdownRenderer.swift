import Contracts

/// A small, safe Markdown-to-HTML renderer for the subset the legal texts use: headings (`#` to
/// `###`), paragraphs, unordered (`-`, `*`) and ordered (`1.`) lists, block quotes (`>`, the
/// contact box), `**strong**`, `*emphasis*` / `_emphasis_`, `` `code` `` and `[links](url)`.
///
/// Safety: every piece of text is HTML-escaped; raw HTML in the source is shown as text, never
/// passed through; link targets are kept only for `https:`, `http:`, `mailto:` and in-page `#`
/// anchors (anything else, `javascript:` included, renders as plain text); no attribute comes from
/// the source except an escaped `href` and escaped heading ids made of letters, digits and
/// hyphens. So whatever a published document contains, the page runs no script and loads nothing.
///
/// Headings are recognised as Legal's ``Outline`` recognises them (at most three spaces of
/// indentation, none inside fenced code, which is shown as `<pre>`). The first `#` heading is the
/// page's one `<h1>`; any later `#` is demoted to `<h2>`, so the page keeps a single h1. `##` and
/// `###` headings get the outline's anchors as ids (``Slug``, ``AnchorSet``, ``InlineText``: one
/// rule for both), so every outline entry Legal serves links to its heading on the page; headings
/// the outline leaves out (in quotes, below `###`, demoted `#`) get none.
public struct MarkdownRenderer: Sendable {
    public init() {}

    /// The rendered body and the text of the document's first `#` heading, if any.
    public func render(_ markdown: String) -> (html: String, title: String?) {
        render(markdown, outlined: true)
    }

    /// `outlined`: whether `##`/`###` headings are outline entries (not inside a quote).
    private func render(_ markdown: String, outlined: Bool) -> (html: String, title: String?) {
        var html = ""
        var title: String?
        var paragraph: [String] = []
        var list: (ordered: Bool, items: [String])?
        var quote: [String] = []
        var anchors = AnchorSet()
        var fence: (opening: Fence, lines: [String])?

        func flushParagraph() {
            guard !paragraph.isEmpty else { return }
            html += "<p>" + inline(paragraph.joined(separator: " ")) + "</p>\n"
            paragraph = []
        }
        func flushList() {
            guard let current = list else { return }
            let tag = current.ordered ? "ol" : "ul"
            html += "<\(tag)>\n" + current.items.map { "<li>" + inline($0) + "</li>\n" }.joined() + "</\(tag)>\n"
            list = nil
        }
        func flushQuote() {
            guard !quote.isEmpty else { return }
            let inner = render(quote.joined(separator: "\n"), outlined: false).html
            html += "<blockquote>\n" + inner + "</blockquote>\n"
            quote = []
        }
        func flushAll() {
            flushParagraph()
            flushList()
            flushQuote()
        }

        for rawLine in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = rawLine.hasSuffix("\r") ? String(rawLine.dropLast()) : String(rawLine)
            if let open = fence {
                if open.opening.isClosed(by: Substring(line)) {
                    html += "<pre><code>" + HTMLText.escape(open.lines.joined(separator: "\n")) + "</code></pre>\n"
                    fence = nil
                } else {
                    fence?.lines.append(line)
                }
                continue
            }
            if let opening = Fence(opening: Substring(line)) {
                flushAll()
                fence = (opening, [])
                continue
            }
            let trimmed = line.trimmingLeadingSpaces()
            if trimmed.hasPrefix(">") {
                flushParagraph()
                flushList()
                var content = trimmed.dropFirst()
                if content.hasPrefix(" ") { content = content.dropFirst() }
                quote.append(String(content))
                continue
            }
            flushQuote()
            if trimmed.isEmpty {
                flushParagraph()
                flushList()
                continue
            }
            if let (level, raw) = Outline.heading(Substring(line)) {
                flushAll()
                let text = String(raw)
                let plain = InlineText.plain(raw)
                if level == 1, title == nil {
                    title = text
                    html += "<h1>" + inline(text) + "</h1>\n"
                } else if outlined, level == 2 || level == 3, !plain.isEmpty {
                    let id = HTMLText.escape(anchors.claim(Slug.make(plain)))
                    html += "<h\(level) id=\"\(id)\">" + inline(text) + "</h\(level)>\n"
                } else {
                    let shown = min(max(level, 2), 3)
                    html += "<h\(shown)>" + inline(text) + "</h\(shown)>\n"
                }
                continue
            }
            if let (ordered, text) = listItem(trimmed) {
                flushParagraph()
                if let current = list, current.ordered != ordered { flushList() }
                if list == nil { list = (ordered, []) }
                list?.items.append(text)
                continue
            }
            if list != nil, line.hasPrefix("  ") {
                // A continuation line of the current item.
                if var current = list, !current.items.isEmpty {
                    current.items[current.items.count - 1] += " " + trimmed
                    list = current
                }
                continue
            }
            flushList()
            paragraph.append(trimmed)
        }
        flushAll()
        if let open = fence {
            // An unclosed fence runs to the end, as in the outline.
            html += "<pre><code>" + HTMLText.escape(open.lines.joined(separator: "\n")) + "</code></pre>\n"
        }
        return (html, title)
    }

    // MARK: Blocks

    func listItem(_ line: String) -> (ordered: Bool, text: String)? {
        if line.hasPrefix("- ") || line.hasPrefix("* ") || line.hasPrefix("+ ") { return (false, String(line.dropFirst(2)).trimmingLeadingSpaces()) }
        let digits = line.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 9 else { return nil }
        let rest = line.dropFirst(digits.count)
        guard rest.hasPrefix(". ") || rest.hasPrefix(") ") else { return nil }
        return (true, String(rest.dropFirst(2)).trimmingLeadingSpaces())
    }

    // MARK: Inline

    /// Escaped text with `**strong**`, `*em*`/`_em_`, `` `code` `` and safe links.
    func inline(_ text: String, autolink: Bool = true) -> String {
        let characters = Array(text)
        var out = ""
        var index = 0
        var strongOpen = false
        var emphasisOpen: Character?
        while index < characters.count {
            let character = characters[index]
            if character == "\\", index + 1 < characters.count, "\\`*_[]()#+-.!>".contains(characters[index + 1]) {
                out += HTMLText.escape(String(characters[index + 1]))
                index += 2
                continue
            }
            if character == "`", let end = characters[(index + 1)...].firstIndex(of: "`") {
                out += "<code>" + HTMLText.escape(String(characters[(index + 1)..<end])) + "</code>"
                index = end + 1
                continue
            }
            if character == "*", index + 1 < characters.count, characters[index + 1] == "*" {
                if strongOpen || hasClosing("**", in: characters, after: index + 2) {
                    out += strongOpen ? "</strong>" : "<strong>"
                    strongOpen.toggle()
                    index += 2
                    continue
                }
            }
            if character == "*", index + 1 < characters.count, characters[index + 1] == "*" {
                // An unclosed `**` is text.
                out += "**"
                index += 2
                continue
            }
            if character == "*" || character == "_" {
                let opensWord = index + 1 < characters.count && !characters[index + 1].isWhitespace
                let intraword = character == "_" && index > 0 && characters[index - 1].isLetter
                if emphasisOpen == character {
                    out += "</em>"
                    emphasisOpen = nil
                    index += 1
                    continue
                }
                if emphasisOpen == nil, opensWord, !intraword, hasClosing(String(character), in: characters, after: index + 1) {
                    out += "<em>"
                    emphasisOpen = character
                    index += 1
                    continue
                }
            }
            if autolink, let (address, end) = email(in: characters, at: index) {
                let escaped = HTMLText.escape(address)
                out += "<a href=\"mailto:" + escaped + "\">" + escaped + "</a>"
                index = end
                continue
            }
            if character == "[", let link = link(in: characters, at: index) {
                out += link.html
                index = link.end
                continue
            }
            out += HTMLText.escape(String(character))
            index += 1
        }
        if emphasisOpen != nil { out += "</em>" }
        if strongOpen { out += "</strong>" }
        return out
    }

    /// A bare e-mail address starting at `index` (GFM's autolink extension): `name@host.tld`, the
    /// local part `[A-Za-z0-9._%+-]`, the domain labels `[A-Za-z0-9-]` with a final label of two or
    /// more letters; a trailing dot is left out. Linked as `mailto:`.
    func email(in characters: [Character], at index: Int) -> (String, Int)? {
        func isLocal(_ c: Character) -> Bool { c.isASCII && (c.isLetter || c.isNumber || "._%+-".contains(c)) }
        func isDomain(_ c: Character) -> Bool { c.isASCII && (c.isLetter || c.isNumber || c == "-" || c == ".") }
        guard isLocal(characters[index]), index == 0 || !isLocal(characters[index - 1]) else { return nil }
        var at = index
        while at < characters.count, isLocal(characters[at]) { at += 1 }
        guard at < characters.count, at > index, characters[at] == "@" else { return nil }
        var end = at + 1
        while end < characters.count, isDomain(characters[end]) { end += 1 }
        while end > at + 1, characters[end - 1] == "." || characters[end - 1] == "-" { end -= 1 }
        let domain = String(characters[(at + 1)..<end])
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty }), let last = labels.last, last.count >= 2, last.allSatisfy(\.isLetter) else {
            return nil
        }
        return (String(characters[index..<end]), end)
    }

    func hasClosing(_ marker: String, in characters: [Character], after start: Int) -> Bool {
        guard start < characters.count else { return false }
        return String(characters[start...]).contains(marker)
    }

    /// `[text](target)` at `index`: the anchor when the target is allowed, else the text alone.
    func link(in characters: [Character], at index: Int) -> (html: String, end: Int)? {
        guard let close = characters[(index + 1)...].firstIndex(of: "]"), close + 1 < characters.count, characters[close + 1] == "(",
            let end = characters[(close + 2)...].firstIndex(of: ")")
        else { return nil }
        let text = inline(String(characters[(index + 1)..<close]), autolink: false)
        let target = String(characters[(close + 2)..<end]).trimmingLeadingSpaces()
        guard Self.isAllowedTarget(target) else { return (text, end + 1) }
        return ("<a href=\"" + HTMLText.escape(target) + "\">" + text + "</a>", end + 1)
    }

    static func isAllowedTarget(_ target: String) -> Bool {
        let lower = target.lowercased()
        guard !target.contains(where: { $0.isWhitespace || $0 == "\"" || $0 == "<" || $0 == ">" }) else { return false }
        return lower.hasPrefix("https://") || lower.hasPrefix("http://") || lower.hasPrefix("mailto:") || lower.hasPrefix("#")
    }
}

/// HTML escaping of text and attribute values.
public enum HTMLText {
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}

extension StringProtocol {
    func trimmingLeadingSpaces() -> String { String(drop { $0 == " " || $0 == "\t" }) }
}

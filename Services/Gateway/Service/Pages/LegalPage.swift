import Contracts
import Foundation

/// The public HTML page of a legal document (`/legal/privacy`, `/legal/terms`): the URL App Store
/// review asks for (seed 003 FR-009).
///
/// One self-contained document: `lang="en"`, a viewport for phones, one `<h1>`, "Last Updated:
/// <date>", the body from ``MarkdownRenderer``, an inline stylesheet with dark text on a light
/// background (contrast well above WCAG AA) and the contact box (the document's block quote)
/// framed. No script, no cookie, no external request: the `Content-Security-Policy` that goes
/// with it (``contentSecurityPolicy``) allows nothing but that inline style, and it is pinned by
/// hash, so even an injected `<style>` would not apply.
enum LegalPage {
    static let style = """
        body{margin:0;background:#fff;color:#1a1a1a;font:16px/1.6 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}\
        main{max-width:44rem;margin:0 auto;padding:1.25rem 1rem 3rem}\
        h1{font-size:1.75rem;line-height:1.25;margin:.5rem 0}h2{font-size:1.3rem;margin-top:2rem}h3{font-size:1.1rem}\
        .updated{color:#4a4a4a;margin-top:0}a{color:#0b4f9c}\
        blockquote{margin:1.5rem 0;padding:.75rem 1rem;border:1px solid #c8d3e0;border-radius:8px;background:#f3f6fa}\
        blockquote p{margin:.35rem 0}ul,ol{padding-left:1.4rem}li{margin:.25rem 0}code{font-size:.95em}
        """

    /// `Content-Security-Policy`: nothing may load or run; only the page's own stylesheet applies.
    static let contentSecurityPolicy: String = {
        let hash = Data(SHA256Digest.of(Data(style.utf8))).base64EncodedString()
        return "default-src 'none'; style-src 'sha256-\(hash)'; img-src 'none'; script-src 'none'; connect-src 'none'; "
            + "font-src 'none'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    }()

    static func html(for document: LegalDocument) -> String {
        let rendered = MarkdownRenderer().render(document.content)
        let fallbackTitle = document.summary.type == .privacyPolicy ? "Privacy Policy" : "Terms of Service"
        let title = rendered.title ?? fallbackTitle
        var body = rendered.html
        let updated = "<p class=\"updated\">Last Updated: " + HTMLText.escape(Self.dateText(document.summary.lastUpdated))
            + " · Version " + HTMLText.escape(document.summary.version) + "</p>\n"
        if rendered.title != nil, let end = body.range(of: "</h1>\n") {
            body.insert(contentsOf: updated, at: end.upperBound)
        } else {
            body = "<h1>" + HTMLText.escape(title) + "</h1>\n" + updated + body
        }
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="referrer" content="no-referrer">
            <title>\(HTMLText.escape(title)) · Recruiting Compass</title>
            <style>\(style)</style>
            </head>
            <body>
            <main>
            \(body)</main>
            </body>
            </html>

            """
    }

    /// `December 12, 2025` (UTC, English month names: the page is `lang="en"`).
    static func dateText(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
        return "\(months[(parts.month ?? 1) - 1]) \(parts.day ?? 1), \(parts.year ?? 1970)"
    }
}

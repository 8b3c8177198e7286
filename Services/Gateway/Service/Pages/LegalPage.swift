import Bus
import Contracts
import Foundation

/// The public HTML page of a legal document (`/legal/privacy`, `/legal/terms`): the URL App Store
/// review asks for (seed 003 FR-009).
///
/// One self-contained document: `lang="en"`, a viewport for phones, one `<h1>`, "Last Updated:
/// <date>", the body from ``MarkdownRenderer``, an inline stylesheet with dark text on a light
/// background (contrast well above WCAG AA) and the contact box (the document's block quote)
/// framed. No cookie, no external request, and one fixed inline script (``dateScript``) that shows
/// "Last Updated" in the reader's time zone: the `<time datetime>` carries the instant of
/// publication, its text the UTC date, which stays when scripts are off. The
/// `Content-Security-Policy` that goes with it (``contentSecurityPolicy``) allows nothing but that
/// inline style and that script, each pinned by hash, so an injected `<style>` or `<script>` would
/// not apply.
package enum LegalPage {
    static let style = """
        body{margin:0;background:#fff;color:#1a1a1a;font:16px/1.6 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}\
        main{max-width:44rem;margin:0 auto;padding:1.25rem 1rem 3rem}\
        h1{font-size:1.75rem;line-height:1.25;margin:.5rem 0}h2{font-size:1.3rem;margin-top:2rem}h3{font-size:1.1rem}\
        .updated{color:#4a4a4a;margin-top:0}a{color:#0b4f9c}\
        blockquote{margin:1.5rem 0;padding:.75rem 1rem;border:1px solid #c8d3e0;border-radius:8px;background:#f3f6fa}\
        blockquote p{margin:.35rem 0}ul,ol{padding-left:1.4rem}li{margin:.25rem 0}code{font-size:.95em}
        """

    /// Rewrites each `<time datetime>` that holds an instant (not a bare date) as that instant's
    /// date in the reader's time zone, in the page's language (`January 14, 2026` in California
    /// for a version published at 03:00 UTC on the 15th).
    static let dateScript = """
        for(const t of document.querySelectorAll("time[datetime*='T']")){const d=new Date(t.dateTime);        if(!isNaN(d))t.textContent=d.toLocaleDateString("en-US",{year:"numeric",month:"long",day:"numeric"})}
        """

    /// `Content-Security-Policy`: nothing may load; only the page's own stylesheet and date script apply.
    static let contentSecurityPolicy: String = {
        let styleHash = Data(SHA256Digest.of(Data(style.utf8))).base64EncodedString()
        let scriptHash = Data(SHA256Digest.of(Data(dateScript.utf8))).base64EncodedString()
        return "default-src 'none'; style-src 'sha256-\(styleHash)'; img-src 'none'; script-src 'sha256-\(scriptHash)'; connect-src 'none'; "
            + "font-src 'none'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    }()

    static func html(for document: LegalDocument) -> String {
        let rendered = MarkdownRenderer().render(document.content)
        let fallbackTitle = document.summary.type == .privacyPolicy ? "Privacy Policy" : "Terms of Service"
        let title = rendered.title ?? fallbackTitle
        var body = rendered.html
        let updated =
            "<p class=\"updated\">Last Updated: " + Self.timeElement(document.summary.lastUpdated)
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
            <script>\(dateScript)</script>
            </body>
            </html>

            """
    }

    /// The page answered while the document cannot be loaded (no copy held, Legal unreachable).
    static func unavailableHTML(for type: LegalDocumentType) -> String {
        let title = type == .privacyPolicy ? "Privacy Policy" : "Terms of Service"
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="referrer" content="no-referrer">
            <title>\(title) · Recruiting Compass</title>
            <style>\(style)</style>
            </head>
            <body>
            <main>
            <h1>\(title)</h1>
            <p>The \(title.lowercased()) cannot be shown right now. Please try again in a minute.</p>
            </main>
            </body>
            </html>

            """
    }

    /// `<time datetime="2026-01-15T03:00:00Z">January 15, 2026</time>`: the instant, and its UTC
    /// date as the text a reader without scripts sees. A value at exactly midnight UTC is a date
    /// stored before instants were (a day, not a moment): it gets a bare date (`2026-01-15`), which
    /// the script leaves as it is rather than shift it to the day before west of Greenwich.
    static func timeElement(_ date: Date) -> String {
        let instant = Timestamp.format(date)
        let datetime = instant.hasSuffix("T00:00:00.000Z") ? String(instant.prefix(10)) : String(instant.prefix(19)) + "Z"
        return "<time datetime=\"\(datetime)\">" + HTMLText.escape(dateText(date)) + "</time>"
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

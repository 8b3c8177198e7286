import Contracts
import Foundation
import Testing

@testable import GatewayService

/// The legal pages' Markdown renderer: the subset the texts use, and that nothing unsafe passes.
struct MarkdownRendererTests {
    let renderer = MarkdownRenderer()

    @Test func headingsParagraphsAndLists() {
        let (html, title) = renderer.render(
            """
            # Privacy Policy

            ## 1. Introduction

            First line
            continues here.

            ### Information You Provide

            - **Account information.** We keep it.
            - Second *item* with _emphasis_.

            1. one
            2. two
            """)
        #expect(title == "Privacy Policy")
        #expect(html.contains("<h1>Privacy Policy</h1>"))
        #expect(html.contains("<h2 id=\"1-introduction\">1. Introduction</h2>"))
        #expect(html.contains("<h3 id=\"information-you-provide\">Information You Provide</h3>"))
        #expect(html.contains("<p>First line continues here.</p>"))
        #expect(
            html.contains(
                "<ul>\n<li><strong>Account information.</strong> We keep it.</li>\n<li>Second <em>item</em> with <em>emphasis</em>.</li>\n</ul>"))
        #expect(html.contains("<ol>\n<li>one</li>\n<li>two</li>\n</ol>"))
    }

    @Test func oneH1AndUniqueIDs() {
        let (html, _) = renderer.render("# A\n\n# B\n\n## Same\n\n## Same\n")
        #expect(html.components(separatedBy: "<h1>").count == 2)
        // A demoted `#` is not in Legal's outline, so it gets no anchor either.
        #expect(html.contains("<h2>B</h2>"))
        #expect(html.contains("id=\"same\"") && html.contains("id=\"same-1\""))
    }

    /// The page's heading ids are the anchors of the outline Legal serves, for the shipped texts
    /// and for headings that once disagreed (apostrophes, markup, repeats, fences, quotes).
    @Test func headingIDsAreTheOutlineAnchors() throws {
        let texts = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Services/Legal/Service/DefaultTexts").standardized
        var documents = try ["privacy_policy.md", "terms_of_service.md"].map {
            try String(contentsOf: texts.appendingPathComponent($0), encoding: .utf8)
        }
        documents.append(
            """
            # Title
            ## 9. Children's Privacy
            ## Children\u{2019}s *Rights* & [Choices](https://example.com)
            ### Same
            ### Same
            ### Same-1
            > ## Quoted heading
            ```
            ## Not a heading
            ```
               ## Indented three
                ## Indented four
            #### Too deep
            ## Ünïcode Überschrift
            ## ###
            """)
        for markdown in documents {
            let ids = Self.headingIDs(renderer.render(markdown).html)
            let anchors = Outline.entries(of: markdown).map(\.anchor)
            #expect(!anchors.isEmpty)
            #expect(ids == anchors)
        }
        #expect(Self.headingIDs(renderer.render(documents[0]).html).contains("9-childrens-privacy"))
    }

    static func headingIDs(_ html: String) -> [String] {
        html.components(separatedBy: " id=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
    }

    @Test func contactBoxWithMailtoLinks() {
        let (html, _) = renderer.render(
            """
            > **Recruiting Compass**
            >
            > Email: [privacy@recruitingcompass.com](mailto:privacy@recruitingcompass.com)
            """)
        #expect(html.hasPrefix("<blockquote>\n<p><strong>Recruiting Compass</strong></p>\n"))
        #expect(html.contains("<a href=\"mailto:privacy@recruitingcompass.com\">privacy@recruitingcompass.com</a>"))
        #expect(html.hasSuffix("</blockquote>\n"))
    }

    @Test func everythingIsEscapedAndUnsafeLinksDropped() {
        let (html, _) = renderer.render(
            """
            ## <script>alert(1)</script>

            Text with <img src=x onerror=alert(1)> & "quotes" 'single'.

            [click](javascript:alert(1)) [data](data:text/html,hi) [ok](https://example.com/?a=1&b="2")
            """)
        #expect(!html.contains("<script"))
        #expect(!html.contains("<img"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(html.contains("&amp; &quot;quotes&quot; &#39;single&#39;"))
        #expect(!html.contains("javascript"))
        #expect(!html.contains("href=\"data:"))
        #expect(html.contains("click") && html.contains("data"))
        // A quote in a URL ends the target's acceptability: the link text stays, no attribute injection.
        #expect(!html.contains("href=\"https://example.com/?a=1&amp;b=\"2\""))
    }

    @Test func bareAddressesBecomeMailtoLinks() {
        let (html, _) = renderer.render("Write to support@recruitingcompass.com. Or a@b, x@y.c and me@host.io!")
        #expect(
            html
                == "<p>Write to <a href=\"mailto:support@recruitingcompass.com\">support@recruitingcompass.com</a>. Or a@b, x@y.c and <a href=\"mailto:me@host.io\">me@host.io</a>!</p>\n"
        )
        // Inside a link's text the address is not linked twice.
        let (linked, _) = renderer.render("[privacy@x.com](mailto:privacy@x.com)")
        #expect(linked.components(separatedBy: "<a ").count == 2)
    }

    @Test func unclosedMarkersStayText() {
        let (html, _) = renderer.render("2 * 3 = 6 and a_b_c and **open")
        #expect(html == "<p>2 * 3 = 6 and a_b_c and **open</p>\n")
    }

    @Test func theShippedTextsRender() throws {
        let source = try String(
            contentsOfFile: #filePath.replacingOccurrences(
                of: "Tests/GatewayTests/MarkdownRendererTests.swift", with: "Services/Legal/Service/DefaultTexts/privacy_policy.md"), encoding: .utf8)
        let (html, title) = renderer.render(source)
        #expect(title == "Privacy Policy")
        #expect(html.components(separatedBy: "<h2 ").count - 1 == 12)
        #expect(html.contains("href=\"mailto:privacy@recruitingcompass.com\""))
        #expect(!html.contains("**"))
    }

    @Test func pageAndPolicy() {
        #expect(LegalPage.contentSecurityPolicy.hasPrefix("default-src 'none'; style-src 'sha256-"))
        #expect(!LegalPage.contentSecurityPolicy.contains("unsafe"))
        #expect(LegalPage.dateText(Date(timeIntervalSince1970: 1_765_497_600)) == "December 12, 2025")
        // "Last Updated": the instant for the reader's zone, the UTC date as the text without scripts;
        // a value at midnight UTC (a date stored before instants were) stays a bare date.
        #expect(
            LegalPage.timeElement(Date(timeIntervalSince1970: 1_768_446_125.5)) == "<time datetime=\"2026-01-15T03:02:05Z\">January 15, 2026</time>")
        #expect(LegalPage.timeElement(Date(timeIntervalSince1970: 1_765_497_600)) == "<time datetime=\"2025-12-12\">December 12, 2025</time>")
        #expect(LegalPage.contentSecurityPolicy.contains("script-src 'sha256-"))
    }
}

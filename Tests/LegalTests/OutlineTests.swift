import Contracts
import Testing

@testable import LegalService

/// The outline parser: a pure function of the markdown, so it is tested on its own.
@Suite struct OutlineTests {
    func outline(_ markdown: String) -> [LegalOutlineEntry] { Outline.entries(of: markdown) }

    @Test func sectionsAndSubsectionsInOrder() {
        let markdown = """
            # Privacy Policy

            ## 1. Introduction

            Text.

            ## 2. Information We Collect

            ### Information You Provide

            - item

            ### Information Collected Automatically

            #### Too deep for the outline

            ## 3. How We Use Your Information
            """
        #expect(
            outline(markdown) == [
                LegalOutlineEntry(level: 2, title: "1. Introduction", anchor: "1-introduction"),
                LegalOutlineEntry(level: 2, title: "2. Information We Collect", anchor: "2-information-we-collect"),
                LegalOutlineEntry(level: 3, title: "Information You Provide", anchor: "information-you-provide"),
                LegalOutlineEntry(level: 3, title: "Information Collected Automatically", anchor: "information-collected-automatically"),
                LegalOutlineEntry(level: 2, title: "3. How We Use Your Information", anchor: "3-how-we-use-your-information"),
            ])
    }

    @Test func headingsInsideFencedCodeBlocksAreIgnored() {
        let markdown = """
            ## Before
            ```markdown
            ## Not a heading
            ```
            ~~~~
            ## Not one either
            ~~~~ still inside: a closing fence cannot carry an info string
            ```
            ## Nor this: a backtick fence cannot close a tilde one
            ~~~~
            ## After
              ```
            ## Inside an indented fence
               ```
            ## Last
            ````
            ## Unclosed fence runs to the end
            """
        #expect(outline(markdown).map(\.title) == ["Before", "After", "Last"])
    }

    @Test func inlineCodeWithTriplesIsNotAFence() {
        // A backtick "fence" whose info string holds a backtick is inline code, not a fence.
        #expect(outline("```x```\n## Heading").map(\.title) == ["Heading"])
    }

    @Test func whatIsAndIsNotAnATXHeading() {
        let markdown = [
            "##NoSpace",  // needs a space after the marks
            "    ## Indented code",  // four spaces: code block
            "\t## Tab-indented",  // a tab is four columns
            "   ## Three spaces",  // up to three is fine
            "##\tTab after marks",
            "## Closing hashes ##",
            "### Hash at end#",  // not a closing sequence: no space before it
            "##",  // empty heading: nothing to list
            "## ###",  // empty too, once the closing sequence goes
            "#### h4",
            "# h1",
            "> ## In a quote",
            "Setext heading\n---",
        ].joined(separator: "\n")
        #expect(outline(markdown).map(\.title) == ["Three spaces", "Tab after marks", "Closing hashes", "Hash at end#"])
        #expect(outline(markdown).map(\.level) == [2, 2, 2, 3])
    }

    @Test func windowsLineEndingsAreHandled() {
        #expect(
            outline("## One\r\n\r\n### Two\r\n") == [
                LegalOutlineEntry(level: 2, title: "One", anchor: "one"),
                LegalOutlineEntry(level: 3, title: "Two", anchor: "two"),
            ])
    }

    @Test func anchorsAreSlugsUniqueWithinTheDocument() {
        let markdown = """
            ## Overview
            ### Overview
            ## Overview
            ## Overview-1
            ## 7. Your Rights (GDPR & CCPA)
            ## Children's Privacy
            ## Données personnelles
            ## !!!
            ## ???
            """
        #expect(
            outline(markdown).map(\.anchor) == [
                "overview", "overview-1", "overview-2", "overview-1-1", "7-your-rights-gdpr-ccpa", "childrens-privacy",
                "données-personnelles", "section", "section-1",
            ])
        let anchors = outline(markdown).map(\.anchor)
        #expect(Set(anchors).count == anchors.count)
    }

    @Test func titlesLoseInlineMarkupButKeepTheirWords() {
        let markdown = """
            ## **Bold** and *italic* and `code`
            ## See [our site](https://example.com) for more
            ## Escaped \\# hash and __strong__ words
            ## An e-mail: privacy_team@example.com
            ## Brackets [kept] when not a link
            ##   Spaces    collapse   ##
            """
        #expect(
            outline(markdown).map(\.title) == [
                "Bold and italic and code", "See our site for more", "Escaped # hash and strong words",
                "An e-mail: privacy_team@example.com", "Brackets [kept] when not a link", "Spaces collapse",
            ])
        #expect(outline(markdown)[1].anchor == "see-our-site-for-more")
    }

    @Test func pathologicalHeadingsAreHandled() {
        // Inputs that made earlier versions quadratic (each bracket searching the rest of the
        // line; each repeated anchor counting up from 1): they would stall this suite.
        let brackets = "## " + String(repeating: "[](", count: 20_000) + "\n"
        #expect(outline(brackets).first?.title.count == 60_000)
        let anchors = outline(String(repeating: "## Same\n", count: 5_000)).map(\.anchor)
        #expect(anchors.count == 5_000)
        #expect(Set(anchors).count == 5_000)
        #expect(anchors.last == "same-4999")
    }

    @Test func emptyAndHeadinglessDocuments() {
        #expect(outline("").isEmpty)
        #expect(outline("Just a paragraph.\n\n- and a list").isEmpty)
    }
}

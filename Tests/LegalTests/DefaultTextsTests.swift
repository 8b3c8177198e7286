import Bus
import Contracts
import Foundation
import Testing

@testable import LegalService

/// The texts the service ships: the shape the app's pages expect (seeds 000 and 001), and valid
/// input for publishing.
@Suite struct DefaultTextsTests {
    /// The numbered h2 sections, as (number, title after the number).
    func numberedSections(_ type: LegalDocumentType) throws -> [(Int, String)] {
        try Outline.entries(of: DefaultTexts.content(of: type)).filter { $0.level == 2 }.map { entry in
            let parts = entry.title.split(separator: ".", maxSplits: 1)
            let number = try #require(Int(parts[0]), "unnumbered section \(entry.title)")
            return (number, parts[1].trimmingCharacters(in: .whitespaces))
        }
    }

    /// The markdown of the h2 section numbered `number` (up to the next h2).
    func section(_ number: Int, of content: String) -> String {
        let marker = "\n## \(number). "
        guard let start = content.range(of: marker) else { return "" }
        let rest = content[start.upperBound...]
        let end = rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex
        return String(rest[..<end])
    }

    @Test func privacyPolicyHasTwelveNumberedSectionsEndingWithContactUs() throws {
        let sections = try numberedSections(.privacyPolicy)
        #expect(sections.map(\.0) == Array(1...12))
        #expect(sections.first?.1 == "Introduction")
        #expect(sections.last?.1 == "Contact Us")
        let content = try DefaultTexts.content(of: .privacyPolicy)
        #expect(content.hasPrefix("# Privacy Policy\n"))
        let contact = section(12, of: content)
        #expect(contact.contains("privacy@recruitingcompass.com"))
        #expect(contact.contains("support@recruitingcompass.com"))
        #expect(contact.contains("> **Recruiting Compass**"), "the contact box the page shows")
    }

    @Test func privacyPolicyCoversWhatTheSpecAsksWithSubsections() throws {
        let titles = try numberedSections(.privacyPolicy).map { $0.1.lowercased() }
        for topic in ["information we collect", "use", "shar", "security", "cookies", "rights", "retention", "children", "changes"] {
            #expect(titles.contains { $0.contains(topic) }, "no section about \(topic)")
        }
        let content = try DefaultTexts.content(of: .privacyPolicy)
        let outline = Outline.entries(of: content)
        #expect(outline.filter { $0.level == 3 }.count >= 15)
        // Section 2 has its subsections, and the rights section names both laws in its h3s.
        let subsections = outline.filter { $0.level == 3 }.map(\.title)
        #expect(subsections.contains("Information You Provide"))
        #expect(subsections.contains("Information Collected Automatically"))
        #expect(subsections.contains("Rights Under the GDPR"))
        #expect(subsections.contains("Rights Under the CCPA"))
        #expect(content.contains("do **not** sell"))
    }

    @Test func termsHaveElevenNumberedSectionsWithEligibilityRules() throws {
        let sections = try numberedSections(.termsOfService)
        #expect(sections.map(\.0) == Array(1...11))
        #expect(sections.first?.1 == "Agreement to Terms")
        let titles = sections.map { $0.1.lowercased() }
        for topic in ["eligibility", "accounts", "contests", "license", "prohibited", "disclaimers", "limitation of liability", "governing law"] {
            #expect(titles.contains { $0.contains(topic) }, "no section about \(topic)")
        }
        let content = try DefaultTexts.content(of: .termsOfService)
        #expect(content.hasPrefix("# Terms and Conditions\n"))
        let eligibility = section(2, of: content)
        for state in ["Nevada (NV)", "Hawaii (HI)", "Idaho (ID)", "Montana (MT)", "Washington (WA)"] {
            #expect(eligibility.contains(state), "restricted state \(state) missing")
        }
        #expect(eligibility.contains("18 years old"))
        #expect(eligibility.contains("skill-based fantasy contests, not gambling"))
        #expect(Outline.entries(of: content).contains { $0.level == 3 })
    }

    @Test func defaultTextsAreValidPublishInputWithUniqueAnchors() throws {
        let drafts = try DefaultTexts.drafts()
        #expect(drafts.map(\.type) == LegalDocumentType.allCases)
        for draft in drafts {
            try LegalVersionRule.check(draft.version)
            try PublishValidation.checkContent(draft.content)
            #expect(draft.version == (draft.type == .termsOfService ? "2025-12-12" : "1.0"))
            #expect(draft.material)
            #expect(draft.lastUpdated == nil, "the shipped texts show when they were published")
            let anchors = Outline.entries(of: draft.content).map(\.anchor)
            #expect(Set(anchors).count == anchors.count)
            #expect(!draft.content.lowercased().contains("lorem"))
            #expect(!draft.content.contains("TODO"))
        }
    }
}

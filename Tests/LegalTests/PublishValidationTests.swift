import Bus
import Contracts
import Foundation
import Testing

@testable import LegalService

/// The input rules of `legal.publish`, on their own (the service tests check they reach callers).
@Suite struct PublishValidationTests {
    func code(_ body: () throws -> Void) -> ErrorCode? {
        do { try body() } catch let error as BusError { return error.code } catch {
            Issue.record("unexpected \(error)")
        }
        return nil
    }

    @Test func versionStrings() {
        for good in ["1.0", "2", "2026.01.15", "1.1-rc_2", String(repeating: "9", count: 32)] {
            #expect(code { try LegalVersionRule.check(good) } == nil, "\(good) refused")
        }
        for bad in ["", " 1.0", "1.0 ", "-1", ".1", "1/0", "v1.0\n", "ü1", "1.0;DROP", String(repeating: "9", count: 33)] {
            #expect(code { try LegalVersionRule.check(bad) } == .invalidArgument, "\(bad) accepted")
        }
    }

    @Test func contentRules() {
        #expect(code { try PublishValidation.checkContent("# Title\n\nText ✓ with ünïcode\r\n\tand tabs") } == nil)
        #expect(code { try PublishValidation.checkContent("") } == .invalidArgument)
        #expect(code { try PublishValidation.checkContent(" \n\t\r\n\u{00A0}") } == .invalidArgument)
        #expect(code { try PublishValidation.checkContent("text\u{0}more") } == .invalidArgument)
        #expect(code { try PublishValidation.checkContent("bell\u{7}") } == .invalidArgument)
        #expect(code { try PublishValidation.checkContent("del\u{7F}") } == .invalidArgument)
    }

    @Test func sizeLimitIsInUTF8Bytes() {
        let limit = legalMaximumContentBytes
        #expect(code { try PublishValidation.checkContent(String(repeating: "a", count: limit)) } == nil)
        #expect(code { try PublishValidation.checkContent(String(repeating: "a", count: limit + 1)) } == .payloadTooLarge)
        // 2 bytes each in UTF-8: half as many characters reach the limit.
        #expect(code { try PublishValidation.checkContent(String(repeating: "é", count: limit / 2 + 1)) } == .payloadTooLarge)
    }

    @Test func digestIsLowerCaseHexSHA256OfTheUTF8() {
        #expect(PublishValidation.digest(of: "") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(PublishValidation.digest(of: "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(PublishValidation.digest(of: "\u{E9}") == "4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c")
    }

    @Test func millisecondsRoundTrip() {
        let onMillisecond = Date(timeIntervalSince1970: 1_768_435_200.123)
        #expect(Milliseconds.since1970(onMillisecond) == 1_768_435_200_123)
        #expect(Milliseconds.since1970(Milliseconds.truncate(Date(timeIntervalSince1970: 1_768_435_200.123_9))) == 1_768_435_200_123)
    }
}

import CivilCalendar
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// IMF-fixdate by hand, checked against libc's `strftime` in the C locale over random instants.
@Suite struct HTTPDateTests {
    @Test func formatsAsLibcAndReadsBackWhatItWrote() {
        #expect(HTTPDate.format(secondsSince1970: 0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(secondsSince1970: 1_795_781_704.9) == "Fri, 27 Nov 2026 12:15:04 GMT")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let seconds = Int64.random(in: -2_208_988_800...32_503_680_000, using: &generator)  // 1900 to 3000
            var time = time_t(seconds)
            var parts = tm()
            gmtime_r(&time, &parts)
            var buffer = [CChar](repeating: 0, count: 64)
            let count = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &parts)
            let libc = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let ours = HTTPDate.format(secondsSince1970: Double(seconds))
            #expect(ours == libc, "\(seconds)")
            #expect(HTTPDate.parse(ours) == seconds, "\(ours)")
        }
    }

    @Test func anythingButAnIMFFixdateIsNil() {
        for text in [
            "", "Fri, 27 Nov 2026 12:15:04", "Friday, 27-Nov-26 12:15:04 GMT", "Fri Nov 27 12:15:04 2026",
            "Fri, 27 Nov 2026 25:15:04 GMT", "Fri, 32 Nov 2026 12:15:04 GMT", "Fri, 27 Noc 2026 12:15:04 GMT",
            "Fri, 27 Nov 2026 12:15 GMT", "Fri,  27 Nov 2026 12:15:04 GMT",
        ] {
            #expect(HTTPDate.parse(text) == nil, "\(text)")
        }
    }
}

import Foundation
import Testing

@testable import ObjectStorage

/// The small XML reader on what S3 sends: a declaration, namespaces, entities, empty elements.
@Suite("S3 XML")
struct S3XMLTests {
    @Test func readsAListingWithEntitiesAndEmptyElements() throws {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix/>
            <!-- a comment --><Contents><Key>a&amp;b &lt;c&gt; &#233;&#x263A;</Key><Size>12</Size>
            <ETag>&quot;9b2c&quot;</ETag><LastModified>2026-11-27T12:15:04.000Z</LastModified></Contents>
            <Contents><Key><![CDATA[x<y]]></Key><Size>0</Size></Contents><IsTruncated>false</IsTruncated></ListBucketResult>
            """
        let root = try #require(XMLElement.parse(Array(text.utf8)))
        #expect(root.name == "ListBucketResult")
        #expect(root["Prefix"] == "")
        let contents = root.all("Contents")
        #expect(contents.map { $0["Key"] } == ["a&b <c> é☺", "x<y"])
        #expect(contents.first?["ETag"] == "\"9b2c\"")
        #expect(contents.first?["LastModified"].flatMap(S3Dates.iso8601) == Date(timeIntervalSince1970: 1_795_781_704))
        #expect(root["IsTruncated"] == "false")
    }

    @Test func readsAnErrorBodyAndRefusesGarbage() {
        let error = XMLElement.parse(Array("<Error><Code>NoSuchKey</Code><Message>gone</Message></Error>".utf8))
        #expect(error?.name == "Error")
        #expect(error?["Code"] == "NoSuchKey")
        #expect(XMLElement.parse(Array("not xml".utf8)) == nil)
        #expect(XMLElement.parse(Array("<a><b>unclosed".utf8)) == nil)
    }

    @Test func headerDates() {
        #expect(S3Dates.httpDate("Fri, 27 Nov 2026 12:15:04 GMT") == Date(timeIntervalSince1970: 1_795_781_704))
        #expect(S3Dates.httpDate("yesterday") == nil)
        #expect(xmlEscape("a&<'\">") == "a&amp;&lt;&apos;&quot;&gt;")
    }
}

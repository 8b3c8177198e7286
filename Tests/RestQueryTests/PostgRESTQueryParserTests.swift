import Contracts
import Testing

@testable import RestQueryKit

/// PostgREST's query grammar as the gateway parses it: pure, no stack.
struct PostgRESTQueryParserTests {
    func parse(_ query: String) throws(RestQueryError) -> PostgRESTQuery { try PostgRESTQuery(rawQuery: query) }

    func code(_ query: String, table: RestTableSchema = RestTables.documents, range: ItemRange? = nil) -> String? {
        do {
            _ = try parse(query).restQuery(for: table, range: range, count: false)
            return nil
        } catch { return error.code }
    }

    @Test func everyOperatorAndItsNegation() throws {
        let query = try parse(
            "title=eq.a&title=neq.b&file_size=gt.1&file_size=gte.2&file_size=lt.3&file_size=lte.4&title=like.*x*&title=ilike.Y*"
                + "&type=in.(resume,\"rec_letter\")&school_id=is.NULL&version=not.eq.2&id=not.in.()")
        #expect(
            query.filters == [
                .condition(.init("title", .eq, ["a"])), .condition(.init("title", .neq, ["b"])),
                .condition(.init("file_size", .gt, ["1"])), .condition(.init("file_size", .gte, ["2"])),
                .condition(.init("file_size", .lt, ["3"])), .condition(.init("file_size", .lte, ["4"])),
                .condition(.init("title", .like, ["*x*"])), .condition(.init("title", .ilike, ["Y*"])),
                .condition(.init("type", .in, ["resume", "rec_letter"])), .condition(.init("school_id", .is, ["null"])),
                .condition(.init("version", .eq, ["2"], negated: true)), .condition(.init("id", .in, [], negated: true)),
            ])
        // A value keeps its dots and, outside a logic tree, its quotes.
        #expect(try parse("title=eq.a.b.\"c\"").filters == [.condition(.init("title", .eq, ["a.b.\"c\""]))])
        // Percent-encoding and + are decoded before parsing.
        #expect(try parse("title=eq.a%2Cb+c").filters == [.condition(.init("title", .eq, ["a,b c"]))])
    }

    @Test func inListsQuoteAndEscape() throws {
        #expect(try parse("title=in.(\"a,b\",\"c\\\"d\",e)").filters == [.condition(.init("title", .in, ["a,b", "c\"d", "e"]))])
        #expect(try parse("title=in.(\"\")").filters == [.condition(.init("title", .in, [""]))])
        for bad in ["title=in.a,b", "title=in.(\"a)", "title=in.(\"a\"b)", "title=in.(a\"b\")"] {
            #expect(throws: RestQueryError.self, "\(bad)") { try parse(bad) }
        }
    }

    @Test func logicTreesNestAsPostgRESTNestsThem() throws {
        let query = try parse(
            "or=(type.eq.resume,and(file_size.gt.10,school_id.is.null),not.or(title.like.*a*,title.eq.\"x,y)\"),version.not.in.(1,2))")
        #expect(
            query.filters == [
                .group(
                    RestGroup(
                        .or,
                        [
                            .condition(.init("type", .eq, ["resume"])),
                            .group(RestGroup(.and, [.condition(.init("file_size", .gt, ["10"])), .condition(.init("school_id", .is, ["null"]))])),
                            .group(
                                RestGroup(
                                    .or, negated: true, [.condition(.init("title", .like, ["*a*"])), .condition(.init("title", .eq, ["x,y)"]))])),
                            .condition(.init("version", .in, ["1", "2"], negated: true)),
                        ]))
            ])
        #expect(
            try parse("not.and=(id.eq.1,id.eq.2)").filters == [
                .group(
                    RestGroup(
                        .and, negated: true,
                        [
                            .condition(.init("id", .eq, ["1"])), .condition(.init("id", .eq, ["2"])),
                        ]))
            ])
        // Too deep, unbalanced, empty items, trailing text: PGRST100.
        let deep = "or=(" + String(repeating: "and(", count: 9) + "id.eq.1" + String(repeating: ")", count: 10)
        for bad in [deep, "or=(id.eq.1", "or=id.eq.1", "or=(id.eq.1))", "or=()", "or=(,)", "or=(id)", "or=(id.fts.x)", "or=(and(id.eq.1)"] {
            #expect(code(bad) == "PGRST100", "\(bad)")
        }
    }

    @Test func orderIsTypedPerColumnWithNulls() throws {
        #expect(
            try parse("order=created_at.desc.nullslast,file_size,title.asc,school_id.nullsfirst").order == [
                RestOrder("created_at", descending: true, nulls: .last), RestOrder("file_size"), RestOrder("title"),
                RestOrder("school_id", nulls: .first),
            ])
        for bad in ["order=title.sideways", "order=title.asc.desc", "order=title.nullsfirst.asc", "order=", "order=a.asc.nullslast.x"] {
            #expect(code(bad) == "PGRST100", "\(bad)")
        }
        #expect(code("order=secret.desc") == "42703")
    }

    @Test func operatorsAndValuesAreCheckedAgainstTheColumnTypes() {
        #expect(
            code(
                "file_size=gt.1000&created_at=lt.2026-01-02T03:04:05.123456Z&created_at=gte.2026-01-01&id=eq.\(String(repeating: "a", count: 8))-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
            ) == nil)
        #expect(code("file_size=gt.big") == "22P02")
        #expect(code("created_at=lt.yesterday") == "22P02")
        #expect(code("id=eq.nope") == "22P02")
        #expect(code("type=eq.poster") == "22P02")
        #expect(code("possibly_corrupt=eq.maybe") == "22P02")
        #expect(code("id=like.abc") == "42883")
        #expect(code("title=is.true") == "42804")
        #expect(code("possibly_corrupt=is.true") == nil)
        #expect(code("title=is.maybe") == "PGRST100")
        #expect(code("secret=eq.1") == "42703")
        #expect(code("select=id,secret") == "42703")
        #expect(code("title=fts.word") == "PGRST100")
        #expect(code("title=cs.{a}") == "PGRST100")
        #expect(code("title=eq") == "PGRST100")
        #expect(code("author.name=eq.x") == "PGRST100")
        #expect(code("select=id,author(name)") == "PGRST100")
        #expect(code("title=in.(" + (0...100).map(String.init).joined(separator: ",") + ")") == "PGRST100")
        #expect(code("limit=-1") == "PGRST100" && code("offset=x") == "PGRST100")
        #expect(
            code("document_type=eq.privacy_policy&action=in.(accept,decline)&accepted_at=gt.2026-01-01", table: RestTables.legalAcceptances) == nil)
        #expect(code("action=eq.approve", table: RestTables.legalAcceptances) == "22P02")
    }

    @Test func limitOffsetAndRangeMakeOneWindowUnderTheCap() throws {
        func window(_ query: String, _ range: String? = nil) throws -> (Int, Int) {
            let rest = try parse(query).restQuery(for: RestTables.documents, range: ItemRange(header: range), count: true)
            return (rest.offset, rest.limit)
        }
        #expect(try window("") == (0, RestQuery.maximumRows))
        #expect(try window("limit=5000") == (0, RestQuery.maximumRows))
        #expect(try window("limit=10&offset=20") == (20, 10))
        #expect(try window("limit=0") == (0, 0))
        #expect(try window("", "0-24") == (0, 25))
        #expect(try window("", "items=10-") == (10, RestQuery.maximumRows))
        #expect(try window("limit=10", "5-100") == (5, 5))
        #expect(try window("offset=3", "0-9") == (3, 7))
        #expect(try window("", "9-2") == (9, 0))
        #expect(ItemRange(header: "bytes=0-1") == nil && ItemRange(header: "-5") == nil && ItemRange(header: "a-b") == nil)
    }
}

import Postgres
import Testing

/// ``ServiceRoles/url(_:user:password:)``: a service role's URL made from the admin's, for one
/// server and for libpq's multi-host form (a failover pair), which `URLComponents` cannot parse.
@Suite struct ServiceRolesURLTests {
    @Test func replacesTheUserOfOneServer() throws {
        let url = try #require(ServiceRoles.url("postgresql://compass@127.0.0.1:5432/app?sslmode=disable", user: "app_audit", password: "a+b/c="))
        #expect(url == "postgresql://app_audit:a+b%2Fc=@127.0.0.1:5432/app?sslmode=disable")
        let configuration = try PostgresConfiguration(url: url)
        #expect(configuration["user"] == "app_audit" && configuration["password"] == "a+b/c=" && configuration["sslmode"] == "disable")
    }

    @Test func keepsEveryHostOfAMultiHostURL() throws {
        let admin = "postgresql://compass:secret@10.0.0.1:5432,10.0.0.2:5433/app?target_session_attrs=read-write"
        let url = try #require(ServiceRoles.url(admin, user: "app_audit", password: "0123456789abcdef"))
        #expect(url == "postgresql://app_audit:0123456789abcdef@10.0.0.1:5432,10.0.0.2:5433/app?target_session_attrs=read-write")
        let configuration = try PostgresConfiguration(url: url)
        #expect(configuration["host"] == "10.0.0.1,10.0.0.2" && configuration["port"] == "5432,5433")
        #expect(configuration["user"] == "app_audit" && configuration["target_session_attrs"] == "read-write")
    }

    @Test func withoutUserPathOrHostAndNotAURL() {
        #expect(ServiceRoles.url("postgres://h1,h2", user: "r", password: "p") == "postgres://r:p@h1,h2")
        #expect(ServiceRoles.url("host=h1 dbname=app", user: "r", password: "p") == nil)
        #expect(ServiceRoles.url("https://example.com/db", user: "r", password: "p") == nil)
        #expect(ServiceRoles.url("postgresql:///app", user: "r", password: "p") == "postgresql://r:p@/app")
    }
}

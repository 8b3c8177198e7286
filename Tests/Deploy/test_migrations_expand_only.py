"""The upgrade rule, checked on every migration: expand, deploy, contract.

During a rolling update the previous release's instances serve beside the new ones on the schema
the new release migrated, so a migration may only add what the previous release does not see (a
table, a nullable column or one with a default, an index, a function under a new name). Taking
something away or tightening it (a DROP of a table, column, view, type or function, a RENAME, a
column's type changed, SET NOT NULL, a NOT NULL column without a default) breaks the previous
release's reads or writes, so it ships only in a release after the one that stopped using it, and
says so on the line before the statement: `-- contract: <what no earlier release still uses>`.
The three contractions made before this rule was written are listed below with how their
upgrades were done (deploy/OPERATIONS.md, "Upgrades").

Why a check of the SQL and not a run of the previous release's executables against the new
schema: this repository has no released builds to fetch, and building the previous commit in CI
would double the build (about 10 minutes on 2 cores) for a check that covers only one pair of
releases; the rule here covers every migration ever added. The rule was tried once by hand the
other way (OPERATIONS.md, "Upgrades": the executables of c238605 serving on a schema migrated by
the current ones).
"""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
MIGRATIONS = sorted(ROOT.glob("Services/*/Service/Migrations/*.sql"))

CONTRACTING = re.compile(
    r"\bDROP\s+(TABLE|COLUMN|VIEW|MATERIALIZED\s+VIEW|TYPE|FUNCTION|PROCEDURE|SCHEMA)\b"
    r"|\bRENAME\b"
    r"|\bALTER\s+COLUMN\s+\w+\s+(SET\s+DATA\s+)?TYPE\b"
    r"|\bSET\s+NOT\s+NULL\b"
    r"|\bADD\s+COLUMN\s+(IF\s+NOT\s+EXISTS\s+)?\w+\s+[^,;]*?\bNOT\s+NULL\b(?![^,;]*\bDEFAULT\b)",
    re.IGNORECASE)

# Before the rule: each was an upgrade with the old instances stopped first, or its table new in
# the same release, as OPERATIONS.md says.
KNOWN = {
    ("Documents", "0111_share_use_requests.sql", "SET NOT NULL"),
    ("Accounts", "0180_consent_stream_xid_order.sql", "DROP TABLE"),
    ("Accounts", "0181_consent_order_key.sql", "DROP FUNCTION"),
}


def kind_of(text):
    """What a match takes away: `DROP TABLE`, `RENAME`, `ALTER COLUMN TYPE`, `SET NOT NULL`, `ADD COLUMN NOT NULL`."""
    words = text.upper().split()
    if words[0] in ("DROP", "RENAME"):
        return " ".join(words[:2]) if words[0] == "DROP" else "RENAME"
    if words[0] == "SET":
        return "SET NOT NULL"
    return "ALTER COLUMN TYPE" if words[0] == "ALTER" else "ADD COLUMN NOT NULL"


def statements_with_context(path):
    """Each contracting match with the comment line just above its statement's first line."""
    lines = path.read_text().splitlines()
    found = []
    for number, line in enumerate(lines):
        code = line.split("--", 1)[0]
        for match in CONTRACTING.finditer(code):
            start = number
            # The statement's first line: back to just after the previous `;` or a blank line.
            while start > 0 and lines[start - 1].strip() and not lines[start - 1].split("--", 1)[0].rstrip().endswith(";") \
                    and not lines[start - 1].lstrip().startswith("--"):
                start -= 1
            above = lines[start - 1].strip() if start > 0 else ""
            found.append((kind_of(match.group(0)), above))
    return found


def test_every_contracting_statement_says_why_it_is_safe():
    assert MIGRATIONS, "no migrations found"
    unexplained, seen_known = [], set()
    for path in MIGRATIONS:
        service = path.parts[-4]
        for kind, above in statements_with_context(path):
            if (service, path.name, kind) in KNOWN:
                seen_known.add((service, path.name, kind))
            elif not above.startswith("-- contract:"):
                unexplained.append(f"{service}/{path.name}: {kind}")
    assert not unexplained, ("migrations that take away or tighten without `-- contract:` on the line before: "
                             + ", ".join(unexplained))
    assert seen_known == KNOWN, f"listed but no longer found: {sorted(KNOWN - seen_known)}"


def test_the_check_finds_what_it_looks_for():
    samples = {
        "ALTER TABLE t DROP COLUMN c;": True,
        "ALTER TABLE t RENAME TO u;": True,
        "ALTER TABLE t ALTER COLUMN c TYPE bigint;": True,
        "ALTER TABLE t ALTER COLUMN c SET NOT NULL;": True,
        "ALTER TABLE t ADD COLUMN c integer NOT NULL;": True,
        "ALTER TABLE t ADD COLUMN c integer NOT NULL DEFAULT 1;": False,
        "ALTER TABLE t ADD COLUMN c integer;": False,
        "CREATE INDEX i ON t (c);": False,
        "DROP INDEX i;": False,
        "CREATE TABLE t (c integer NOT NULL);": False,
    }
    for sql, contracting in samples.items():
        assert bool(CONTRACTING.search(sql)) == contracting, sql

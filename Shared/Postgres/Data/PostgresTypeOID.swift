/// Built-in type OIDs from `pg_type.dat` that the codecs use. They are fixed by PostgreSQL.
public enum PostgresTypeOID {
    public static let unspecified: UInt32 = 0
    public static let bool: UInt32 = 16
    public static let bytea: UInt32 = 17
    public static let char: UInt32 = 18
    public static let name: UInt32 = 19
    public static let int8: UInt32 = 20
    public static let int2: UInt32 = 21
    public static let int4: UInt32 = 23
    public static let text: UInt32 = 25
    public static let oid: UInt32 = 26
    public static let json: UInt32 = 114
    public static let float4: UInt32 = 700
    public static let float8: UInt32 = 701
    public static let unknown: UInt32 = 705
    public static let cidr: UInt32 = 650
    public static let inet: UInt32 = 869
    public static let bpchar: UInt32 = 1042
    public static let varchar: UInt32 = 1043
    public static let date: UInt32 = 1082
    public static let time: UInt32 = 1083
    public static let timestamp: UInt32 = 1114
    public static let timestamptz: UInt32 = 1184
    public static let interval: UInt32 = 1186
    public static let numeric: UInt32 = 1700
    public static let uuid: UInt32 = 2950
    public static let jsonb: UInt32 = 3802

    /// Types whose binary form is not their text, so `String` cannot decode them directly.
    static let nonTextual: Set<UInt32> = [
        bool, bytea, int8, int2, int4, oid, float4, float8, cidr, inet, date, time, timestamp,
        timestamptz, interval, numeric, uuid,
    ]
}

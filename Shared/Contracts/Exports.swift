// The PostgREST query types are part of the bus API (`legal`, `audit` and `documents` reads
// carry a `RestQuery`): whoever speaks the contracts speaks them too, with one `import Contracts`.
@_exported import RestQueryKit

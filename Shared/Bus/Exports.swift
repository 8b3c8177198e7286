/// Everything that uses the transport also speaks its messages: `RPCClient.call`, handlers and
/// events take and give `Envelope`, `BusError` and `RPCMethod`s from BusCore. Re-exporting it keeps
/// one `import Bus` at every call site; code that needs only the messages (`Contracts`) imports
/// BusCore and stays free of libzmq.
@_exported import BusCore

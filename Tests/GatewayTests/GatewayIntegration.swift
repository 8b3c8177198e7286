import Testing

/// The parent of every suite that starts the real executables: serialized, so the gateway tests
/// run one stack (four processes) at a time instead of one per suite, which would load the
/// machine enough to disturb the timing-sensitive tests of other targets running beside them.
@Suite(.serialized) enum GatewayIntegration {}

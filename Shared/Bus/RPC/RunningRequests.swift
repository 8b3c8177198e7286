import Foundation

/// The requests a server is running, by request id, so that a retry of one joins the run in
/// progress instead of starting a second.
///
/// A client sends an idempotent call again, under the same request id, when an attempt's reply is
/// late (``RPCClientOptions/attemptTimeout``). Without this table a call that took longer than
/// that ran once more per attempt for as long as it lasted, and every copy slowed the others: an
/// audit verification that takes a second on its own ran dozens of times over on a loaded machine,
/// held every pooled connection and never answered. Now a retry that reaches the server still
/// running its call gets that run's reply; one that reaches another server, or this one after the
/// run ended, runs there.
///
/// A pure value, kept under the server's state lock and tested without sockets.
struct RunningRequests {
    /// What a retry must repeat exactly to join a run: anything else under a running id is refused,
    /// so no request is answered with a reply computed for another.
    struct Request {
        var type: String
        var principal: Principal?
        /// The sender's CURVE identity: a peer never receives a reply computed for another peer.
        var peer: String?
        var payload: Data?
        var attachments: [Data]
        /// Where the run's reply goes.
        var route: [Data]
    }

    enum Admission: Equatable {
        /// No run of this id is in progress: run it (it is now recorded as running).
        case run
        /// A run of this very request is in progress: its reply will go to this sender too.
        case joined
        /// A run of a different request under the same id is in progress.
        case conflict
    }

    /// Senders besides the first that one run answers: retries come from one client socket, so
    /// more than a few means a misbehaving peer, whose extra copies get no reply.
    static let maximumJoined = 8

    private var running: [UUID: (request: Request, joined: [[Data]])] = [:]

    /// Records `request` as running, or joins it to the run of the same request in progress.
    mutating func admit(_ id: UUID, _ request: Request) -> Admission {
        guard let run = running[id] else {
            running[id] = (request, [])
            return .run
        }
        let first = run.request
        guard
            first.type == request.type, first.principal == request.principal, first.peer == request.peer,
            first.payload == request.payload, first.attachments == request.attachments
        else { return .conflict }
        // A retry over the same connection is answered by the first reply already.
        if request.route != first.route, !run.joined.contains(request.route), run.joined.count < Self.maximumJoined {
            running[id]?.joined.append(request.route)
        }
        return .joined
    }

    /// Ends the run of `id` and returns the routes of the retries that joined it.
    mutating func finish(_ id: UUID) -> [[Data]] {
        running.removeValue(forKey: id)?.joined ?? []
    }

    /// Runs in progress.
    var count: Int { running.count }
}

import Foundation
import Logging

/// Which CURVE clients a server admits, answered through ZAP (RFC 27). A client is admitted only
/// if its public key is listed; the name it is listed under becomes the connection's `User-Id`,
/// which every message it sends carries from the transport (a header field cannot forge it).
public struct ZAPPolicy: Sendable {
    /// Admitted client public keys (Z85) and the peer name each stands for.
    public var admitted: [String: String]

    public init(admitted: [String: String]) { self.admitted = admitted }

    /// The reply frames for one ZAP request (pure: testable without sockets).
    /// Request: version, request id, domain, address, identity, mechanism, credentials…
    func reply(to request: [Data]) -> [Data] {
        func answer(_ id: Data, _ code: String, _ text: String, user: String = "") -> [Data] {
            [Data("1.0".utf8), id, Data(code.utf8), Data(text.utf8), Data(user.utf8), Data()]
        }
        guard request.count >= 6, String(decoding: request[0], as: UTF8.self) == "1.0" else {
            return answer(request.count > 1 ? request[1] : Data(), "500", "malformed ZAP request")
        }
        let id = request[1]
        guard String(decoding: request[5], as: UTF8.self) == "CURVE", request.count >= 7,
            let key = z85Encode([UInt8](request[6]))
        else {
            return answer(id, "400", "CURVE required")
        }
        guard let peer = admitted[key] else { return answer(id, "400", "client key not admitted") }
        return answer(id, "200", "OK", user: peer)
    }

    /// Answers every ZAP request waiting on the handler socket (runs on the loop thread).
    static func serve(_ socket: ZMQSocket, policy: ZAPPolicy, logger: Logger) {
        while let request = try? socket.receive() {
            let reply = policy.reply(to: request.frames)
            if String(decoding: reply[2], as: UTF8.self) != "200" {
                // Debug, as a library should: the server counts it (`bus_handshakes_refused_total`).
                logger.debug(
                    "bus peer refused", metadata: ["reason": "\(String(decoding: reply[3], as: UTF8.self))"])
            }
            _ = try? socket.send(.frames(reply))
        }
    }
}

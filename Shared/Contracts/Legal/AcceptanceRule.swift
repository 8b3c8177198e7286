import Foundation

/// Whether someone must accept a document (again): the one rule Audit's status
/// (`needsAcceptance`, which the apps' `needsToAcceptTOS` shows) and the gateway's enforcement of
/// the terms both apply, so the app's prompt and the server's refusal never disagree.
extension LegalVersionSummary {
    /// - `accepted`: the version the user's last word accepted; nil when they never accepted or
    ///   their last word was a decline.
    /// - `versions`: every published version of the document type.
    /// - Returns true when nothing was accepted, the accepted version is unknown, or a **material**
    ///   version took effect (by `now`) after the accepted one took effect. Editorial versions and
    ///   versions not yet in effect never require it.
    public static func needsAcceptance(afterAccepting accepted: String?, versions: [LegalVersionSummary], at now: Date) -> Bool {
        guard let accepted, let acceptedVersion = versions.first(where: { $0.version == accepted }) else { return true }
        return versions.contains {
            $0.material && $0.effectiveAt <= now && $0.effectiveAt > acceptedVersion.effectiveAt && $0.version != acceptedVersion.version
        }
    }
}

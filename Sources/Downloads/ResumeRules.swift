import Fetch
import Foundation

/// HTTP's rules for resuming a download (RFC 9110, sections 13.1.5, 14.2 and 15.3.7), as pure functions: what to
/// ask for, and what to do with what came back. No I/O here; ``DownloadManager`` applies the answers.
public enum ResumeRules {
    /// What to ask for.
    public enum Plan: Sendable, Hashable {
        /// The whole file: `Range` is not sent, the partial is cut to zero when the response arrives.
        case whole
        /// The bytes from `offset` on, `If-Range: validator`.
        case from(offset: Int64, validator: String)

        /// The offset asked for (0 for the whole file).
        public var offset: Int64 {
            if case .from(let offset, _) = self { return offset }
            return 0
        }
    }

    /// The plan for a partial file of `localLength` bytes of which `committedOffset` were recorded as flushed.
    ///
    /// Only the committed bytes are trusted (a crash may leave garbage past them); without a strong validator there is
    /// no safe resume (bytes of another version could be appended), so the whole file is asked for.
    public static func plan(committedOffset: Int64, localLength: Int64, validator: String?) -> Plan {
        let offset = min(committedOffset, localLength)
        guard offset > 0, let validator, !validator.isEmpty else { return .whole }
        return .from(offset: offset, validator: validator)
    }

    /// What to do with a successful (2xx) response.
    public enum Decision: Sendable, Hashable {
        /// Write the body from the start (the partial is cut to zero): a 200, the whole representation.
        case writeFromStart(expectedLength: Int64?)
        /// Append the body at `offset` (the partial is cut there): a 206 that continues exactly where the partial ends.
        case append(at: Int64, expectedLength: Int64?)
        /// Refuse the body and ask again for the whole file: the 206 does not fit (another start, another length,
        /// another validator).
        case startOver(reason: String)
    }

    /// The rule for a 2xx response to `plan`, given the length expected so far (`nil` when unknown).
    ///
    /// - 200: the server sent everything (it does not do ranges, or the validator changed and `If-Range` made it send
    ///   the new version): write from zero; the expected length is its `Content-Length`.
    /// - 206: accepted only when `Content-Range` starts at the offset asked for and its total equals the expected
    ///   length (when one is known), and the response's validator, if it sends one, is still the one held.
    public static func decide(status: Int, contentRange: ContentRange?, contentLength: Int64?, validator: String?, plan: Plan,
                              expectedLength: Int64?) -> Decision {
        guard status == 206 else {
            return .writeFromStart(expectedLength: contentLength)
        }
        guard let range = contentRange, let first = range.first else {
            return .startOver(reason: "a 206 without a usable Content-Range")
        }
        switch plan {
        case .whole:
            // A range nobody asked for: usable only when it is the whole file from byte 0.
            guard first == 0, let total = range.completeLength, range.last == total - 1 else {
                return .startOver(reason: "a 206 (\(range)) to a request for the whole file")
            }
            return .writeFromStart(expectedLength: total)
        case .from(let offset, let held):
            guard first == offset else {
                return .startOver(reason: "the 206 starts at byte \(first), not at \(offset) where the partial file ends")
            }
            if let expectedLength, range.completeLength != expectedLength {
                return .startOver(reason: "the 206's total length \(range.completeLength.map(String.init) ?? "*") is not the \(expectedLength) expected")
            }
            if let validator, validator != held {
                return .startOver(reason: "the validator changed (\(held) → \(validator)) though If-Range asked for the same one")
            }
            return .append(at: offset, expectedLength: range.completeLength ?? expectedLength)
        }
    }

    /// Whether a 416 (`Range Not Satisfiable`) to a request from `localLength` on says the file is complete: its
    /// `Content-Range` is `bytes */L` with `L` the local length, and `L` is the expected length when one is known.
    public static func isComplete(after416 contentRange: ContentRange?, localLength: Int64, expectedLength: Int64?) -> Bool {
        guard let range = contentRange, range.isUnsatisfied, let total = range.completeLength else { return false }
        guard total == localLength, localLength > 0 else { return false }
        return expectedLength.map { $0 == total } ?? true
    }

    /// Whether a file of `length` bytes that a successful transfer ended may be marked done: never short of the
    /// expected length, never longer.
    public static func isComplete(length: Int64, expectedLength: Int64?) -> Bool {
        expectedLength.map { $0 == length } ?? true
    }
}

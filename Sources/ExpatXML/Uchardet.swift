// The one file that calls libuchardet (uchardet.h): it names the encoding of a document that declares none and is
// not UTF-8. Everything else goes through `Uchardet.detect`.
import CUchardet

enum Uchardet {
    /// The charset uchardet names for `bytes` (`WINDOWS-1252`, `KOI8-R`, `SHIFT_JIS`, …), or `nil` when it names none.
    ///
    /// - Throws: ``ExpatXMLError/Code/encodingDetectionFailed`` when libuchardet cannot create a detector or fails on the
    ///   data (out of memory), with its return code in the message.
    static func detect(_ bytes: UnsafeRawBufferPointer) throws(ExpatXMLError) -> String? {
        // uchardet.h: uchardet_new returns NULL when it cannot allocate a detector.
        guard let detector = uchardet_new() else { throw failure("uchardet_new", code: nil) }
        defer { uchardet_delete(detector) }
        if let base = bytes.baseAddress, !bytes.isEmpty {
            // uchardet.h: uchardet_handle_data returns 0 on success, non-zero on error.
            try check(uchardet_handle_data(detector, base.assumingMemoryBound(to: CChar.self), bytes.count), "uchardet_handle_data")
        }
        uchardet_data_end(detector)
        // uchardet.h: the charset's name, or an empty string when none was found; owned by the detector.
        guard let name = uchardet_get_charset(detector) else { return nil }
        let charset = String(cString: name)
        return charset.isEmpty ? nil : charset
    }

    /// Checks a libuchardet result: 0 is success.
    private static func check(_ result: Int32, _ function: String) throws(ExpatXMLError) {
        guard result == 0 else { throw failure(function, code: result) }
    }

    private static func failure(_ function: String, code: Int32?) -> ExpatXMLError {
        ExpatXMLError(code: .encodingDetectionFailed,
                      message: "libuchardet: \(function) failed" + (code.map { " with code \($0)" } ?? " (out of memory)")
                        + " while detecting the encoding of a document that declares none")
    }
}

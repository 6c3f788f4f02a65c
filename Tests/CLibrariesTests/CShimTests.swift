import CCrypto
import CCurl
import CExpat
import CLibPQ
import CLibraryLoader
import CSQLite
import CUchardet
import CXXHash
import CYajl
import CZlib
import Foundation
import Testing

/// The C shims are exercised for real, against the real libraries: a wrapper with a wrong argument type
/// compiles but misbehaves, so each test checks what the library did with the value.
@Suite("C shims")
struct CShimTests {
    @Test func yajlConfigWrapperSwitchesARealOption() {
        // With yajl_dont_validate_strings on, yajl passes invalid UTF-8 through; off (the default), it refuses it.
        let text: [UInt8] = Array(#"["x"#.utf8) + [0xC3, 0x28] + Array(#""]"#.utf8)
        for validate in [true, false] {
            let handle = yajl_alloc(nil, nil, nil)
            defer { yajl_free(handle) }
            #expect(handle != nil)
            if !validate { #expect(cyajl_config_flag(handle, yajl_dont_validate_strings, 1) != 0) }
            let status = text.withUnsafeBufferPointer { yajl_parse(handle, $0.baseAddress, $0.count) }
            #expect(status == (validate ? yajl_status_error : yajl_status_ok), "validate \(validate)")
        }
        // An option yajl 2 does not have is refused, and the wrapper passes that on.
        let handle = yajl_alloc(nil, nil, nil)
        defer { yajl_free(handle) }
        #expect(cyajl_config_flag(handle, yajl_option(rawValue: 0x4000), 1) == 0)
    }

    @Test func curlEasyWrappersDriveARealTransfer() throws {
        // A file:// transfer needs no network; it goes through the same write callback and getinfo paths.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ccurl-\(UUID().uuidString).xml")
        let body = Data(repeating: 0x61, count: 100_000)
        try body.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        #expect(curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK)
        let handle = try #require(curl_easy_init())
        defer { curl_easy_cleanup(handle) }

        final class Sink { var bytes = 0; var progressCalls = 0 }
        let sink = Sink()
        let opaque = Unmanaged.passUnretained(sink).toOpaque()
        #expect(CCurl_easy_setopt_string(handle, CURLOPT_URL, file.absoluteString) == CURLE_OK)
        #expect(CCurl_easy_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, 1_000_000) == CURLE_OK)
        #expect(CCurl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, opaque) == CURLE_OK)
        #expect(CCurl_easy_setopt_write_callback(handle, CURLOPT_WRITEFUNCTION, { _, size, count, userData in
            Unmanaged<Sink>.fromOpaque(userData!).takeUnretainedValue().bytes += size * count
            return size * count
        }) == CURLE_OK)
        #expect(CCurl_easy_setopt_long(handle, CURLOPT_NOPROGRESS, 0) == CURLE_OK)
        #expect(CCurl_easy_setopt_pointer(handle, CURLOPT_XFERINFODATA, opaque) == CURLE_OK)
        #expect(CCurl_easy_setopt_xferinfo_callback(handle, CURLOPT_XFERINFOFUNCTION, { userData, _, _, _, _ in
            Unmanaged<Sink>.fromOpaque(userData!).takeUnretainedValue().progressCalls += 1
            return 0
        }) == CURLE_OK)
        let headers = curl_slist_append(nil, "X-Test: 1")
        defer { curl_slist_free_all(headers) }
        #expect(CCurl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headers) == CURLE_OK)

        #expect(curl_easy_perform(handle) == CURLE_OK)
        #expect(sink.bytes == body.count)
        #expect(sink.progressCalls > 0)

        var downloaded: curl_off_t = 0
        #expect(CCurl_easy_getinfo_off_t(handle, CURLINFO_SIZE_DOWNLOAD_T, &downloaded) == CURLE_OK)
        #expect(downloaded == body.count)
        var effective: UnsafeMutablePointer<CChar>?
        #expect(CCurl_easy_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK)
        #expect(effective.map { String(cString: $0) } == file.absoluteString)
        var connects = -1
        #expect(CCurl_easy_getinfo_long(handle, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK)
        #expect(connects >= 0)
        var privateData: UnsafeMutableRawPointer?
        #expect(CCurl_easy_setopt_pointer(handle, CURLOPT_PRIVATE, opaque) == CURLE_OK)
        #expect(CCurl_easy_getinfo_pointer(handle, CURLINFO_PRIVATE, &privateData) == CURLE_OK)
        #expect(privateData == opaque)
    }

    @Test func curlOffTWrapperPassesA64BitValue() throws {
        // An off_t passed through the wrong wrapper would be garbage: resuming at 9,000 must leave 1,000 bytes.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ccurl-\(UUID().uuidString).xml")
        try Data(repeating: 0x61, count: 10_000).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let handle = try #require(curl_easy_init())
        defer { curl_easy_cleanup(handle) }
        #expect(CCurl_easy_setopt_string(handle, CURLOPT_URL, file.absoluteString) == CURLE_OK)
        #expect(CCurl_easy_setopt_off_t(handle, CURLOPT_RESUME_FROM_LARGE, 9_000) == CURLE_OK)
        #expect(CCurl_easy_setopt_write_callback(handle, CURLOPT_WRITEFUNCTION, { _, size, count, _ in size * count }) == CURLE_OK)
        #expect(curl_easy_perform(handle) == CURLE_OK)
        var downloaded: curl_off_t = 0
        #expect(CCurl_easy_getinfo_off_t(handle, CURLINFO_SIZE_DOWNLOAD_T, &downloaded) == CURLE_OK)
        #expect(downloaded == 1_000)
    }

    @Test func curlMultiWrappers() throws {
        let multi = try #require(curl_multi_init())
        defer { curl_multi_cleanup(multi) }
        #expect(CCurl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, 32) == CURLM_OK)
        #expect(CCurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, 6) == CURLM_OK)
        #expect(CCurl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, nil) == CURLM_OK)
        #expect(CCurl_multi_setopt_socket_callback(multi, CURLMOPT_SOCKETFUNCTION, { _, _, _, _, _ in 0 }) == CURLM_OK)
        #expect(CCurl_multi_setopt_timer_callback(multi, CURLMOPT_TIMERFUNCTION, { _, _, _ in 0 }) == CURLM_OK)
        // An option number libcurl does not know is refused: the wrapper passes the option through unchanged.
        #expect(CCurl_multi_setopt_long(multi, CURLMoption(rawValue: 9_999), 1) == CURLM_UNKNOWN_OPTION)
        #expect(CCurl_writefunc_pause() == 0x1000_0001)
    }

    @Test func curlMultiCallsReportMisuseThroughTheirCodes() throws {
        // Fetch checks every CURLMcode; these are the failures libcurl really returns for them.
        #expect(curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK)
        let multi = try #require(curl_multi_init())
        let easy = try #require(curl_easy_init())
        defer {
            curl_easy_cleanup(easy)
            #expect(curl_multi_cleanup(multi) == CURLM_OK)
        }
        #expect(curl_multi_add_handle(multi, easy) == CURLM_OK)
        #expect(curl_multi_add_handle(multi, easy) == CURLM_ADDED_ALREADY)
        #expect(curl_multi_remove_handle(multi, easy) == CURLM_OK)
        #expect(curl_multi_remove_handle(multi, nil) == CURLM_BAD_EASY_HANDLE)
        var running: Int32 = -1
        #expect(curl_multi_perform(multi, &running) == CURLM_OK && running == 0)
        #expect(curl_multi_perform(nil, &running) == CURLM_BAD_HANDLE)
        #expect(curl_multi_wakeup(multi) == CURLM_OK)
        #expect(curl_multi_poll(multi, nil, 0, 1000, nil) == CURLM_OK)  // returns at once: the wakeup is pending
        #expect(curl_multi_poll(nil, nil, 0, 0, nil) == CURLM_BAD_HANDLE)
        #expect(String(cString: curl_multi_strerror(CURLM_ADDED_ALREADY)).contains("already"))
    }

    @Test func libcryptoSHA256ThroughEVP() throws {
        // FIPS 180-4's "abc", through the calls Fetch's Crypto.swift makes, split in two updates.
        let context = try #require(EVP_MD_CTX_new())
        defer { EVP_MD_CTX_free(context) }
        #expect(EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1)
        #expect(EVP_DigestUpdate(context, "a", 1) == 1)
        #expect(EVP_DigestUpdate(context, "bc", 2) == 1)
        let copy = try #require(EVP_MD_CTX_new())
        defer { EVP_MD_CTX_free(copy) }
        #expect(EVP_MD_CTX_copy_ex(copy, context) == 1)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        #expect(EVP_DigestFinal_ex(copy, &digest, &length) == 1)
        #expect(length == 32)
        let hex = digest.prefix(Int(length)).map { String(format: "%02x", $0) }.joined()
        #expect(hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")

        // A failure queues a code on this thread's error queue, which Fetch turns into a HashError.
        ERR_clear_error()
        let bare = try #require(EVP_MD_CTX_new())
        defer { EVP_MD_CTX_free(bare) }
        #expect(EVP_DigestInit_ex(bare, nil, nil) == 0)  // no digest given and none set before
        let code = ERR_peek_last_error()
        #expect(ERR_GET_LIB(code) == ERR_LIB_EVP)
        #expect(ERR_reason_error_string(code).map { String(cString: $0) } == "no digest set")
        ERR_clear_error()
        #expect(ERR_peek_last_error() == 0)
    }

    @Test func libxxhashOneShotAndStreamingAgree() throws {
        // XXH64 of the empty input (xxHash's own self-test value), and a buffer hashed in one call and in pieces.
        #expect(XXH64(nil, 0, 0) == 0xEF46_DB37_51D8_E999)
        let bytes = Array(String(repeating: "Zürich — 東京 ", count: 50).utf8)
        let oneShot = bytes.withUnsafeBytes { XXH64($0.baseAddress, $0.count, 7) }
        let state = try #require(XXH64_createState())
        defer { XXH64_freeState(state) }
        #expect(XXH64_reset(state, 7) == XXH_OK)
        bytes.withUnsafeBytes { buffer in
            for start in stride(from: 0, to: buffer.count, by: 37) {
                let piece = UnsafeRawBufferPointer(rebasing: buffer[start..<min(start + 37, buffer.count)])
                #expect(XXH64_update(state, piece.baseAddress, piece.count) == XXH_OK)
            }
        }
        #expect(XXH64_digest(state) == oneShot)
        #expect(oneShot != bytes.withUnsafeBytes { XXH64($0.baseAddress, $0.count, 8) }, "the seed reaches the library")
        #expect(XXH_versionNumber() >= 800)
    }

    @Test func zlibGzipRoundTrip() throws {
        let original = Array(String(repeating: "<item><title>Zürich — 東京</title></item>\n", count: 2_000).utf8)
        // Compress as gzip (windowBits 15 + 16), then inflate with automatic header detection (15 + 32).
        var deflater = z_stream()
        #expect(CZlib_deflateInit2(&deflater, Z_BEST_COMPRESSION, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK)
        var compressed = [UInt8](repeating: 0, count: original.count + 1024)
        let compressedCount = original.withUnsafeBufferPointer { input in
            compressed.withUnsafeMutableBufferPointer { output in
                deflater.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                deflater.avail_in = uInt(input.count)
                deflater.next_out = output.baseAddress
                deflater.avail_out = uInt(output.count)
                let status = deflate(&deflater, Z_FINISH)
                #expect(status == Z_STREAM_END)
                return output.count - Int(deflater.avail_out)
            }
        }
        deflateEnd(&deflater)
        #expect(compressed[0] == 0x1F && compressed[1] == 0x8B)  // a gzip header, so windowBits reached zlib
        #expect(compressedCount < original.count / 10)

        var inflater = z_stream()
        #expect(CZlib_inflateInit2(&inflater, 15 + 32) == Z_OK)
        var restored = [UInt8](repeating: 0, count: original.count)
        compressed.withUnsafeMutableBufferPointer { input in
            restored.withUnsafeMutableBufferPointer { output in
                inflater.next_in = input.baseAddress
                inflater.avail_in = uInt(compressedCount)
                inflater.next_out = output.baseAddress
                inflater.avail_out = uInt(output.count)
                #expect(inflate(&inflater, Z_FINISH) == Z_STREAM_END)
            }
        }
        inflateEnd(&inflater)
        #expect(restored == original)
    }

    @Test func sqliteBindsWithTheTransientDestructor() throws {
        var db: OpaquePointer?
        #expect(sqlite3_open(":memory:", &db) == SQLITE_OK)
        defer { sqlite3_close(db) }
        var defensive: Int32 = -1
        #expect(CSQLite_db_config_int(db, SQLITE_DBCONFIG_DEFENSIVE, 1, &defensive) == SQLITE_OK)
        #expect(defensive == 1)
        #expect(sqlite3_exec(db, "CREATE TABLE t(x TEXT)", nil, nil, nil) == SQLITE_OK)
        var statement: OpaquePointer?
        #expect(sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?)", -1, &statement, nil) == SQLITE_OK)
        do {
            // The buffer dies right after binding: only SQLITE_TRANSIENT (a copy) keeps the value intact.
            var text = Array("Zürich".utf8CString)
            #expect(sqlite3_bind_text(statement, 1, &text, -1, CSQLite_transient()) == SQLITE_OK)
            text.withUnsafeMutableBufferPointer { $0.update(repeating: 0x58) }
        }
        #expect(sqlite3_step(statement) == SQLITE_DONE)
        sqlite3_finalize(statement)
        #expect(sqlite3_prepare_v2(db, "SELECT x FROM t", -1, &statement, nil) == SQLITE_OK)
        #expect(sqlite3_step(statement) == SQLITE_ROW)
        #expect(String(cString: sqlite3_column_text(statement, 0)) == "Zürich")
        sqlite3_finalize(statement)
    }

    @Test func expatHasDTDSupportAndBillionLaughsProtection() {
        // CExpat's shim defines XML_DTD to see these declarations; the library must really have them.
        var names: [String] = []
        var feature = XML_GetFeatureList()
        while let current = feature, current.pointee.feature != XML_FEATURE_END {
            names.append(String(cString: current.pointee.name))
            feature = current + 1
        }
        #expect(names.contains("XML_DTD"))
        #expect(names.contains("XML_BLAP_MAX_AMP"))
        let version = XML_ExpatVersionInfo()
        #expect((version.major, version.minor) >= (2, 4))
    }

    @Test func uchardetNamesKOI8RAndNothingForBytesNoCharsetHas() throws {
        func detect(_ bytes: [UInt8]) -> String? {
            guard let detector = uchardet_new() else { return nil }
            defer { uchardet_delete(detector) }
            let status = bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { uchardet_handle_data(detector, $0.baseAddress, $0.count) }
            }
            guard status == 0 else { return nil }
            uchardet_data_end(detector)
            return uchardet_get_charset(detector).map { String(cString: $0) }
        }
        // "Привет, мир! Сегодня солнечно." in KOI8-R (Python's codecs).
        let koi8: [UInt8] = [0xF0, 0xD2, 0xC9, 0xD7, 0xC5, 0xD4, 0x2C, 0x20, 0xCD, 0xC9, 0xD2, 0x21, 0x20, 0xF3, 0xC5, 0xC7, 0xCF,
                             0xC4, 0xCE, 0xD1, 0x20, 0xD3, 0xCF, 0xCC, 0xCE, 0xC5, 0xDE, 0xCE, 0xCF, 0x2E]
        #expect(detect(koi8) == "KOI8-R")
        // Bytes windows-1252 leaves unassigned, and nothing else: no charset, an empty name.
        #expect(detect([0x81, 0x8D, 0x8F, 0x90, 0x9D]) == "")
    }
}

@Suite("libpq through CLibPQ")
struct LibPQShimTests {
    @Test func libpqParsesURIsAndRefusesGarbageWithoutConnecting() {
        #expect(PQlibVersion() >= 140000, "libpq 14 or later")
        // The call went through CLibraryLoader's stub, which opened libpq (it is not linked).
        #expect(CLibraryLoader_isLoaded("libpq.so.5") == 1)
        #expect(CLibraryLoader_isLoaded("libnothing.so.1") == 0)
        var message: UnsafeMutablePointer<CChar>?
        let good = PQconninfoParse("postgresql://user@/db?host=/tmp&port=5433", &message)
        #expect(good != nil && message == nil)
        var values: [String: String] = [:]
        var option = good
        while let current = option, let keyword = current.pointee.keyword {
            if let value = current.pointee.val { values[String(cString: keyword)] = String(cString: value) }
            option = current.advanced(by: 1)
        }
        #expect(values["host"] == "/tmp" && values["port"] == "5433" && values["dbname"] == "db" && values["user"] == "user")
        PQconninfoFree(good)
        let bad = PQconninfoParse("postgresql://user@/db?nonsense=1", &message)
        #expect(bad == nil)
        #expect(message.map { String(cString: $0) }?.contains("nonsense") == true)
        if let message { PQfreemem(message) }
        #expect(CLibPQ_diagSQLState() == Int32(UInt8(ascii: "C")))
    }
}

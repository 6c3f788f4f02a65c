#ifndef FEEDINGEST_CBYTESCAN_H
#define FEEDINGEST_CBYTESCAN_H
// The wide byte scan of ExpatXML's repair filter (InputRepair.swift): header-only, `static inline`, so Swift
// inlines it into the filter's loop. SSE2 (every x86-64) looks at 16 bytes an instruction; elsewhere eight bytes
// a word (SWAR). Tests/ExpatXMLTests/ByteScanTests.swift checks both against a byte-at-a-time reference in Swift.
#include <stddef.h>
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/// Eight bytes as one word, the first in the lowest byte whatever the machine's byte order (the SWAR loops need the
/// lowest mark to be the first byte).
static inline uint64_t feedingest_bytescan_word(const uint8_t *bytes) {
    uint64_t word;
    __builtin_memcpy(&word, bytes, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    word = __builtin_bswap64(word);
#endif
    return word;
}

/// Whether `byte` stops the scan: `a`, `b` or `c`, a C0 control other than tab, line feed and carriage return,
/// or, when `high`, a byte above 0x7F. The byte-at-a-time definition the wide loops below must agree with.
static inline int feedingest_bytescan_stops(uint8_t byte, uint8_t a, uint8_t b, uint8_t c, int high) {
    return byte == a || byte == b || byte == c || (byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D)
        || (high && byte >= 0x80);
}

/// The index of the first byte of `bytes[index..<count]` that stops the scan (see feedingest_bytescan_stops),
/// or `count` when none does. `a`, `b` and `c` are ASCII.
static inline ptrdiff_t feedingest_bytescan_find(const uint8_t *bytes, ptrdiff_t index, ptrdiff_t count,
                                                 uint8_t a, uint8_t b, uint8_t c, int high) {
#if defined(__SSE2__)
    const __m128i va = _mm_set1_epi8((char)a), vb = _mm_set1_epi8((char)b), vc = _mm_set1_epi8((char)c);
    const __m128i space = _mm_set1_epi8(0x20), unitSeparator = _mm_set1_epi8(0x1F);
    const __m128i four = _mm_set1_epi8(0x04), carriageReturn = _mm_set1_epi8(0x0D), lineFeed = _mm_set1_epi8(0x0A);
    while (index + 16 <= count) {
        const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(bytes + index));
        __m128i marks = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, va), _mm_cmpeq_epi8(x, vb)), _mm_cmpeq_epi8(x, vc));
        // Below 0x20 as signed bytes: the C0 controls and every byte above 0x7F; unsigned (min(x, 0x1F) == x): the controls.
        const __m128i low = high ? _mm_cmplt_epi8(x, space) : _mm_cmpeq_epi8(_mm_min_epu8(x, unitSeparator), x);
        // Tab and carriage return are the bytes with x | 4 == 0x0D; line feed is 0x0A. All three are below 0x20.
        const __m128i whitespace = _mm_or_si128(_mm_cmpeq_epi8(_mm_or_si128(x, four), carriageReturn), _mm_cmpeq_epi8(x, lineFeed));
        marks = _mm_or_si128(marks, _mm_andnot_si128(whitespace, low));
        const int mask = _mm_movemask_epi8(marks);
        if (mask != 0) return index + __builtin_ctz((unsigned)mask);
        index += 16;
    }
#else
    // Eight bytes a word: (x - 0x01..) & ~x & 0x80.. marks the zero bytes of x, and (x - 0x20..) & ~x & 0x80.. the
    // bytes below 0x20. A borrow can only mark a byte above a truly marked one, so the lowest mark is exact; tab, line
    // feed and carriage return are marked too, and stepped over one at a time.
    const uint64_t ones = 0x0101010101010101ull, highBits = 0x8080808080808080ull;
    while (index + 8 <= count) {
        const uint64_t word = feedingest_bytescan_word(bytes + index);
        const uint64_t xa = word ^ (ones * a), xb = word ^ (ones * b), xc = word ^ (ones * c);
        uint64_t marks = ((word - ones * 0x20) & ~word) | ((xa - ones) & ~xa) | ((xb - ones) & ~xb) | ((xc - ones) & ~xc);
        if (high) marks |= word;
        marks &= highBits;
        if (marks == 0) { index += 8; continue; }
        const ptrdiff_t at = index + (__builtin_ctzll(marks) >> 3);
        const uint8_t byte = bytes[at];
        if (byte != 0x09 && byte != 0x0A && byte != 0x0D) return at;
        index = at + 1;
    }
#endif
    while (index < count && !feedingest_bytescan_stops(bytes[index], a, b, c, high)) index += 1;
    return index;
}

/// The index of the first byte of `bytes[index..<count]` above 0x7F, or `count` when there is none: where ExpatXML's
/// check of a document's encoding against its bytes begins (XMLPushParser.swift), which in an ASCII document is never,
/// so every byte is looked at. SSE2 reads 64 bytes' high bits a step (four loads or-ed, one movemask), then 16 bytes
/// a step to the exact byte; elsewhere eight bytes a word.
static inline ptrdiff_t feedingest_bytescan_high(const uint8_t *bytes, ptrdiff_t index, ptrdiff_t count) {
#if defined(__SSE2__)
    while (index + 64 <= count) {
        const __m128i *block = (const __m128i *)(const void *)(bytes + index);
        const __m128i any = _mm_or_si128(_mm_or_si128(_mm_loadu_si128(block), _mm_loadu_si128(block + 1)),
                                         _mm_or_si128(_mm_loadu_si128(block + 2), _mm_loadu_si128(block + 3)));
        if (_mm_movemask_epi8(any) != 0) break;
        index += 64;
    }
    while (index + 16 <= count) {
        const int mask = _mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(const void *)(bytes + index)));
        if (mask != 0) return index + __builtin_ctz((unsigned)mask);
        index += 16;
    }
#else
    while (index + 8 <= count) {
        const uint64_t marks = feedingest_bytescan_word(bytes + index) & 0x8080808080808080ull;
        if (marks != 0) return index + (__builtin_ctzll(marks) >> 3);
        index += 8;
    }
#endif
    while (index < count && bytes[index] < 0x80) index += 1;
    return index;
}

/// The index of the first byte of `bytes[index..<count]` that a JSON string must escape (RFC 8259, section 7: `"`, `\`
/// and the C0 controls, tab, line feed and carriage return included), or `count`; it reads only `bytes[0..<count]`.
/// Its callers (the article line's writer in Syndication's JSON.swift, and ArticleStore's ArticleEncoding.swift) copy
/// the runs in between whole; ByteScanTests (Tests/ExpatXMLTests) checks it against a byte loop.
static inline ptrdiff_t feedingest_bytescan_json_escape(const uint8_t *bytes, ptrdiff_t index, ptrdiff_t count) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8(0x22), backslash = _mm_set1_epi8(0x5C), unitSeparator = _mm_set1_epi8(0x1F);
    while (index + 16 <= count) {
        const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(bytes + index));
        const __m128i marks = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                                           _mm_cmpeq_epi8(_mm_min_epu8(x, unitSeparator), x));
        const int mask = _mm_movemask_epi8(marks);
        if (mask != 0) return index + __builtin_ctz((unsigned)mask);
        index += 16;
    }
    if (index < count && count >= 16) {
        // The last 1–15 bytes of a value of 16 or more: the last sixteen, read again from `count - 16`, with the marks
        // of the bytes before `index` dropped (a compare marks each byte alone, so they cannot move the first one).
        // One block instead of a word and up to seven single bytes: most values end so (issue 18).
        const ptrdiff_t start = count - 16;
        const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(bytes + start));
        const __m128i marks = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                                           _mm_cmpeq_epi8(_mm_min_epu8(x, unitSeparator), x));
        const unsigned mask = (unsigned)_mm_movemask_epi8(marks) & (0xFFFFu << (index - start));
        return mask != 0 ? start + __builtin_ctz(mask) : count;
    }
#endif
    // Short values (ids, dates, names) and the tail: eight bytes a word. (x - 0x20..) & ~x & 0x80.. marks the bytes
    // below 0x20, and the same test of x ^ c against 0x01.. the bytes equal to c; a borrow can only mark a byte above a
    // truly marked one, so the lowest mark is exact.
    const uint64_t ones = 0x0101010101010101ull, highBits = 0x8080808080808080ull;
    while (index + 8 <= count) {
        const uint64_t word = feedingest_bytescan_word(bytes + index);
        const uint64_t xq = word ^ (ones * 0x22), xb = word ^ (ones * 0x5C);
        const uint64_t marks = (((word - ones * 0x20) & ~word) | ((xq - ones) & ~xq) | ((xb - ones) & ~xb)) & highBits;
        if (marks != 0) return index + (__builtin_ctzll(marks) >> 3);
        index += 8;
    }
    while (index < count) {
        const uint8_t byte = bytes[index];
        if (byte < 0x20 || byte == 0x22 || byte == 0x5C) return index;
        index += 1;
    }
    return count;
}

#endif
